package ringflake_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

func TestNewRejects(t *testing.T) {
	l := ringflake.TwitterLayout()
	sim := func(at time.Time) ringflake.Option { return ringflake.WithClock(simclock.New(at)) }
	for _, tc := range []struct {
		name string
		node int64
		opts []ringflake.Option
		want error
	}{
		{"node too large", 1024, nil, ringflake.ErrNodeOutOfRange},
		{"negative node", -1, nil, ringflake.ErrNodeOutOfRange},
		{"nil clock", 0, []ringflake.Option{ringflake.WithClock(nil)}, ringflake.ErrInvalidOption},
		{"nil option", 0, []ringflake.Option{nil}, ringflake.ErrInvalidOption},
		{"zero layout", 0, []ringflake.Option{ringflake.WithLayout(ringflake.Layout{})}, ringflake.ErrInvalidLayout},
		{"nil strategy", 0, []ringflake.Option{ringflake.WithStrategy(nil)}, strategies.ErrInvalidStrategy},
		{"lead shorter than a tick", 0, []ringflake.Option{ringflake.WithLayout(ringflake.SonyflakeLayout()),
			ringflake.WithStrategy(strategies.Logical(time.Millisecond))}, strategies.ErrInvalidStrategy},
		{"epoch after the clock", 0, []ringflake.Option{sim(l.Spec().Epoch.Add(-time.Second))}, ringflake.ErrBeforeEpoch},
		{"clock past the layout's lifetime", 0, []ringflake.Option{sim(l.Last().Add(time.Hour))}, ringflake.ErrLayoutExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ringflake.New(tc.node, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, g)
		})
	}

	_, err := ringflake.New(2000)
	var ne *ringflake.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, int64(1023), ne.Max)
}

func TestNextComposesFromClock(t *testing.T) {
	clk := simclock.New(start)
	l := ringflake.TwitterLayout()
	node, err := l.NodeID(2, 9)
	require.NoError(t, err)
	g, err := ringflake.New(node, ringflake.WithClock(clk))
	require.NoError(t, err)
	assert.Equal(t, node, g.Node())
	assert.Equal(t, l, g.Layout())

	for seq := int64(0); seq < 3; seq++ {
		id, err := g.Next()
		require.NoError(t, err)
		p, err := l.Decompose(id)
		require.NoError(t, err)
		assert.Equal(t, ringflake.Parts{Time: start, Tick: l.Tick(start), Node: node, Datacenter: 2, Worker: 9, Sequence: seq}, p)
	}
	clk.Add(1500 * time.Microsecond)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, start.Add(time.Millisecond), id.Time(l))
	assert.Equal(t, int64(0), id.Sequence(l))
}

// A used-up tick waits on the clock for the next one; the simulated clock
// makes the wait instant and exact.
func TestSequenceOverflowWaitsForNextTick(t *testing.T) {
	clk := simclock.New(start.Add(300 * time.Microsecond))
	l := ringflake.SonyflakeLayout() // 256 IDs per 10 ms
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Error()))
	require.NoError(t, err)
	var prev ringflake.ID
	for i := range 256*3 + 1 {
		id, err := g.Next()
		require.NoError(t, err)
		assert.Greater(t, id, prev)
		prev = id
		assert.Equal(t, int64(i/256), l.Tick(id.Time(l))-l.Tick(start), "ID %d", i)
	}
	// Three waits, each to the start of the next 10 ms tick.
	assert.Equal(t, 30*time.Millisecond-300*time.Microsecond, clk.Monotonic())
}

func TestLogicalBorrowsInsteadOfWaiting(t *testing.T) {
	clk := simclock.New(start)
	l := ringflake.SonyflakeLayout()
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(l),
		ringflake.WithStrategy(strategies.Logical(50*time.Millisecond)))
	require.NoError(t, err)

	// 5 ticks of the lead fit 6 ticks' worth of IDs without waiting...
	for i := range 256 * 6 {
		id, err := g.Next()
		require.NoError(t, err)
		assert.Equal(t, int64(i/256), l.Tick(id.Time(l))-l.Tick(start))
	}
	assert.Zero(t, clk.Monotonic())
	// ...then the lead is used up: the next ID waits one tick.
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, 10*time.Millisecond, clk.Monotonic())
	assert.Equal(t, int64(6), l.Tick(id.Time(l))-l.Tick(start))
}

