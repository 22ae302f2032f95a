package simclock

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrInvalidDrift is returned by [Clock.SetDrift], and matched by the error
// [Clock.Schedule] returns for a Drift event, when the drift rate is NaN,
// infinite, <= -1 or > 1.
var ErrInvalidDrift = errors.New("simclock: invalid drift rate")

// ErrInvalidJitter is returned by [Clock.SetJitter], and matched by the error
// [Clock.Schedule] returns for a Jitter event, when the jitter bound is
// negative.
var ErrInvalidJitter = errors.New("simclock: invalid jitter")

// billion is the number of parts per billion in 1; drift rates are kept as
// integer parts per billion of true time.
const billion = 1_000_000_000

// Clock is a simulated host clock with a wall reading ([Clock.Now]) that can
// step, freeze, drift and jitter, and a monotonic reading
// ([Clock.Monotonic]) that only counts true elapsed time.
//
// Make one with [New] (virtual time, the usual case) or [Wrap] (a skew
// overlay on another clock). The zero value is not usable. A Clock is safe
// for concurrent use by multiple goroutines.
//
// Clock provides the methods Now, Since, Until, Sleep and After of
// github.com/benbjohnson/clock's Clock interface, with the same meaning, but
// not its timers and tickers, so it does not implement that interface.
type Clock struct {
	mu sync.Mutex

	// base is nil for a virtual clock made by New. For a clock made by
	// Wrap, true elapsed time is base.Since(origin).
	base   clock.Clock
	origin time.Time

	// elapsed is the true time that has passed since New or Wrap. It only
	// moves forward and is what Monotonic returns.
	elapsed time.Duration

	// wall is the wall clock before jitter, with no monotonic reading, in
	// the location of the start time.
	wall time.Time
	loc  *time.Location

	// frozenUntil is the elapsed time at which the current freeze ends; the
	// wall does not advance while elapsed < frozenUntil.
	frozenUntil time.Duration

	// driftPPB is the drift rate in parts per billion: the wall advances
	// by d + d*driftPPB/1e9 when true time advances by d. carry holds the
	// remainder of that division (|carry| < 1e9), in units of 1e-9 ns.
	driftPPB int64
	carry    int64

	// jitterMax bounds the noise added to each wall reading; 0 disables it.
	jitterMax time.Duration
	rng       *rand.Rand

	// pending holds scheduled events not yet applied, in firing order.
	pending []Event
}

// New returns a virtual clock whose wall clock reads start and whose
// monotonic clock reads 0. Time passes only through [Clock.Add],
// [Clock.Sleep] and [Clock.After].
//
// The wall readings keep start's location. Any monotonic clock reading
// inside start (as carried by time.Now()) is dropped, so that durations
// between readings are always computed from the wall values.
func New(start time.Time) *Clock {
	start = start.Round(0)
	return &Clock{wall: start, loc: start.Location()}
}

// Wrap returns a clock that lays the step, freeze, drift, jitter and script
// model of [Clock] over base, for chaos tests of a live service. Its true
// elapsed time, and so its monotonic reading, is base.Since(origin), where
// origin is base.Now() at the time of the call; its wall clock starts at
// origin and follows that elapsed time through the same model as a clock
// made by [New]. Scheduled events fire when a reading of the clock observes
// that base time has reached them. If base time ever moves backwards (for
// example a *clock.Mock set to an earlier time), the wrapped clock treats it
// as no time passing.
//
// On a wrapped clock, [Clock.Sleep] and [Clock.After] delegate to base: they
// wait for real on a real clock and for the mock's Add on a *clock.Mock.
// [Clock.Add] with d > 0 cannot make base time pass and has no effect; use
// the base clock to let time pass. Add with d < 0, [Clock.Step],
// [Clock.Set], [Clock.Freeze], [Clock.SetDrift], [Clock.SetJitter] and
// [Clock.Schedule] work as on a virtual clock.
func Wrap(base clock.Clock) *Clock {
	origin := base.Now()
	start := origin.Round(0)
	return &Clock{base: base, origin: origin, wall: start, loc: start.Location()}
}

// Now returns the wall clock reading: the start time, moved by true elapsed
// time as adjusted by drift and freezes, plus every step, plus jitter noise
// if enabled. It may go backwards between calls.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	return c.read()
}

// Wall returns the wall clock without jitter noise: what [Clock.Now] would
// read if jitter were off. It draws no random number, so reading it does
// not change later readings. Reports and tests use it to compare IDs with
// the clock the host really had.
func (c *Clock) Wall() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	return c.wall
}

