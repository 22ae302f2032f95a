package layoutplan

import (
	"fmt"
	"math/big"
	"time"

	"github.com/ringflake/ringflake"
)

// A Migration is the answer of [CheckMigration]: whether IDs of a new
// layout issued from a cut-over time on all sort above the IDs an old
// layout issued before it, so that ORDER BY id stays in time order across
// the switch.
type Migration struct {
	From, To ringflake.Layout // the old and the new layout
	At       time.Time        // the cut-over time: From issues before it, To from it on

	// OK reports whether the order holds: every ID To can issue at or
	// after At, on any node, is greater than every ID From could have
	// issued before At, on any node.
	OK bool

	// First is the smallest ID To can issue at or after At: the ID of
	// At's tick (or To's first tick, when At is before To's epoch) with
	// node 0 and sequence 0, which every other ID of To from At on is
	// above. Last is the greatest ID From could have issued before At:
	// the ID of the last tick of From that starts before At with every
	// node and sequence bit set; -1 when From could issue nothing before
	// At. OK is First > Last; otherwise the order breaks at At, between
	// these two IDs.
	First, Last ringflake.ID

	// Cutover is the earliest time at or after At at which switching
	// from From to To keeps the order (At itself when OK), or the zero
	// Time when no cut-over before To runs out does.
	Cutover time.Time

	// CatchUp is the earliest time at or after At from which To's IDs
	// sort above Last: if From stops issuing at At, To may start at
	// CatchUp. It is the zero Time when To runs out first.
	CatchUp time.Time
}

// CheckMigration checks a switch from the layout from to the layout to at
// the cut-over time at: every ID from could have issued before at (for
// every node) must be smaller than every ID to can issue at or after at
// (for every node). See [Migration] for the answer; a broken order is an
// answer, not an error.
//
// IDs of one layout grow with time, so the check comes down to two IDs:
// the last from could issue before at and the first to can issue at at.
// Moving the epoch later, or to fewer bits below the time, breaks it.
//
// Errors: [ringflake.ErrInvalidLayout] for a zero layout, [ringflake.ErrLayoutExpired] when
// at is past to's last tick (to can issue nothing).
func CheckMigration(from, to ringflake.Layout, at time.Time) (Migration, error) {
	switch {
	case from.IsZero():
		return Migration{}, &ringflake.LayoutError{Field: "from", Reason: "zero value"}
	case to.IsZero():
		return Migration{}, &ringflake.LayoutError{Field: "to", Reason: "zero value"}
	case to.Tick(at) > to.MaxTick():
		return Migration{}, expired(at, to.Last())
	}
	m := Migration{From: from, To: to, At: at}
	first := firstTick(to, at)
	before := ticksBefore(from, at)
	m.First, m.Last = ringflake.ID(first<<shift(to)), ringflake.ID(int64(before<<shift(from)-1)) // -1 when before is 0
	m.OK = above(to, first, from, before)
	if m.OK {
		m.Cutover, m.CatchUp = at, at
		return m, nil
	}
	if t, ok := catchUp(to, before<<shift(from)); ok {
		m.CatchUp = later(t, at)
	}
	m.Cutover = cutover(from, to, at)
	return m, nil
}

// firstTick returns the first tick l can issue at or after t: t's tick,
// or 0 before l's epoch.
func firstTick(l ringflake.Layout, t time.Time) int64 { return max(l.Tick(t), 0) }

// ticksBefore returns how many of l's ticks start before t, from 0 to
// MaxTick+1. The IDs l can issue before t are those below
// ticksBefore(l, t) << shift(l).
func ticksBefore(l ringflake.Layout, t time.Time) uint64 {
	d := t.Sub(l.Spec().Epoch) // saturates; clamped below
	if d <= 0 {
		return 0
	}
	n := int64(d) / int64(l.Spec().Unit)
	if int64(d)%int64(l.Spec().Unit) != 0 {
		n++
	}
	return uint64(min(n, l.MaxTick()+1))
}