func TestLayoutExpiresWithoutWrapping(t *testing.T) {
	l, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: start, Unit: time.Millisecond,
		TimeBits: 4, WorkerBits: 1, SequenceBits: 58})
	require.NoError(t, err)
	clk := simclock.New(l.Last())
	for _, s := range []string{"error", "logical:1s", "ring,wait:5ms,error"} {
		st, err := strategies.Parse(s)
		require.NoError(t, err)
		g, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(st))
		require.NoError(t, err)
		id, err := g.Next()
		require.NoError(t, err)
		assert.Equal(t, l.MaxTick(), l.Tick(id.Time(l)))
	}
	clk.Add(time.Millisecond)
	g, err := ringflake.New(0, ringflake.WithClock(simclock.New(l.Last())), ringflake.WithLayout(l))
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)
	_, err = ringflake.New(0, ringflake.WithClock(clk), ringflake.WithLayout(l))
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)

	// A running generator stops at the end of the layout.
	clk2 := simclock.New(l.Last())
	g, err = ringflake.New(0, ringflake.WithClock(clk2), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Logical(time.Second)))
	require.NoError(t, err)
	clk2.Add(time.Millisecond)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
}

func TestBeforeEpochAtRuntime(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(0, ringflake.WithClock(clk))
	require.NoError(t, err)
	clk.Set(ringflake.TwitterLayout().Spec().Epoch.Add(-time.Minute))
	clk.Add(time.Millisecond) // the generator sees the step at the next tick
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrBeforeEpoch)
}

// The clocks of github.com/benbjohnson/clock drive a generator too.
func TestBenbjohnsonClocks(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(start)
	g, err := ringflake.New(5, ringflake.WithClock(mock), ringflake.WithStrategy(strategies.Error()))
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	l := g.Layout()
	assert.Equal(t, start, id.Time(l))
	assert.Equal(t, int64(5), id.Node(l))

	mock.Add(-2 * time.Millisecond) // *clock.Mock moves back too
	_, err = g.Next()
	var re *strategies.RollbackError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 2*time.Millisecond, re.Behind)

	real, err := ringflake.New(5, ringflake.WithClock(clock.New()))
	require.NoError(t, err)
	a, err := real.Next()
	require.NoError(t, err)
	b, err := real.Next()
	require.NoError(t, err)
	assert.Greater(t, b, a)
}

// On the system clock (the default), IDs are unique and carry the wall
// clock's time. That they increase is not checked here: the default
// strategy reuses the ring's room when the host's clock steps back (an NTP
// correction may come at any moment), and IDs issued then are out of
// order by design; TestDefaultStrategyIssuesIncreasingIDs checks the order
// on a simulated clock that does not step.
func TestDefaultClockIssuesUniqueIDs(t *testing.T) {
	g, err := ringflake.New(1)
	require.NoError(t, err)
	seen := make(map[ringflake.ID]bool, 10001)
	var last ringflake.ID
	for range 10001 {
		id, err := g.Next()
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d issued twice", id)
		seen[id], last = true, id
	}
	assert.WithinDuration(t, time.Now(), last.Time(g.Layout()), time.Minute, "IDs carry the wall clock's time")
	require.NoError(t, g.Close(context.Background()))
}

// With the default strategy, on a clock that does not step back, IDs
// increase — across ticks, used-up ticks and waits for the next tick.
func TestDefaultStrategyIssuesIncreasingIDs(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(clk))
	require.NoError(t, err)
	prev, err := g.Next()
	require.NoError(t, err)
	for i := range 20000 {
		if i%3000 == 0 {
			clk.Add(700 * time.Microsecond)
		}
		id, err := g.Next()
		require.NoError(t, err)
		require.Greater(t, id, prev)
		prev = id
	}
	assert.Positive(t, g.Stats().TickWaits, "some calls waited for the next tick")
}

