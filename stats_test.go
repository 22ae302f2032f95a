package ringflake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

func newStatsGen(t *testing.T, s string, opts ...ringflake.Option) (*ringflake.Generator, *simclock.Clock) {
	t.Helper()
	st, err := strategies.Parse(s)
	require.NoError(t, err)
	clk := simclock.New(start)
	g, err := ringflake.New(1, append([]ringflake.Option{ringflake.WithClock(clk), ringflake.WithStrategy(st)}, opts...)...)
	require.NoError(t, err)
	return g, clk
}

func TestStatsCountIssuedIDs(t *testing.T) {
	g, clk := newStatsGen(t, "error")
	want := uint64(0)
	for tick := range 700 { // more than 256 ticks: slots are taken over and retire their counts
		for range tick % 7 {
			_, err := g.Next()
			require.NoError(t, err)
			want++
		}
		clk.Add(time.Millisecond)
	}
	assert.Equal(t, want, g.Stats().Issued)

	// Concurrent callers: every ID is counted once.
	var eg errgroup.Group
	for range 4 {
		eg.Go(func() error {
			for range 5000 {
				if _, err := g.Next(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, eg.Wait())
	assert.Equal(t, want+20000, g.Stats().Issued)
	assert.Positive(t, g.Stats().TickWaits, "20000 IDs in a few ticks wait for the next tick")
}

func TestStatsIgnoreAPreviousRunsMark(t *testing.T) {
	store := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
	g, clk := newStatsGen(t, "logical:2s", ringflake.WithMarkStore(store))
	for range 10 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	require.NoError(t, g.Close(context.Background()))
	clk.Add(time.Millisecond)
	again, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMarkStore(store))
	require.NoError(t, err)
	for range 300 {
		_, err := again.Next()
		require.NoError(t, err)
		clk.Add(time.Millisecond)
	}
	assert.Equal(t, uint64(300), again.Stats().Issued, "the marks the restart filled in are not IDs it issued")
	require.NoError(t, again.Close(context.Background()))
}

func TestStatsSeeRollbacks(t *testing.T) {
	for _, mode := range clockModes(time.Millisecond) {
		t.Run(mode.name, func(t *testing.T) {
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithStrategy(strategies.Ring()))
			require.NoError(t, err)
			issue := func(n int) {
				for range n {
					_, err := g.Next()
					require.NoError(t, err)
				}
			}
			issue(3)
			clk.Add(time.Millisecond)
			issue(3)
			clk.Step(-3 * time.Millisecond)
			clk.Add(time.Millisecond) // the monotonic path sees the step at the next tick
			issue(5)
			clk.Add(time.Millisecond)
			issue(5)

			s := g.Stats()
			assert.Equal(t, uint64(1), s.Rollbacks)
			want := 3 * time.Millisecond // measured against the monotonic clock: the step itself
			if mode.lag == 0 {
				want = 2 * time.Millisecond // reading to reading: the step less the tick that passed
			}
			assert.Equal(t, want, s.LargestRollback)
			assert.Equal(t, uint64(10), s.RingReuses, "every ID after the step came from spare room")
			assert.Zero(t, s.Borrowed)
			assert.Equal(t, uint64(16), s.Issued)
			assert.Equal(t, time.Millisecond, s.Lead, "the newest ID is a tick ahead of the clock")
		})
	}
}

func TestStatsCountWaitsBorrowingAndErrors(t *testing.T) {
	wait, clk := newStatsGen(t, "wait:5ms")
	_, err := wait.Next()
	require.NoError(t, err)
	clk.Step(-3 * time.Millisecond)
	clk.Add(time.Millisecond)
	_, err = wait.Next()
	require.NoError(t, err)
	s := wait.Stats()
	assert.Equal(t, uint64(1), s.Waits)
	assert.Equal(t, 2*time.Millisecond, s.Waited)

	logical, _ := newStatsGen(t, "logical:1s", ringflake.WithLayout(ringflake.SonyflakeLayout()))
	for range 256 * 4 {
		_, err := logical.Next()
		require.NoError(t, err)
	}
	s = logical.Stats()
	assert.Equal(t, 30*time.Millisecond, s.Borrowed, "three ticks of 10 ms")
	assert.Equal(t, 30*time.Millisecond, s.MaxLead)
	assert.Equal(t, 30*time.Millisecond, s.Lead)
	assert.Zero(t, s.TickWaits, "borrowing instead of waiting")

	failing, clk := newStatsGen(t, "error")
	_, err = failing.Next()
	require.NoError(t, err)
	clk.Step(-5 * time.Millisecond)
	clk.Add(time.Millisecond)
	for range 3 {
		_, err = failing.Next()
		require.ErrorIs(t, err, ringflake.ErrClockRollback)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = failing.NextContext(ctx)
	require.ErrorIs(t, err, ringflake.ErrClockRollback, "a failing strategy fails before any wait")
	require.NoError(t, failing.Close(context.Background()))
	_, err = failing.Next()
	require.ErrorIs(t, err, ringflake.ErrClosed)
	assert.Equal(t, ringflake.ErrorCounts{Rollback: 4, Closed: 1}, failing.Stats().Errors)
}

func TestRollbackHookAndLogger(t *testing.T) {
	var mu sync.Mutex
	var events []ringflake.RollbackEvent
	var logs bytes.Buffer
	hook := func(e ringflake.RollbackEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	g, clk := newStatsGen(t, "ring,wait:5ms,error", ringflake.WithRollbackHook(hook),
		ringflake.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))

	_, err := g.Next()
	require.NoError(t, err)
	clk.Step(-3 * time.Millisecond)
	clk.Add(time.Millisecond)
	for range 4 {
		_, err = g.Next()
		require.NoError(t, err)
	}
	require.Len(t, events, 1, "one event per rollback, not per call")
	assert.Equal(t, ringflake.RollbackEvent{At: start.Add(-2 * time.Millisecond), Behind: 2 * time.Millisecond,
		Strategy: "ring"}, events[0])

	// A second step, too large for the wait, on a ring with no spare room
	// left for it: the chain ends in an error.
	clk.Step(-time.Second)
	clk.Add(time.Millisecond)
	_, err = g.Next()
	require.NoError(t, err, "the ring still has room in the last 256 ticks")
	require.Len(t, events, 2)
	assert.Equal(t, "ring", events[1].Strategy)

	var line struct {
		Level    string `json:"level"`
		Msg      string `json:"msg"`
		Behind   int64  `json:"behind"` // nanoseconds, as slog's JSON handler writes durations
		Strategy string `json:"strategy"`
		Outcome  string `json:"outcome"`
	}
	first, _, _ := bytes.Cut(logs.Bytes(), []byte("\n"))
	require.NoError(t, json.Unmarshal(first, &line))
	assert.Equal(t, "WARN", line.Level)
	assert.Equal(t, int64(2*time.Millisecond), line.Behind)
	assert.Equal(t, "ring", line.Strategy)
	assert.Equal(t, "issued", line.Outcome)
	assert.Equal(t, 2, bytes.Count(logs.Bytes(), []byte("\n")))

	_, err = ringflake.New(0, ringflake.WithRollbackHook(nil))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
	_, err = ringflake.New(0, ringflake.WithLogger(nil))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

func TestRollbackHookReportsFailures(t *testing.T) {
	var events []ringflake.RollbackEvent
	g, clk := newStatsGen(t, "wait:5ms", ringflake.WithRollbackHook(func(e ringflake.RollbackEvent) { events = append(events, e) }))
	_, err := g.Next()
	require.NoError(t, err)
	clk.Step(-50 * time.Millisecond)
	clk.Add(time.Millisecond)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback)
	require.Len(t, events, 1)
	assert.Error(t, events[0].Err, "the call failed")
	assert.Equal(t, "", events[0].Strategy, "wait passed: the rollback was beyond its limit")
	require.ErrorIs(t, events[0].Err, ringflake.ErrClockRollback)
	assert.Equal(t, 49*time.Millisecond, events[0].Behind)
}

// NextN reports a rollback to the hook as Next does: once per rollback,
// not per batch or per ID, with what the strategy did.
func TestRollbackHookSeesBatches(t *testing.T) {
	var events []ringflake.RollbackEvent
	g, clk := newStatsGen(t, "ring,wait:5ms,error", ringflake.WithRollbackHook(func(e ringflake.RollbackEvent) { events = append(events, e) }))
	ids := make([]ringflake.ID, 64)
	_, err := g.NextN(context.Background(), ids)
	require.NoError(t, err)
	clk.Step(-3 * time.Millisecond)
	clk.Add(time.Millisecond)
	for range 3 {
		n, err := g.NextN(context.Background(), ids)
		require.NoError(t, err)
		require.Equal(t, len(ids), n)
	}
	require.Len(t, events, 1, "one event per rollback, not per batch")
	assert.Equal(t, ringflake.RollbackEvent{At: start.Add(-2 * time.Millisecond), Behind: 2 * time.Millisecond,
		Strategy: "ring"}, events[0])

	// A step beyond the wait fails the batch, and the hook says so.
	g2, clk2 := newStatsGen(t, "wait:5ms", ringflake.WithRollbackHook(func(e ringflake.RollbackEvent) { events = append(events, e) }))
	_, err = g2.NextN(context.Background(), ids)
	require.NoError(t, err)
	clk2.Step(-50 * time.Millisecond)
	clk2.Add(time.Millisecond)
	n, err := g2.NextN(context.Background(), ids)
	require.ErrorIs(t, err, ringflake.ErrClockRollback)
	assert.Zero(t, n)
	require.Len(t, events, 2)
	assert.Error(t, events[1].Err, "the call failed")
}

// A step back seen while nothing is behind the newest ID (an idle
// generator) reports no event, and neither does borrowing after it.
func TestRollbackHookIgnoresStepsThatLeaveNothingBehind(t *testing.T) {
	var events []ringflake.RollbackEvent
	g, clk := newStatsGen(t, "logical:1s", ringflake.WithRollbackHook(func(e ringflake.RollbackEvent) { events = append(events, e) }))
	// A step back is told from a clock that stood still by the wall
	// reading less than it read before, so each step follows a reading
	// (Observe reads the clock) and goes below it; the monotonic clock then
	// moves a tick, so that the next call reads the wall again.
	first, err := g.Next()
	require.NoError(t, err)
	clk.Add(10 * time.Millisecond)
	require.NoError(t, g.Observe(first))
	clk.Step(-3 * time.Millisecond) // idle: still 7 ms past the newest ID
	clk.Add(time.Millisecond)
	_, err = g.Next()
	require.NoError(t, err)
	clk.Add(10 * time.Millisecond)
	require.NoError(t, g.Observe(first))
	clk.Step(-5 * time.Millisecond) // idle again: 5 ms past the newest ID
	clk.Add(time.Millisecond)
	for range 3 * 4096 { // saturate: the logical strategy borrows ticks
		_, err = g.Next()
		require.NoError(t, err)
	}
	st := g.Stats()
	assert.Equal(t, uint64(2), st.Rollbacks)
	assert.Equal(t, 5*time.Millisecond, st.LargestRollback)
	assert.Positive(t, st.Borrowed)
	assert.Empty(t, events, "nothing was behind the newest ID when the steps were seen")

	clk.Step(-2 * time.Second) // now the clock is behind: one event
	clk.Add(time.Millisecond)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback, "beyond the lead")
	require.Len(t, events, 1)
	assert.Error(t, events[0].Err, "the call failed")
}

// Hooks cost nothing until a rollback: the normal path allocates nothing
// with them either.
func TestHooksDoNotAllocateOnTheNormalPath(t *testing.T) {
	g, _ := newStatsGen(t, "ring,wait:5ms,error", ringflake.WithRollbackHook(func(ringflake.RollbackEvent) {}),
		ringflake.WithLogger(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))))
	assert.Zero(t, testing.AllocsPerRun(5000, func() { _, _ = g.Next() }))
}
