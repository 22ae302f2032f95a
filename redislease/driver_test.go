package redislease_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/internal/leasetest"
	"github.com/ringflake/ringflake/redislease"
)

// The tests run against real Redis servers, never a fake:
//
//   - RINGFLAKE_TEST_REDIS_ADDR names a server the tests share (each test
//     under a prefix of its own);
//   - RINGFLAKE_TEST_REDIS_SERVER names the redis-server binary, for the
//     tests that stop and restart a server of their own.
//
// scripts/test.sh installs redis-server from Debian's packages when it is
// missing, starts the shared server on a free loopback port and exports
// both. A test without them fails: a lease test that skips proves nothing.
const (
	addrEnv   = "RINGFLAKE_TEST_REDIS_ADDR"
	serverEnv = "RINGFLAKE_TEST_REDIS_SERVER"
)

func requireEnv(t *testing.T, name string) string {
	t.Helper()
	return leasetest.RequireEnv(t, name, fmt.Sprintf("These tests need a real Redis: run ./scripts/test.sh from the repository root "+
		"(it installs redis-server and starts one), or start one yourself and export "+
		"%s=127.0.0.1:PORT and %s=$(command -v redis-server)", addrEnv, serverEnv))
}

// TestMain silences go-redis's own log: the outage tests make it print a
// line per failed dial, which the tests check through the lease's events.
func TestMain(m *testing.M) {
	logging.Disable()
	os.Exit(m.Run())
}

// driver runs the conformance suite on redislease.
type driver struct{}

func (driver) Connect(t *testing.T) leasetest.Conn {
	t.Helper()
	addr := requireEnv(t, addrEnv)
	c := newClient(t, addr)
	require.NoError(t, c.Ping(context.Background()).Err(), "the server at %s=%s does not answer", addrEnv, addr)
	return conn{c}
}

func (driver) Unreachable(t *testing.T) leasetest.Conn {
	return conn{newClient(t, fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t)))}
}

func (driver) ErrClosed() error { return redislease.ErrClosed }

func (driver) ErrDataLost() error { return redislease.ErrDataLost }

func (driver) RangeFull(err error) (int64, bool) {
	var re *redislease.RangeFullError
	if !errors.As(err, &re) {
		return 0, false
	}
	return re.Nodes, true
}

// DetectsRestart: the scripts compare the server's run_id with the one
// they saw last.
func (driver) DetectsRestart() bool { return true }

func (driver) TTLUnit() time.Duration { return time.Millisecond }

// StartServer starts a private redis-server on a free loopback port, with
// its data (an append-only file synced on every write, as a fleet's Redis
// should be configured) in a temporary directory.
func (driver) StartServer(t *testing.T) leasetest.Server {
	t.Helper()
	s := server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(leasetest.FreePort(t)))}
	host, port, _ := net.SplitHostPort(s.addr)
	probe := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond, DisableIdentity: true})
	t.Cleanup(func() { _ = probe.Close() })
	s.Process = leasetest.StartProcess(t, requireEnv(t, serverEnv), func(dir string) []string {
		return []string{"--bind", host, "--port", port, "--dir", dir,
			"--appendonly", "yes", "--appendfsync", "always", "--save", "",
			"--daemonize", "no", "--protected-mode", "yes"}
	}, func() bool { return probe.Ping(context.Background()).Err() == nil })
	return s
}

// newClient returns a client of addr that fails fast while the server is
// down: no retries of commands or dials, short dial timeout.
func newClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:            addr,
		MaxRetries:      -1,
		DialerRetries:   1,
		DialTimeout:     time.Second,
		ReadTimeout:     2 * time.Second,
		WriteTimeout:    2 * time.Second,
		DisableIdentity: true,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// server is a redis-server of the test's own.
type server struct {
	*leasetest.Process
	addr string
}

