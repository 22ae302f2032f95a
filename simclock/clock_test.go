package simclock_test

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake/simclock"
)

// The generator's clock interfaces, restated here because simclock must not
// import the root package; *Clock must satisfy both.
type (
	genClock interface {
		Now() time.Time
		After(d time.Duration) <-chan time.Time
	}
	genMonotonicClock interface {
		genClock
		Monotonic() time.Duration
	}
	// benbjohnsonSubset is the part of benbjohnson/clock's Clock that
	// *Clock provides honestly.
	benbjohnsonSubset interface {
		Now() time.Time
		Since(t time.Time) time.Duration
		Until(t time.Time) time.Duration
		Sleep(d time.Duration)
		After(d time.Duration) <-chan time.Time
	}
)

var (
	_ genMonotonicClock = (*simclock.Clock)(nil)
	_ benbjohnsonSubset = (*simclock.Clock)(nil)
)

// t0 is the start of every test clock.
var t0 = time.Date(2024, time.March, 1, 12, 0, 0, 0, time.UTC)

// op is one action on a clock in a scenario.
type op func(c *simclock.Clock)

func add(d time.Duration) op    { return func(c *simclock.Clock) { c.Add(d) } }
func step(d time.Duration) op   { return func(c *simclock.Clock) { c.Step(d) } }
func set(t time.Time) op        { return func(c *simclock.Clock) { c.Set(t) } }
func sleep(d time.Duration) op  { return func(c *simclock.Clock) { c.Sleep(d) } }
func freeze(d time.Duration) op { return func(c *simclock.Clock) { c.Freeze(d) } }
func after(d time.Duration) op  { return func(c *simclock.Clock) { <-c.After(d) } }

func drift(t *testing.T, rate float64) op {
	t.Helper()
	return func(c *simclock.Clock) { require.NoError(t, c.SetDrift(rate)) }
}

// run applies ops to a fresh clock started at t0 and returns it.
func run(t *testing.T, ops ...op) *simclock.Clock {
	t.Helper()
	c := simclock.New(t0)
	for _, o := range ops {
		o(c)
	}
	return c
}

// requireReadings checks the wall reading as an offset from t0, and the
// monotonic reading.
func requireReadings(t *testing.T, c *simclock.Clock, wall, mono time.Duration) {
	t.Helper()
	require.Equal(t, wall, c.Now().Sub(t0), "wall clock offset from start")
	require.Equal(t, mono, c.Monotonic(), "monotonic reading")
}

func TestWallAndMonotonic(t *testing.T) {
	tests := []struct {
		name       string
		ops        []op
		wall, mono time.Duration
	}{
		{"new clock reads start", nil, 0, 0},
		{"add forward moves both", []op{add(1500 * time.Millisecond)}, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"add zero does nothing", []op{add(0)}, 0, 0},
		{"step back moves only wall", []op{add(time.Second), step(-300 * time.Millisecond)}, 700 * time.Millisecond, time.Second},
		{"step forward moves only wall", []op{step(2 * time.Second)}, 2 * time.Second, 0},
		{"step below start", []op{add(time.Second), step(-time.Hour)}, time.Second - time.Hour, time.Second},
		{"add negative is a step back", []op{add(time.Second), add(-2 * time.Second)}, -time.Second, time.Second},
		{"set earlier", []op{add(5 * time.Second), set(t0.Add(-time.Hour))}, -time.Hour, 5 * time.Second},
		{"set later", []op{set(t0.Add(time.Minute))}, time.Minute, 0},
		{"time passes from the stepped wall", []op{step(-time.Second), add(500 * time.Millisecond)}, -500 * time.Millisecond, 500 * time.Millisecond},
		{"time passes from the set wall", []op{set(t0.Add(-time.Hour)), add(time.Second)}, -time.Hour + time.Second, time.Second},
		{"repeated steps add up", []op{step(-time.Millisecond), step(-time.Millisecond), step(5 * time.Millisecond)}, 3 * time.Millisecond, 0},
		{"sleep moves both", []op{sleep(3 * time.Second)}, 3 * time.Second, 3 * time.Second},
		{"sleep zero or negative does nothing", []op{sleep(0), sleep(-time.Second)}, 0, 0},
		{"after moves both", []op{after(2 * time.Second)}, 2 * time.Second, 2 * time.Second},
		{"after zero or negative does nothing", []op{after(0), after(-time.Second)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := run(t, tt.ops...)
			requireReadings(t, c, tt.wall, tt.mono)
		})
	}
}

