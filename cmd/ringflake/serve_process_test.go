//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// binary builds the command once per test run, into a directory that
// TestMain removes.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "ringflake-cli-test")
	if err != nil {
		return "", err
	}
	binDir = dir
	path := filepath.Join(dir, "ringflake")
	out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return path, nil
})

var binDir string // set by binary

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// The real command, under concurrent requests for single IDs and batches,
// issues every ID once, and on SIGTERM stops serving, saves the exact mark
// (covering every ID it served) and exits 0.
func TestServeProcess(t *testing.T) {
	bin, err := binary()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	state := filepath.Join(t.TempDir(), "node9.mark")
	cmd := exec.CommandContext(ctx, bin, "serve", "-listen", "127.0.0.1:0", "-node", "9", "-state", state)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }() // by PID, if the test ends early

	// The address comes on the first line; the rest of stderr is kept
	// for the messages of a failure.
	addrc := make(chan string, 1)
	var (
		logMu sync.Mutex
		log   strings.Builder
	)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if _, addr, ok := strings.Cut(line, "listening on "); ok {
				addrc <- addr
			}
		}
	}()
	var base string
	select {
	case base = <-addrc:
	case <-ctx.Done():
		t.Fatal("the server never said where it listens")
	}
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)

	const goroutines, requests, batch = 16, 50, 50
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: goroutines}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	var (
		mu  sync.Mutex
		ids []string
		wg  sync.WaitGroup
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range requests {
				target := base + "/v1/id"
				if (g+i)%2 == 0 {
					target = fmt.Sprintf("%s/v1/ids?n=%d", base, batch)
				}
				got, err := fetch(ctx, client, target)
				if !assert.NoError(t, err, target) {
					return
				}
				mu.Lock()
				ids = append(ids, got...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, ids, goroutines*requests/2*(1+batch))
	seen := make(map[ringflake.ID]bool, len(ids))
	var newest ringflake.ID
	for _, text := range ids {
		id, err := ringflake.Parse(text)
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d served twice", id)
		seen[id] = true
		newest = max(newest, id)
	}

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	<-logDone
	logMu.Lock()
	defer logMu.Unlock()
	require.NoError(t, err, "exit status; stderr:\n%s", log.String())
	assert.Contains(t, log.String(), "signal received")
	assert.Empty(t, stdout.String())

	m, err := ringflake.NewFileMarkStore(state).LoadMark(context.Background())
	require.NoError(t, err)
	l := ringflake.TwitterLayout()
	assert.Equal(t, int64(9), m.Node)
	assert.False(t, newest.Time(l).After(m.Limit), "the mark's limit %v is before the newest ID served, %v", m.Limit, newest.Time(l))
	assert.Equal(t, m.Since, m.Limit, "a clean stop saves the exact mark")
}

// fetch gets an ID or a batch and returns the IDs.
func fetch(ctx context.Context, client *http.Client, target string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		ID    string   `json:"id"`
		IDs   []string `json:"ids"`
		Error string   `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status + ": " + r.Error)
	}
	if r.ID != "" {
		return []string{r.ID}, nil
	}
	return r.IDs, nil
}
