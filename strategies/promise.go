package strategies

import (
	"strings"
	"time"
)

// A Promise is what a strategy promises about the IDs a generator issues
// with it, in a form that tests and replays check on every call. Every
// strategy promises unique IDs — the generator guarantees that whatever
// the plan — so a Promise states the rest. The zero Promise promises
// nothing beyond uniqueness and an ID time that never runs ahead of the
// clock.
type Promise struct {
	// Monotonic: every ID is greater than every ID returned before its
	// call started, rollbacks included.
	Monotonic bool

	// MaxStall is the longest the strategy lets a rollback stall one call
	// (the sleeps it asks for); zero when it never sleeps on a rollback.
	// Waits that are the generator's, not the strategy's, come on top:
	// for the next tick when a tick's sequence is used up, for callers
	// that started waiting earlier, for the reservation of a previous
	// run's mark.
	MaxStall time.Duration

	// MaxLead is how far ahead of the clock the strategy may stamp an ID
	// past the newest tick already issued (borrowing future ticks, as
	// [Logical] does); zero when it never borrows. A lease may bound it
	// for a whole fleet.
	MaxLead time.Duration

	// Reuses: while the clock reads behind the newest tick issued, the
	// strategy may issue at ticks up to that newest tick (as [Ring] does):
	// IDs out of time order, stamped ahead of the clock by at most the
	// rollback, never past the newest ID.
	Reuses bool
}

// A Promiser is a [Strategy] that states its [Promise]. The built-in
// strategies are Promisers; [PromiseOf] combines the promises of a chain's
// steps. A strategy that is not a Promiser is only held to uniqueness by
// checkers, and a generator with a lease that bounds the fleet's lead
// refuses it.
type Promiser interface {
	Promise() Promise
}

// PromiseOf returns the promise of s, and false when s is nil or a step of
// s ([Flatten]) does not state one. A chain is monotonic when every step
// is; it may stall and lead as long as its most patient step (a chain's
// waits share one budget: a wait step sleeps only while the call's total
// sleep stays within its own bound); it reuses when any step does.
func PromiseOf(s Strategy) (Promise, bool) {
	if s == nil {
		return Promise{}, false
	}
	p := Promise{Monotonic: true}
	for _, step := range Flatten(s) {
		sp, ok := step.(Promiser)
		if !ok {
			return Promise{}, false
		}
		q := sp.Promise()
		p.Monotonic = p.Monotonic && q.Monotonic
		p.MaxStall = max(p.MaxStall, q.MaxStall)
		p.MaxLead = max(p.MaxLead, q.MaxLead)
		p.Reuses = p.Reuses || q.Reuses
	}
	return p, true
}

// String describes the promise, for example "unique, monotonic, stalls ≤
// 5ms" or "unique, reuses up to the newest ID".
func (p Promise) String() string {
	parts := []string{"unique"}
	if p.Monotonic {
		parts = append(parts, "monotonic")
	}
	if p.MaxStall > 0 {
		parts = append(parts, "stalls ≤ "+formatDuration(p.MaxStall))
	}
	if p.MaxLead > 0 {
		parts = append(parts, "leads ≤ "+formatDuration(p.MaxLead))
	}
	if p.Reuses {
		parts = append(parts, "reuses up to the newest ID")
	}
	return strings.Join(parts, ", ")
}

// A TickStable strategy decides on the ticks of a [Situation] alone — Now,
// Newest, Full, Last — not on where in its tick Elapsed lies, nor on
// Waited. A generator may then carry out an [Issue] plan it returned again,
// without calling Decide, for later calls that meet the same clock tick
// and the same Newest while the plan's range has room: during a rollback
// (Ring) or while borrowing time (Logical), only the first call of each
// situation asks the strategy. [Ring] and [Logical] are TickStable; a
// strategy that is not (or whose method returns false) is asked on every
// call that cannot simply take the clock's tick.
type TickStable interface {
	TickStable() bool
}
