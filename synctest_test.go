//go:build go1.25

package ringflake_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// These tests run generators on the system clock inside testing/synctest
// bubbles (Go 1.25+). There the system clock is the bubble's fake one: it
// starts at 2000-01-01, moves only when every goroutine of the bubble is
// blocked on it, and never steps back. A generator that waited with a
// thread sleeping in the kernel would hang here, and one made outside a
// bubble finds its clock 26 years back inside one. The nodes 970-999 are
// theirs among the tests on the system clock.

// serviceDay is where the tests move a bubble's clock to: a bubble starts
// at 2000-01-01, before the Twitter epoch. It starts a tick.
var serviceDay = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// moveOn moves the bubble's clock to serviceDay.
func moveOn() { time.Sleep(time.Until(serviceDay)) }

// packageIDs is a package-level generator on the system clock, made when
// the test binary starts — outside any bubble, as a service's would be.
var packageIDs, packageIDsErr = ringflake.New(999)

// closeAfter closes g when the test ends.
func closeAfter(t *testing.T, g *ringflake.Generator) {
	t.Helper()
	t.Cleanup(func() { assert.NoError(t, g.Close(context.Background())) })
}

// TestSynctestNewBeforeEpoch: a bubble's clock reads 2000-01-01, before
// the Twitter epoch, until the test moves it on; a layout with an earlier
// epoch works from the start.
func TestSynctestNewBeforeEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := ringflake.New(970)
		require.ErrorIs(t, err, ringflake.ErrBeforeEpoch)

		early, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC),
			Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12})
		require.NoError(t, err)
		g, err := ringflake.New(970, ringflake.WithLayout(early))
		require.NoError(t, err)
		id, err := g.Next()
		require.NoError(t, err)
		assert.Equal(t, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), id.Time(early).UTC())
		require.NoError(t, g.Close(t.Context()))

		moveOn()
		g, err = ringflake.New(970)
		require.NoError(t, err)
		id, err = g.Next()
		require.NoError(t, err)
		assert.Equal(t, serviceDay, id.Time(g.Layout()).UTC())
		require.NoError(t, g.Close(t.Context()))
	})
}

// TestSynctestMillionIDs: four goroutines take a million IDs, 245 ticks'
// worth of a 12-bit sequence: every used-up tick is waited out on the
// bubble's clock, each goroutine's IDs increase, and none repeats.
func TestSynctestMillionIDs(t *testing.T) {
	const workers, each = 4, 250_000
	synctest.Test(t, func(t *testing.T) {
		moveOn()
		g, err := ringflake.New(971)
		require.NoError(t, err)
		closeAfter(t, g)
		got := make([][]ringflake.ID, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				ids := make([]ringflake.ID, 0, each)
				for range each {
					id, err := g.Next()
					if err != nil {
						t.Errorf("Next: %v", err)
						return
					}
					ids = append(ids, id)
				}
				got[w] = ids
			})
		}
		wg.Wait()
		var all []ringflake.ID
		for w, ids := range got {
			require.Len(t, ids, each)
			require.True(t, slices.IsSorted(ids), "worker %d's IDs increase", w)
			all = append(all, ids...)
		}
		slices.Sort(all)
		require.Len(t, slices.Compact(all), workers*each, "no ID twice")
		l := g.Layout()
		ticks := all[len(all)-1].Time(l).Sub(all[0].Time(l)) / time.Millisecond
		assert.GreaterOrEqual(t, int64(ticks), int64(workers*each/4096), "a tick holds 4,096 IDs")
		s := g.Stats()
		assert.Equal(t, uint64(workers*each), s.Issued)
		assert.Zero(t, s.Rollbacks)
		assert.GreaterOrEqual(t, s.TickWaits, uint64(ticks))
	})
}

// strategySpecs are the strategies the bubble tests run, as configured.
var strategySpecs = []string{"error", "wait:5ms", "logical:2ms", "ring", "ring,wait:5ms,error"}

