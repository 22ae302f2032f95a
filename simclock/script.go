package simclock

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// ErrInvalidEvent is matched, with errors.Is, by every error [Clock.Schedule]
// returns. The error is an [*EventError] that tells which event and field
// are wrong.
var ErrInvalidEvent = errors.New("simclock: invalid event")

// Kind is what a scripted [Event] does to the wall clock. The zero Kind is
// not a valid kind, so an Event whose Kind was left out is rejected.
type Kind int

// The kinds of scripted events.
const (
	// Step moves the wall clock by Event.D (non-zero, either sign), as
	// [Clock.Step] does.
	Step Kind = iota + 1
	// Freeze stops the wall clock for Event.D (> 0) of true time, as
	// [Clock.Freeze] does.
	Freeze
	// Drift sets the drift rate to Event.Rate, as [Clock.SetDrift] does.
	Drift
	// Jitter sets read noise of at most Event.D (>= 0, 0 turns it off)
	// with seed Event.Seed, as [Clock.SetJitter] does.
	Jitter
)

// String returns "step", "freeze", "drift" or "jitter", or "Kind(n)" for a
// value that is not a kind.
func (k Kind) String() string {
	switch k {
	case Step:
		return "step"
	case Freeze:
		return "freeze"
	case Drift:
		return "drift"
	case Jitter:
		return "jitter"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one timed change to the wall clock in a scripted scenario, given
// to [Clock.Schedule]. It is applied when the clock's true elapsed time (its
// [Clock.Monotonic] reading) reaches At.
//
// Each kind uses only some fields; the others must be zero:
//
//	Kind    D                        Rate               Seed
//	Step    amount, non-zero, ±      0                  0
//	Freeze  length, > 0              0                  0
//	Drift   0                        > -1 and <= 1      0
//	Jitter  bound, >= 0 (0 = off)    0                  any
type Event struct {
	At   time.Duration // true elapsed time since New or Wrap at which the event happens
	Kind Kind
	D    time.Duration // Step: amount; Freeze: length; Jitter: bound
	Rate float64       // Drift only
	Seed uint64        // Jitter only
}

// String describes e, for example "at 1.5s: step -20ms",
// "at 2s: drift -0.005" or "at 0s: jitter 1ms seed 7".
func (e Event) String() string {
	s := "at " + e.At.String() + ": " + e.Kind.String()
	switch e.Kind {
	case Drift:
		return s + " " + strconv.FormatFloat(e.Rate, 'g', -1, 64)
	case Jitter:
		return s + " " + e.D.String() + " seed " + strconv.FormatUint(e.Seed, 10)
	}
	return s + " " + e.D.String()
}

// EventError tells why [Clock.Schedule] rejected an event. It matches
// [ErrInvalidEvent] with errors.Is, and also [ErrInvalidDrift] for a bad
// Drift rate and [ErrInvalidJitter] for a negative Jitter bound.
type EventError struct {
	Index  int    // position of the event among Schedule's arguments
	Event  Event  // the rejected event
	Field  string // "At", "Kind", "D", "Rate" or "Seed"
	Reason string // what is wrong with the field
	err    error  // a more specific sentinel, or nil
}

// Error returns a message of the form
// "simclock: invalid event 2 (at 1s: step 0s): D: a step must not be 0".
func (e *EventError) Error() string {
	return "simclock: invalid event " + strconv.Itoa(e.Index) + " (" + e.Event.String() + "): " + e.Field + ": " + e.Reason
}

// Is reports whether target is [ErrInvalidEvent].
func (e *EventError) Is(target error) bool {
	return target == ErrInvalidEvent
}

// Unwrap returns [ErrInvalidDrift] or [ErrInvalidJitter] when one of them
// describes the fault, and nil otherwise.
func (e *EventError) Unwrap() error {
	return e.err
}

// Schedule adds events to the clock's script. Each event is applied when
// true elapsed time reaches its At, at exactly that time: when one advance
// of the clock crosses several events, the wall is advanced piecewise to
// each event's At, under the drift and freeze in force until then, before
// the event is applied. An event whose At equals the current elapsed time
// is applied before Schedule returns.
//
// Events with equal At fire in the order given, and after events with the
// same At that were scheduled earlier.
//
// Schedule first checks every event and, if any is invalid, schedules none
// of them and returns an [*EventError] for the first bad one, which matches
// [ErrInvalidEvent]: At earlier than the current elapsed time, a Kind that
// is not one of [Step], [Freeze], [Drift] and [Jitter], a D or Rate that is
// not valid for the kind (see [Event]; a bad Rate also matches
// [ErrInvalidDrift] and a negative Jitter bound [ErrInvalidJitter]), or a
// field the kind does not use that is not zero.
func (c *Clock) Schedule(events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	for i, ev := range events {
		if err := validate(i, ev, c.elapsed); err != nil {
			return err
		}
	}
	c.pending = append(c.pending, events...)
	slices.SortStableFunc(c.pending, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	c.advanceTo(c.elapsed) // fire events due now
	return nil
}

// Pending returns a copy of the scheduled events that have not fired yet,
// in the order they will fire.
func (c *Clock) Pending() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sync()
	return slices.Clone(c.pending)
}

// apply carries out a due event, which has been validated. c.mu must be
// held.
func (c *Clock) apply(ev Event) {
	switch ev.Kind {
	case Step:
		c.wall = c.wall.Add(ev.D)
	case Freeze:
		c.freeze(ev.D)
	case Drift:
		c.driftPPB, _ = driftPPB(ev.Rate)
	case Jitter:
		c.setJitter(ev.D, ev.Seed)
	}
}

// validate checks event number i against the current elapsed time.
func validate(i int, ev Event, elapsed time.Duration) error {
	bad := func(field, reason string, err error) error {
		return &EventError{Index: i, Event: ev, Field: field, Reason: reason, err: err}
	}
	if ev.At < elapsed {
		return bad("At", fmt.Sprintf("%v is before the current elapsed time %v", ev.At, elapsed), nil)
	}
	switch ev.Kind {
	case Step:
		if ev.D == 0 {
			return bad("D", "a step must not be 0", nil)
		}
	case Freeze:
		if ev.D <= 0 {
			return bad("D", fmt.Sprintf("a freeze of %v must be > 0", ev.D), nil)
		}
	case Drift:
		if ev.D != 0 {
			return bad("D", fmt.Sprintf("%v is not used by a drift event and must be 0", ev.D), nil)
		}
		if _, err := driftPPB(ev.Rate); err != nil {
			return bad("Rate", fmt.Sprintf("%v: want a finite rate > -1 and <= 1", ev.Rate), ErrInvalidDrift)
		}
	case Jitter:
		if ev.D < 0 {
			return bad("D", fmt.Sprintf("a jitter bound of %v must be >= 0", ev.D), ErrInvalidJitter)
		}
	default:
		return bad("Kind", fmt.Sprintf("%v is not a kind of event", ev.Kind), nil)
	}
	if ev.Kind != Drift && ev.Rate != 0 {
		return bad("Rate", fmt.Sprintf("%v is not used by a %v event and must be 0", ev.Rate, ev.Kind), nil)
	}
	if ev.Kind != Jitter && ev.Seed != 0 {
		return bad("Seed", fmt.Sprintf("%d is not used by a %v event and must be 0", ev.Seed, ev.Kind), nil)
	}
	return nil
}