func TestSinceUntil(t *testing.T) {
	c := simclock.New(t0)
	c.Add(10 * time.Second)
	assert.Equal(t, 10*time.Second, c.Since(t0))
	assert.Equal(t, -10*time.Second, c.Until(t0))

	c.Step(-15 * time.Second)
	assert.Equal(t, -5*time.Second, c.Since(t0), "Since is negative after a rollback past t")
	assert.Equal(t, 5*time.Second, c.Until(t0))
}

func TestLocationAndMonotonicReadingOfStart(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*60*60)

	t.Run("readings keep the start's location", func(t *testing.T) {
		c := simclock.New(t0.In(zone))
		c.Add(time.Second)
		assert.Equal(t, zone, c.Now().Location())
		c.Set(t0) // given in UTC
		assert.Equal(t, zone, c.Now().Location())
		assert.True(t, t0.Equal(c.Now()))
	})

	t.Run("a monotonic reading in start is ignored", func(t *testing.T) {
		start := time.Now() // carries a monotonic reading; nothing waits on it
		c := simclock.New(start)
		c.Step(-time.Second)
		assert.Equal(t, -time.Second, c.Since(start), "the step must be visible against start")
		assert.Equal(t, -time.Second, c.Now().Sub(start))
	})
}

func TestFreeze(t *testing.T) {
	tests := []struct {
		name       string
		ops        []op
		wall, mono time.Duration
	}{
		{"wall constant during a freeze", []op{freeze(10 * time.Second), add(9 * time.Second)}, 0, 9 * time.Second},
		{"wall constant at the freeze's end", []op{freeze(10 * time.Second), add(10 * time.Second)}, 0, 10 * time.Second},
		{"behind by the freeze after it", []op{freeze(10 * time.Second), add(11 * time.Second)}, time.Second, 11 * time.Second},
		{"freeze ending inside one add", []op{freeze(1500 * time.Millisecond), add(time.Second), add(time.Second)}, 500 * time.Millisecond, 2 * time.Second},
		{"freeze starts where time has got to", []op{add(5 * time.Second), freeze(2 * time.Second), add(3 * time.Second)}, 6 * time.Second, 8 * time.Second},
		{"sleep during a freeze", []op{freeze(time.Second), sleep(3 * time.Second)}, 2 * time.Second, 3 * time.Second},
		{"overlap extends to the later end", []op{freeze(10 * time.Second), add(4 * time.Second), freeze(10 * time.Second), add(20 * time.Second)}, 10 * time.Second, 24 * time.Second},
		{"overlap ending earlier changes nothing", []op{freeze(10 * time.Second), add(4 * time.Second), freeze(3 * time.Second), add(20 * time.Second)}, 14 * time.Second, 24 * time.Second},
		{"freeze after a freeze ended", []op{freeze(time.Second), add(2 * time.Second), freeze(time.Second), add(2 * time.Second)}, 2 * time.Second, 4 * time.Second},
		{"zero or negative freeze does nothing", []op{freeze(0), freeze(-time.Second), add(time.Second)}, time.Second, time.Second},
		{"step during a freeze stays frozen", []op{freeze(5 * time.Second), step(-time.Second), add(3 * time.Second)}, -time.Second, 3 * time.Second},
		{"step during a freeze then resume", []op{freeze(5 * time.Second), step(-time.Second), add(10 * time.Second)}, 4 * time.Second, 10 * time.Second},
		{"set during a freeze", []op{freeze(5 * time.Second), set(t0.Add(time.Hour)), add(6 * time.Second)}, time.Hour + time.Second, 6 * time.Second},
		{"drift does not run during a freeze", []op{drift(t, 0.5), freeze(2 * time.Second), add(4 * time.Second)}, 3 * time.Second, 4 * time.Second},
		{"huge freeze does not overflow", []op{add(time.Second), freeze(math.MaxInt64), add(time.Hour)}, time.Second, time.Hour + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := run(t, tt.ops...)
			requireReadings(t, c, tt.wall, tt.mono)
		})
	}

	t.Run("wall reads the same at every point of the freeze", func(t *testing.T) {
		c := simclock.New(t0)
		c.Add(time.Second)
		c.Freeze(time.Second)
		frozen := c.Now()
		for range 10 {
			c.Add(100 * time.Millisecond)
			require.True(t, frozen.Equal(c.Now()), "at monotonic %v", c.Monotonic())
		}
		c.Add(time.Millisecond)
		require.Equal(t, time.Millisecond, c.Now().Sub(frozen))
		require.Equal(t, c.Monotonic()-time.Second, c.Now().Sub(t0), "behind by exactly the freeze")
	})
}