// TestSynctestTickWaitsEveryStrategy: under every strategy, callers that
// use ticks up wait for the next on the bubble's clock — by Next and by
// NextN, from several goroutines — and never hang.
func TestSynctestTickWaitsEveryStrategy(t *testing.T) {
	for _, spec := range strategySpecs {
		t.Run(spec, func(t *testing.T) {
			strategy, err := strategies.Parse(spec)
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				moveOn()
				g, err := ringflake.New(972, ringflake.WithStrategy(strategy))
				require.NoError(t, err)
				closeAfter(t, g)
				const batch, singles = 10_000, 5_000
				got := make([][]ringflake.ID, 4)
				var wg sync.WaitGroup
				for w := range got {
					wg.Go(func() {
						ids := make([]ringflake.ID, batch)
						if w%2 == 0 {
							n, err := g.NextN(t.Context(), ids)
							assert.NoError(t, err)
							got[w] = ids[:n]
							return
						}
						ids = ids[:0]
						for range singles {
							id, err := g.Next()
							if !assert.NoError(t, err) {
								break
							}
							ids = append(ids, id)
						}
						got[w] = ids
					})
				}
				wg.Wait()
				var all []ringflake.ID
				for w, ids := range got {
					require.True(t, slices.IsSorted(ids), "goroutine %d's IDs increase", w)
					all = append(all, ids...)
				}
				require.Len(t, all, 2*batch+2*singles)
				slices.Sort(all)
				require.Len(t, slices.Compact(all), 2*batch+2*singles, "no ID twice")
				s := g.Stats()
				assert.Zero(t, s.Rollbacks)
				assert.Positive(t, s.TickWaits, "callers waited for a tick")
				assert.Greater(t, time.Since(serviceDay), 4*time.Millisecond, "the bubble's clock moved on")
			})
		})
	}
}

// TestSynctestRollbackEveryStrategy: a generator made outside a bubble,
// called inside one whose clock reads 2 ms before the generator's newest
// ID, sees a rollback of 2 ms, and its strategy decides: the wait
// strategy waits it out on the bubble's clock.
func TestSynctestRollbackEveryStrategy(t *testing.T) {
	const back = 2 * time.Millisecond
	cases := []struct {
		spec  string
		check func(t *testing.T, before, id ringflake.ID, err error, s ringflake.Stats, waited time.Duration)
	}{
		{"error", func(t *testing.T, _, _ ringflake.ID, err error, s ringflake.Stats, waited time.Duration) {
			var re *strategies.RollbackError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, back, re.Behind)
			assert.Zero(t, waited)
		}},
		{"wait:5ms", func(t *testing.T, before, id ringflake.ID, err error, s ringflake.Stats, waited time.Duration) {
			require.NoError(t, err)
			assert.Greater(t, id, before)
			assert.Equal(t, uint64(1), s.Waits)
			assert.Equal(t, back, waited, "waited the rollback out on the bubble's clock")
		}},
		{"logical:2ms", func(t *testing.T, before, id ringflake.ID, err error, s ringflake.Stats, waited time.Duration) {
			require.NoError(t, err)
			assert.Greater(t, id, before)
			assert.Zero(t, waited)
		}},
		{"ring", func(t *testing.T, before, id ringflake.ID, err error, s ringflake.Stats, waited time.Duration) {
			require.NoError(t, err)
			assert.NotEqual(t, before, id)
			assert.Equal(t, uint64(1), s.RingReuses)
			assert.Zero(t, waited)
		}},
		{"ring,wait:5ms,error", func(t *testing.T, before, id ringflake.ID, err error, s ringflake.Stats, waited time.Duration) {
			require.NoError(t, err)
			assert.NotEqual(t, before, id)
			assert.Equal(t, uint64(1), s.RingReuses)
			assert.Zero(t, waited)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			strategy, err := strategies.Parse(tc.spec)
			require.NoError(t, err)
			g, err := ringflake.New(973, ringflake.WithStrategy(strategy))
			require.NoError(t, err)
			closeAfter(t, g)
			before, err := g.Next()
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				start := before.Time(g.Layout()).Add(-back)
				time.Sleep(time.Until(start))
				id, err := g.Next()
				s := g.Stats()
				assert.Equal(t, uint64(1), s.Rollbacks)
				assert.GreaterOrEqual(t, s.LargestRollback, back)
				tc.check(t, before, id, err, s, time.Since(start))
			})
		})
	}
}

