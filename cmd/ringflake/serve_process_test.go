//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
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
	p.stopWith(syscall.SIGTERM)
}

// stopWith sends sig and requires a clean exit (status 0) after the
// server said why it stops and that it stopped.
func (p *process) stopWith(sig os.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(sig))
	require.Equal(p.t, 0, p.exitCode(), "exit status; stderr:\n%s", p.stderr())
	assert.Contains(p.t, p.stderr(), "signal received")
	assert.Contains(p.t, p.stderr(), "stopped; closing the generator")
	assert.Empty(p.t, p.stdout.String())
}

// exitCode waits for p to end (bounded by processTimeout) and returns its
// exit status.
func (p *process) exitCode() int {
	p.t.Helper()
	err := p.cmd.Wait()
	<-p.logDone
	var exit *exec.ExitError
	if err != nil {
		require.ErrorAs(p.t, err, &exit, "stderr:\n%s", p.stderr())
	}
	return p.cmd.ProcessState.ExitCode()
}

// kill ends p with SIGKILL, as kill -9 does: it saves and releases
// nothing itself.
func (p *process) kill() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Kill())
	_ = p.cmd.Wait() // "signal: killed"
	<-p.logDone
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
	newest := parseUnique(t, ids, make(map[ringflake.ID]bool, len(ids)))

	// /metrics: the generator's counters, the requests' (observed by the
	// handler), the Go runtime's.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/metrics", nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, line := range []string{
		fmt.Sprintf("ringflake_ids_issued_total %d", len(ids)),
		fmt.Sprintf(`ringflake_http_ids_total{route="/v1/id"} %d`, goroutines*requests/2),
		fmt.Sprintf(`ringflake_http_ids_total{route="/v1/ids"} %d`, goroutines*requests/2*batch),
		fmt.Sprintf(`ringflake_http_requests_total{code="",route="/v1/ids",status="200"} %d`, goroutines*requests/2),
	} {
		assert.Contains(t, string(body), "\n"+line+"\n")
	}
	assert.Contains(t, string(body), "\ngo_goroutines ")

	p.terminate()
	m, err := hostlocal.NewMarkFile(state).LoadMark(context.Background())
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

// coarseLayout issues 2 IDs a tick of half a second: a batch of n IDs
// takes n/2 ticks of the server's real clock, so a test can signal the
// server while the batch is under way — waiting for the ticks it needs,
// (n/2-1)/2 seconds at least once it has taken its first IDs — without
// slowing or stalling anything itself. (A tick of a second would not do
// with -state: the mark is written 1s ahead, which must be two ticks.)
const coarseLayout = "twitter,unit=500ms,time=33,node=29,seq=1"

// fetched is the outcome of fetch.
type fetched struct {
	ids []string
	err error
}

// fetchAsync runs fetch in a goroutine of its own and sends its outcome.
func fetchAsync(ctx context.Context, client *http.Client, target string) <-chan fetched {
	c := make(chan fetched, 1)
	go func() {
		ids, err := fetch(ctx, client, target)
		c <- fetched{ids, err}
	}()
	return c
}

// issued returns the number of IDs the server reports it issued on
// /metrics (ringflake_ids_issued_total), or -1 when it cannot tell.
func (p *process) issued(ctx context.Context, client *http.Client) float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/metrics", nil)
	if err != nil {
		return -1
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ringflake_ids_issued_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// awaitIssued waits until the server has issued at least n IDs.
func (p *process) awaitIssued(ctx context.Context, client *http.Client, n float64, msg string) {
	p.t.Helper()
	require.Eventually(p.t, func() bool { return p.issued(ctx, client) >= n }, processTimeout, 10*time.Millisecond, msg)
}

// parseUnique parses IDs and requires each to be new to seen, which it
// adds them to; it returns the newest.
func parseUnique(t *testing.T, texts []string, seen map[ringflake.ID]bool) ringflake.ID {
	t.Helper()
	var newest ringflake.ID
	for _, text := range texts {
		id, err := ringflake.Parse(text)
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d served twice", id)
		seen[id] = true
		newest = max(newest, id)
	}
	return newest
}

// requireExactMark requires the state file at path to hold the exact mark
// a clean stop saves: node's, in layout l, at newest, the newest ID the
// server issued.
func requireExactMark(t *testing.T, path string, node int64, l ringflake.Layout, newest ringflake.ID) {
	t.Helper()
	last := newest.Time(l)
	assert.Equal(t, ringflake.Mark{Limit: last, Since: last, Node: node, Layout: l.String()}, loadMark(t, path),
		"the exact mark: the newest ID issued, %v", last)
}

// A request under way at SIGTERM — a batch waiting for the ticks it needs
// — finishes: 200 with all its IDs; then the server saves the exact mark,
// which covers them, and exits 0.
func TestServeProcessFinishesRequestsUnderWay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	l, err := ringflake.ParseLayout(coarseLayout)
	require.NoError(t, err)
	state := filepath.Join(t.TempDir(), "node9.mark")
	p := startServe(t, "-node", "9", "-layout", coarseLayout, "-state", state)
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()

	const n = 12 // 6 ticks: once it took its first IDs it needs 5 more, over 2 seconds
	batch := fetchAsync(ctx, client, fmt.Sprintf("%s/v1/ids?n=%d", p.base, n))
	p.awaitIssued(ctx, client, 1, "the batch took its first IDs")
	p.terminate()

	got := <-batch
	require.NoError(t, got.err, "the request under way at SIGTERM finishes")
	require.Len(t, got.ids, n)
	newest := parseUnique(t, got.ids, map[ringflake.ID]bool{})
	assert.Contains(t, p.stderr(), "finishing the requests under way (at most 10s)")
	requireExactMark(t, state, 9, l, newest)
}