// exactWall is start + d + d*ppb/1e9 truncated toward zero, computed with
// big integers: what the clock must show after d of true time at a constant
// drift of ppb parts per billion.
func exactWall(t *testing.T, d time.Duration, ppb int64) time.Duration {
	t.Helper()
	n := new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(ppb))
	n.Quo(n, big.NewInt(1_000_000_000))
	require.True(t, n.IsInt64())
	return d + time.Duration(n.Int64())
}

func TestDrift(t *testing.T) {
	t.Run("one hour at -0.5 percent is exactly 3582s", func(t *testing.T) {
		c := run(t, drift(t, -0.005), add(time.Hour))
		requireReadings(t, c, 3582*time.Second, time.Hour)
	})

	t.Run("one hour at -0.5 percent in one-second steps", func(t *testing.T) {
		c := run(t, drift(t, -0.005))
		for range 3600 {
			c.Add(time.Second)
		}
		requireReadings(t, c, 3582*time.Second, time.Hour)
	})

	t.Run("sub-nanosecond drift is carried, not lost", func(t *testing.T) {
		c := run(t, drift(t, 0.5))
		for range 1001 {
			c.Add(time.Nanosecond)
		}
		requireReadings(t, c, 1501*time.Nanosecond, 1001*time.Nanosecond)
	})

	rates := []struct {
		name string
		rate float64
		ppb  int64
	}{
		{"slow 0.5 percent", -0.005, -5_000_000},
		{"fast 123 ppm", 0.000123, 123_000},
		{"odd ppb slow", -0.000000777, -777},
		{"fast 1 ppb", 1e-9, 1},
		{"double speed", 1, 1_000_000_000},
		{"almost stopped", -0.999999999, -999_999_999},
		{"rounded down to whole ppb", 0.0000000014, 1},
		{"rounded up to whole ppb", 0.0000000016, 2},
		{"negative rounded to whole ppb", -0.0000000016, -2},
	}
	// Odd step sizes whose sum is total.
	const total = time.Hour + 7*time.Nanosecond
	splits := []struct {
		name  string
		steps func() []time.Duration
	}{
		{"one step", func() []time.Duration { return []time.Duration{total} }},
		{"odd steps", func() []time.Duration {
			var s []time.Duration
			sizes := []time.Duration{7, 999_999_999, 1_234_567, 3, 333_333_333_333, 1}
			left := total
			for i := 0; left > 0; i++ {
				d := min(sizes[i%len(sizes)], left)
				s = append(s, d)
				left -= d
			}
			return s
		}},
		{"prime-sized steps", func() []time.Duration {
			var s []time.Duration
			left := total
			for left > 0 {
				d := min(79_193*time.Microsecond+13, left)
				s = append(s, d)
				left -= d
			}
			return s
		}},
	}
	for _, r := range rates {
		for _, sp := range splits {
			t.Run(r.name+"/"+sp.name, func(t *testing.T) {
				c := run(t, drift(t, r.rate))
				for _, d := range sp.steps() {
					c.Add(d)
				}
				requireReadings(t, c, exactWall(t, total, r.ppb), total)
			})
		}
	}

	t.Run("drift applies from when it is set", func(t *testing.T) {
		c := run(t, add(time.Second), drift(t, 0.001), add(time.Second), drift(t, 0), add(time.Second))
		requireReadings(t, c, 3*time.Second+time.Millisecond, 3*time.Second)
	})

	t.Run("drift with steps", func(t *testing.T) {
		c := run(t, drift(t, -0.5), add(2*time.Second), step(-time.Second), add(2*time.Second))
		requireReadings(t, c, time.Second, 4*time.Second)
	})
}

func TestSetDriftRejects(t *testing.T) {
	tests := []struct {
		name string
		rate float64
	}{
		{"NaN", math.NaN()},
		{"plus infinity", math.Inf(1)},
		{"minus infinity", math.Inf(-1)},
		{"minus one stops the clock", -1},
		{"below minus one runs backwards", -1.5},
		{"above one", 1.0000001},
		{"far above one", 1e300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := run(t, drift(t, 0.25))
			err := c.SetDrift(tt.rate)
			require.ErrorIs(t, err, simclock.ErrInvalidDrift)
			c.Add(4 * time.Second)
			requireReadings(t, c, 5*time.Second, 4*time.Second) // 0.25 still in force
		})
	}
}