// above reports whether to's IDs of tick first and later are all above
// from's IDs of its first `before` ticks.
func above(to ringflake.Layout, first int64, from ringflake.Layout, before uint64) bool {
	return uint64(first)<<shift(to) >= before<<shift(from)
}

// catchUp returns the start of the first tick of l whose IDs are all at or
// above bound, if l has one.
func catchUp(l ringflake.Layout, bound uint64) (time.Time, bool) {
	tick := (bound + uint64(1)<<shift(l) - 1) >> shift(l)
	if tick > uint64(l.MaxTick()) {
		return time.Time{}, false
	}
	return l.TickTime(int64(tick)), true
}

// cutoverSteps bounds cutover's search. Each step moves past at least one
// tick of the new layout; near the crossing of two layouts whose IDs grow
// almost equally fast a step can be that short, so a search may take about
// 2/(1-r) steps where r is the ratio of their growth rates. Whole-millisecond
// units keep r away from 1 unless ticks last minutes.
const cutoverSteps = 1 << 22

// cutover returns the earliest time c ≥ at such that switching from from
// to to at c keeps the order, or the zero Time.
//
// It steps forward: when the order breaks at c, no time before the one at
// which to's ticks catch up with from's IDs before c can work (from's IDs
// only grow), so that is the next candidate. When to's IDs grow no faster
// than from's and the gap is already wider than a tick's worth, it cannot
// close while from lasts, and the search jumps to from's end.
func cutover(from, to ringflake.Layout, at time.Time) time.Time {
	fromEnd := from.Last().Add(from.Spec().Unit)
	slower := growthCmp(to, from) <= 0
	c := at
	for range cutoverSteps {
		first := firstTick(to, c)
		if first > to.MaxTick() {
			return time.Time{}
		}
		before := ticksBefore(from, c)
		if above(to, first, from, before) {
			return c
		}
		next, ok := catchUp(to, before<<shift(from))
		if !ok {
			return time.Time{}
		}
		c = later(next, c)
		if slower && c.Before(fromEnd) && !c.Before(to.Spec().Epoch) && gapWidens(from, to, c) {
			c = fromEnd
		}
	}
	return time.Time{}
}

// growthCmp compares how fast the IDs of a and b grow with time:
// 2^timeShift per unit.
func growthCmp(a, b ringflake.Layout) int {
	x := new(big.Int).Lsh(big.NewInt(int64(b.Spec().Unit)), uint(shift(a)))
	y := new(big.Int).Lsh(big.NewInt(int64(a.Spec().Unit)), uint(shift(b)))
	return x.Cmp(y)
}

// gapWidens reports, for a to whose IDs grow no faster than from's, that
// at c (within both layouts' lifetimes) from's IDs before c lead to's at c
// by more than the ticks' rounding can make up: then they lead at every
// later time while from lasts. It compares the real-valued lines under
// the step functions: from's count of ticks before c is at least
// (c-epoch)/unit and to's tick at c at most (c-epoch)/unit.
func gapWidens(from, to ringflake.Layout, c time.Time) bool {
	lhs := new(big.Int).Mul(big.NewInt(int64(c.Sub(from.Spec().Epoch))), big.NewInt(int64(to.Spec().Unit)))
	lhs.Lsh(lhs, uint(shift(from)))
	rhs := new(big.Int).Mul(big.NewInt(int64(c.Sub(to.Spec().Epoch))), big.NewInt(int64(from.Spec().Unit)))
	rhs.Lsh(rhs, uint(shift(to)))
	return lhs.Cmp(rhs) > 0
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// shift is the number of bits below the time in l's IDs: an ID of tick t
// with node and sequence 0 is t << shift(l).
func shift(l ringflake.Layout) uint {
	s := l.Spec()
	return uint(s.DatacenterBits + s.WorkerBits + s.SequenceBits)
}

// expired is the error for an instant past a layout's last tick, as the
// root package words it.
func expired(at, last time.Time) error {
	return fmt.Errorf("%w: %s (limit %s)", ringflake.ErrLayoutExpired,
		at.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano))
}
