package ringflake

import (
	"math/bits"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A generator on the system clock reads the monotonic clock on every call
// to tell whether it is still in the tick of its last re-sync. On Linux on
// amd64, where the kernel itself keeps time with the CPU's time-stamp
// counter, the fast path reads that counter instead: one instruction in
// place of a call into the vDSO, which is most of what a Next costs. Each
// re-sync, once per tick, reads the monotonic clock as before and checks
// the counter against it; the counter is never trusted further than the end
// of the tick it was checked in.

// cyclesOff is the environment variable that turns the counter off:
// RINGFLAKE_CYCLES=off makes every generator of the process read the
// monotonic clock on every call, as on other systems.
const cyclesOff = "RINGFLAKE_CYCLES"

// clockSourceFile names the kernel's current clock source on Linux.
const clockSourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// cyclesTrusted reports whether this process may read the cycle counter
// for time: the kernel's clock source is the counter ([cyclesSource]) and
// RINGFLAKE_CYCLES is not "off". It is decided once per process.
var cyclesTrusted = sync.OnceValue(func() bool {
	return cyclesSource != "" && !strings.EqualFold(os.Getenv(cyclesOff), "off") &&
		clockSourceIs(clockSourceFile, cyclesSource)
})

// clockSourceIs reports whether the file at path names the clock source
// want.
func clockSourceIs(path, want string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == want
}

const (
	// cyclesCalibration is how much monotonic time the counter's rate is
	// measured over before the fast path uses it. A reading's jitter of
	// some tens of nanoseconds makes that a rate within 1e-4, so an
	// estimate within 100 ns over a millisecond's tick; the rate keeps
	// being measured from the same first point, ever more precisely.
	cyclesCalibration = time.Millisecond
	// cyclesMaxUnit is the longest tick the counter is used for: an
	// estimate's product of cycles and rate stays within 64 bits for
	// ticks shorter than 2^32 ns.
	cyclesMaxUnit = time.Second
	// cyclesMisses is how many re-syncs in a row may find the counter
	// off the monotonic clock by more than the tolerance before the
	// generator stops using it for good (a counter that changes its rate,
	// a process moved to a host whose counter differs, a generator called
	// inside a testing/synctest bubble, whose clock is not the counter's).
	cyclesMisses = 8
	// cyclesPair is how far apart the monotonic readings just before and
	// just after a counter reading may be for the three to be taken as
	// one point. Measured from a point whose monotonic reading came
	// later than its counter reading by d (the thread preempted between
	// the two), the rate would come out too low by d over the time
	// measured, and a record written with it would be trusted past its
	// tick's end: by ten ticks for a preemption of 10 ms after the first
	// millisecond. Points further apart are neither checked nor measured
	// from; the rate is then off by at most 2 µs over 1 ms (1/500), and an
	// estimate lags by at most 1/500 of a tick.
	cyclesPair = time.Microsecond
)

// cycleClock is the counter's estimate of the wall clock within the
// synced tick: the record of the last re-sync that checked the counter,
// under a sequence lock (seq is odd while it is written). A reading c is
// in the record's tick when c-c0 < span, the cycles from c0 to the end of
// that tick, and then the estimate is e0 + (c-c0)·rate: never outside the
// tick by construction, whatever the rate.
//
// The counter is not ordered against the loads before it (RDTSC may run
// while an earlier load waits for its cache line), so its reading may be a
// little older than the newest tick the caller loaded first. Only the fast
// path reads it: an early reading at most issues at the hot tick or from
// the lane as a reading of that earlier moment would, which the ring keeps
// unique; the slow path, which decides rollbacks, reads the clock again
// in order.
type cycleClock struct {
	seq  atomic.Uint64 // even and non-zero while a record can be read
	c0   atomic.Uint64 // the counter at the record's re-sync, read just before m0
	span atomic.Uint64 // cycles from c0 to the end of tick; 0: no record
	e0   atomic.Int64  // the wall clock's reading at the re-sync, ns since the epoch
	tick atomic.Int64  // the tick of e0
	rate atomic.Uint64 // ns per cycle, 32.32 fixed point
	on   atomic.Bool   // the counter is read; false for good once it failed
	unit int64
	tol  int64 // how far off the monotonic clock a check may find the counter over a tick, ns
	// Written under the lock (seq odd) only:
	m0         int64  // the monotonic reading of the record
	calC, calM int64  // the first point the rate is measured from: counter, monotonic reading
	calOK      bool   // calC, calM set
	misses     int    // checks in a row that found the counter off
	fail       uint64 // checks that failed (for tests)
}

// start turns the counter on for ticks of unit ns, with (c, m) — a
// counter reading and the monotonic reading just after it — as the first
// point of its rate when mb, the monotonic reading just before it, is
// within cyclesPair of m; else the first re-sync whose readings are is.
// It does nothing for ticks longer than cyclesMaxUnit.
func (k *cycleClock) start(unit, mb int64, c uint64, m int64) {
	if unit <= 0 || unit > int64(cyclesMaxUnit) {
		return
	}
	k.unit, k.tol = unit, max(unit/32, 2*int64(time.Microsecond))
	if m-mb <= int64(cyclesPair) {
		k.calC, k.calM, k.calOK = int64(c), m, true
	}
	k.on.Store(true)
}

// read returns the estimate at counter reading c and its tick, when c is
// within the tick of the record (ok).
func (k *cycleClock) read(c uint64) (e, tick int64, ok bool) {
	s := k.seq.Load()
	d := c - k.c0.Load()
	// The product is only used when d is within the span, where it
	// cannot overflow; the order of the checks keeps read small enough
	// to inline.
	e = k.e0.Load() + int64(d*k.rate.Load()>>32)
	return e, k.tick.Load(), d < k.span.Load() && k.seq.Load() == s&^1 // odd s: being written; span 0: no record
}

// sync is a re-sync's part: c is the counter read between mb and m, two
// monotonic readings, and e the wall clock's reading of the re-sync at m,
// in tick. It checks the record's estimate against m, measures the rate
// and writes the new record; or, while the rate is not measured yet or the
// check failed, leaves no record, and the fast path reads the monotonic
// clock. A re-sync whose monotonic readings are more than cyclesPair
// apart (c may be much older than m) does none of that: the record stays,
// never trusted past its tick. A re-sync whose monotonic reading is older
// than the record's leaves the newer record; one that finds another
// writing leaves it to that one.
func (k *cycleClock) sync(mb int64, c uint64, m, e, tick int64) {
	if m-mb > int64(cyclesPair) {
		return
	}
	s := k.seq.Load()
	if s&1 != 0 || !k.seq.CompareAndSwap(s, s+1) {
		return
	}
	defer k.seq.Store(s + 2)
	if !k.on.Load() || k.span.Load() != 0 && m < k.m0 {
		return
	}
	if !k.calOK { // start's point was not one: this is the first
		k.calC, k.calM, k.calOK = int64(c), m, true
		return
	}
	if k.span.Load() != 0 {
		// The tolerance grows by 1/1024 of the time since the record:
		// a rate a little off (the kernel's clock slews by up to 500 ppm)
		// only matters within a tick.
		pred := k.m0 + scale(c-k.c0.Load(), k.rate.Load())
		if d, tol := pred-m, k.tol+max(m-k.m0, 0)>>10; d > tol || d < -tol {
			k.fail++
			k.span.Store(0)
			k.calC, k.calM = int64(c), m // measure the rate anew
			if k.misses++; k.misses >= cyclesMisses {
				k.on.Store(false)
			}
			return
		}
		k.misses = 0
	}
	dm, dc := m-k.calM, int64(c)-k.calC
	if dm < int64(cyclesCalibration) || dc <= 0 {
		k.span.Store(0)
		return
	}
	rate := uint64(float64(dm) / float64(dc) * (1 << 32))
	if rate == 0 {
		k.span.Store(0)
		return
	}
	rem := (tick+1)*k.unit - e // ns left in the tick: (0, unit]
	k.m0 = m
	k.c0.Store(c)
	k.e0.Store(e)
	k.tick.Store(tick)
	k.rate.Store(rate)
	k.span.Store(uint64(rem) << 32 / rate)
}

// scale returns d cycles at rate (ns per cycle, 32.32) as nanoseconds,
// saturating at the largest int64.
func scale(d, rate uint64) int64 {
	hi, lo := bits.Mul64(d, rate)
	if hi >= 1<<31 {
		return 1<<63 - 1
	}
	return int64(hi<<32 | lo>>32)
}