func TestJitter(t *testing.T) {
	const bound = time.Millisecond

	// readings takes n wall readings as offsets from the noise-free wall,
	// letting 1ms pass before each.
	readings := func(t *testing.T, c *simclock.Clock, n int) []time.Duration {
		t.Helper()
		out := make([]time.Duration, n)
		for i := range out {
			c.Add(time.Millisecond)
			out[i] = c.Now().Sub(t0) - c.Monotonic()
		}
		return out
	}
	jittered := func(t *testing.T, seed uint64) *simclock.Clock {
		t.Helper()
		c := simclock.New(t0)
		require.NoError(t, c.SetJitter(bound, seed))
		return c
	}

	t.Run("same seed gives the same readings", func(t *testing.T) {
		a := readings(t, jittered(t, 42), 200)
		b := readings(t, jittered(t, 42), 200)
		assert.Equal(t, a, b)
	})

	t.Run("different seeds give different readings", func(t *testing.T) {
		a := readings(t, jittered(t, 1), 200)
		b := readings(t, jittered(t, 2), 200)
		assert.NotEqual(t, a, b)
	})

	t.Run("noise stays within the bound and spreads over it", func(t *testing.T) {
		var below, above int
		for _, off := range readings(t, jittered(t, 7), 2000) {
			require.GreaterOrEqual(t, off, -bound)
			require.LessOrEqual(t, off, bound)
			if off < -bound/2 {
				below++
			}
			if off > bound/2 {
				above++
			}
		}
		assert.Positive(t, below, "no reading in the lower quarter")
		assert.Positive(t, above, "no reading in the upper quarter")
	})

	t.Run("bound of one nanosecond gives only -1, 0 and 1", func(t *testing.T) {
		c := simclock.New(t0)
		require.NoError(t, c.SetJitter(time.Nanosecond, 3))
		seen := map[time.Duration]bool{}
		for range 300 {
			seen[c.Now().Sub(t0)] = true
		}
		assert.Equal(t, map[time.Duration]bool{-1: true, 0: true, 1: true}, seen)
	})

	t.Run("noise does not accumulate nor touch monotonic", func(t *testing.T) {
		c := jittered(t, 9)
		readings(t, c, 500)
		require.NoError(t, c.SetJitter(0, 0))
		requireReadings(t, c, 500*time.Millisecond, 500*time.Millisecond)
	})

	t.Run("zero bound turns jitter off", func(t *testing.T) {
		c := simclock.New(t0)
		require.NoError(t, c.SetJitter(0, 5))
		for _, off := range readings(t, c, 50) {
			require.Zero(t, off)
		}
	})

	t.Run("huge bound does not overflow", func(t *testing.T) {
		c := simclock.New(t0)
		require.NoError(t, c.SetJitter(math.MaxInt64, 1))
		assert.NotPanics(t, func() { c.Now() })
	})

	t.Run("negative bound is rejected and changes nothing", func(t *testing.T) {
		c := jittered(t, 11)
		want := readings(t, jittered(t, 11), 3)
		require.ErrorIs(t, c.SetJitter(-time.Nanosecond, 1), simclock.ErrInvalidJitter)
		assert.Equal(t, want, readings(t, c, 3))
	})

	t.Run("after's value is a jittered reading", func(t *testing.T) {
		c := jittered(t, 13)
		var got []time.Duration
		for range 20 {
			got = append(got, (<-c.After(time.Millisecond)).Sub(t0)-c.Monotonic())
		}
		assert.Equal(t, readings(t, jittered(t, 13), 20), got)
	})
}

func TestSleepAndAfterNeverBlock(t *testing.T) {
	t.Run("after's channel is ready with the time after the advance", func(t *testing.T) {
		c := simclock.New(t0)
		c.Step(-time.Second)
		ch := c.After(5 * time.Second)
		require.Equal(t, 1, cap(ch))
		select {
		case got := <-ch:
			assert.Equal(t, 4*time.Second, got.Sub(t0))
		default:
			require.Fail(t, "After's channel is not ready")
		}
		assert.Equal(t, 5*time.Second, c.Monotonic())
	})

	t.Run("after zero holds the current reading", func(t *testing.T) {
		c := simclock.New(t0)
		c.Add(time.Second)
		select {
		case got := <-c.After(0):
			assert.Equal(t, time.Second, got.Sub(t0))
		default:
			require.Fail(t, "After's channel is not ready")
		}
	})

	t.Run("long sleeps return at once", func(t *testing.T) {
		c := simclock.New(t0)
		c.Sleep(24 * time.Hour)
		c.Sleep(365 * 24 * time.Hour)
		assert.Equal(t, 24*time.Hour+365*24*time.Hour, c.Monotonic())
	})
}

func TestMonotonicSaturates(t *testing.T) {
	c := simclock.New(t0)
	c.Add(math.MaxInt64)
	c.Add(time.Hour)
	c.Sleep(math.MaxInt64)
	assert.Equal(t, time.Duration(math.MaxInt64), c.Monotonic())
}