// TestSynctestCloseDuringWait: Close ends a call waiting on the bubble's
// clock — for the next tick, or a rollback under the wait strategy —
// with ErrClosed.
func TestSynctestCloseDuringWait(t *testing.T) {
	t.Run("tick", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			moveOn()
			g, err := ringflake.New(974)
			require.NoError(t, err)
			_, err = g.NextN(t.Context(), make([]ringflake.ID, 4096)) // the tick is used up
			require.NoError(t, err)
			errc := make(chan error)
			go func() {
				_, err := g.Next()
				errc <- err
			}()
			synctest.Wait() // the call waits for the next tick
			assert.True(t, time.Now().Equal(serviceDay))
			require.NoError(t, g.Close(t.Context()))
			require.ErrorIs(t, <-errc, ringflake.ErrClosed)
			assert.Equal(t, uint64(1), g.Stats().TickWaits)
		})
	})
	t.Run("rollback", func(t *testing.T) {
		g, err := ringflake.New(975, ringflake.WithStrategy(strategies.Wait(5*time.Millisecond)))
		require.NoError(t, err)
		before, err := g.Next()
		require.NoError(t, err)
		synctest.Test(t, func(t *testing.T) {
			time.Sleep(time.Until(before.Time(g.Layout()).Add(-3 * time.Millisecond)))
			errc := make(chan error)
			go func() {
				_, err := g.Next()
				errc <- err
			}()
			synctest.Wait() // the call waits the rollback out
			require.NoError(t, g.Close(t.Context()))
			require.ErrorIs(t, <-errc, ringflake.ErrClosed)
			assert.Equal(t, uint64(1), g.Stats().Rollbacks)
		})
	})
}

// TestSynctestCancelDuringWait: a call waiting for the next tick on the
// bubble's clock ends with its context.
func TestSynctestCancelDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		moveOn()
		g, err := ringflake.New(976)
		require.NoError(t, err)
		closeAfter(t, g)
		_, err = g.NextN(t.Context(), make([]ringflake.ID, 4096))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error)
		go func() {
			_, err := g.NextContext(ctx)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		assert.True(t, time.Now().Equal(serviceDay), "no time passed")
		id, err := g.Next() // the generator goes on
		require.NoError(t, err)
		assert.Equal(t, serviceDay.Add(time.Millisecond), id.Time(g.Layout()).UTC())
	})
}

// TestSynctestNextN: one NextN call of five ticks and a bit waits five
// times, a tick each, and its IDs increase.
func TestSynctestNextN(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		moveOn()
		g, err := ringflake.New(977)
		require.NoError(t, err)
		closeAfter(t, g)
		ids := make([]ringflake.ID, 5*4096+17)
		n, err := g.NextN(t.Context(), ids)
		require.NoError(t, err)
		require.Equal(t, len(ids), n)
		require.True(t, slices.IsSorted(ids))
		require.Len(t, slices.Compact(slices.Clone(ids)), len(ids))
		l := g.Layout()
		assert.Equal(t, serviceDay, ids[0].Time(l).UTC())
		assert.Equal(t, serviceDay.Add(5*time.Millisecond), ids[n-1].Time(l).UTC())
		assert.Equal(t, uint64(5), g.Stats().TickWaits)
		assert.Equal(t, 5*time.Millisecond, time.Since(serviceDay))
	})
}

