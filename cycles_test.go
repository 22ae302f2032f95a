package ringflake

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// The cycle counter's estimate is tested with counter readings made up by
// the test: a counter of 2 cycles per nanosecond unless said otherwise,
// ticks of 1 ms, the monotonic and wall clocks equal.

const testUnit = int64(time.Millisecond)

// startedCycles returns a counter clock whose rate is measured from
// counter 1000 at monotonic 0.
func startedCycles(t *testing.T) *cycleClock {
	t.Helper()
	var k cycleClock
	k.start(testUnit, 0, 1000, 0)
	require.True(t, k.on.Load())
	return &k
}

// at returns the counter at monotonic time m for a counter of perNs
// cycles per nanosecond that read 1000 at 0.
func at(m int64, perNs float64) uint64 { return 1000 + uint64(float64(m)*perNs) }

func TestCyclesWaitForTheirRate(t *testing.T) {
	k := startedCycles(t)
	m := testUnit / 2
	k.sync(m, at(m, 2), m, m, 0)
	_, _, ok := k.read(at(m+10, 2))
	assert.False(t, ok, "half a millisecond is too short to measure the rate over")

	m = 3*testUnit + 250_000 // tick 3, a quarter in
	k.sync(m, at(m, 2), m, m, 3)
	e, tick, ok := k.read(at(m+100_000, 2))
	require.True(t, ok, "a re-sync after a millisecond measures the rate and writes a record")
	assert.Equal(t, int64(3), tick)
	assert.InDelta(t, m+100_000, e, 2, "the estimate is the wall reading plus the counter's time since")

	_, _, ok = k.read(at(4*testUnit, 2))
	assert.False(t, ok, "the record ends with its tick")
	_, _, ok = k.read(at(m, 2) - 1)
	assert.False(t, ok, "a reading before the record's (a counter read early) is not estimated")
}

func TestCyclesEstimateNeverLeavesTheTick(t *testing.T) {
	k := startedCycles(t)
	m := 5*testUnit + 999_999 // the last nanosecond of tick 5
	k.sync(m, at(m, 2), m, m, 5)
	e, tick, ok := k.read(at(m, 2))
	require.True(t, ok)
	assert.Equal(t, int64(5), tick)
	assert.Equal(t, m, e)
	_, _, ok = k.read(at(m, 2) + 2)
	assert.False(t, ok, "one nanosecond later is tick 6: the next re-sync's")
}

func TestCyclesWallOffsetIsTheRecords(t *testing.T) {
	k := startedCycles(t)
	m := 2 * testUnit
	wall := 900*testUnit + 10 // the wall clock stepped: tick 900, whatever the monotonic clock says
	k.sync(m, at(m, 2), m, wall, 900)
	e, tick, ok := k.read(at(m+1000, 2))
	require.True(t, ok)
	assert.Equal(t, int64(900), tick)
	assert.InDelta(t, wall+1000, e, 2)
}

func TestCyclesCheckDropsAnOffCounter(t *testing.T) {
	k := startedCycles(t)
	m := 2 * testUnit
	k.sync(m, at(m, 2), m, m, 2)
	_, _, ok := k.read(at(m+1, 2))
	require.True(t, ok)

	// The counter now runs at a tenth of its rate: by the next tick it
	// has fallen 0.9 ms behind the monotonic clock.
	m2 := 3 * testUnit
	c2 := at(m, 2) + uint64(float64(m2-m)*0.2)
	k.sync(m2, c2, m2, m2, 3)
	_, _, ok = k.read(c2 + 1)
	assert.False(t, ok, "a failed check leaves no record: the fast path reads the monotonic clock")
	assert.Equal(t, uint64(1), k.fail)
	assert.True(t, k.on.Load(), "one failed check measures the rate anew")

	// At its new rate it is measured anew from the failed check's point.
	m3 := m2 + 2*testUnit
	c3 := c2 + uint64(float64(m3-m2)*0.2)
	k.sync(m3, c3, m3, m3, 5)
	e, tick, ok := k.read(c3 + 200) // 1000 ns at 0.2 cycles per ns
	require.True(t, ok)
	assert.Equal(t, int64(5), tick)
	assert.InDelta(t, m3+1000, e, 5)
}

