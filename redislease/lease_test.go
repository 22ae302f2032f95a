package redislease_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// TestConformance runs the lease modules' shared suite against Redis.
func TestConformance(t *testing.T) { leasetest.Run(t, driver{}) }

func TestAcquireNilClient(t *testing.T) {
	_, err := redislease.Acquire(context.Background(), nil, redislease.Options{})
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// scriptCalls counts the scripts a client runs.
type scriptCalls struct{ n atomic.Int64 }

func (*scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" { // one per Script.Run (an EVAL may follow)
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (*scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestAcquireInChunks: Acquire tries 1024 ids per script call, so that a
// range of 65,536 ids that is all but full does not block the server for
// the whole scan; it still takes the lowest free id, and a full range is a
// RangeFullError after 64 calls (after the skew check's samples of the
// server's TIME, scripts too).
func TestAcquireInChunks(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv))
	calls := &scriptCalls{}
	c.AddHook(calls)
	prefix := leasetest.Prefix(t)
	newConn(c).Settle(t, prefix)
	opts := redislease.Options{Prefix: prefix, Layout: leasetest.SmallLayout(t, 16), TTL: time.Minute}
	const free = 40000
	// The 65,535 SETs go through a client of their own, patient enough
	// for a loaded machine (the fail-fast one gives up after 2 s).
	loader := redis.NewClient(&redis.Options{Addr: c.Options().Addr, ReadTimeout: time.Minute, DisableIdentity: true})
	t.Cleanup(func() { _ = loader.Close() })
	p := loader.Pipeline()
	for i := range 1 << 16 {
		if i != free {
			p.Set(ctx, fmt.Sprintf("{%s}:lease:%d", prefix, i), "someone", time.Minute)
		}
	}
	_, err := p.Exec(ctx)
	require.NoError(t, err)

	l, err := redislease.Acquire(ctx, c, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(ctx) })
	assert.Equal(t, int64(free), l.Node())
	assert.Equal(t, int64(lease.DefaultSamples+free/1024+1), calls.n.Load(),
		"the skew check's samples of TIME, then one call per chunk of 1024 ids up to the free one")

	calls.n.Store(0)
	_, err = redislease.Acquire(ctx, c, opts)
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	var full *lease.RangeFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, lease.RangeFullError{Package: "redislease", Prefix: prefix, Nodes: 1 << 16}, *full)
	assert.Equal(t, int64(lease.DefaultSamples+64), calls.n.Load(), "the samples of TIME and 64 chunks of 1024 ids")
}