func (s server) Connect(t *testing.T, patient bool) leasetest.Conn {
	t.Helper()
	if !patient {
		return conn{newClient(t, s.addr)}
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, ReadTimeout: time.Minute, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return conn{c}
}

// conn is a client of a Redis server, for the suite.
type conn struct{ c *redis.Client }

// options converts the suite's options.
func options(o leasetest.Options) redislease.Options {
	return redislease.Options{
		Prefix: o.Prefix, Layout: o.Layout, TTL: o.TTL, RenewEvery: o.RenewEvery,
		Margin: o.Margin, Timeout: o.Timeout, Holder: o.Holder, Clock: o.Clock,
		OnEvent: leasetest.OnEvent[redislease.Event](o.OnEvent),
	}
}

func (c conn) Acquire(ctx context.Context, o leasetest.Options) (leasetest.Lease, error) {
	return leasetest.Acquired(redislease.Acquire(ctx, c.c, options(o)))
}

func (c conn) List(ctx context.Context, o leasetest.Options) ([]leasetest.Holding, error) {
	return leasetest.Listed(redislease.List(ctx, c.c, options(o)))
}

func leaseKey(prefix string, node int64) string { return fmt.Sprintf("{%s}:lease:%d", prefix, node) }
func nodeKey(prefix string, node int64) string  { return fmt.Sprintf("{%s}:node:%d", prefix, node) }

// Expire makes a lease key expire now. PEXPIRE key 1 lets the server
// expire it the way a TTL running out does (PEXPIRE 0 would delete it
// instead); the key is gone one millisecond of the server's time later, so
// Expire waits for that — a server-side effect of real time — polling
// PTTL with a bound.
func (c conn) Expire(t *testing.T, prefix string, node int64) {
	t.Helper()
	ctx, key := context.Background(), leaseKey(prefix, node)
	require.NoError(t, c.c.PExpire(ctx, key, time.Millisecond).Err())
	require.Eventually(t, func() bool {
		d, err := c.c.PTTL(ctx, key).Result()
		return err == nil && d == -2 // the key does not exist
	}, 5*time.Second, time.Millisecond)
}

func (c conn) Delete(t *testing.T, prefix string, node int64) {
	t.Helper()
	require.NoError(t, c.c.Del(context.Background(), leaseKey(prefix, node)).Err())
}

func (c conn) Put(t *testing.T, prefix string, node int64, value string) bool {
	t.Helper()
	require.NoError(t, c.c.Set(context.Background(), leaseKey(prefix, node), value, time.Minute).Err())
	return true
}

func (c conn) Key(t *testing.T, prefix string, node int64) (exists, expires bool) {
	t.Helper()
	d, err := c.c.PTTL(context.Background(), leaseKey(prefix, node)).Result()
	require.NoError(t, err)
	return d != -2, d > 0 // -2: no key; -1: no TTL
}

func (c conn) CorruptMark(t *testing.T, prefix string, node int64) string {
	t.Helper()
	require.NoError(t, c.c.HSet(context.Background(), nodeKey(prefix, node), "mark", "yesterday").Err())
	return nodeKey(prefix, node)
}

// Settle writes the prefix's epoch as the scripts do, with the server's
// run_id, so that the scripts see neither a missing epoch nor a restart.
func (c conn) Settle(t *testing.T, prefix string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.c.HSet(ctx, "{"+prefix+"}:epoch", "id", "settled", "run", runID(t, c.c)).Err())
}

// runID returns the run_id of the server c talks to.
func runID(t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(context.Background(), "server").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return id
		}
	}
	t.Fatalf("no run_id in INFO server: %q", info)
	return ""
}

// WaitConnected waits until the client reaches the server again: it dials
// on demand, so the first answer to a ping will do; polling, with a bound.
func (c conn) WaitConnected(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		return c.c.Ping(context.Background()).Err() == nil
	}, 30*time.Second, 10*time.Millisecond, "the client did not reconnect")
}