func TestCyclesTurnOffAfterMissesInARow(t *testing.T) {
	k := startedCycles(t)
	m := 2 * testUnit
	k.sync(m, at(m, 2), m, m, 2)
	c := at(m, 2)
	for i := range cyclesMisses {
		require.True(t, k.on.Load(), "after %d misses", i)
		// Each re-sync: calibrate over 1 ms at 2 cycles/ns, then find
		// the counter 1 ms ahead of the monotonic clock.
		m += testUnit
		c += uint64(2 * testUnit)
		k.sync(m, c, m, m, m/testUnit)
		_, _, ok := k.read(c)
		require.True(t, ok, "calibrated again")
		m += testUnit
		c += uint64(4 * testUnit)
		k.sync(m, c, m, m, m/testUnit)
	}
	assert.False(t, k.on.Load(), "%d checks in a row failed: the counter is off for good", cyclesMisses)
	assert.Equal(t, uint64(cyclesMisses), k.fail)
	m += testUnit
	c += uint64(2 * testUnit)
	k.sync(m, c, m, m, m/testUnit)
	_, _, ok := k.read(c)
	assert.False(t, ok)
}

func TestCyclesCheckToleratesSlewOverLongGaps(t *testing.T) {
	k := startedCycles(t)
	m := 2 * testUnit
	k.sync(m, at(m, 2), m, m, 2)
	// An hour later, the kernel's clock having run 300 ppm fast of the
	// counter: 1.08 s apart, within 1/1024 of the hour.
	gap := int64(time.Hour)
	m2 := m + gap
	c2 := at(m, 2) + uint64(float64(gap)*2/(1+300e-6))
	k.sync(m2, c2, m2, m2, m2/testUnit)
	assert.Zero(t, k.fail)
	_, _, ok := k.read(c2)
	assert.True(t, ok)
}

func TestCyclesKeepTheNewerRecord(t *testing.T) {
	k := startedCycles(t)
	m := 4 * testUnit
	k.sync(m, at(m, 2), m, m, 4)
	// A re-sync whose reading is older (its goroutine was preempted
	// before it wrote) leaves the newer record.
	old := 3*testUnit + 500
	k.sync(old, at(old, 2), old, old, 3)
	_, tick, ok := k.read(at(m+10, 2))
	require.True(t, ok)
	assert.Equal(t, int64(4), tick)
}

func TestCyclesLongTicksAreNotCounted(t *testing.T) {
	var k cycleClock
	k.start(int64(2*time.Second), 0, 1000, 0)
	assert.False(t, k.on.Load(), "an estimate over a tick of 2 s could overflow: the monotonic clock is read")
	k.start(0, 0, 1000, 0)
	assert.False(t, k.on.Load())
}

func TestCyclesWriterBusyLeavesTheRecord(t *testing.T) {
	k := startedCycles(t)
	m := 2 * testUnit
	k.sync(m, at(m, 2), m, m, 2)
	k.seq.Add(1) // another re-sync writing
	_, _, ok := k.read(at(m+1, 2))
	assert.False(t, ok, "a record being written is not read")
	k.sync(m+testUnit, at(m+testUnit, 2), m+testUnit, m+testUnit, 3)
	k.seq.Add(1)
	_, tick, ok := k.read(at(m+1, 2))
	require.True(t, ok)
	assert.Equal(t, int64(2), tick, "the busy re-sync left the record to the one writing")
}

func TestScaleSaturates(t *testing.T) {
	assert.Equal(t, int64(3), scale(6, 1<<31))
	assert.Equal(t, int64(math.MaxInt64), scale(math.MaxUint64, 1<<40))
}

// TestCyclesReadersSeeOneRecord runs readers beside a re-sync that writes
// a record per tick: every reading is of one record, its estimate in its
// tick. Each tick's wall reading is the tick's start plus its number, and
// readers read at the counter of the tick being written, so a reading
// that mixed two records would show.
func TestCyclesReadersSeeOneRecord(t *testing.T) {
	k := startedCycles(t)
	var cur atomic.Int64
	var stop atomic.Bool
	var reads atomic.Uint64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if stop.Load() {
					return
				}
				i := cur.Load()
				e, tick, ok := k.read(at(i*testUnit+i, 2) + 20)
				if !ok {
					continue
				}
				reads.Add(1)
				if tick < 1 || e < tick*testUnit+tick || e >= (tick+1)*testUnit {
					assert.Failf(t, "a reading of two records", "tick %d, estimate %d", tick, e)
					return
				}
			}
		}()
	}
	// Until the readers have read 20,000 times (a tick's number stays
	// below the unit, so that each wall reading is in its tick).
	for i := int64(1); reads.Load() < 20_000 && i < testUnit; i++ {
		cur.Store(i)
		m := i*testUnit + i
		k.sync(m, at(m, 2), m, m, i)
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, k.fail)
}

func TestClockSourceDecidesTheCounter(t *testing.T) {
	dir := t.TempDir()
	tsc := filepath.Join(dir, "tsc")
	require.NoError(t, os.WriteFile(tsc, []byte("tsc\n"), 0o600))
	kvm := filepath.Join(dir, "kvm")
	require.NoError(t, os.WriteFile(kvm, []byte("kvm-clock\n"), 0o600))
	assert.True(t, clockSourceIs(tsc, "tsc"))
	assert.False(t, clockSourceIs(kvm, "tsc"))
	assert.False(t, clockSourceIs(filepath.Join(dir, "none"), "tsc"))
	assert.False(t, clockSourceIs(tsc, ""), "no clock source names the counter where there is none")
}

