package etcdlease_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/ringflake/ringflake/etcdlease"
	"github.com/ringflake/ringflake/internal/leasetest"
)

// The tests run against real etcd servers, never a fake:
//
//   - RINGFLAKE_TEST_ETCD_ENDPOINTS names a server the tests share (each
//     test under a prefix of its own), comma-separated endpoints;
//   - RINGFLAKE_TEST_ETCD_SERVER names the etcd binary, for the tests that
//     stop and restart a server of their own.
//
// scripts/test.sh installs etcd from Debian's packages when it is missing,
// starts the shared server on free loopback ports and exports both. A test
// without them fails: a lease test that skips proves nothing.
const (
	endpointsEnv = "RINGFLAKE_TEST_ETCD_ENDPOINTS"
	serverEnv    = "RINGFLAKE_TEST_ETCD_SERVER"
)

func requireEnv(t *testing.T, name string) string {
	t.Helper()
	return leasetest.RequireEnv(t, name, fmt.Sprintf("These tests need a real etcd: run ./scripts/test.sh from the repository root "+
		"(it installs etcd and starts one), or start one yourself and export "+
		"%s=http://127.0.0.1:PORT and %s=$(command -v etcd)", endpointsEnv, serverEnv))
}

// driver runs the conformance suite on etcdlease.
type driver struct{}

func (driver) Connect(t *testing.T) leasetest.Conn {
	return conn{sharedClient(t)}
}

// Unreachable returns a client without DialTimeout: it connects lazily,
// so creating it succeeds and its requests wait for their context.
func (driver) Unreachable(t *testing.T) leasetest.Conn {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t))}, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return conn{c}
}

func (driver) ErrClosed() error { return etcdlease.ErrClosed }

func (driver) ErrDataLost() error { return etcdlease.ErrDataLost }

func (driver) RangeFull(err error) (int64, bool) {
	var re *etcdlease.RangeFullError
	if !errors.As(err, &re) {
		return 0, false
	}
	return re.Nodes, true
}

// DetectsRestart: etcd loses no committed write in a restart or a
// failover, so the module does not look for them.
func (driver) DetectsRestart() bool { return false }

func (driver) TTLUnit() time.Duration { return time.Second }

// StartServer starts a private single-member etcd on free loopback ports
// with its data in a temporary directory (short heartbeat and election
// timeouts, so that it elects itself quickly).
func (driver) StartServer(t *testing.T) leasetest.Server {
	t.Helper()
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", leasetest.FreePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", leasetest.FreePort(t))
	probe := conn{newClient(t, false, endpoint)}
	p := leasetest.StartProcess(t, requireEnv(t, serverEnv), func(dir string) []string {
		return []string{"--name", "test", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "test=" + peer, "--initial-cluster-state", "new",
			"--heartbeat-interval", "10", "--election-timeout", "100",
			"--logger", "zap", "--log-outputs", "stderr"}
	}, probe.ready)
	return server{Process: p, endpoint: endpoint}
}

// newClient returns a client of endpoints that reconnects quickly after a
// server restart and logs nothing. A blocking one connects before it
// returns (and fails the test when it cannot); the other connects lazily.
func newClient(t *testing.T, blocking bool, endpoints ...string) *clientv3.Client {
	t.Helper()
	cfg := clientv3.Config{
		Endpoints: endpoints,
		Logger:    zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		})},
	}
	if blocking {
		cfg.DialTimeout = 10 * time.Second
	}
	c, err := clientv3.New(cfg)
	require.NoError(t, err, "connecting to etcd at %v", endpoints)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sharedClient returns a client of the shared server.
func sharedClient(t *testing.T) *clientv3.Client {
	t.Helper()
	return newClient(t, true, strings.Split(requireEnv(t, endpointsEnv), ",")...)
}

// server is an etcd of the test's own.
type server struct {
	*leasetest.Process
	endpoint string
}

// Connect returns a client of the server: patient or not, since the etcd
// client waits for an answer as long as its context lets it.
func (s server) Connect(t *testing.T, _ bool) leasetest.Conn {
	return conn{newClient(t, true, s.endpoint)}
}

// conn is a client of an etcd server, for the suite.
type conn struct{ c *clientv3.Client }

// options converts the suite's options.
func options(o leasetest.Options) etcdlease.Options {
	return etcdlease.Options{
		Prefix: o.Prefix, Layout: o.Layout, TTL: o.TTL, RenewEvery: o.RenewEvery,
		Margin: o.Margin, Timeout: o.Timeout, Holder: o.Holder, Clock: o.Clock,
		OnEvent: leasetest.OnEvent[etcdlease.Event](o.OnEvent),
	}
}

func (c conn) Acquire(ctx context.Context, o leasetest.Options) (leasetest.Lease, error) {
	return leasetest.Acquired(etcdlease.Acquire(ctx, c.c, options(o)))
}

func (c conn) List(ctx context.Context, o leasetest.Options) ([]leasetest.Holding, error) {
	return leasetest.Listed(etcdlease.List(ctx, c.c, options(o)))
}

func leaseKey(prefix string, node int64) string { return fmt.Sprintf("%s/lease/%d", prefix, node) }
func markKey(prefix string, node int64) string  { return fmt.Sprintf("%s/mark/%d", prefix, node) }

// Expire ends the etcd lease of an id's key at once: a revoked lease is
// what etcd's leader does with an expired one (it revokes it, deleting its
// keys), without waiting out the TTL.
func (c conn) Expire(t *testing.T, prefix string, node int64) {
	t.Helper()
	ctx, key := context.Background(), leaseKey(prefix, node)
	resp, err := c.c.Get(ctx, key)
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1, "no key %s", key)
	_, err = c.c.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	require.NoError(t, err)
}

func (c conn) Delete(t *testing.T, prefix string, node int64) {
	t.Helper()
	_, err := c.c.Delete(context.Background(), leaseKey(prefix, node))
	require.NoError(t, err)
}

// Put writes the key without an etcd lease, so it does not expire.
func (c conn) Put(t *testing.T, prefix string, node int64, value string) bool {
	t.Helper()
	_, err := c.c.Put(context.Background(), leaseKey(prefix, node), value)
	require.NoError(t, err)
	return false
}

func (c conn) Key(t *testing.T, prefix string, node int64) (exists, expires bool) {
	t.Helper()
	resp, err := c.c.Get(context.Background(), leaseKey(prefix, node))
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return false, false
	}
	return true, resp.Kvs[0].Lease != 0 // etcd deletes a key with its lease
}

func (c conn) CorruptMark(t *testing.T, prefix string, node int64) string {
	t.Helper()
	_, err := c.c.Put(context.Background(), markKey(prefix, node), "yesterday")
	require.NoError(t, err)
	return markKey(prefix, node)
}

// Settle writes the prefix's epoch as Acquire does.
func (c conn) Settle(t *testing.T, prefix string) {
	t.Helper()
	_, err := c.c.Put(context.Background(), prefix+"/epoch", "settled")
	require.NoError(t, err)
}

// WaitConnected waits until the client can read again after a server
// restart: it reconnects in real time, so this polls, with a bound.
func (c conn) WaitConnected(t *testing.T) {
	t.Helper()
	require.Eventually(t, c.ready, 30*time.Second, 10*time.Millisecond, "the client did not reconnect")
}

// ready reports whether a read succeeds within 200ms.
func (c conn) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.c.Get(ctx, "ready")
	return err == nil
}
