package ringflake

import (
	"math"
	"sync/atomic"
	"time"
)

// Clock is the time source of a [Generator]: the two methods it needs.
// The clocks of github.com/benbjohnson/clock (clock.New() and *clock.Mock)
// and ringflake's own *simclock.Clock satisfy it.
//
// Now is the wall clock, which may step backwards; After is used to wait
// (for the next tick when a tick's sequence is used up, or when a strategy
// asks to sleep) so that a simulated clock can make waits instant.
//
// A Clock may also have a method
//
//	Monotonic() time.Duration
//
// returning the time elapsed since some fixed instant on a clock that
// never steps backwards or forwards. A generator whose clock has it reads
// Monotonic on every call and Now only once per tick: see [Generator] for
// the bound this gives. The default system clock and *simclock.Clock have
// it; a clock of github.com/benbjohnson/clock does not, and is read with
// Now on every call. (Within a tick, the default system clock may read
// the CPU's cycle counter instead of Monotonic: see [Generator].)
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// monotonicClock is a [Clock] with the optional Monotonic method (see
// Clock).
type monotonicClock interface {
	Clock
	// Monotonic returns the time elapsed since some fixed instant, on a
	// clock that never steps backwards or forwards.
	Monotonic() time.Duration
}

// systemClock is the default clock: time.Now for the wall clock and the
// monotonic reading Go carries in time.Time for Monotonic. Its After is
// time.After; a generator on it waits in its [waitq] instead (see
// [Generator.sleep]) for waits of at most [preciseWait] on systems where
// threads sleep in the kernel ([kernelSleep]).
type systemClock struct{ start time.Time }

