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
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// MonotonicClock is a [Clock] that can also read a clock that never steps.
// A generator whose clock implements it reads Monotonic on every call and
// Now only once per tick: see [Generator] for the bound this gives. The
// default system clock and *simclock.Clock implement it.
type MonotonicClock interface {
	Clock
	// Monotonic returns the time elapsed since some fixed instant, on a
	// clock that never steps backwards or forwards.
	Monotonic() time.Duration
}

// systemClock is the default clock: time.Now for the wall clock and the
// monotonic reading Go carries in time.Time for Monotonic.
type systemClock struct{ start time.Time }

func (c systemClock) Now() time.Time                         { return time.Now() }
func (c systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (c systemClock) Monotonic() time.Duration               { return time.Since(c.start) }

// timeSource turns a Clock into elapsed nanoseconds since the layout's
// epoch. With a MonotonicClock it estimates the wall clock as the monotonic
// reading plus the offset measured at the last re-sync, and re-syncs (reads
// Now) whenever the estimate enters a tick other than the one it was
// last synced in. So the wall clock is read at least once in every tick in
// which the generator is called, and a step of the wall clock is seen by
// the first call whose estimate has moved to another tick: no more than one
// tick of monotonic time after it happened.
type timeSource struct {
	clock  Clock
	mono   MonotonicClock // nil: read Now on every call
	epoch  time.Time
	unit   int64 // nanoseconds per tick
	offset atomic.Int64
	synced atomic.Int64 // tick of the last re-sync
}

func (s *timeSource) init(c Clock, epoch time.Time, unit time.Duration) {
	s.clock, s.epoch, s.unit = c, epoch, int64(unit)
	s.mono, _ = c.(MonotonicClock)
	s.synced.Store(math.MinInt64)
}

// read returns the clock's reading as nanoseconds since the epoch.
func (s *timeSource) read() int64 {
	if s.mono == nil {
		return int64(s.clock.Now().Sub(s.epoch))
	}
	e := int64(s.mono.Monotonic()) + s.offset.Load()
	if floorDiv(e, s.unit) == s.synced.Load() {
		return e
	}
	return s.resync()
}

func (s *timeSource) resync() int64 {
	e := int64(s.clock.Now().Sub(s.epoch))
	s.offset.Store(e - int64(s.mono.Monotonic()))
	s.synced.Store(floorDiv(e, s.unit))
	return e
}
