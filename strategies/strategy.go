package strategies

import (
	"fmt"
	"math"
	"time"
)

// A Strategy decides what a generator does when it cannot simply issue the
// next sequence number at the clock's current tick: either the clock reads
// earlier than the newest timestamp already issued (a rollback, or time
// borrowed by [Logical]), or the sequence of the current tick is used up.
//
// A Strategy only chooses a [Plan]; the generator carries it out. Because
// every ID, whatever the plan, is taken from the generator's ring by
// atomically replacing a slot with a greater value, no strategy — built in
// or written by a user — can make a generator issue an ID twice. Strategies
// choose availability, order and how far ID time may stray from the clock;
// uniqueness is not theirs to break.
//
// Decide must be safe for concurrent use and should not block: waiting is
// done by returning [Sleep], which the generator performs on its clock and
// interrupts when the caller's context ends.
//
// A strategy may also state what it promises ([Promiser]), so that
// replays check it and leases can bound it, and whether its plans may be
// reused for calls in the same situation ([TickStable]); both are
// optional.
type Strategy interface {
	// Decide returns the plan for situation s.
	Decide(s Situation) Plan

	// String returns the strategy in the syntax accepted by [Parse]
	// (for example "wait:5ms"), for configuration round trips and reports.
	String() string
}

// Situation is what a generator knows when it asks a [Strategy] for a plan.
// Ticks count time units of the generator's layout since its epoch.
type Situation struct {
	// Elapsed is the clock's reading as time since the layout's epoch. It is
	// negative when the clock reads before the epoch.
	Elapsed time.Duration

	// Unit is the length of one tick.
	Unit time.Duration

	// Epoch is the instant tick 0 starts at, so that errors can name the
	// clock's reading and the newest ID's time; the zero Time when the
	// caller does not say.
	Epoch time.Time

	// Newest is the greatest tick any ID has been issued at so far, or -1
	// when nothing has been issued.
	Newest int64

	// Last is the greatest tick the layout can represent.
	Last int64

	// Full reports that the clock is not behind Newest and the sequence of
	// the clock's current tick is used up.
	Full bool

	// Waited is how long the current call has already slept on behalf of
	// strategies (not counting waits for the next tick after Full).
	Waited time.Duration

	// Frozen reports that the clock is behind Newest only because it
	// stood still: the sequence of its tick was used up, the call waited
	// for the next tick — which is Newest then, though no ID was issued
	// there — and the clock did not reach it, without reading earlier
	// than when the wait began. The clock did not step back; a strategy
	// that fails the call should say so with [Situation.BehindError].
	// A strategy that reuses or waits may handle it as any rollback.
	Frozen bool
}

// Now returns the tick the clock reads (floor of Elapsed / Unit). A
// Situation without a positive Unit, such as the zero Situation, has no
// ticks: Now returns 0.
func (s Situation) Now() int64 {
	if s.Unit <= 0 {
		return 0
	}
	t := int64(s.Elapsed / s.Unit)
	if s.Elapsed < 0 && s.Elapsed%s.Unit != 0 {
		t--
	}
	return t
}

// IsBehind reports whether the clock reads an earlier tick than Newest.
func (s Situation) IsBehind() bool { return s.Now() < s.Newest }

// Behind returns how far the clock reads behind the start of the Newest
// tick, or 0 when it is not behind. It can be smaller than the step that
// caused it by up to one tick, because only the tick of the newest ID is
// known, not the instant within it.
func (s Situation) Behind() time.Duration {
	if !s.IsBehind() {
		return 0
	}
	return s.Until(s.Newest)
}

// BehindError returns the error a strategy fails a call with when the
// clock reads behind Newest: a [*FrozenError] (matching [ErrClockFrozen])
// when s is [Situation.Frozen], otherwise a [*RollbackError] (matching
// [ErrClockRollback]); both carry [Situation.Behind].
func (s Situation) BehindError() error {
	if s.Frozen {
		return &FrozenError{Behind: s.Behind()}
	}
	e := &RollbackError{Behind: s.Behind()}
	if !s.Epoch.IsZero() {
		e.Clock = s.Epoch.Add(s.Elapsed)
		e.Newest = s.Epoch.Add(time.Duration(s.Newest) * s.Unit)
	}
	return e
}