// Every strategy issues IDs without allocating on every path that does
// not wait: the normal path, the next tick taken when the clock has moved
// on, a rollback the ring absorbs or the logical strategy borrows across.
// A call that waits allocates what its clock's After allocates — here
// simclock's channel — and nothing else; a failing call allocates its
// error. Allocations are counted exactly, not averaged: one allocation per
// tick would show.
func TestNextDoesNotAllocate(t *testing.T) {
	ref := simclock.New(start)
	perAfter := mallocs(100, func() { <-ref.After(0) }) / 100
	for _, sc := range strategyCases {
		t.Run(sc.name, func(t *testing.T) {
			s, err := strategies.Parse(sc.name)
			require.NoError(t, err)
			clk := simclock.New(start)
			clk.Add(time.Millisecond / 2)
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(s))
			require.NoError(t, err)

			// No waits: the clock moves on after each tick's 4096 IDs.
			calls := 0
			assert.Zero(t, mallocs(3*4096, func() {
				_, err = g.Next()
				if calls++; calls%4096 == 0 {
					clk.Add(time.Millisecond)
				}
			}), "normal path")
			require.NoError(t, err)
			require.Zero(t, g.Stats().TickWaits+g.Stats().Waits, "nothing waited")

			// Waits: the clock stands still and the calls past each
			// tick's 4096 wait for the next tick (the logical strategy
			// borrows it instead, and waits only at its lead): each wait
			// goes through After, which allocates, and nothing else does.
			allocs, waits := mallocsAndWaits(g, perAfter, 3*4096, func() { _, err = g.Next() })
			require.NoError(t, err)
			if sc.maxLead == 0 {
				assert.Positive(t, waits, "calls waited for the next tick")
			}
			assert.Equal(t, waits*perAfter, allocs, "%d waits, %d allocations by After each", waits, perAfter)

			clk.Add(10 * time.Millisecond)
			_, err = g.Next()
			require.NoError(t, err)
			clk.Step(-3 * time.Millisecond)
			clk.Add(time.Millisecond) // the generator sees the step at the next tick
			failed, other := 0, 0
			allocs, waits = mallocsAndWaits(g, perAfter, 1000, func() {
				switch _, err := g.Next(); {
				case errors.Is(err, ringflake.ErrClockRollback):
					failed++
				case err != nil:
					other++
				}
			})
			require.Zero(t, other)
			if sc.name == "error" {
				assert.Equal(t, 3000, failed, "three rounds of 1000")
				assert.Equal(t, uint64(1000), allocs, "failing calls allocate their *RollbackError, nothing else")
				return
			}
			assert.Zero(t, failed)
			assert.Equal(t, waits*perAfter, allocs, "rollback path: %d waits (wait:5ms waits once for the clock)", waits)
		})
	}
}

// mallocsAndWaits is mallocs for calls of g that may wait: it returns the
// allocations of the round that allocated fewest beyond perWait for each
// of its waits, and how many waits (for a tick, for a strategy) that round
// made.
func mallocsAndWaits(g *ringflake.Generator, perWait uint64, n int, f func()) (allocs, waits uint64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	best := int64(math.MaxInt64)
	for range 3 {
		var before, after runtime.MemStats
		sb := g.Stats()
		runtime.ReadMemStats(&before)
		for range n {
			f()
		}
		runtime.ReadMemStats(&after)
		sa := g.Stats()
		a, w := after.Mallocs-before.Mallocs, sa.TickWaits+sa.Waits-sb.TickWaits-sb.Waits
		if extra := int64(a) - int64(w*perWait); extra < best {
			best, allocs, waits = extra, a, w
		}
	}
	return allocs, waits
}

// mallocs returns how many heap allocations n calls of f make, counted
// like testing.AllocsPerRun (GOMAXPROCS 1) but in total, not averaged. It
// returns the fewest of three rounds of n calls: the test binary's other
// goroutines allocate now and then (the runtime's, the testing package's),
// and those allocations are counted too; one round in three is clean.
func mallocs(n int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fewest := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			f()
		}
		runtime.ReadMemStats(&after)
		fewest = min(fewest, after.Mallocs-before.Mallocs)
	}
	return fewest
}

