package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// TestConformance runs the lease modules' shared suite over the JSON
// gateway, against real etcd servers: the shared one of
// leasetest.EtcdEndpointsEnv and servers of the tests' own
// (leasetest.StartEtcd).
func TestConformance(t *testing.T) { leasetest.Run(t, driver{}) }

// driver runs the conformance suite on txnlease over the gateway.
type driver struct{}

func (driver) Connect(t *testing.T) leasetest.Conn {
	return newConn(sharedClient(t))
}

// ConnectDelayed returns a client of the shared server through a
// leasetest.Proxy: HTTP/1.1, whose requests that carry a mark (in
// base64) it can hold back.
func (driver) ConnectDelayed(t *testing.T) (leasetest.Conn, leasetest.Delay) {
	t.Helper()
	endpoint := strings.Split(leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv), ",")[0]
	p := leasetest.StartProxy(t, strings.TrimPrefix(endpoint, "http://"), false)
	return newConn(newClient(t, "http://"+p.Addr)), p
}

// Unreachable returns a client of a port nothing listens on: it connects
// only when it sends a request.
func (driver) Unreachable(t *testing.T) leasetest.Conn {
	return newConn(newClient(t, fmt.Sprintf("http://127.0.0.1:%d", leasetest.FreePort(t))))
}

// DetectsRestart: etcd loses no committed write in a restart or a
// failover, so the lease does not look for them.
func (driver) DetectsRestart() bool { return false }

func (driver) TTLUnit() time.Duration { return time.Second }

// StartServer starts a private single-member etcd.
func (driver) StartServer(t *testing.T) leasetest.Server {
	return server{leasetest.StartEtcd(t)}
}

// server is an etcd of the test's own.
type server struct{ *leasetest.EtcdServer }

// Connect returns a client of the server. Patient or not: a request
// waits for its context; one to a stopped server fails at once
// (connection refused).
func (s server) Connect(t *testing.T, _ bool) leasetest.Conn {
	return newConn(newClient(t, s.Endpoint))
}

// newClient returns a gateway client of endpoints, closed when the test
// ends.
func newClient(t *testing.T, endpoints ...string) *gateway.Client {
	t.Helper()
	c, err := gateway.New(gateway.Config{Endpoints: endpoints})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sharedClient returns a client of the shared server.
func sharedClient(t *testing.T) *gateway.Client {
	t.Helper()
	return newClient(t, strings.Split(leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv), ",")...)
}

// conn is a client of an etcd server, for the suite: the lease's calls
// through it, and what the tests do behind a lease's back.
type conn struct {
	leasetest.Calls[txnlease.Client, *txnlease.Lease]
	c *gateway.Client
}

func newConn(c *gateway.Client) conn {
	return conn{leasetest.Calls[txnlease.Client, *txnlease.Lease]{Client: c,
		Acquirer: txnlease.Acquire, Claimer: txnlease.Claim, Lister: txnlease.List}, c}
}

// ctx bounds what a test does behind a lease's back.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// Expire ends the etcd lease of an id's key at once: a revoked lease is
// what etcd's leader does with an expired one.
func (c conn) Expire(t *testing.T, prefix string, node int64) {
	t.Helper()
	key := leaseKey(prefix, node)
	kvs, err := c.c.Range(ctx(t), key, "")
	require.NoError(t, err)
	require.Len(t, kvs, 1, "no key %s", key)
	require.NoError(t, c.c.Revoke(ctx(t), kvs[0].Lease))
}

func (c conn) Delete(t *testing.T, prefix string, node int64) {
	t.Helper()
	_, err := c.c.Delete(ctx(t), leaseKey(prefix, node), "")
	require.NoError(t, err)
}

// Put writes the key without an etcd lease, so it does not expire.
func (c conn) Put(t *testing.T, prefix string, node int64, value string) bool {
	t.Helper()
	require.NoError(t, c.c.Put(ctx(t), leaseKey(prefix, node), value, 0))
	return false
}

func (c conn) Key(t *testing.T, prefix string, node int64) (exists, expires bool) {
	t.Helper()
	kvs, err := c.c.Range(ctx(t), leaseKey(prefix, node), "")
	require.NoError(t, err)
	if len(kvs) == 0 {
		return false, false
	}
	return true, kvs[0].Lease != 0 // etcd deletes a key with its lease
}

func (c conn) CorruptMark(t *testing.T, prefix string, node int64) string {
	t.Helper()
	key := fmt.Sprintf("%s/mark/%d", prefix, node)
	require.NoError(t, c.c.Put(ctx(t), key, "yesterday", 0))
	return key
}

// Settle writes the prefix's epoch as Acquire does.
func (c conn) Settle(t *testing.T, prefix string) {
	t.Helper()
	require.NoError(t, c.c.Put(ctx(t), prefix+"/epoch", "settled", 0))
}

// WaitConnected waits until the client reads again after a server
// restart: it polls, with a bound.
func (c conn) WaitConnected(t *testing.T) {
	t.Helper()
	require.Eventually(t, c.ready, 30*time.Second, 10*time.Millisecond, "etcd did not answer again")
}

// ready reports whether a read succeeds within 200ms.
func (c conn) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.c.Range(ctx, "ready", "")
	return err == nil
}

func leaseKey(prefix string, node int64) string { return fmt.Sprintf("%s/lease/%d", prefix, node) }
