package strategies

import (
	"fmt"
	"time"
)

// DefaultWait is the longest stall [Wait] accepts when no limit is given,
// the 5 ms Meituan's Leaf tolerates.
const DefaultWait = 5 * time.Millisecond

// DefaultLead is how far ahead of the clock [Logical] may run when no limit
// is given.
const DefaultLead = time.Second

// Default returns the strategy a generator uses when none is configured:
// Chain(Ring(), Wait(DefaultWait), Error()), written "ring,wait:5ms,error".
//
// It is the default because it keeps a service available through the
// rollbacks NTP usually causes without ever issuing an ID stamped later than
// one already issued: the ring absorbs a step back with the capacity that
// recent load left unused, a short stall covers a busy ring on a small
// step, and a step longer than 5 ms fails with a [*RollbackError] once
// the ring has no room, instead of borrowing future time. A step of any
// size — an hour — is absorbed as long as the ring has room: under light
// load the last 256 ticks left most of their sequence numbers unused,
// and the ring issues them, stamped up to the newest tick issued. Pick [Logical] when strictly increasing IDs matter
// more than ID time matching the clock, and [Error] when a node should stop
// rather than issue out of order.
func Default() Strategy { return Chain(Ring(), Wait(DefaultWait), Error()) }

// Error returns Twitter's strategy: while the clock reads behind the newest
// ID issued, every call fails with a [*RollbackError] that matches
// [ErrClockRollback] and carries how far behind the clock is. A call that
// waited for the next tick on a clock that stood still fails with a
// [*FrozenError] that matches [ErrClockFrozen] instead ([Situation.Frozen]).
//
// Promise: unique and strictly increasing IDs whose time is the clock's;
// unavailable until the clock catches up. On a used-up sequence it passes,
// so the generator waits for the next tick.
func Error() Strategy { return errorStrategy{} }

type errorStrategy struct{}

func (errorStrategy) Decide(s Situation) Plan {
	if !s.IsBehind() {
		return Pass()
	}
	return Fail(s.BehindError())
}

func (errorStrategy) String() string { return "error" }

// Promise: monotonic; never stalls, borrows or reuses.
func (errorStrategy) Promise() Promise { return Promise{Monotonic: true} }

// Wait returns Meituan Leaf's strategy: when the clock reads behind the
// newest ID by at most max, the call sleeps (on the generator's clock,
// interruptible by its context) until the clock reaches the newest tick;
// when it is further behind, or when this call has already slept max, it
// passes to the next strategy of the chain (alone: a rollback error, or a
// frozen-clock error when the clock stood still: [Situation.Frozen]).
//
// Promise: unique and strictly increasing IDs whose time is the clock's; a
// rollback stalls a call by at most max (the ordinary wait for the next
// tick when a tick's sequence is used up comes on top, as for every
// strategy). max must be positive ([Validate]).
func Wait(max time.Duration) Strategy { return waitStrategy{max: max} }

type waitStrategy struct{ max time.Duration }

func (w waitStrategy) Decide(s Situation) Plan {
	if !s.IsBehind() {
		return Pass()
	}
	if d := s.Behind(); d <= w.max && s.Waited <= w.max-d {
		return Sleep(d)
	}
	return Pass()
}

func (w waitStrategy) String() string { return "wait:" + formatDuration(w.max) }

// Promise: monotonic; a rollback stalls a call by at most max.
func (w waitStrategy) Promise() Promise { return Promise{Monotonic: true, MaxStall: w.max} }

func (w waitStrategy) Validate(unit time.Duration) error {
	if w.max <= 0 {
		return &StrategyError{Input: w.String(), Reason: "the longest wait must be positive"}
	}
	return nil
}

// Logical returns a logical-clock strategy in the spirit of hybrid logical
// clocks, Seata and UUIDv7's counters: IDs never go back. While the clock
// reads behind the newest ID, and when a tick's sequence is used up, it
// keeps counting forward from the newest ID, borrowing future ticks, as
// long as the ID stays at most maxLead ahead of the clock.
//
// At the lead limit it sleeps until the clock's next tick and tries again
// (a stall of at most one tick per attempt). When the clock steps back by
// more than maxLead it passes to the next strategy of the chain (alone: a
// rollback error) rather than stall until the clock catches up.
//
// Promise: unique and strictly increasing IDs, always available while the
// clock is less than maxLead behind; ID time is ahead of the clock by at
// most maxLead. maxLead must be at least one tick of the layout ([Validate]).
func Logical(maxLead time.Duration) Strategy { return logicalStrategy{lead: maxLead} }

type logicalStrategy struct{ lead time.Duration }

func (l logicalStrategy) Decide(s Situation) Plan {
	now := s.Now()
	limit := addSat(now, s.Ticks(l.lead))
	from := max(now, s.Newest)
	if from > limit { // further behind than the lead (or a lead below a tick)
		return Pass()
	}
	return Issue(from, limit).OrSleep(s.Until(addSat(now, 1)))
}

func (l logicalStrategy) String() string { return "logical:" + formatDuration(l.lead) }

// Promise: monotonic; IDs lead the clock by at most maxLead.
func (l logicalStrategy) Promise() Promise { return Promise{Monotonic: true, MaxLead: l.lead} }

// TickStable: its plans depend on the ticks alone.
func (logicalStrategy) TickStable() bool { return true }

func (l logicalStrategy) Validate(unit time.Duration) error {
	if l.lead < unit {
		return &StrategyError{Input: l.String(), Reason: fmt.Sprintf("the lead must be at least one time unit of the layout (%v)", unit)}
	}
	return nil
}

// Ring returns this project's strategy: while the clock reads behind the
// newest ID, it issues the sequence numbers that recent ticks left unused,
// as recorded in the generator's 256-slot ring, from the clock's tick up to
// the newest tick issued (at most 256 ticks back). When none is left it
// passes to the next strategy of the chain (alone: a rollback error).
//
// Promise: unique IDs, never stamped later than the newest ID issued before
// the rollback; available while spare capacity lasts. During a rollback
// IDs are not in time order. On a used-up sequence it passes, so the
// generator waits for the next tick.
func Ring() Strategy { return ringStrategy{} }

type ringStrategy struct{}

func (ringStrategy) Decide(s Situation) Plan {
	if !s.IsBehind() {
		return Pass()
	}
	return Issue(s.Now(), s.Newest)
}

func (ringStrategy) String() string { return "ring" }

// Promise: reuses up to the newest ID; not monotonic during a rollback.
func (ringStrategy) Promise() Promise { return Promise{Reuses: true} }

// TickStable: its plans depend on the ticks alone.
func (ringStrategy) TickStable() bool { return true }