// TestSystemGeneratorUsesTheCounter: on a system whose clock source is the
// counter, a generator on the system clock measures its rate within its
// first ticks and then issues from its records; elsewhere it never turns
// the counter on.
func TestSystemGeneratorUsesTheCounter(t *testing.T) {
	l, err := ParseLayout("twitter,node=0,seq=22")
	require.NoError(t, err)
	g, err := New(0, WithLayout(l))
	require.NoError(t, err)
	defer func() { assert.NoError(t, g.Close(context.Background())) }()
	k := &g.src.cyc
	if !cyclesTrusted() {
		assert.False(t, k.on.Load(), "the counter is on without the kernel's trust")
		return
	}
	require.True(t, k.on.Load())
	var last ID
	next := func() {
		id, err := g.Next()
		if err != nil || id <= last { // testify only on failure: it costs more than a call
			require.NoError(t, err)
			require.Greater(t, id, last)
		}
		last = id
	}
	deadline := time.Now().Add(10 * time.Second)
	for k.span.Load() == 0 && time.Now().Before(deadline) {
		next()
	}
	require.NotZero(t, k.span.Load(), "no record of the counter within 10 s of calls")
	for range 100_000 {
		next()
	}
}

// TestSystemClockGoroutinesMeetNoFalseRollback: goroutines calling Next on
// the system clock with the error strategy, across many ticks. A reading
// of the cycle counter taken before the newest tick was loaded looks like
// a rollback of one tick; the fast path never decides on it, and the slow
// path reads again in order, so an error comes only with a step of the
// host's clock the generator counted. Each goroutine's IDs increase, and
// no ID is issued twice.
func TestSystemClockGoroutinesMeetNoFalseRollback(t *testing.T) {
	l, err := ParseLayout("twitter,node=0,seq=22")
	require.NoError(t, err)
	g, err := New(0, WithLayout(l), WithStrategy(strategies.Error()))
	require.NoError(t, err)
	defer func() { assert.NoError(t, g.Close(context.Background())) }()
	const workers, each = 8, 100_000
	ids := make([][]ID, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]ID, 0, each)
			for range each {
				id, err := g.Next()
				if err != nil {
					errs[w] = err
					break
				}
				out = append(out, id)
			}
			ids[w] = out
		}()
	}
	wg.Wait()
	rollbacks := g.Stats().Rollbacks
	seen := make(map[ID]struct{}, workers*each)
	for w := range workers {
		if errs[w] != nil {
			require.ErrorIs(t, errs[w], ErrClockRollback)
			require.NotZero(t, rollbacks, "a rollback error without a step of the clock: %v", errs[w])
		}
		for i, id := range ids[w] {
			if i > 0 && id <= ids[w][i-1] {
				require.Failf(t, "IDs go back", "goroutine %d: %d after %d", w, id, ids[w][i-1])
			}
			if _, dup := seen[id]; dup {
				require.Failf(t, "an ID issued twice", "%d", id)
			}
			seen[id] = struct{}{}
		}
	}
}

// FuzzCycleEstimate: whatever the counter's rate, the tick's length, the
// wall clock's offset and the moments of the re-sync and the reading, an
// estimate the record gives is in the record's tick, at or after its wall
// reading, and a reading after the tick's end (by more than one cycle's
// rounding) is never estimated.
func FuzzCycleEstimate(f *testing.F) {
	f.Add(int64(time.Millisecond), uint16(2000), int64(3_500_000), int64(0), int32(-250_000), uint32(10))
	f.Add(int64(time.Millisecond), uint16(2000), int64(3_500_000), int64(0), int32(200), uint32(0))
	f.Add(int64(10*time.Millisecond), uint16(1), int64(50_000_000), int64(-7_777_777), int32(-1), uint32(1))
	f.Add(int64(time.Second), uint16(65535), int64(2_000_000_000), int64(1<<40), int32(0), uint32(1<<31))
	f.Fuzz(func(t *testing.T, unit int64, perUs uint16, m int64, wallOff int64, fromEnd int32, drift uint32) {
		if unit <= 0 || unit > int64(cyclesMaxUnit) || perUs == 0 || m < 0 || m > 1<<50 || wallOff < -(1<<50) || wallOff > 1<<50 {
			return
		}
		perNs := float64(perUs) / 1000 // 0.001 to 65.5 cycles per ns
		var k cycleClock
		k.start(unit, 0, 1000, 0)
		c := at(m, perNs)
		e := m + wallOff
		tick := floorDiv(e, unit)
		k.sync(m, c, m, e, tick)
		if m < int64(cyclesCalibration) {
			_, _, ok := k.read(c)
			require.False(t, ok, "a record before the rate is measured")
			return
		}
		// A reading fromEnd ns from the tick's end (negative: before
		// it), of a counter that ran at or above its measured rate since
		// (drift parts in 2^32 faster).
		after := (tick+1)*unit - e + int64(fromEnd)
		if after < 0 {
			return
		}
		rc := c + uint64(float64(after)*perNs*(1+float64(drift)/(1<<32)))
		got, gotTick, ok := k.read(rc)
		if !ok {
			return
		}
		require.Equal(t, tick, gotTick)
		require.GreaterOrEqual(t, got, e)
		require.Less(t, got, (tick+1)*unit)
		require.Less(t, fromEnd, int32(1+1/perNs), "a reading past the tick's end was estimated inside it")
	})
}

