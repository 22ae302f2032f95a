package ringflake_test

import (
	"context"
	"errors"
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

// The generator takes from its ring in three ways: one ID at the clock's
// tick (Next), a run of one tick (NextN, and the line serving its
// waiters), and a walk over a range a strategy chose (the ring strategy
// reusing during a rollback, the logical strategy borrowing ahead, and the
// lane repeating either). These tests run the three together on one ring
// and hold each to both invariants of the ring: no pair twice, nothing
// above the saved high-water mark.

// collector gathers the IDs of many goroutines and reports duplicates.
type collector struct {
	mu   sync.Mutex
	seen map[ringflake.ID]bool
	dups []ringflake.ID
}

func (c *collector) add(ids ...ringflake.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if c.seen[id] {
			c.dups = append(c.dups, id)
		}
		c.seen[id] = true
	}
}

// TestTakePathsTogetherNeverIssueTwice runs Next and NextN from many
// goroutines on one generator whose clock a driver steps back and forward
// meanwhile, with 64 sequence numbers a tick so that ticks fill up: single
// takes, runs, the line, and walks (the ring reusing, the logical strategy
// borrowing, the lane) all take from one ring at once.
func TestTakePathsTogetherNeverIssueTwice(t *testing.T) {
	layout := testLayout(t, "twitter,node=16,seq=6")
	for _, tc := range []struct {
		strategy string
		borrows  bool // the logical strategy walks ahead when a tick is full; otherwise callers wait in line
	}{
		{"ring,logical:20ms", true},
		{"ring,wait:5ms,error", false},
	} {
		for _, mode := range clockModes(layout.Spec().Unit) {
			t.Run(tc.strategy+"/"+mode.name, func(t *testing.T) {
				mixTakePaths(t, layout, tc.strategy, tc.borrows, mode)
			})
		}
	}
}

// testLayout parses a layout a test needs.
func testLayout(t *testing.T, s string) ringflake.Layout {
	t.Helper()
	l, err := ringflake.ParseLayout(s)
	require.NoError(t, err)
	return l
}

// mixTakePaths is TestTakePathsTogetherNeverIssueTwice for one strategy
// and clock mode.
func mixTakePaths(t *testing.T, layout ringflake.Layout, strategy string, borrows bool, mode clockMode) {
	clk := simclock.New(start)
	s, err := strategies.Parse(strategy)
	require.NoError(t, err)
	g, err := ringflake.New(7, ringflake.WithClock(mode.wrap(clk)), ringflake.WithLayout(layout), ringflake.WithStrategy(s))
	require.NoError(t, err)

	const singles, runners, rounds = 4, 4, 1000
	ids := &collector{seen: map[ringflake.ID]bool{}}
	var (
		nexts, runs, rollbacks  atomic.Int64
		unexpected              = make(chan error, rounds*(singles+runners))
		steppedBack, steppedFwd int
	)
	issue := func(run bool, calls, size int) {
		buf := make([]ringflake.ID, size)
		for range calls {
			var err error
			if run {
				var n int
				n, err = g.NextN(context.Background(), buf)
				ids.add(buf[:n]...)
				runs.Add(1)
			} else {
				var id ringflake.ID
				id, err = g.Next()
				if err == nil {
					ids.add(id)
				}
				nexts.Add(1)
			}
			switch {
			case err == nil:
			case errors.Is(err, ringflake.ErrClockRollback):
				rollbacks.Add(1) // further back than the lead, with the ring used up
			default:
				unexpected <- err
				return
			}
		}
	}
	// In rounds: the clock moves half a tick, then every goroutine
	// makes its calls at once — about 32 IDs a tick of 64, in
	// bursts three times as many, which fill ticks — and now and
	// then the wall steps back or forward between two rounds.
	for i := range rounds {
		calls := 1
		if i%100 < 15 {
			calls = 3
		}
		var wg sync.WaitGroup
		for w := range singles + runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				issue(w >= singles, calls, 1+(i+w)%5)
			}()
		}
		wg.Wait()
		clk.Add(layout.Spec().Unit / 2)
		switch i % 100 {
		case 30, 60, 90:
			clk.Step(-time.Duration(1+i%9) * time.Millisecond)
			steppedBack++
		case 75:
			clk.Step(time.Duration(1+i%3) * time.Millisecond)
			steppedFwd++
		}
	}
	close(unexpected)
	for err := range unexpected {
		t.Errorf("unexpected error: %v", err)
	}

	st := g.Stats()
	t.Logf("%d Next and %d NextN calls, %d IDs, %d rollback errors; clock stepped back %d times, forward %d; stats: %+v",
		nexts.Load(), runs.Load(), len(ids.seen), rollbacks.Load(), steppedBack, steppedFwd, st)
	require.Empty(t, ids.dups, "IDs issued twice")
	assert.Equal(t, uint64(len(ids.seen)), st.Issued, "every ID issued was returned")
	assert.Positive(t, steppedBack)
	assert.Positive(t, st.RingReuses, "the ring strategy's walk reused spare room")
	if borrows {
		assert.Positive(t, st.Borrowed, "the logical strategy's walk borrowed ticks")
	} else {
		assert.Positive(t, st.TickWaits, "callers waited in line for a tick")
	}
}