// Until returns the time the clock needs to reach the start of tick; it is
// zero or negative when the clock has already reached it. It saturates at
// the largest and smallest Duration rather than wrap, for a clock that
// reads centuries away from tick. Without a positive Unit it returns
// -Elapsed, as if every tick started at the epoch.
func (s Situation) Until(tick int64) time.Duration {
	var at time.Duration
	if s.Unit > 0 {
		at = mulSat(tick, s.Unit) // a layout's ticks fit a Duration; a made-up Situation's may not
	}
	switch {
	case s.Elapsed < 0 && at > math.MaxInt64+s.Elapsed:
		return math.MaxInt64
	case s.Elapsed > 0 && at < math.MinInt64+s.Elapsed:
		return math.MinInt64
	}
	return at - s.Elapsed
}

// Ticks converts d to whole ticks, rounding towards zero; 0 without a
// positive Unit.
func (s Situation) Ticks(d time.Duration) int64 {
	if s.Unit <= 0 {
		return 0
	}
	return int64(d / s.Unit)
}

// mulSat returns tick*unit (unit > 0), saturated at the largest and
// smallest Duration.
func mulSat(tick int64, unit time.Duration) time.Duration {
	switch {
	case tick > int64(math.MaxInt64/unit):
		return math.MaxInt64
	case tick < int64(math.MinInt64/unit):
		return math.MinInt64
	}
	return time.Duration(tick) * unit
}

// addSat returns a+b saturated at the largest and smallest int64.
func addSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

type planKind uint8

const (
	planPass planKind = iota
	planIssue
	planSleep
	planFail
)

// A Plan is a Strategy's answer. The zero Plan is [Pass].
type Plan struct {
	kind        planKind
	from, limit int64
	sleep       time.Duration
	err         error
}

// Pass declines: the next strategy of a [Chain] decides. When no strategy is
// left, the generator returns [Situation.BehindError] if the clock is
// behind (a rollback error, or a frozen-clock error), and otherwise waits
// for the next tick.
func Pass() Plan { return Plan{} }

// Issue asks the generator to issue an ID at a tick from from to limit
// (both inclusive) that still has a free sequence number: the earliest
// among the 256 ticks from from on, else — in a longer range — among the
// last 256 up to limit; never before tick 0, past the layout's last tick or
// past the saved high-water mark. When no tick in that range has room, the
// next strategy decides (or, after [Plan.OrSleep], the generator sleeps
// and asks again).
func Issue(from, limit int64) Plan { return Plan{kind: planIssue, from: from, limit: limit} }

// Sleep asks the generator to wait d on its clock and then look at the clock
// again, starting from the first strategy. The wait ends early with the
// context's error when the caller's context is done. d must be positive;
// a Sleep of zero or less is treated as [Pass].
func Sleep(d time.Duration) Plan {
	if d <= 0 {
		return Pass()
	}
	return Plan{kind: planSleep, sleep: d}
}

// Fail makes the generator return err to its caller. A nil err is treated
// as [Pass].
func Fail(err error) Plan {
	if err == nil {
		return Pass()
	}
	return Plan{kind: planFail, err: err}
}

// OrSleep returns a copy of an [Issue] plan that, when its range has no
// room, sleeps d and asks again instead of passing to the next strategy.
// On other plans, and for d <= 0, it returns p unchanged.
func (p Plan) OrSleep(d time.Duration) Plan {
	if p.kind == planIssue && d > 0 {
		p.sleep = d
	}
	return p
}

// IsPass reports whether p declines.
func (p Plan) IsPass() bool { return p.kind == planPass }

// Range returns the tick range of an [Issue] plan; ok is false for other plans.
func (p Plan) Range() (from, limit int64, ok bool) {
	return p.from, p.limit, p.kind == planIssue
}

// SleepFor returns how long the plan sleeps: the wait of a [Sleep] plan, or
// the fallback wait of an [Issue] plan made with [Plan.OrSleep]; 0 otherwise.
func (p Plan) SleepFor() time.Duration { return p.sleep }

// Err returns the error of a [Fail] plan, or nil.
func (p Plan) Err() error { return p.err }

// String describes the plan, for logs and test failures.
func (p Plan) String() string {
	switch p.kind {
	case planIssue:
		if p.sleep > 0 {
			return fmt.Sprintf("issue[%d..%d] or sleep %v", p.from, p.limit, p.sleep)
		}
		return fmt.Sprintf("issue[%d..%d]", p.from, p.limit)
	case planSleep:
		return fmt.Sprintf("sleep %v", p.sleep)
	case planFail:
		return fmt.Sprintf("fail: %v", p.err)
	default:
		return "pass"
	}
}