// TestCyclesLateMonotonicReadingIsNoRatePoint: the monotonic reading
// paired with a counter reading may be taken long after it (the thread
// was preempted between the two reads). Measured from such a point, the
// rate comes out too low, and a record written with it would be trusted
// for several ticks of real time: the fast path would stamp the record's
// tick, and miss a step of the wall clock, long after the tick ended. A
// reading two ticks past the record's tick is never estimated, whether
// the late point is the first one or the point of a failed check.
func TestCyclesLateMonotonicReadingIsNoRatePoint(t *testing.T) {
	const late = 10 * testUnit // between the counter read and the monotonic read

	t.Run("first point", func(t *testing.T) {
		var k cycleClock
		k.start(testUnit, 0, at(0, 2), late) // the counter read at 0, between monotonic 0 and late
		m := late + testUnit + 1
		k.sync(m, at(m, 2), m, m, m/testUnit)
		_, tick, ok := k.read(at(m+2*testUnit, 2))
		assert.False(t, ok, "two ticks past its end, the record of tick %d is read as tick %d", m/testUnit, tick)
		m += testUnit
		k.sync(m, at(m, 2), m, m, m/testUnit)
		e, tick, ok := k.read(at(m+10, 2))
		require.True(t, ok, "measured from a point whose readings are close")
		assert.Equal(t, m/testUnit, tick)
		assert.InDelta(t, m+10, e, 2)
	})

	t.Run("failed check", func(t *testing.T) {
		k := startedCycles(t)
		m := 2 * testUnit
		k.sync(m, at(m, 2), m, m, 2)
		// The next re-sync reads the counter at 3 ms and the monotonic
		// clock at 13 ms: a check of it would fail.
		c := at(3*testUnit, 2)
		m = 3*testUnit + late
		k.sync(3*testUnit, c, m, m, m/testUnit)
		m += testUnit + 1
		k.sync(m, at(m, 2), m, m, m/testUnit)
		_, tick, ok := k.read(at(m+2*testUnit, 2))
		assert.False(t, ok, "two ticks past its end, the record of tick %d is read as tick %d", m/testUnit, tick)
	})
}

// TestCounterReadingDoesNotReuseAtTheRollbacksEnd: a counter reading one
// tick behind the newest tick may be a reading taken early, as the clock
// reached the newest tick and a rollback ended; the lane's plan reusing
// ticks below newest (the ring strategy's) is then left to the slow path,
// which reads again in order. A reading in order reuses as before.
func TestCounterReadingDoesNotReuseAtTheRollbacksEnd(t *testing.T) {
	clk := simclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g, err := New(1, WithClock(clk), WithStrategy(strategies.Ring()))
	require.NoError(t, err)
	for range 3 {
		_, err := g.Next()
		require.NoError(t, err)
		clk.Add(time.Millisecond)
	}
	_, err = g.Next() // at tick T+1
	require.NoError(t, err)
	clk.Step(-2 * time.Millisecond) // back to T-1, seen once the monotonic clock moves on a tick:
	clk.Add(time.Millisecond)       // the wall at T, the ring reuses T's room
	_, err = g.Next()
	require.NoError(t, err)
	newest := g.newest.Load()
	now := newest - 1
	from, _, ok := g.lane.get(now, newest)
	require.True(t, ok, "the lane holds the ring's plan for (T, T+1)")
	require.Less(t, from, newest, "a plan that reuses below newest")

	h := g.horizon.Load()
	r := reading{now: now, newest: newest}
	_, n := g.fromLane(r, h, 1, true)
	assert.Zero(t, n, "a counter reading one tick behind newest does not reuse")
	_, n = g.fromLane(r, h, 1, false)
	assert.Equal(t, uint64(1), n, "a reading in order reuses")
}
