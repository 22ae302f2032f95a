package ringflake_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// A clock anomaly is named by its cause. A wall clock that stands still
// while calls keep coming uses up its tick's sequence numbers, and the
// calls that wait for the next tick in vain fail — with ErrClockFrozen,
// not ErrClockRollback: the clock did not step back. A clock that steps
// back is still a rollback.

// frozenLoad freezes the clock of g and makes calls from goroutines
// concurrent callers until they have made 4 ticks' worth of calls; it
// returns the errors by kind. The freeze outlasts the load: the waits of
// the calls that fail come to seconds.
func frozenLoad(t *testing.T, g *ringflake.Generator, clk *simclock.Clock, goroutines int) (frozen, rollback, other int) {
	t.Helper()
	clk.Freeze(time.Minute)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 * 4096 / goroutines {
				_, err := g.Next()
				mu.Lock()
				switch {
				case err == nil:
				case errors.Is(err, ringflake.ErrClockRollback):
					rollback++
				case errors.Is(err, ringflake.ErrClockFrozen):
					var fe *strategies.FrozenError
					if assert.ErrorAs(t, err, &fe) {
						assert.Positive(t, fe.Behind)
					}
					frozen++
				default:
					t.Errorf("unexpected error: %v", err)
					other++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return frozen, rollback, other
}

func TestFrozenClockIsNotARollback(t *testing.T) {
	for _, strategy := range []string{"error", "wait:5ms", "ring", "ring,wait:5ms,error", "logical:1s", "ring,logical:1s"} {
		for _, mode := range clockModes(time.Millisecond) {
			t.Run(strategy+"/"+mode.name, func(t *testing.T) {
				s, err := strategies.Parse(strategy)
				require.NoError(t, err)
				clk := simclock.New(start)
				var events []ringflake.RollbackEvent
				g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithStrategy(s),
					ringflake.WithRollbackHook(func(e ringflake.RollbackEvent) { events = append(events, e) }))
				require.NoError(t, err)
				_, err = g.Next()
				require.NoError(t, err)

				frozen, rollback, _ := frozenLoad(t, g, clk, 4)
				st := g.Stats()
				t.Logf("frozen %d, rollback %d; stats: rollbacks %d, errors %+v, borrowed %v", frozen, rollback, st.Rollbacks, st.Errors, st.Borrowed)
				assert.Zero(t, rollback, "errors matching ErrClockRollback")
				assert.Zero(t, st.Errors.Rollback, "errors counted as rollbacks")
				assert.LessOrEqual(t, st.Rollbacks, uint64(1), "a freeze that starts between two re-syncs may count once, as a step of less than a tick")
				assert.Empty(t, events, "no rollback event")
				if s, _ := strategies.PromiseOf(s); s.MaxLead > 0 {
					assert.Zero(t, frozen, "the logical strategy borrows the next tick instead")
					assert.Positive(t, st.Borrowed)
				} else {
					assert.Positive(t, frozen, "the frozen tick's sequence ran out")
				}
			})
		}
	}
}

// A step back is still a rollback: after the tick is used up, and when the
// clock steps back while a call waits for the next tick.
func TestStepBackIsStillARollback(t *testing.T) {
	for _, mode := range clockModes(time.Millisecond) {
		t.Run(mode.name, func(t *testing.T) {
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithStrategy(strategies.Error()))
			require.NoError(t, err)
			for range 100 {
				_, err := g.Next()
				require.NoError(t, err)
			}
			clk.Add(time.Millisecond)
			_, err = g.Next()
			require.NoError(t, err)
			clk.Step(-3 * time.Millisecond)
			clk.Add(time.Millisecond) // the monotonic clock sees it at the next tick
			_, err = g.Next()
			require.ErrorIs(t, err, ringflake.ErrClockRollback)
			require.NotErrorIs(t, err, ringflake.ErrClockFrozen)
		})
	}
}

// The wait of TestStepDuringTickWaitIsARollback on a clock that stands
// still instead of stepping back: a frozen clock, not a rollback.
func TestTickWaitOnAStillClockIsAFreeze(t *testing.T) {
	layout := testLayout(t, "twitter,node=18,seq=4") // 16 a tick
	for _, mode := range clockModes(layout.Spec().Unit) {
		t.Run(mode.name, func(t *testing.T) {
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithLayout(layout), ringflake.WithStrategy(strategies.Error()))
			require.NoError(t, err)
			for range 16 {
				_, err := g.Next()
				require.NoError(t, err)
			}
			clk.Freeze(time.Second)
			_, err = g.Next()
			require.ErrorIs(t, err, ringflake.ErrClockFrozen)
			require.NotErrorIs(t, err, ringflake.ErrClockRollback)
			var fe *strategies.FrozenError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, layout.Spec().Unit, fe.Behind, "a whole tick short of the next tick")
		})
	}
}

// A wall clock that stands still 3 ms of a call's 10 ms wait for the next
// tick is a freeze, never a rollback: it was reported as "clock moved
// backwards … 3ms behind the newest ID issued, at 00.010" (Stats.Rollbacks
// 1, Freezes 0) although no ID was issued at 00.010. Under "error" the
// call fails with ErrClockFrozen, 3 ms short of the tick it waited for.
func TestPartlyStillClockDuringATickWaitIsAFreeze(t *testing.T) {
	layout := ringflake.SonyflakeLayout()
	for _, mode := range clockModes(layout.Spec().Unit) {
		t.Run(mode.name, func(t *testing.T) {
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithLayout(layout), ringflake.WithStrategy(strategies.Error()))
			require.NoError(t, err)
			for range layout.MaxSequence() + 1 { // use up the tick at 00.000
				_, err := g.Next()
				require.NoError(t, err)
			}
			clk.Freeze(3 * time.Millisecond)
			_, err = g.Next()
			require.NotErrorIs(t, err, ringflake.ErrClockRollback)
			require.ErrorIs(t, err, ringflake.ErrClockFrozen)
			var fe *strategies.FrozenError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, 3*time.Millisecond, fe.Behind, "short of the tick it waited for")
			st := g.Stats()
			assert.Zero(t, st.Rollbacks)
			if mode.name == "monotonic" {
				assert.Equal(t, uint64(1), st.Freezes, "the re-sync after the wait saw the wall fall behind the monotonic clock")
			}
			id, err := g.Next() // the next call waits for the tick as usual
			require.NoError(t, err)
			assert.Equal(t, start.Add(layout.Spec().Unit), id.Time(layout))
		})
	}
}