// A request that outlasts -grace is cut off: the server exits 1 with one
// line that says so, after it saved the exact mark, and a restart on the
// same state file issues after every ID the first run served.
func TestServeProcessGraceCutsOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	l, err := ringflake.ParseLayout(coarseLayout)
	require.NoError(t, err)
	state := filepath.Join(t.TempDir(), "node9.mark")
	args := []string{"-node", "9", "-layout", coarseLayout, "-state", state}
	p := startServe(t, append(args, "-grace", "100ms")...)
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()

	received, err := fetch(ctx, client, p.base+"/v1/ids?n=2")
	require.NoError(t, err)
	require.Len(t, received, 2)
	seen := map[ringflake.ID]bool{}
	newest := parseUnique(t, received, seen)
	// 20 ticks: once it took its first IDs it needs 19 more, over 9
	// seconds, far more than the grace period.
	batch := fetchAsync(ctx, client, p.base+"/v1/ids?n=40")
	p.awaitIssued(ctx, client, float64(len(received)+1), "the batch took its first IDs")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 1, p.exitCode(), "stderr:\n%s", p.stderr())

	got := <-batch
	require.Error(t, got.err, "the request was cut off")
	assert.Empty(t, p.stdout.String())
	var errLines []string
	for _, line := range strings.Split(strings.TrimSpace(p.stderr()), "\n") {
		if strings.HasPrefix(line, "ringflake: ") {
			errLines = append(errLines, line)
		}
	}
	require.Len(t, errLines, 1, "one line with the error; stderr:\n%s", p.stderr())
	assert.Contains(t, errLines[0], "the grace period of 100ms ended with requests under way; they were cut off")
	assert.Contains(t, p.stderr(), "signal received: finishing the requests under way (at most 100ms)")
	assert.NotContains(t, p.stderr(), "stopped; closing the generator")
	m := loadMark(t, state)
	assert.Equal(t, m.Since, m.Limit, "the generator was closed: the exact mark")
	assert.False(t, newest.Time(l).After(m.Limit), "the mark %v covers the IDs served, up to %v", m.Limit, newest.Time(l))

	again := startServe(t, args...)
	more, err := fetch(ctx, client, again.base+"/v1/ids?n=4")
	require.NoError(t, err)
	require.Len(t, more, 4)
	for _, text := range more {
		id, err := ringflake.Parse(text)
		require.NoError(t, err)
		assert.Greater(t, id, newest, "the restart issues after every ID the first run served")
		assert.True(t, id.Time(l).After(m.Limit), "the restart issues after the mark, %v: %v", m.Limit, id.Time(l))
	}
	parseUnique(t, more, seen)
	again.terminate()
}

// SIGINT (Ctrl-C) stops the server as SIGTERM does: exit 0 and the exact
// mark.
func TestServeProcessSIGINT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	state := filepath.Join(t.TempDir(), "node9.mark")
	p := startServe(t, "-node", "9", "-state", state)
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	ids, err := fetch(ctx, client, p.base+"/v1/ids?n=5")
	require.NoError(t, err)
	require.Len(t, ids, 5)
	newest := parseUnique(t, ids, map[ringflake.ID]bool{})

	p.stopWith(os.Interrupt)
	requireExactMark(t, state, 9, ringflake.TwitterLayout(), newest)
}