func (c systemClock) Now() time.Time                         { return time.Now() }
func (c systemClock) Monotonic() time.Duration               { return time.Since(c.start) }
func (c systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// bubbled reports whether t, a reading of the system clock, was taken
// inside a testing/synctest bubble (Go 1.25+): a bubble's time.Now carries
// no monotonic reading, and t.Round(0) strips only that. (Outside a bubble
// Go omits it only past the year 2157.)
//
// Inside a bubble the clock is the bubble's fake one, which starts at
// 2000-01-01 and moves only when every goroutine of the bubble is blocked
// on it: a thread sleeping in the kernel never lets it move, so a wait must
// be one of time's own sleeps or timers; and time.Since(start) is the
// bubble's wall clock minus start's, so the "monotonic" reading of a
// generator made outside the bubble steps back with the wall clock.
func bubbled(t time.Time) bool { return t == t.Round(0) }

// preciseWait is the longest wait a generator on the system clock spends
// in its waitq (see [waitq]): one tick of the coarsest preset layouts
// (10 ms), more than a wait:5ms strategy asks for.
const preciseWait = 10 * time.Millisecond

// cancelSlice is how long a caller sleeping for the waitq sleeps before it
// looks at its context again: the longest a cancelled wait goes on.
const cancelSlice = time.Millisecond

// timeSource turns a Clock into elapsed nanoseconds since the layout's
// epoch, and into ticks. With a monotonicClock it estimates the wall clock
// as the monotonic reading plus the offset measured at the last re-sync,
// and re-syncs (reads Now) whenever the estimate leaves the tick it was
// last synced in. So the wall clock is read at least once in every tick in
// which the generator is called, and a step of the wall clock is seen by
// the first call whose estimate has moved to another tick: no more than
// one tick of monotonic time after it happened.
//
// Within the synced tick the tick is known without a division: an estimate
// e is in tick t when t*unit <= e < (t+1)*unit. With the default system
// clock the monotonic clock is read without an interface call; any other
// monotonicClock (simclock in tests) goes through the same estimate and
// re-sync code, only its reading comes through the interface.
type timeSource struct {
	clock  Clock
	mono   monotonicClock // nil: read Now on every call
	sys    bool           // clock is systemClock: read time.Since(start) directly
	start  time.Time      // systemClock's start
	epoch  time.Time
	unit   int64 // nanoseconds per tick
	offset atomic.Int64
	synced atomic.Int64 // tick of the last re-sync
	window atomic.Int64 // how long the wall read of the last re-sync took, in monotonic time
	last   atomic.Int64 // without a monotonic clock: the previous reading
	wall   atomic.Int64 // the wall reading of the last re-sync
	// freezes counts the times the wall clock was seen to stand still, or
	// to run slower than the monotonic clock, without going back (a
	// re-sync found it where the previous one had left it, or not as far
	// on as the monotonic time since, by a tick or more); frozen is set
	// while that lasts, so that one freeze counts once; still is set
	// while a re-sync finds the wall exactly where the previous one left
	// it.
	freezes atomic.Uint64
	frozen  atomic.Bool
	still   atomic.Bool
	// high is the greatest tick the wall clock was read at (at a re-sync,
	// or at every read without a monotonic clock): a reading taken after
	// it and behind it means the clock stepped back (steppedBack).
	high atomic.Int64
	// stepHigh is the greatest tick a step back counted at a re-sync was
	// measured from: a re-sync that reads behind high counts a step unless
	// one was counted from high already (see resyncTick).
	stepHigh atomic.Int64
	// cyc is the cycle counter's estimate within the synced tick, which
	// the fast path reads instead of the monotonic clock where the
	// counter is trusted (see cycleClock).
	cyc    cycleClock
	stats  *counters     // where rollbacks seen are counted
	onStep func()        // called when a step back is seen: waiting calls decide again
	newest *atomic.Int64 // the generator's newest tick, to tell whether a step left the clock behind it
}

// init sets the source up on c, whose wall clock read now when New
// started, and syncs the estimate with that reading: the estimate then
// runs behind the wall clock by the moment between the two reads, which a
// later re-sync takes for a step forward, never for a step back.
func (s *timeSource) init(c Clock, now time.Time, epoch time.Time, unit time.Duration, stats *counters, newest *atomic.Int64) {
	s.clock, s.epoch, s.unit, s.stats, s.newest = c, epoch, int64(unit), stats, newest
	s.mono, _ = c.(monotonicClock)
	if sc, ok := c.(systemClock); ok {
		s.sys, s.start = true, sc.start
	}
	e := int64(now.Sub(epoch))
	s.high.Store(floorDiv(e, s.unit))
	s.stepHigh.Store(math.MinInt64)
	if s.mono == nil {
		s.last.Store(e) // a step back before the first call is seen by it
		return
	}
	m := s.monotonic()
	if s.sys && !bubbled(now) && cyclesTrusted() {
		mb, c := m, cycles()
		m = s.monotonic()
		s.cyc.start(s.unit, mb, c, m)
	}
	s.offset.Store(e - m)
	s.wall.Store(e)
	s.synced.Store(floorDiv(e, s.unit))
}

// monotonic returns the monotonic clock's reading.
func (s *timeSource) monotonic() int64 {
	if s.sys {
		return int64(time.Since(s.start))
	}
	return int64(s.mono.Monotonic())
}

// readTick returns the clock's reading as nanoseconds since the epoch and
// the tick it falls in (floorDiv(e, unit)).
//
// The system clock within its synced tick — every call but one or two per
// tick — is written out first, small enough to inline into the fast path;
// everything else is readTickSlow's.
func (s *timeSource) readTick() (e, tick int64) {
	if s.sys {
		e = int64(time.Since(s.start)) + s.offset.Load()
		t := s.synced.Load()
		if uint64(e-t*s.unit) < uint64(s.unit) { // t*unit <= e < (t+1)*unit
			return e, t
		}
		return s.resyncTick()
	}
	return s.readTickSlow()
}

// readTickSlow is readTick for every clock but the system clock.
func (s *timeSource) readTickSlow() (e, tick int64) {
	switch {
	case s.mono != nil:
		e = int64(s.mono.Monotonic())
	default:
		// The last reading first: whatever reading it holds was taken
		// before this one, so a clock that never steps back never reads
		// below it — however concurrent calls are scheduled between
		// their reading and their store. A step back of a whole tick or
		// more counts once, by the call that moves the last reading
		// back; a reading that lands between (a step of less than a
		// tick, or a call that stored late) moves nothing.
		prev := s.last.Load()
		e = int64(s.clock.Now().Sub(s.epoch))
		tick = floorDiv(e, s.unit)
		switch {
		case prev-e >= s.unit:
			if s.last.CompareAndSwap(prev, e) {
				s.stats.seeRollback(prev-e, tick < s.newest.Load())
				s.stepped()
			}
		case e > prev:
			s.last.Store(e)
		}
		if tick > s.high.Load() {
			storeMax(&s.high, tick)
		}
		return e, tick
	}
	e += s.offset.Load()
	t := s.synced.Load()
	if uint64(e-t*s.unit) < uint64(s.unit) { // t*unit <= e < (t+1)*unit
		return e, t
	}
	return s.resyncTick()
}

// resyncTick reads the wall clock, re-syncs the estimate with it and
// returns the reading and its tick.
func (s *timeSource) resyncTick() (e, tick int64) {
	// Monotonic first: the estimate at m with the offset another call
	// may have stored meanwhile is still the wall clock at m, so
	// concurrent re-syncs do not look like steps.
	hi := s.high.Load() // before the clock is read, as steppedBack does
	on := s.cyc.on.Load()
	var c uint64
	var mb int64
	if on {
		mb = s.monotonic() // a bound on how much older than m c may be (cyclesPair)
		c = cycles()       // just before m: the estimates of the record never lag
	}
	m := s.monotonic()
	e = s.readWall(m, hi)
	w := s.monotonic() - m // how long reading the wall clock took
	tick = floorDiv(e, s.unit)
	// The estimate minus the reading is how far the wall clock fell
	// behind the monotonic clock since the last re-sync. The offset is
	// e-m, so an estimate runs ahead by up to the time the wall read took;
	// count an anomaly only when it is larger than that and crosses into
	// an earlier tick than the estimate's. A wall clock that reads less
	// than it read at the last re-sync stepped back: a rollback. One that
	// reads what it read then, or more but less than the monotonic time
	// that passed, stood still for a while (a freeze) — or stepped back by
	// less than that time, which two readings cannot tell from a freeze —
	// and counts as one freeze, unless it now reads behind an ID issued
	// (at a tick the estimate reached before the re-sync): then the
	// strategy meets a rollback, and it counts as one.
	//
	// Whatever the estimate says, a wall that reads behind hi, a tick it
	// was read at before this call began, stepped back — however slow
	// either read was (a goroutine preempted between its two reads). It
	// counts, once: unless the last re-sync read it behind hi too and a
	// step was counted from hi already (stepHigh). The last re-sync's
	// reading alone does not tell: that re-sync may have loaded its hi
	// before another call's read at the higher tick, which it cannot order
	// against its own, and counted nothing; or it swapped its reading in
	// and has not counted yet, while this call's caller meets the rollback.
	// Two re-syncs that read behind hi at once may both count it.
	prev, prevW, prevWall := s.offset.Swap(e-m), s.window.Swap(w), s.wall.Swap(e)
	est := m + prev
	back := est - e
	switch behind := tick < s.newest.Load(); {
	case tick < hi && (floorDiv(prevWall, s.unit) >= hi || s.stepHigh.Load() < hi):
		s.rollback(max(back, hi*s.unit-e), behind, hi)
	case back <= max(w, prevW) || floorDiv(est, s.unit) <= tick:
		if e != prevWall && s.frozen.Load() {
			s.frozen.Store(false) // the wall runs again
		}
	case e < prevWall || e != prevWall && behind:
		s.rollback(back, behind, max(hi, floorDiv(prevWall, s.unit)))
	case e == prevWall:
		s.still.Store(true)
		if !s.frozen.Swap(true) {
			s.freezes.Add(1)
		}
	default: // it moved, less than the monotonic clock
		if !s.frozen.Swap(true) {
			s.freezes.Add(1)
		}
	}
	if e != prevWall && s.still.Load() {
		s.still.Store(false)
	}
	s.synced.Store(tick)
	if tick > s.high.Load() {
		storeMax(&s.high, tick)
	}
	if on {
		s.cyc.sync(mb, c, m, e, tick)
	}
	return e, tick
}

// readWall reads the wall clock for a re-sync, as nanoseconds since the
// epoch. A reading of the system clock inside a testing/synctest bubble
// (see [bubbled]) is compared with the wall reading of the last re-sync
// here, because the estimate cannot see its steps: the monotonic reading
// moved with it. The bubble's clock never steps back, but a generator made
// outside a bubble and called inside one finds a clock 26 years earlier
// (a bubble starts at 2000-01-01), and back outside one later again: a
// reading a whole tick or more earlier than the last re-sync's is a step
// back, counted once (the call that moves the last wall reading counts
// it). Inside a bubble the estimate is the bubble's clock itself: readWall
// sets the offset to the reading minus m, the monotonic reading just
// before it, and marks a step from hi (the greatest tick read before the
// re-sync began) counted, so that the checks of resyncTick see no further
// step.
func (s *timeSource) readWall(m, hi int64) int64 {
	now := s.clock.Now()
	e := int64(now.Sub(s.epoch))
	if !s.sys || !bubbled(now) {
		return e
	}
	tick := floorDiv(e, s.unit)
	storeMax(&s.stepHigh, hi)
	if prev := s.wall.Load(); floorDiv(prev, s.unit) > tick && s.wall.CompareAndSwap(prev, e) {
		// No stepped(): waits in a bubble do not watch the step signal
		// (see Generator.sleep), and a signal renewed inside a bubble
		// would belong to it.
		s.stats.seeRollback(prev-e, tick < s.newest.Load())
	}
	s.offset.Store(e - m)
	return e
}

// rollback counts a step back of back nanoseconds seen at a re-sync,
// measured from tick from, and tells the waiting calls. It counts before
// it marks the step counted (stepHigh): a re-sync that finds the mark
// leaves the step to this count, and its caller may meet the rollback at
// once.
func (s *timeSource) rollback(back int64, behind bool, from int64) {
	s.stats.seeRollback(back, behind)
	storeMax(&s.stepHigh, from)
	s.stepped()
}

// stepped tells the waiting calls that the clock stepped back.
func (s *timeSource) stepped() {
	if s.onStep != nil {
		s.onStep()
	}
}

// steppedBack reports whether the clock reads behind a tick it was read at
// before: it stepped back (and has not caught up yet). It loads the
// greatest tick first and reads the clock after, so that other calls
// reading the clock meanwhile never make it look like a step.
func (s *timeSource) steppedBack() bool {
	high := s.high.Load()
	_, now := s.readTick()
	return now < high
}

// stoodStill reports whether the clock stood still between the reading
// before a wait and e, the reading after it, rather than stepping back:
// a wall reading no earlier than the one before (it stood still all the
// time or part of it, or stepped back by less than the wait, which the
// readings cannot tell apart) or — with a monotonicClock, whose reading
// before the wait may be an estimate a little ahead of the wall — a wall
// clock that the last re-sync found exactly where the one before had
// left it.
func (s *timeSource) stoodStill(e, before int64) bool {
	return e >= before || (s.mono != nil && s.still.Load())
}