// slowWall is a simulated clock whose next wall read takes time: Now
// first lets d of time pass, once, as when a goroutine is preempted
// between its monotonic read and its wall read.
type slowWall struct {
	*simclock.Clock
	d time.Duration
}

func (c *slowWall) Now() time.Time {
	c.Add(c.d)
	c.d = 0
	return c.Clock.Now()
}

// A step back met by a re-sync whose wall read took longer than the step
// was counted as nothing — the wall read's own duration was taken for the
// slack of the estimate — while the strategy met the rollback: an error
// of ErrClockRollback with Stats.Rollbacks 0 (TestComboConcurrent, 1 run
// in 40 at -cpu 16 -race). A wall reading below a tick the wall clock was
// read at before is a step back however long the read took.
func TestSlowWallReadStillSeesTheStep(t *testing.T) {
	clk := &slowWall{Clock: simclock.New(start)}
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Error()))
	require.NoError(t, err)
	for range 5 {
		_, err := g.Next()
		require.NoError(t, err)
		clk.Clock.Add(time.Millisecond)
	}
	clk.d = 200 * time.Millisecond // the next wall read takes 200 ms
	clk.Clock.Step(-284 * time.Millisecond)
	clk.Clock.Add(time.Millisecond) // into the next tick: the estimate re-syncs
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback)
	assert.Equal(t, uint64(1), g.Stats().Rollbacks, "the step the strategy met is counted")
	for range 3 { // the same step is not counted again
		clk.Clock.Add(time.Millisecond)
		_, err = g.Next()
		require.ErrorIs(t, err, ringflake.ErrClockRollback)
	}
	assert.Equal(t, uint64(1), g.Stats().Rollbacks)
}

// duringWall is a simulated clock whose next wall read lets other calls
// run first: Now runs during, once, before it reads the wall, as when a
// goroutine is preempted between its monotonic read and its wall read
// while other goroutines call the generator and the clock moves.
type duringWall struct {
	*simclock.Clock
	during func()
}

func (c *duringWall) Now() time.Time {
	if f := c.during; f != nil {
		c.during = nil
		f()
	}
	return c.Clock.Now()
}

// A step back that the first re-sync to read the wall behind it cannot
// tell from the slack of its own slow read (its reading of the greatest
// tick was loaded before another call read the wall a tick higher and
// issued there) was counted by nobody: the next re-sync, which does know
// that tick, took the last re-sync's reading below it for a sign that the
// step was counted already. The strategy met the rollback, and Stats said
// none happened: "clock moved backwards: it reads 00.010, 30ms behind the
// newest ID issued, at 00.040, but Stats.Rollbacks is 0"
// (TestComboConcurrent, seed 34, sonyflake, wait:20ms, 1 run in 40–80 at
// -cpu 16 -race).
func TestStepHiddenInAnEarlierSlowReadIsCounted(t *testing.T) {
	layout := ringflake.SonyflakeLayout() // 10 ms ticks
	for _, tc := range []struct {
		name  string
		after func(*simclock.Clock) // what the wall does after the step, before the next call
		reads time.Duration         // where the next call finds the wall
	}{
		{"the wall runs on", func(c *simclock.Clock) { c.Add(5 * time.Millisecond) }, 15 * time.Millisecond},
		{"the wall stands still", func(c *simclock.Clock) { c.Freeze(time.Second); c.Add(40 * time.Millisecond) }, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &duringWall{Clock: simclock.New(start)}
			s, err := strategies.Parse("wait:20ms")
			require.NoError(t, err)
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(layout), ringflake.WithStrategy(s))
			require.NoError(t, err)

			clk.Clock.Add(12 * time.Millisecond) // into tick 1: the next call re-syncs
			var other ringflake.ID
			clk.during = func() { // between that call's monotonic read and its wall read:
				clk.Clock.Add(28 * time.Millisecond) // 00.040
				other, err = g.Next()                // another call re-syncs at tick 4 and issues there
				require.NoError(t, err)
				clk.Clock.Step(-30 * time.Millisecond) // 00.010
			}
			_, err = g.Next()
			require.NoError(t, err, "its wall read came after the step: it issues at tick 1, before the other call returned")
			assert.Equal(t, start.Add(40*time.Millisecond), other.Time(layout))
			assert.Zero(t, g.Stats().Rollbacks, "the slow re-sync cannot tell the step from its own slack: the other call's read may have come after its own")

			tc.after(clk.Clock)
			_, err = g.Next()
			var re *strategies.RollbackError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, start.Add(tc.reads), re.Clock)
			assert.Equal(t, start.Add(40*time.Millisecond), re.Newest)
			assert.Equal(t, uint64(1), g.Stats().Rollbacks, "the step the strategy met is counted")

			for range 3 { // the same step is not counted again
				clk.Clock.Add(time.Millisecond)
				_, err = g.Next()
				require.ErrorIs(t, err, ringflake.ErrClockRollback)
			}
			assert.Equal(t, uint64(1), g.Stats().Rollbacks)
		})
	}
}
