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

	"github.com/redis/go-redis/v9"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/leasetest"
	"github.com/ringflake/ringflake/redislease"
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

// process is a `ringflake serve` the test started.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	stdout bytes.Buffer

	logMu   sync.Mutex
	log     strings.Builder // stderr
	logDone chan struct{}
}

// startServe starts the built command with serve and args (which must
// not set -listen) on 127.0.0.1 and returns once it listens. ctx bounds
// its life (a hang guard); the test's cleanup kills it by PID if it still
// runs.
func startServe(ctx context.Context, t *testing.T, args ...string) *process {
	t.Helper()
	bin, err := binary()
	require.NoError(t, err)
	p := &process{t: t, logDone: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, bin, append([]string{"serve", "-listen", "127.0.0.1:0"}, args...)...)
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { _ = p.cmd.Process.Kill() }) // by PID; an error once it has exited

	// The address comes on the first line; the rest of stderr is kept
	// for the messages of a failure.
	addrc := make(chan string, 1)
	go func() {
		defer close(p.logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.logMu.Lock()
			p.log.WriteString(line + "\n")
			p.logMu.Unlock()
			if _, addr, ok := strings.Cut(line, "listening on "); ok {
				addrc <- addr
			}
		}
	}()
	select {
	case p.base = <-addrc:
	case <-p.logDone:
		t.Fatalf("the server ended before it listened:\n%s", p.stderr())
	case <-ctx.Done():
		t.Fatalf("the server never said where it listens:\n%s", p.stderr())
	}
	require.True(t, strings.HasPrefix(p.base, "http://127.0.0.1:"), p.base)
	return p
}

func (p *process) stderr() string {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return p.log.String()
}

// terminate sends SIGTERM and requires a clean exit (status 0).
func (p *process) terminate() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGTERM))
	err := p.cmd.Wait()
	<-p.logDone
	require.NoError(p.t, err, "exit status; stderr:\n%s", p.stderr())
	assert.Contains(p.t, p.stderr(), "signal received")
	assert.Empty(p.t, p.stdout.String())
}

// The real command, under concurrent requests for single IDs and batches,
// issues every ID once, and on SIGTERM stops serving, saves the exact mark
// (covering every ID it served) and exits 0.
func TestServeProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	state := filepath.Join(t.TempDir(), "node9.mark")
	p := startServe(ctx, t, "-node", "9", "-state", state)

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
				target := p.base + "/v1/id"
				if (g+i)%2 == 0 {
					target = fmt.Sprintf("%s/v1/ids?n=%d", p.base, batch)
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

	p.terminate()
	m, err := ringflake.NewFileMarkStore(state).LoadMark(context.Background())
	require.NoError(t, err)
	l := ringflake.TwitterLayout()
	assert.Equal(t, int64(9), m.Node)
	assert.False(t, newest.Time(l).After(m.Limit), "the mark's limit %v is before the newest ID served, %v", m.Limit, newest.Time(l))
	assert.Equal(t, m.Since, m.Limit, "a clean stop saves the exact mark")
}

// With a leased node id the server is ready while the lease holds, and
// gives the id back on SIGTERM.
func TestServeProcessLease(t *testing.T) {
	addr := leasetest.RequireEnv(t, "RINGFLAKE_TEST_REDIS_ADDR", "Run ./scripts/test.sh, which starts a throwaway redis-server, or point it at one: RINGFLAKE_TEST_REDIS_ADDR=127.0.0.1:6379.")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	prefix := leasetest.Prefix(t)
	p := startServe(ctx, t, "-node", "redis://"+addr+"/0?prefix="+prefix+"&ttl=2s") // listens once the lease holds

	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	resp, err := client.Get(p.base + "/readyz")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	ids, err := fetch(ctx, client, p.base+"/v1/ids?n=3")
	require.NoError(t, err)
	require.Len(t, ids, 3)
	id, err := ringflake.Parse(ids[0])
	require.NoError(t, err)
	node := id.Node(ringflake.TwitterLayout())

	rc := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer rc.Close()
	opts := redislease.Options{Prefix: prefix, TTL: 2 * time.Second}
	holdings, err := redislease.List(ctx, rc, opts)
	require.NoError(t, err)
	require.Len(t, holdings, 1)
	assert.Equal(t, node, holdings[0].Node, "the server issues under the id it leased")

	p.terminate()
	holdings, err = redislease.List(ctx, rc, opts)
	require.NoError(t, err)
	assert.Empty(t, holdings, "the server gave its id back")
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