// TestSynctestObserve: an observed ID ahead of the bubble's clock lifts
// every later ID above it; the generator borrows ticks up to its bound
// and then waits for the clock on the bubble's clock; an ID too far ahead
// is refused.
func TestSynctestObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		moveOn()
		g, err := ringflake.New(978, ringflake.WithMaxForward(5*time.Millisecond))
		require.NoError(t, err)
		closeAfter(t, g)
		l := g.Layout()
		ahead, err := l.Compose(serviceDay.Add(3*time.Millisecond), 5, 100)
		require.NoError(t, err)
		require.NoError(t, g.Observe(ahead))
		tooFar, err := l.Compose(serviceDay.Add(10*time.Millisecond), 5, 0)
		require.NoError(t, err)
		var ae *strategies.AheadError
		require.ErrorAs(t, g.Observe(tooFar), &ae)
		require.ErrorIs(t, g.Observe(tooFar), ringflake.ErrObservedTooFar)

		ids := make([]ringflake.ID, 10*4096)
		n, err := g.NextN(t.Context(), ids)
		require.NoError(t, err)
		require.Equal(t, len(ids), n)
		require.True(t, slices.IsSorted(ids))
		assert.Greater(t, ids[0], ahead)
		id, err := g.Next()
		require.NoError(t, err)
		assert.Greater(t, id, ids[n-1])
		s := g.Stats()
		assert.Equal(t, uint64(1), s.ObserveMoved)
		assert.Positive(t, s.TickWaits, "at the bound, calls wait for the clock")
		assert.Positive(t, time.Since(serviceDay), "the bubble's clock moved on")
		assert.Zero(t, s.Rollbacks, "a lead is not a rollback")
	})
}

// TestSynctestPackageGenerator: a package-level generator, made outside
// any bubble and called inside one, finds its clock 26 years back: the
// rollback is counted once and the strategy decides — the default one
// reuses spare sequence numbers, never an ID issued — and back outside it
// issues above everything it issued before.
func TestSynctestPackageGenerator(t *testing.T) {
	require.NoError(t, packageIDsErr)
	g := packageIDs
	before, err := g.Next()
	require.NoError(t, err)
	s0 := g.Stats()
	var inside []ringflake.ID
	synctest.Test(t, func(t *testing.T) {
		ids := make([]ringflake.ID, 3*4096)
		n, err := g.NextN(t.Context(), ids)
		require.NoError(t, err)
		inside = ids[:n]
		moveOn() // still behind the newest ID, in 2026
		for range 100 {
			id, err := g.Next()
			require.NoError(t, err)
			inside = append(inside, id)
		}
	})
	s := g.Stats()
	assert.Equal(t, uint64(1), s.Rollbacks-s0.Rollbacks, "the step into the bubble, once")
	assert.Greater(t, s.LargestRollback, 25*365*24*time.Hour)
	assert.Positive(t, s.RingReuses-s0.RingReuses)
	assert.NotContains(t, inside, before)
	slices.Sort(inside)
	assert.Len(t, slices.Compact(inside), 3*4096+100, "no ID twice")
	after, err := g.Next()
	require.NoError(t, err)
	assert.Greater(t, after, before)
	assert.Greater(t, after, inside[len(inside)-1])
	assert.Equal(t, s.Rollbacks, g.Stats().Rollbacks, "leaving the bubble steps forward")
}

// TestSynctestPackageGeneratorError: under the error strategy, a
// generator made outside a bubble refuses to issue inside one and tells
// how far back the bubble's clock reads.
func TestSynctestPackageGeneratorError(t *testing.T) {
	g, err := ringflake.New(979, ringflake.WithStrategy(strategies.Error()))
	require.NoError(t, err)
	closeAfter(t, g)
	_, err = g.Next()
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		_, err := g.Next()
		var re *strategies.RollbackError
		require.ErrorAs(t, err, &re)
		assert.Greater(t, re.Behind, 25*365*24*time.Hour)
		assert.True(t, errors.Is(err, ringflake.ErrClockRollback))
		assert.Equal(t, uint64(1), g.Stats().Rollbacks)
	})
}
