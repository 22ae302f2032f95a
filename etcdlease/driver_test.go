package etcdlease_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/ringflake/ringflake/etcdlease"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// The tests run against real etcd servers, never a fake: the server of
// leasetest.EtcdEndpointsEnv, which the tests share (each under a prefix
// of its own), and servers of their own (leasetest.StartEtcd).

// driver runs the conformance suite on etcdlease.
type driver struct{}

func (driver) Connect(t *testing.T) leasetest.Conn {
	return newConn(sharedClient(t))
}

// ConnectDelayed returns a client of the shared server through a
// leasetest.Proxy that follows its HTTP/2 frames.
func (driver) ConnectDelayed(t *testing.T) (leasetest.Conn, leasetest.Delay) {
	t.Helper()
	endpoint := strings.Split(leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv), ",")[0]
	p := leasetest.StartProxy(t, strings.TrimPrefix(endpoint, "http://"), true)
	return newConn(newClient(t, true, "http://"+p.Addr)), p
}

// Unreachable returns a client without DialTimeout: it connects lazily,
// so creating it succeeds and its requests wait for their context.
func (driver) Unreachable(t *testing.T) leasetest.Conn {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t))}, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return newConn(c)
}

// DetectsRestart: etcd loses no committed write in a restart or a
// failover, so the module does not look for them.
func (driver) DetectsRestart() bool { return false }

func (driver) TTLUnit() time.Duration { return time.Second }

// StartServer starts a private single-member etcd.
func (driver) StartServer(t *testing.T) leasetest.Server {
	return server{leasetest.StartEtcd(t)}
}

// conn is a client of an etcd server, for the suite: the module's calls
// through it, and what the tests do behind a lease's back.
type conn struct {
	leasetest.Calls[etcdlease.Client, *etcdlease.Lease]
	c *clientv3.Client
}

func newConn(c *clientv3.Client) conn {
	return conn{leasetest.Calls[etcdlease.Client, *etcdlease.Lease]{Client: c, Acquirer: etcdlease.Acquire, Claimer: etcdlease.Claim, Lister: etcdlease.List}, c}
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
	return newClient(t, true, strings.Split(leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv), ",")...)
}

// server is an etcd of the test's own.
type server struct{ *leasetest.EtcdServer }

// Connect returns a client of the server: patient or not, since the etcd
// client waits for an answer as long as its context lets it.
func (s server) Connect(t *testing.T, _ bool) leasetest.Conn {
	return newConn(newClient(t, true, s.Endpoint))
}

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

// The keys of a prefix, as the module writes them.
func leaseKey(prefix string, node int64) string { return fmt.Sprintf("%s/lease/%d", prefix, node) }
func markKey(prefix string, node int64) string  { return fmt.Sprintf("%s/mark/%d", prefix, node) }
