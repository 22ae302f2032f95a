package redislease_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease"
)

// The tests run against real Redis servers, never a fake: the server of
// leasetest.RedisAddrEnv, which the tests share (each under a prefix of
// its own), and servers of their own (leasetest.StartRedis).

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
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	c := newClient(t, addr)
	require.NoError(t, c.Ping(context.Background()).Err(), "the server at %s=%s does not answer", leasetest.RedisAddrEnv, addr)
	return newConn(c)
}

// ConnectDelayed returns a client of the shared server through a
// leasetest.Proxy.
func (driver) ConnectDelayed(t *testing.T) (leasetest.Conn, leasetest.Delay) {
	t.Helper()
	p := leasetest.StartProxy(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv), false)
	c := newClient(t, p.Addr)
	require.NoError(t, c.Ping(context.Background()).Err(), "the server behind the proxy does not answer")
	return newConn(c), p
}

func (driver) Unreachable(t *testing.T) leasetest.Conn {
	return newConn(newClient(t, fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t))))
}

// DetectsRestart: the scripts compare the server's run_id with the one
// they saw last.
func (driver) DetectsRestart() bool { return true }

func (driver) TTLUnit() time.Duration { return time.Millisecond }

// StartServer starts a private redis-server that keeps its data as a
// fleet's Redis should: an append-only file synced on every write.
func (driver) StartServer(t *testing.T) leasetest.Server {
	return server{leasetest.StartRedis(t, true)}
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
type server struct{ *leasetest.RedisServer }

func (s server) Connect(t *testing.T, patient bool) leasetest.Conn {
	t.Helper()
	if !patient {
		return newConn(newClient(t, s.Addr))
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Minute, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return newConn(c)
}

// conn is a client of a Redis server, for the suite: the module's calls
// through it, and what the tests do behind a lease's back.
type conn struct {
	leasetest.Calls[redis.Scripter, *redislease.Lease]
	c *redis.Client
}

func newConn(c *redis.Client) conn {
	return conn{leasetest.Calls[redis.Scripter, *redislease.Lease]{Client: c, Acquirer: redislease.Acquire, Claimer: redislease.Claim, Lister: redislease.List}, c}
}

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
	leasetest.SettleRedis(t, c.c.Options().Addr, prefix)
}

// WaitConnected waits until the client reaches the server again: it dials
// on demand, so the first answer to a ping will do; polling, with a bound.
func (c conn) WaitConnected(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		return c.c.Ping(context.Background()).Err() == nil
	}, 30*time.Second, 10*time.Millisecond, "the client did not reconnect")
}

// The keys of a prefix, as the module writes them.
func leaseKey(prefix string, node int64) string { return fmt.Sprintf("{%s}:lease:%d", prefix, node) }
func nodeKey(prefix string, node int64) string  { return fmt.Sprintf("{%s}:node:%d", prefix, node) }