// fixedAfter is a simulated clock whose waits allocate nothing:
// simclock's After makes a channel per wait, and so does time.After. With
// it a test counts the generator's own allocations apart from its clock's
// (TestNextDoesNotAllocate counts both). After lets d pass and returns a
// closed channel.
type fixedAfter struct{ *simclock.Clock }

var closedChan = func() chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

func (f fixedAfter) After(d time.Duration) <-chan time.Time {
	f.Sleep(d)
	return closedChan
}

func TestNextContextCancelledWhileWaitingForTick(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(start)
	l := ringflake.SonyflakeLayout()
	g, err := ringflake.New(0, ringflake.WithClock(mock), ringflake.WithLayout(l))
	require.NoError(t, err)
	for range 256 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = g.NextContext(ctx) // the tick is used up and the mock never moves
	require.ErrorIs(t, err, context.Canceled)
}

// pausingClock is a wall-only clock that, once armed, holds its next
// reading before returning it: a goroutine preempted right after reading
// the clock.
type pausingClock struct {
	c      *simclock.Clock
	armed  atomic.Bool
	paused chan struct{}
	resume chan struct{}
}

func (p *pausingClock) Now() time.Time {
	now := p.c.Now()
	if p.armed.CompareAndSwap(true, false) {
		p.paused <- struct{}{}
		<-p.resume
	}
	return now
}
func (p *pausingClock) After(d time.Duration) <-chan time.Time { return p.c.After(d) }

// A call delayed between reading the clock and issuing, while another call
// issues in the next tick, has not seen a rollback: the clock only moved
// forward, so no strategy may fail it or count it as one.
func TestDelayedCallIsNotARollback(t *testing.T) {
	for _, name := range []string{"error", "ring", "ring,wait:5ms,error"} {
		t.Run(name, func(t *testing.T) {
			clk := simclock.New(start.Add(900 * time.Microsecond))
			pc := &pausingClock{c: clk, paused: make(chan struct{}), resume: make(chan struct{})}
			s, err := strategies.Parse(name)
			require.NoError(t, err)
			g, err := ringflake.New(1, ringflake.WithClock(pc), ringflake.WithStrategy(s))
			require.NoError(t, err)

			pc.armed.Store(true)
			type result struct {
				id  ringflake.ID
				err error
			}
			delayed := make(chan result)
			go func() {
				id, err := g.Next() // reads 12:00:00.0009, then waits
				delayed <- result{id, err}
			}()
			<-pc.paused
			clk.Add(200 * time.Microsecond)
			later, err := g.Next() // issues at 12:00:00.001
			require.NoError(t, err)
			close(pc.resume)

			a := <-delayed
			require.NoError(t, a.err)
			assert.NotEqual(t, later, a.id)
			st := g.Stats()
			assert.Zero(t, st.RingReuses)
			assert.Zero(t, st.Rollbacks)
		})
	}
}

// At the very end of a layout, a logical strategy whose lead reaches past
// the last tick stops with ErrLayoutExpired; it does not spin.
func TestLogicalAtTheLayoutsEnd(t *testing.T) {
	l, err := ringflake.ParseLayout("time=4,node=1,seq=0,width=5")
	require.NoError(t, err)
	clk := simclock.New(l.Last())
	for _, withMarks := range []bool{false, true} {
		opts := []ringflake.Option{ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Logical(time.Second))}
		if withMarks {
			opts = append(opts, ringflake.WithMarkStore(&recordingStore{}), ringflake.WithMarkAhead(5*time.Millisecond))
		}
		g, err := ringflake.New(0, opts...)
		require.NoError(t, err)
		id, err := g.Next()
		require.NoError(t, err)
		assert.Equal(t, l.MaxTick(), l.Tick(id.Time(l)))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err = g.NextContext(ctx) // the last tick is used up, and there is no later one to borrow
		cancel()
		require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
		clk = simclock.New(l.Last())
	}
}