// TestRestartThatLostRecentWrites: A holds node 0; Redis restarts and the
// restart loses A's latest writes — its acquisition — as a crash with
// appendfsync everysec, an old snapshot or a failover to a lagging replica
// can. The prefix's epoch survived, so only the server's new run_id tells.
// B then gets node 0 while A still believes it holds it; B must wait out a
// quiet period, and no ID is issued twice while both try.
func TestRestartThatLostRecentWrites(t *testing.T) {
	s := driver{}.StartServer(t).(server)
	c := newClient(t, s.Addr)
	prefix := leasetest.Prefix(t)
	newConn(c).Settle(t, prefix)
	type side struct {
		clk    *clock.Mock
		lease  *redislease.Lease
		gen    *ringflake.Generator
		gclk   *simclock.Clock
		events chan lease.Event
	}
	newSide := func() *side {
		sd := &side{clk: clock.NewMock(), gclk: simclock.New(leasetest.Start), events: make(chan lease.Event, 16)}
		sd.clk.Set(leasetest.Start)
		l, err := redislease.Acquire(context.Background(), c, redislease.Options{Prefix: prefix, TTL: time.Minute,
			Clock: sd.clk, MaxSkew: -1, OnEvent: func(e lease.Event) { sd.events <- e }})
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		sd.lease = l
		sd.gen, err = ringflake.New(l.Node(), ringflake.WithLease(l), ringflake.WithClock(sd.gclk), ringflake.WithStrategy(strategies.Default()))
		require.NoError(t, err)
		return sd
	}
	next := func(sd *side) lease.Event {
		select {
		case e := <-sd.events:
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no lease event within 30s")
			return lease.Event{}
		}
	}
	a := newSide()
	require.Equal(t, int64(0), a.lease.Node())
	require.True(t, a.lease.Held())

	s.Stop(t)
	s.Start(t)
	newConn(c).WaitConnected(t)
	ctx := context.Background()
	require.NoError(t, c.Del(ctx, fmt.Sprintf("{%s}:lease:0", prefix), fmt.Sprintf("{%s}:node:0", prefix)).Err(),
		"the restart lost A's acquisition")
	b := newSide()
	require.Equal(t, int64(0), b.lease.Node(), "the server forgot A")
	assert.False(t, b.lease.Held(), "the server process changed: quiet period")
	assert.True(t, a.lease.Held(), "A does not know yet")

	seen := map[ringflake.ID]string{}
	issued := map[string]int{}
	for i := 1; i <= 62; i++ { // past the quiet period, TTL + Margin
		for _, sd := range []*side{a, b} {
			sd.clk.Add(time.Second)
			sd.gclk.Add(time.Second)
		}
		if i%20 == 0 {
			if i == 20 {
				e := next(a)
				require.Equal(t, lease.Lost, e.Kind, "A's renewal finds B's token: %+v", e)
			}
			require.Equal(t, lease.Renewed, next(b).Kind)
		}
		for who, sd := range map[string]*side{"A": a, "B": b} {
			for range 3 {
				id, err := sd.gen.Next()
				if err != nil {
					require.ErrorIs(t, err, ringflake.ErrLeaseLost)
					break
				}
				prev, dup := seen[id]
				require.False(t, dup, "%s issued %v, an ID %s issued before", who, id, prev)
				seen[id] = who
				issued[who]++
			}
		}
	}
	assert.Positive(t, issued["A"], "A issued until its renewal found B")
	assert.Positive(t, issued["B"], "B issues after the quiet period")
	assert.True(t, b.lease.Held())
}

// TestScriptsNeedINFO: the scripts read the server's run_id from INFO to
// notice restarts; a client whose ACL denies INFO cannot acquire (the
// server's error), rather than acquire blind.
func TestScriptsNeedINFO(t *testing.T) {
	s := driver{}.StartServer(t).(server)
	c := newClient(t, s.Addr)
	ctx := context.Background()
	require.NoError(t, c.Do(ctx, "ACL", "SETUSER", "noinfo", "on", ">secret", "~*", "+@all", "-info").Err())
	limited := redis.NewClient(&redis.Options{Addr: s.Addr, Username: "noinfo", Password: "secret", MaxRetries: -1, DisableIdentity: true})
	t.Cleanup(func() { _ = limited.Close() })
	_, err := redislease.Acquire(ctx, limited, redislease.Options{Prefix: leasetest.Prefix(t)})
	require.Error(t, err)
	var rerr redis.Error
	require.ErrorAs(t, err, &rerr, "the server's refusal")
	assert.NotErrorIs(t, err, ringflake.ErrNodeUnavailable)
}

// TestSaveOvertakenByALaterOne: a save that reaches Redis after a later
// save of the same lease (here, one held back on its connection while the
// next went on another) changes nothing and reports lease.ErrStaleSave.
func TestSaveOvertakenByALaterOne(t *testing.T) {
	ctx := context.Background()
	c, delay := driver{}.ConnectDelayed(t)
	proxy := delay.(*leasetest.Proxy)
	prefix := leasetest.Prefix(t)
	c.Settle(t, prefix)
	l, err := c.Acquire(ctx, lease.Options{Prefix: prefix, TTL: time.Minute, Timeout: 30 * time.Second, MaxSkew: -1})
	require.NoError(t, err)
	defer l.Close(ctx)
	at := func(ms int) ringflake.Mark {
		limit := leasetest.Start.Add(time.Duration(ms) * time.Millisecond)
		return ringflake.Mark{Limit: limit, Since: limit, Node: l.Node(), Layout: "twitter"}
	}

	proxy.HoldSave()
	first := make(chan error, 1)
	go func() { first <- l.SaveMark(ctx, at(200)) }()
	proxy.WaitHeld(t)
	require.NoError(t, l.SaveMark(ctx, at(100)), "the later save, on another connection")
	proxy.Deliver(t)
	require.ErrorIs(t, <-first, lease.ErrStaleSave)
	mark, err := l.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, at(100), mark)
}