// Monotonic returns the true time elapsed since [New] or [Wrap]. It never
// goes backwards, and steps, freezes, drift and jitter do not affect it.
func (c *Clock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	return c.elapsed
}

// Since returns the wall time elapsed since t: c.Now().Sub(t). It is
// negative if the wall clock reads earlier than t.
func (c *Clock) Since(t time.Time) time.Duration {
	return c.Now().Sub(t)
}

// Until returns the wall time until t: t.Sub(c.Now()).
func (c *Clock) Until(t time.Time) time.Duration {
	return t.Sub(c.Now())
}

// Add lets time pass or steps the wall clock, depending on the sign of d.
//
// For d >= 0 it is like benbjohnson/clock's Mock.Add: true time advances by
// d, the monotonic reading grows by d, the wall clock advances by d as
// adjusted by drift and freezes, and scheduled events that fall due fire at
// their exact times. Unlike Mock.Add it never sleeps for real.
//
// For d < 0 it is [Clock.Step](d): the wall clock jumps back by -d and the
// monotonic reading is unchanged, because true time cannot go back.
//
// On a clock made by [Wrap], Add with d > 0 has no effect: only the base
// clock can make time pass.
func (c *Clock) Add(d time.Duration) {
	if d < 0 {
		c.Step(d)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base != nil {
		c.sync()
		return
	}
	c.advance(d)
}

// Step moves the wall clock by d, forwards or backwards, at once, as an NTP
// step or `date -s` would. The monotonic reading is unchanged. During a
// freeze the wall stays at the stepped value until the freeze ends.
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	c.wall = c.wall.Add(d)
}

// Set makes the wall clock read t (in the start time's location, without
// any monotonic reading of t). The monotonic reading is unchanged. During a
// freeze the wall stays at t until the freeze ends.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	c.wall = t.Round(0)
	if c.loc != nil { // nil in the zero Clock
		c.wall = c.wall.In(c.loc)
	}
}

// Freeze stops the wall clock for the next d of true elapsed time. The
// monotonic reading keeps counting; when the freeze ends the wall resumes
// from the value it was frozen at, so it is then behind by d. A freeze
// started during another one extends it to the later of the two ends. d <= 0
// does nothing.
func (c *Clock) Freeze(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	c.freeze(d)
}

// SetDrift makes the wall clock run at (1+rate) times true time from now on:
// -0.005 is 0.5 % slow (the wall gains 0.995 s per second), 0.001 is 0.1 %
// fast, and 0 runs true. The rate is kept as whole parts per billion,
// rounded. It returns an error matching [ErrInvalidDrift], and changes
// nothing, if rate is NaN, infinite, <= -1 or > 1.
func (c *Clock) SetDrift(rate float64) error {
	ppb, err := driftPPB(rate)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	c.driftPPB = ppb
	return nil
}

// SetJitter makes each wall reading from now on (from [Clock.Now],
// [Clock.Since], [Clock.Until] and the value sent by [Clock.After]) carry a
// noise offset drawn uniformly from [-max, +max], using a math/rand/v2 PCG
// generator seeded with seed, so the same seed gives the same sequence of
// offsets. The noise is not added to the wall clock's state and does not
// touch the monotonic reading. max == 0 turns jitter off. It returns an
// error matching [ErrInvalidJitter], and changes nothing, if max < 0.
func (c *Clock) SetJitter(max time.Duration, seed uint64) error {
	if max < 0 {
		return jitterError(max)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	c.setJitter(max, seed)
	return nil
}

// Sleep lets d of true time pass, as [Clock.Add](d) does, and returns at
// once: it never blocks and never sleeps for real. d <= 0 does nothing.
// Goroutines sleeping at the same time each advance the clock by their own
// d, so with several sleepers simulated time runs ahead of a real host's.
//
// On a clock made by [Wrap], Sleep calls the base clock's Sleep, which waits
// for real on a real clock, and until the mock's time reaches the end on a
// *clock.Mock.
func (c *Clock) Sleep(d time.Duration) {
	if c.base != nil {
		c.base.Sleep(d)
		return
	}
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advance(d)
}

// After lets d of true time pass, as [Clock.Sleep] does, and returns a
// channel with room for one value that already holds the wall reading taken
// after that advance (a reading like [Clock.Now], with jitter if enabled).
// It never blocks. Because time has passed when After returns, code that
// selects on the channel and on a context sees the time advanced even if
// the context wins. d <= 0 advances nothing and the channel holds the
// current reading.
//
// On a clock made by [Wrap], After returns the base clock's After(d)
// channel, which delivers the base clock's own reading when d has passed on
// the base clock.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	if c.base != nil {
		return c.base.After(d)
	}
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.advance(d)
	}
	ch <- c.read()
	return ch
}

