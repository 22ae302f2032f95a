package lualease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease/lualease"
	"github.com/ringflake/ringflake/redislease/resp"
)

// The lease over the light transport, package resp, runs the lease
// modules' conformance suite against real Redis servers, as redislease
// runs it over go-redis: the same scripts through another client.

// TestConformance runs the shared suite over resp.
func TestConformance(t *testing.T) { leasetest.Run(t, driver{}) }

// driver runs the conformance suite on lualease over resp.
type driver struct{}

func (driver) Connect(t *testing.T) leasetest.Conn {
	t.Helper()
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	c := newClient(t, resp.Options{Addr: addr})
	_, err := c.Do(context.Background(), "PING")
	require.NoError(t, err, "the server at %s=%s does not answer", leasetest.RedisAddrEnv, addr)
	return newConn(c)
}

// ConnectDelayed returns a client of the shared server through a
// leasetest.Proxy.
func (driver) ConnectDelayed(t *testing.T) (leasetest.Conn, leasetest.Delay) {
	t.Helper()
	p := leasetest.StartProxy(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv), false)
	c := newClient(t, resp.Options{Addr: p.Addr})
	_, err := c.Do(context.Background(), "PING")
	require.NoError(t, err, "the server behind the proxy does not answer")
	return newConn(c), p
}

func (driver) Unreachable(t *testing.T) leasetest.Conn {
	return newConn(newClient(t, resp.Options{Addr: fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t))}))
}

func (driver) DetectsRestart() bool { return true }

func (driver) TTLUnit() time.Duration { return time.Millisecond }

// StartServer starts a private redis-server that keeps its data as a
// fleet's Redis should: an append-only file synced on every write.
func (driver) StartServer(t *testing.T) leasetest.Server {
	return server{leasetest.StartRedis(t, true)}
}

// newClient returns a client that fails fast while the server is down,
// closed when the test ends. Zero timeouts in o are the test's: a second
// to dial, two to answer.
func newClient(t *testing.T, o resp.Options) *resp.Client {
	t.Helper()
	if o.DialTimeout == 0 {
		o.DialTimeout = time.Second
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout, o.WriteTimeout = 2*time.Second, 2*time.Second
	}
	c, err := resp.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// server is a redis-server of the test's own.
type server struct{ *leasetest.RedisServer }

func (s server) Connect(t *testing.T, patient bool) leasetest.Conn {
	t.Helper()
	if !patient {
		return newConn(newClient(t, resp.Options{Addr: s.Addr}))
	}
	return newConn(newClient(t, resp.Options{Addr: s.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute}))
}

// conn is a client of a Redis server, for the suite: the lease's calls
// through it, and what the tests do behind a lease's back.
type conn struct {
	leasetest.Calls[lualease.ScriptRunner, *lualease.Lease]
	c *resp.Client
}

func newConn(c *resp.Client) conn {
	return conn{leasetest.Calls[lualease.ScriptRunner, *lualease.Lease]{Client: c,
		Acquirer: lualease.Acquire, Claimer: lualease.Claim, Lister: lualease.List}, c}
}

// do runs a command behind the lease's back and returns its reply.
func (c conn) do(t *testing.T, args ...string) any {
	t.Helper()
	v, err := c.c.Do(context.Background(), args...)
	require.NoError(t, err, "%v", args)
	return v
}

// Expire makes a lease key expire now, the way a TTL running out does
// (PEXPIRE key 1; PEXPIRE 0 would delete it), and waits until the
// server's clock has passed that millisecond, polling PTTL with a bound.
func (c conn) Expire(t *testing.T, prefix string, node int64) {
	t.Helper()
	key := leaseKey(prefix, node)
	c.do(t, "PEXPIRE", key, "1")
	require.Eventually(t, func() bool {
		v, err := c.c.Do(context.Background(), "PTTL", key)
		return err == nil && v == int64(-2) // the key does not exist
	}, 5*time.Second, time.Millisecond)
}

func (c conn) Delete(t *testing.T, prefix string, node int64) {
	t.Helper()
	c.do(t, "DEL", leaseKey(prefix, node))
}

func (c conn) Put(t *testing.T, prefix string, node int64, value string) bool {
	t.Helper()
	c.do(t, "SET", leaseKey(prefix, node), value, "PX", "60000")
	return true
}

func (c conn) Key(t *testing.T, prefix string, node int64) (exists, expires bool) {
	t.Helper()
	d, ok := c.do(t, "PTTL", leaseKey(prefix, node)).(int64)
	require.True(t, ok, "PTTL's reply is an integer")
	return d != -2, d > 0 // -2: no key; -1: no TTL
}

func (c conn) CorruptMark(t *testing.T, prefix string, node int64) string {
	t.Helper()
	c.do(t, "HSET", nodeKey(prefix, node), "mark", "yesterday")
	return nodeKey(prefix, node)
}

// Settle writes the prefix's epoch as the scripts do, with the server's
// run_id.
func (c conn) Settle(t *testing.T, prefix string) {
	leasetest.SettleRedis(t, c.c.Addr(), prefix)
}

// WaitConnected waits until the client reaches the server again: it
// dials on demand, so the first answer to a ping will do; polling, with a
// bound.
func (c conn) WaitConnected(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := c.c.Do(context.Background(), "PING")
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "the client did not reconnect")
}

// The keys of a prefix, as the scripts write them.
func leaseKey(prefix string, node int64) string { return fmt.Sprintf("{%s}:lease:%d", prefix, node) }
func nodeKey(prefix string, node int64) string  { return fmt.Sprintf("{%s}:node:%d", prefix, node) }