// ceilingStore is a MarkStore whose saves succeed until fail is set.
type ceilingStore struct {
	mu    sync.Mutex
	mark  ringflake.Mark
	fail  error
	saves int
}

func (s *ceilingStore) LoadMark(context.Context) (ringflake.Mark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mark, nil
}

func (s *ceilingStore) SaveMark(_ context.Context, m ringflake.Mark) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.mark, s.saves = m, s.saves+1
	return nil
}

func (s *ceilingStore) breakDown(err error) ringflake.Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
	return s.mark
}

// TestEveryTakePathStopsAtTheSavedMark lets the mark store fail after the
// first mark and drives every take path towards and past that mark: no ID
// may carry a tick above it, and the calls that would need a later mark
// fail with ErrMarkNotSaved instead.
func TestEveryTakePathStopsAtTheSavedMark(t *testing.T) {
	layout := testLayout(t, "twitter,node=18,seq=4") // 16 IDs a tick: ticks fill, callers wait in line
	broken := errors.New("disk full")
	for _, tc := range []struct {
		name     string
		strategy string
		// drive moves the clock while the issuers run; i counts its rounds.
		drive func(clk *simclock.Clock, i int)
	}{
		// The clock runs on past the mark: the fast path's single takes and
		// runs, the slow path at the clock's tick, the line.
		{"clock runs past the mark", "error", func(clk *simclock.Clock, i int) { clk.Add(layout.Spec().Unit / 8) }},
		// The clock stands still: the logical strategy borrows ahead,
		// through its walk and the lane, towards a lead far past the mark.
		{"borrowing runs into the mark", "logical:1s", func(clk *simclock.Clock, i int) {
			if i == 0 {
				clk.Freeze(time.Hour)
			}
			clk.Add(layout.Spec().Unit / 8)
		}},
		// The clock steps back and runs on: the ring strategy reuses,
		// then the clock passes the mark.
		{"a rollback, then past the mark", "ring,logical:5ms", func(clk *simclock.Clock, i int) {
			if i == 8 {
				clk.Step(-4 * time.Millisecond)
			}
			clk.Add(layout.Spec().Unit / 8)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := simclock.New(start)
			s, err := strategies.Parse(tc.strategy)
			require.NoError(t, err)
			store := &ceilingStore{}
			g, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLayout(layout), ringflake.WithStrategy(s),
				ringflake.WithMarkStore(store), ringflake.WithMarkAhead(8*layout.Spec().Unit))
			require.NoError(t, err)
			for range 5 * 16 { // a few ticks' worth before the store breaks
				_, err := g.Next()
				require.NoError(t, err)
				clk.Add(layout.Spec().Unit / 16)
			}
			require.NoError(t, g.SyncMark(context.Background()))
			mark := store.breakDown(broken)
			ceiling := layout.Tick(mark.Limit)

			// The driver moves the clock one step after each call an
			// issuer completes, so that the issuers progress however the
			// scheduler runs them: it never counts on yields.
			ids := &collector{seen: map[ringflake.ID]bool{}}
			var (
				wg       sync.WaitGroup
				notSvd   atomic.Int64
				others   = make(chan error, 8)
				progress = make(chan struct{})
				quit     = make(chan struct{})
				finished = make(chan struct{})
			)
			for w := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := make([]ringflake.ID, 5)
					for i := range 400 {
						var err error
						if w%2 == 0 {
							var id ringflake.ID
							if id, err = g.Next(); err == nil {
								ids.add(id)
							}
						} else {
							var n int
							n, err = g.NextN(context.Background(), buf[:1+i%len(buf)])
							ids.add(buf[:n]...)
						}
						switch {
						case err == nil:
						case errors.Is(err, ringflake.ErrMarkNotSaved) && errors.Is(err, broken):
							notSvd.Add(1)
						default:
							others <- err
							return
						}
						select {
						case progress <- struct{}{}:
						case <-quit:
							return
						}
					}
				}()
			}
			go func() {
				wg.Wait()
				close(finished)
			}()
		drive:
			for i := 0; notSvd.Load() < 50; i++ {
				tc.drive(clk, i)
				select {
				case <-progress: // a call completed
				case <-finished: // every issuer made all its calls
					break drive
				}
			}
			close(quit)
			<-finished
			close(others)
			for err := range others {
				t.Errorf("unexpected error: %v", err)
			}
			require.Empty(t, ids.dups)
			above, atMark := 0, 0
			for id := range ids.seen {
				switch tick := layout.Tick(id.Time(layout)); {
				case tick > ceiling:
					above++
				case tick == ceiling:
					atMark++
				}
			}
			t.Logf("%d IDs, %d at the mark's tick, %d calls failed with ErrMarkNotSaved", len(ids.seen), atMark, notSvd.Load())
			assert.Zero(t, above, "IDs above the saved mark (tick %d)", ceiling)
			assert.Positive(t, notSvd.Load(), "calls reached the mark")
			assert.Equal(t, ceiling, layout.Tick(store.breakDown(broken).Limit), "no save got through")
		})
	}
}