// read returns the wall reading with jitter noise. c.mu must be held.
func (c *Clock) read() time.Time {
	if c.jitterMax == 0 {
		return c.wall
	}
	// Uniform in [0, 2*max]; 2*max+1 fits in a uint64 for any Duration.
	n := uint64(c.jitterMax)*2 + 1
	off := int64(c.rng.Uint64N(n) - uint64(c.jitterMax))
	return c.wall.Add(time.Duration(off))
}

// sync brings the elapsed time of a wrapped clock up to the base clock's,
// firing due events. It does nothing for a virtual clock. c.mu must be held.
func (c *Clock) sync() {
	if c.base == nil {
		return
	}
	if e := c.base.Since(c.origin); e > c.elapsed {
		c.advanceTo(e)
	}
}

// advance lets d >= 0 of true time pass, saturating at the largest
// Duration. c.mu must be held.
func (c *Clock) advance(d time.Duration) {
	if d > math.MaxInt64-c.elapsed {
		d = math.MaxInt64 - c.elapsed
	}
	c.advanceTo(c.elapsed + d)
}

// advanceTo moves true elapsed time forward to e, applying each pending
// event with At <= e at its own time, so the wall between events is
// computed with the drift and freeze in force at that time. c.mu must be
// held.
func (c *Clock) advanceTo(e time.Duration) {
	for len(c.pending) > 0 && c.pending[0].At <= e {
		ev := c.pending[0]
		c.pending[0] = Event{}
		c.pending = c.pending[1:]
		c.moveTo(ev.At)
		c.apply(ev)
	}
	c.moveTo(e)
}

// moveTo advances the wall for true time passing from c.elapsed to e
// (e >= c.elapsed) with no event in between, then sets c.elapsed to e.
// c.mu must be held.
func (c *Clock) moveTo(e time.Duration) {
	d := e - c.elapsed
	if d <= 0 {
		return
	}
	if c.frozenUntil > c.elapsed {
		d -= min(e, c.frozenUntil) - c.elapsed
	}
	if d > 0 {
		c.wall = c.wall.Add(d + c.drift(d))
	}
	c.elapsed = e
}

// drift returns the drift correction for d > 0 of unfrozen true time,
// d*driftPPB/1e9, carrying the remainder in c.carry so that any split of a
// run into pieces gives the same total as one piece. c.mu must be held.
func (c *Clock) drift(d time.Duration) time.Duration {
	if c.driftPPB == 0 {
		return 0 // the carry, |carry| < 1e9, stays as it is
	}
	// d*ppb can overflow int64; split d = q*1e9 + r so that only r*ppb
	// (< 1e18 in magnitude) needs the remainder.
	q, r := int64(d)/billion, int64(d)%billion
	num := r*c.driftPPB + c.carry
	c.carry = num % billion
	return time.Duration(q*c.driftPPB + num/billion)
}

// freeze starts or extends a freeze of d > 0. c.mu must be held.
func (c *Clock) freeze(d time.Duration) {
	end := c.elapsed + d
	if end < c.elapsed { // overflow: freeze forever
		end = math.MaxInt64
	}
	c.frozenUntil = max(c.frozenUntil, end)
}

// setJitter sets the jitter bound and seed; bound >= 0. c.mu must be held.
func (c *Clock) setJitter(bound time.Duration, seed uint64) {
	c.jitterMax = bound
	if bound == 0 {
		c.rng = nil
		return
	}
	c.rng = rand.New(rand.NewPCG(seed, seed))
}

// driftPPB validates rate and converts it to parts per billion.
func driftPPB(rate float64) (int64, error) {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= -1 || rate > 1 {
		return 0, fmt.Errorf("%w %v: want a finite rate > -1 and <= 1", ErrInvalidDrift, rate)
	}
	return int64(math.Round(rate * billion)), nil
}

// jitterError is the error for a negative jitter bound.
func jitterError(bound time.Duration) error {
	return fmt.Errorf("%w bound %v: want >= 0", ErrInvalidJitter, bound)
}
