//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease"
)

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
// not set -listen) on 127.0.0.1 and returns once it listens. The process
// is bounded by processTimeout and killed (by its PID) at the end of the
// test if it still runs.
func startServe(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{t: t, logDone: make(chan struct{})}
	p.cmd = command(t, append([]string{"serve", "-listen", "127.0.0.1:0"}, args...)...)
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())

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
	case <-time.After(processTimeout):
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
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	state := filepath.Join(t.TempDir(), "node9.mark")
	p := startServe(t, "-node", "9", "-state", state)

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
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	prefix := leasetest.Prefix(t)
	p := startServe(t, "-node", "redis://"+addr+"/0?prefix="+prefix+"&ttl=2s") // listens once the lease holds

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

// A lease that ends for good stops the server: here the Redis database
// forgets the lease (FLUSHDB, as a restart without persistence does), the
// lease learns it at its next renewal, and the server finishes what is
// under way, gives up and exits 1, so that whoever runs it starts one
// with a new lease.
func TestServeProcessLeaseEnds(t *testing.T) {
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	const db = 7 // a database of its own: FLUSHDB touches no other test's keys
	p := startServe(t, "-node", fmt.Sprintf("redis://%s/%d?prefix=%s&ttl=2s", addr, db, leasetest.Prefix(t)))
	_, err := fetch(ctx, http.DefaultClient, p.base+"/v1/id")
	require.NoError(t, err)

	rc := redis.NewClient(&redis.Options{Addr: addr, DB: db, ContextTimeoutEnabled: true})
	defer rc.Close()
	require.NoError(t, rc.FlushDB(ctx).Err())

	err = p.cmd.Wait() // the hang guard is processTimeout
	<-p.logDone
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr:\n%s", p.stderr())
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, p.stderr(), "ended")
	assert.Contains(t, p.stderr(), "stopped; closing the generator")
}