func TestConcurrentUse(t *testing.T) {
	const (
		workers = 8
		rounds  = 500
	)
	c := simclock.New(t0)
	require.NoError(t, c.Schedule(
		simclock.Event{At: time.Second, Kind: simclock.Freeze, D: time.Second},
		simclock.Event{At: 2 * time.Second, Kind: simclock.Drift, Rate: -0.001},
	))
	var g errgroup.Group
	var sum [workers]time.Duration
	for w := range workers {
		g.Go(func() error {
			last := time.Duration(0)
			for i := range rounds {
				d := time.Duration(w*rounds+i+1) * time.Microsecond
				if i%2 == 0 {
					c.Sleep(d)
				} else {
					<-c.After(d)
				}
				sum[w] += d
				c.Now()
				c.Since(t0)
				c.Pending()
				if i%50 == 0 {
					c.Step(-time.Millisecond)
				}
				m := c.Monotonic()
				if m < last {
					return assert.AnError
				}
				last = m
			}
			return nil
		})
	}
	require.NoError(t, g.Wait(), "monotonic reading went backwards")
	var total time.Duration
	for _, s := range sum {
		total += s
	}
	assert.Equal(t, total, c.Monotonic())
	assert.Empty(t, c.Pending())
}

func TestWrapMock(t *testing.T) {
	// Each mock.Add or mock.Set sleeps 1ms for real inside
	// benbjohnson/clock, so this test uses few of them.
	mock := clock.NewMock()
	start := mock.Now()
	c := simclock.Wrap(mock)
	wallOff := func() time.Duration { return c.Now().Sub(start) }

	assert.Equal(t, time.Duration(0), c.Monotonic())
	c.Step(-time.Second)
	assert.Equal(t, -time.Second, wallOff(), "step on a wrapped clock")
	assert.Equal(t, time.Duration(0), c.Monotonic(), "a step is not time passing")

	require.NoError(t, c.Schedule(
		simclock.Event{At: time.Second, Kind: simclock.Freeze, D: 500 * time.Millisecond},
		simclock.Event{At: 2 * time.Second, Kind: simclock.Step, D: -250 * time.Millisecond},
		simclock.Event{At: 3 * time.Second, Kind: simclock.Drift, Rate: 0.5},
	))
	after := c.After(4 * time.Second) // a mock timer on the base clock
	mock.Add(5 * time.Second)
	assert.Equal(t, 5*time.Second, c.Monotonic(), "monotonic follows mock time")
	// -1s step, 5s of time less a 0.5s freeze, -0.25s step, 2s at 1.5x.
	assert.Equal(t, -time.Second+3*time.Second-500*time.Millisecond-250*time.Millisecond+3*time.Second, wallOff())
	assert.Empty(t, c.Pending())
	select {
	case got := <-after:
		assert.True(t, start.Add(4*time.Second).Equal(got), "After delivers the base clock's reading, got %v", got)
	default:
		require.Fail(t, "After on the wrapped mock did not fire")
	}

	before := wallOff()
	c.Add(time.Hour)
	assert.Equal(t, 5*time.Second, c.Monotonic(), "Add(d > 0) cannot move base time")
	assert.Equal(t, before, wallOff())
	c.Add(-time.Minute)
	assert.Equal(t, before-time.Minute, wallOff(), "Add(d < 0) still steps the wall")

	mock.Set(start) // base time going back is no time passing
	assert.Equal(t, 5*time.Second, c.Monotonic())
	assert.Equal(t, before-time.Minute, wallOff())
}

func TestWrapRealClock(t *testing.T) {
	// No waiting: only checks that a step shows on top of the real clock.
	c := simclock.Wrap(clock.New())
	c.Step(-time.Hour)
	assert.Less(t, c.Since(time.Now()), -59*time.Minute)
	assert.GreaterOrEqual(t, c.Monotonic(), time.Duration(0))
}

func TestWallIgnoresJitter(t *testing.T) {
	c := simclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, c.SetJitter(time.Millisecond, 9))
	c.Add(5 * time.Millisecond)
	c.Step(-2 * time.Millisecond)
	assert.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 3_000_000, time.UTC), c.Wall())

	// Reading Wall draws nothing: the jittered readings are those of a
	// clock on which Wall was never called.
	twin := simclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, twin.SetJitter(time.Millisecond, 9))
	twin.Add(5 * time.Millisecond)
	twin.Step(-2 * time.Millisecond)
	for range 5 {
		_ = c.Wall()
		got, want := c.Now(), twin.Now()
		assert.Equal(t, want, got)
		assert.LessOrEqual(t, got.Sub(c.Wall()).Abs(), time.Millisecond)
	}
}
