package ringflake_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// At capacity, a generator that also observes IDs 1–2 ticks ahead of its
// clock leads by the observed ID's tick (plus one where that tick's
// sequence is used up) and then waits for the clock, as it does without
// Observe: its lead never runs away to WithMaxForward, and no call fails
// with a rollback the clock never made (it grew to the bound and then
// returned "999 ms behind" with Stats.Rollbacks 0).
func TestObserveAtCapacityKeepsItsLead(t *testing.T) {
	layout := testLayout(t, "twitter,node=18,seq=4") // 16 IDs a tick: capacity comes fast
	unit := layout.Spec().Unit
	for _, sname := range []string{"error", "ring,wait:5ms,error"} {
		for _, mode := range clockModes(unit) {
			t.Run(sname+"/"+mode.name, func(t *testing.T) {
				s, err := strategies.Parse(sname)
				require.NoError(t, err)
				clk := simclock.New(start)
				g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithLayout(layout), ringflake.WithStrategy(s))
				require.NoError(t, err)
				seen := map[ringflake.ID]bool{}
				buf := make([]ringflake.ID, 40) // more than two ticks hold
				for i := range 100 {
					peer, err := layout.Compose(clk.Now().Add(3*unit/2), 2, int64(i%16))
					require.NoError(t, err)
					require.NoError(t, g.Observe(peer))
					n, err := g.NextN(context.Background(), buf)
					require.NoError(t, err, "round %d", i)
					for _, id := range buf[:n] {
						require.False(t, seen[id], "ID %d issued twice", id)
						seen[id] = true
						require.Greater(t, id, peer)
						// The observed tick, plus one where its sequence is
						// used up, plus one for the time the call's own
						// waits let pass.
						require.LessOrEqual(t, layout.Tick(id.Time(layout))-layout.Tick(clk.Now()), int64(3),
							"round %d: the lead grows", i)
					}
				}
				st := g.Stats()
				assert.Zero(t, st.Rollbacks)
				assert.LessOrEqual(t, st.MaxLead, 3*unit)
			})
		}
	}
}

// The stress of the issue on the real clock: goroutines call NextN in a
// loop, others observe an ID 1.5 ms ahead of the clock and call Next, for
// about 1.5 s in all; no call fails, no ID is issued twice. (Before the
// fix the lead grew to WithMaxForward and calls failed with
// ErrClockRollback, "999 ms behind", with Stats.Rollbacks 0.) The default
// layout reaches its capacity only on a fast machine, so the stress also
// runs on a layout of 16 IDs a tick, which every machine fills.
func TestObserveAtCapacityOnTheRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 1.5 s on the real clock")
	}
	t.Run("twitter", func(t *testing.T) { observeStress(t, ringflake.TwitterLayout(), time.Second) })
	t.Run("seq=4", func(t *testing.T) { observeStress(t, testLayout(t, "twitter,node=18,seq=4"), time.Second/2) })
}

func observeStress(t *testing.T, layout ringflake.Layout, runFor time.Duration) {
	g, err := ringflake.New(919, ringflake.WithLayout(layout)) // the default strategy and the system clock
	require.NoError(t, err)
	defer g.Close(context.Background())
	l := g.Layout()
	ids := &collector{seen: map[ringflake.ID]bool{}}
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		failed  = make(chan error, 16)
		calls   atomic.Int64
		observe atomic.Int64
	)
	deadline := time.Now().Add(runFor)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]ringflake.ID, 512)
			for i := 0; !stop.Load(); i++ {
				if w%4 == 3 {
					peer, err := l.Compose(time.Now().Add(1500*time.Microsecond), 3, int64(i)%(layout.MaxSequence()+1))
					if err == nil {
						err = g.Observe(peer)
					}
					var id ringflake.ID
					if err == nil {
						id, err = g.Next()
					}
					if err != nil {
						failed <- err
						return
					}
					observe.Add(1)
					ids.add(id)
					continue
				}
				n, err := g.NextN(context.Background(), buf)
				ids.add(buf[:n]...)
				calls.Add(1)
				if err != nil {
					failed <- err
					return
				}
				if w == 0 && time.Now().After(deadline) {
					stop.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Errorf("a call failed: %v", err)
	}
	st := g.Stats()
	t.Logf("%d NextN calls, %d Observe+Next, %d IDs; stats: rollbacks %d, max lead %v", calls.Load(), observe.Load(), len(ids.seen), st.Rollbacks, st.MaxLead)
	require.Empty(t, ids.dups, "IDs issued twice")
	assert.Less(t, st.MaxLead, 100*time.Millisecond, "the lead stays near the observed IDs")
}

// Observing an ID at or below the newest one changes nothing: under
// "error" a later step back still fails, where it used to arm the lead
// and let NextN issue 10,000 IDs 300 ms ahead of the clock.
func TestObserveBelowTheNewestChangesNothing(t *testing.T) {
	layout := ringflake.SonyflakeLayout()
	for _, mode := range clockModes(layout.Spec().Unit) {
		t.Run(mode.name, func(t *testing.T) {
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithLayout(layout), ringflake.WithStrategy(strategies.Error()))
			require.NoError(t, err)
			clk.Add(10 * time.Millisecond)
			newest, err := g.Next()
			require.NoError(t, err)
			require.Equal(t, start.Add(10*time.Millisecond), newest.Time(layout))
			peer, err := layout.Compose(start.Add(5*time.Millisecond), 2, 0)
			require.NoError(t, err)
			require.NoError(t, g.Observe(peer))

			clk.Step(-300 * time.Millisecond)
			clk.Add(layout.Spec().Unit) // a tick of monotonic time: the step is seen
			ids := make([]ringflake.ID, 10_000)
			n, err := g.NextN(context.Background(), ids)
			require.ErrorIs(t, err, ringflake.ErrClockRollback, "%d IDs issued, the last at %v", n, ids[max(n-1, 0)].Time(layout).Sub(start))
			assert.Zero(t, n)
			assert.Equal(t, uint64(1), g.Stats().Rollbacks)
		})
	}
}
