package ringflake_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// The clock's tick is the ring's hot tick: calls take it with one atomic
// add, and its slot is claimed whole while it is hot. These tests hold the
// hot tick to the ring's promises: what it did not issue goes back to its
// slot for a rollback to reuse, calls keep their order across goroutines,
// and Stats count every ID once.

// When the hot tick moves on, the sequence numbers it did not issue go
// back to its slot: a rollback into that tick reuses them.
func TestHotTickGivesBackWhatItDidNotIssue(t *testing.T) {
	l := testLayout(t, "twitter,node=10,seq=2,width=53") // four IDs a tick
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Ring()))
	require.NoError(t, err)
	next := func() ringflake.ID {
		t.Helper()
		id, err := g.Next()
		require.NoError(t, err)
		return id
	}
	tick := l.Tick(clk.Now())
	for seq := range int64(2) {
		id := next()
		require.Equal(t, [2]int64{tick, seq}, [2]int64{l.Tick(id.Time(l)), id.Sequence(l)})
	}
	clk.Add(l.Spec().Unit) // tick+1 becomes hot; tick gives back (tick, 2) and (tick, 3)
	id := next()
	require.Equal(t, [2]int64{tick + 1, 0}, [2]int64{l.Tick(id.Time(l)), id.Sequence(l)})

	clk.Step(-2 * l.Spec().Unit) // back into tick, seen at the next re-sync, a tick on:
	clk.Add(l.Spec().Unit)       // the ring reuses what the hot tick gave back
	for seq := int64(2); seq < 4; seq++ {
		id := next()
		assert.Equal(t, [2]int64{tick, seq}, [2]int64{l.Tick(id.Time(l)), id.Sequence(l)}, "reused")
	}
	id = next() // tick is used up: the ring goes on to tick+1's spare numbers
	assert.Equal(t, [2]int64{tick + 1, 1}, [2]int64{l.Tick(id.Time(l)), id.Sequence(l)})
	st := g.Stats()
	assert.Equal(t, uint64(6), st.Issued)
	assert.Equal(t, uint64(2), st.RingReuses, "the two of tick; tick+1 is the newest")
}

// Many goroutines call Next and NextN at once while the clock moves on
// (a tick of 64 IDs fills, and callers wait in line) and other goroutines
// Observe IDs ahead: every ID is unique, each is greater than every ID
// returned before its call started, and Stats.Issued counts each once.
func TestHotTickKeepsOrderAcrossGoroutines(t *testing.T) {
	l := testLayout(t, "twitter,node=10,seq=6,width=57")
	for _, mode := range clockModes(l.Spec().Unit) {
		t.Run(mode.name, func(t *testing.T) {
			clk := simclock.New(start)
			g, err := ringflake.New(1, ringflake.WithClock(mode.wrap(clk)), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Error()))
			require.NoError(t, err)
			other, err := ringflake.New(2, ringflake.WithClock(clk), ringflake.WithLayout(l))
			require.NoError(t, err)

			var done atomic.Int64 // the greatest ID returned so far
			ids := &collector{seen: map[ringflake.ID]bool{}}
			check := func(before int64, got ...ringflake.ID) error {
				for i, id := range got {
					if int64(id) <= before || (i > 0 && id <= got[i-1]) {
						return assert.AnError
					}
				}
				ids.add(got...)
				for last := int64(got[len(got)-1]); ; {
					d := done.Load()
					if last <= d || done.CompareAndSwap(d, last) {
						return nil
					}
				}
			}
			const workers, rounds = 8, 60
			for round := range rounds {
				var eg errgroup.Group
				for w := range workers {
					eg.Go(func() error {
						buf := make([]ringflake.ID, 1+(w+round)%7)
						for range 4 {
							before := done.Load()
							switch w % 4 {
							case 0, 1:
								id, err := g.Next()
								if err != nil {
									return err
								}
								if err := check(before, id); err != nil {
									t.Errorf("Next returned %v, not above %v returned before it started", id, ringflake.ID(before))
								}
							case 2:
								n, err := g.NextN(context.Background(), buf)
								if err != nil {
									return err
								}
								if err := check(before, buf[:n]...); err != nil {
									t.Errorf("NextN returned %v, not increasing above %v returned before it started", buf[:n], ringflake.ID(before))
								}
							default:
								id, err := other.Next()
								if err != nil {
									return err
								}
								if err := g.Observe(id); err != nil {
									return err
								}
								if mine, err := g.Next(); err != nil {
									return err
								} else if mine <= id {
									t.Errorf("Next returned %v after Observe(%v)", mine, id)
								} else {
									_ = check(before, mine)
								}
							}
						}
						return nil
					})
				}
				require.NoError(t, eg.Wait())
				clk.Add(l.Spec().Unit / 3)
			}
			require.Empty(t, ids.dups, "IDs issued twice")
			assert.Equal(t, uint64(len(ids.seen)), g.Stats().Issued, "every ID issued was returned, and counted once")
		})
	}
}

// Goroutines started at once on the system clock share its hot tick:
// every ID is unique and, per goroutine, increasing.
func TestCollidingCallsStayUnique(t *testing.T) {
	wide := testLayout(t, "twitter,node=0,seq=22")
	g, err := ringflake.New(0, ringflake.WithLayout(wide))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	const goroutines, each = 8, 1000
	ids := make([][]ringflake.ID, goroutines)
	var eg errgroup.Group
	var ready sync.WaitGroup
	ready.Add(goroutines)
	for i := range goroutines {
		eg.Go(func() error {
			ready.Done()
			ready.Wait() // all at once, so that they collide
			out := make([]ringflake.ID, 0, each)
			for range each {
				id, err := g.Next()
				if err != nil {
					return err
				}
				out = append(out, id)
			}
			ids[i] = out
			return nil
		})
	}
	require.NoError(t, eg.Wait())
	seen := make(map[ringflake.ID]bool, goroutines*each)
	for _, list := range ids {
		for j, id := range list {
			require.False(t, seen[id], "duplicate %v", id)
			seen[id] = true
			if j > 0 {
				require.Greater(t, id, list[j-1])
			}
		}
	}
	assert.Equal(t, uint64(goroutines*each), g.Stats().Issued)
}
