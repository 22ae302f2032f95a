package scenario

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// MaxViolations is the most broken promises a [Report] describes one by
// one; Report.ViolationCount counts them all.
const MaxViolations = 20

// Report is the outcome of replaying one scenario against one strategy.
// All of it is deterministic: the same scenario and strategy give an equal
// Report (see the package documentation).
type Report struct {
	Scenario string // the scenario's Name
	File     string // the scenario's File
	Strategy string // the strategy, in strategies.Parse syntax
	// Promise is what the strategy promises (strategies.PromiseOf), as
	// checked; PromiseKnown is false when the strategy, or a step of it,
	// states no promise (is not a strategies.Promiser): then only
	// uniqueness, the node and the restart's mark are checked.
	Promise      strategies.Promise
	PromiseKnown bool
	Calls        int64    // calls made to the generator
	Issued       int64    // IDs returned
	Errors       ErrorMap // failed calls by kind: rollback, frozen, expired, before_epoch, crash, other
	// Duplicates counts IDs returned more than once (each extra copy).
	// Never expected: every duplicate is also a violation.
	Duplicates int64
	// OutOfOrder counts IDs smaller than an ID returned before their call
	// started.
	OutOfOrder int64
	// MaxStall is the longest time one call took, in true time. A call
	// takes time only when the generator sleeps, for one of three causes
	// that the next fields tell apart (each the longest of one call):
	MaxStall time.Duration
	// MaxStrategyWait is the longest the strategy made one call sleep: a
	// wait strategy sitting out a rollback, a logical one at its lead.
	// The strategy's promise bounds it.
	MaxStrategyWait time.Duration
	// MaxQueue is the longest one call waited for a tick with room: for
	// the next tick when the clock's tick was used up, and for the ticks
	// that callers ahead of it used up. No strategy can avoid it when
	// demand exceeds the layout's capacity.
	MaxQueue time.Duration
	// MaxReservationWait is the longest one call waited for the ticks a
	// previous run's mark reserved, after a restart (see [RestartReport]).
	MaxReservationWait time.Duration
	// MaxLead is how far ahead of the wall clock an ID was stamped, at
	// most: the start of the ID's tick minus the start of the tick the
	// wall clock (without jitter) read when the call returned.
	MaxLead time.Duration
	// MaxLag is how far behind the wall clock an ID was stamped, at most,
	// measured like MaxLead.
	MaxLag time.Duration
	// Borrowed is the time taken from the future: the ticks opened (given
	// their first ID) before the wall clock (without jitter) reached them,
	// times the tick length. The logical strategy borrows; the others only
	// when the clock they read runs ahead of the wall clock (jitter).
	Borrowed time.Duration
	// Violations describe the first MaxViolations broken promises, in the
	// order they happened; ViolationCount counts them all.
	Violations     []Violation
	ViolationCount int64
	// Restarts tell what each restart event of the scenario did, in
	// order; empty without restart events.
	Restarts []RestartReport
	// Events tell, per event of the scenario in time order (file order at
	// one instant), what the calls cost that started while it was under
	// way: their errors, stalls and borrowed time; Steady, those of the
	// calls that started while no event was. See [EventReport].
	Events []EventReport
	Steady EventReport
	// Unmet lists the file's expectations the replay did not meet.
	Unmet []Unmet
	// Trace holds what a plot draws; nil unless [WithTrace] was given.
	Trace *Trace

	sleeps int64 // the generator's sleeps on the simulated clock, for tests
}

// ErrorMap counts errors by kind: "rollback" (the clock was behind and the
// strategy did not keep the generator available), "frozen" (the clock
// stood still — a freeze or pause under way, see [EventReport] — and the
// tick's sequence numbers were used up; the generator reports it as a
// rollback, which it is not), "expired" (the layout
// ran out), "before_epoch" (the clock read before the layout's epoch and
// nothing was issued yet, or a restarted process could not start for that
// reason), "crash" (the call was under way when a restart: crash event
// killed the process, and never returned) and "other".
type ErrorMap map[string]int64

// Total returns the number of errors of every kind.
func (m ErrorMap) Total() int64 {
	n := int64(0)
	for _, v := range m {
		n += v
	}
	return n
}

// String lists the non-zero counts, for example "rollback=31", or "0".
func (m ErrorMap) String() string {
	var parts []string
	for _, k := range errorKinds {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// RestartReport is what one restart event did in a replay: where the new
// run started against the high-water mark the previous run left, and what
// that cost until the clock passed the mark.
//
// A mark ([ringflake.Mark]) holds two instants: Since, the newest the
// previous run knew of (its clock, or its newest ID), and the mark
// itself (Limit), up to which it may have issued IDs. How far the wall
// clock reads behind the mark when the new run starts (Behind) is in two
// parts: the part behind Since is a rollback (Rollback), which the new
// run's strategy handles as any rollback; the rest is the reservation the
// previous run saved ahead of its IDs (Reservation), which the new run
// waits out whatever its strategy, or borrows across with a logical one,
// and never reports as a rollback. After a clean restart the mark is the
// newest ID itself: Since is the mark, and there is no reservation.
type RestartReport struct {
	// At is the true time of the event since the start.
	At time.Duration `json:"at_ns"`
	// Clean reports a clean restart (the old process closed its
	// generator); otherwise the process crashed.
	Clean bool `json:"clean"`
	// Resumed is the true time since the start when the new run started:
	// At, or later when a clean restart waited for calls under way to end
	// or the new process failed to start (FailedStarts); -1 when it never
	// started before the end of the scenario.
	Resumed time.Duration `json:"resumed_ns"`
	// FailedStarts counts the starts of the new process that failed
	// (ringflake.New failed, for instance on a clock that reads before
	// the layout's epoch). The replay starts the process again before
	// each call, as a supervisor restarts a process that exits; the calls
	// made while it is down fail with New's error.
	FailedStarts int64 `json:"failed_starts"`
	// Mark is the high-water mark the new run loaded (ringflake.Mark's
	// Limit): the newest ID of the previous run after a clean restart,
	// the mark it saved ahead after a crash. The new run issues no ID
	// stamped at or before it.
	Mark time.Time `json:"mark"`
	// Since is the mark's Since: the newest the previous run knew of when
	// it saved the mark.
	Since time.Time `json:"since"`
	// Behind is how far the wall clock (without jitter) read behind Mark
	// when the new run started: the lead of the mark over the clock; 0
	// when the clock read past it. It is Rollback plus Reservation.
	Behind time.Duration `json:"behind_ns"`
	// Rollback is how far the wall clock read behind Since when the new
	// run started: a rollback, which the new run's strategy handles; 0
	// when it read past Since.
	Rollback time.Duration `json:"rollback_ns"`
	// Reservation is the rest of Behind: how far the mark lay ahead of
	// both the clock and Since, time the previous run reserved ahead of
	// its IDs.
	Reservation time.Duration `json:"reservation_ns"`
	// Abandoned counts the calls under way when the process crashed; they
	// never returned, and count as errors of kind "crash".
	Abandoned int64 `json:"abandoned"`
	// Failed counts the calls of the new run that failed while it was
	// behind: calls started before the wall clock (without jitter) passed
	// Mark, and calls made while the new process could not start.
	Failed int64 `json:"failed"`
	// MaxStall is the longest call, in true time, of the new run while it
	// was behind, failed or not.
	MaxStall time.Duration `json:"max_stall_ns"`
	// ReservationWait is the longest one call of the new run waited for
	// the reservation.
	ReservationWait time.Duration `json:"reservation_wait_ns"`
	// Duplicates counts the IDs the new run returned that an earlier run
	// had returned. Never expected: each is also a violation.
	Duplicates int64 `json:"duplicates"`
}

// String describes the restart, for example "at 310ms: crash, 95ms behind
// the mark (rollback 0s, reservation 95ms), 0 failed, max stall 96ms,
// reservation wait 96ms".
func (r RestartReport) String() string {
	kind := "crash"
	if r.Clean {
		kind = "clean"
	}
	s := fmt.Sprintf("at %s: %s", formatDuration(r.At), kind)
	if r.FailedStarts > 0 {
		s += fmt.Sprintf(", %d failed starts", r.FailedStarts)
	}
	switch {
	case r.Resumed < 0:
		return s + ", never resumed"
	case r.Resumed != r.At:
		s += ", resumed at " + formatDuration(r.Resumed)
	}
	if r.Abandoned > 0 {
		s += fmt.Sprintf(", %d abandoned", r.Abandoned)
	}
	s += fmt.Sprintf(", %s behind the mark (rollback %s, reservation %s), %d failed, max stall %s, reservation wait %s",
		formatDuration(r.Behind), formatDuration(r.Rollback), formatDuration(r.Reservation), r.Failed,
		formatDuration(r.MaxStall), formatDuration(r.ReservationWait))
	if r.Duplicates > 0 {
		s += fmt.Sprintf(", %d duplicates", r.Duplicates)
	}
	return s
}

// Violation is a broken promise: something the strategy's doc comment, or
// the generator's, says cannot happen.
type Violation struct {
	// Promise is the promise broken: "unique", "monotonic", "stall",
	// "lead", "order" (a call served after one that started later),
	// "node", "rollback-amount" or "restart" (an ID of a new run stamped
	// at or before the previous run's mark).
	Promise string `json:"promise"`
	// Call is the 1-based number of the call, in the order calls started.
	Call int64 `json:"call"`
	// At is the true time since the start when the call returned.
	At time.Duration `json:"at_ns"`
	// Detail says what happened.
	Detail string `json:"detail"`
}

// String returns a message such as
// "call 1042 at 20.3ms: monotonic: ID 123 after 456".
func (v Violation) String() string {
	return fmt.Sprintf("call %d at %s: %s: %s", v.Call, formatDuration(v.At), v.Promise, v.Detail)
}

// OK reports whether the replay kept every promise and met every
// expectation.
func (r *Report) OK() bool { return r.ViolationCount == 0 && len(r.Unmet) == 0 }

// Available reports whether no call failed.
func (r *Report) Available() bool { return r.Errors.Total() == 0 }

// Problems lists, one line each, every broken promise described and every
// unmet expectation.
func (r *Report) Problems() []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, "broke its promise: "+v.String())
	}
	if n := r.ViolationCount - int64(len(r.Violations)); n > 0 {
		out = append(out, fmt.Sprintf("broke its promise %d more times", n))
	}
	for _, u := range r.Unmet {
		out = append(out, "expectation not met: "+u.String())
	}
	return out
}

// field returns the value of an expectation field (see [Bound]).
func (r *Report) field(name string) int64 {
	switch name {
	case "issued":
		return r.Issued
	case "duplicates":
		return r.Duplicates
	case "out_of_order":
		return r.OutOfOrder
	case "errors":
		return r.Errors.Total()
	case "available":
		if r.Available() {
			return 1
		}
		return 0
	case "max_stall":
		return int64(r.MaxStall)
	case "max_strategy_wait":
		return int64(r.MaxStrategyWait)
	case "max_queue":
		return int64(r.MaxQueue)
	case "max_reservation_wait":
		return int64(r.MaxReservationWait)
	case "max_lead":
		return int64(r.MaxLead)
	case "max_lag":
		return int64(r.MaxLag)
	case "borrowed":
		return int64(r.Borrowed)
	}
	kind, _ := strings.CutPrefix(name, "errors.")
	return r.Errors[kind]
}

// MarshalJSON writes the report with snake_case names, durations as whole
// nanoseconds in fields ending in _ns, and unmet expectations as messages.
// The trace is left out.
func (r *Report) MarshalJSON() ([]byte, error) {
	unmet := make([]string, len(r.Unmet))
	for i, u := range r.Unmet {
		unmet[i] = u.String()
	}
	errs := errorsJSON(r.Errors)
	events := make([]eventJSON, len(r.Events))
	for i, e := range r.Events {
		events[i] = newEventJSON(e)
	}
	violations := r.Violations
	if violations == nil {
		violations = []Violation{}
	}
	restarts := r.Restarts
	if restarts == nil {
		restarts = []RestartReport{}
	}
	return json.Marshal(struct {
		Scenario           string           `json:"scenario"`
		File               string           `json:"file"`
		Strategy           string           `json:"strategy"`
		Promise            promiseJSON      `json:"promise"`
		OK                 bool             `json:"ok"`
		Calls              int64            `json:"calls"`
		Issued             int64            `json:"issued"`
		Duplicates         int64            `json:"duplicates"`
		OutOfOrder         int64            `json:"out_of_order"`
		Errors             map[string]int64 `json:"errors"`
		MaxStall           time.Duration    `json:"max_stall_ns"`
		MaxStrategyWait    time.Duration    `json:"max_strategy_wait_ns"`
		MaxQueue           time.Duration    `json:"max_queue_ns"`
		MaxReservationWait time.Duration    `json:"max_reservation_wait_ns"`
		MaxLead            time.Duration    `json:"max_lead_ns"`
		MaxLag             time.Duration    `json:"max_lag_ns"`
		Borrowed           time.Duration    `json:"borrowed_ns"`
		ViolationCount     int64            `json:"violation_count"`
		Violations         []Violation      `json:"violations"`
		Restarts           []RestartReport  `json:"restarts"`
		Events             []eventJSON      `json:"events"`
		Steady             eventJSON        `json:"steady"`
		Unmet              []string         `json:"unmet"`
	}{r.Scenario, r.File, r.Strategy, promiseJSON{r.PromiseKnown, r.Promise.Monotonic, r.Promise.MaxStall, r.Promise.MaxLead, r.Promise.Reuses},
		r.OK(), r.Calls, r.Issued, r.Duplicates, r.OutOfOrder, errs, r.MaxStall, r.MaxStrategyWait, r.MaxQueue, r.MaxReservationWait,
		r.MaxLead, r.MaxLag, r.Borrowed, r.ViolationCount, violations, restarts, events, newEventJSON(r.Steady), unmet})
}

// eventJSON is an [EventReport] in JSON: the event as the report labels
// it, and the error counts of every kind.
type eventJSON struct {
	Index    int              `json:"index"`
	Event    string           `json:"event"`
	Kind     string           `json:"kind"`
	At       time.Duration    `json:"at_ns"`
	Until    time.Duration    `json:"until_ns"`
	Calls    int64            `json:"calls"`
	Errors   map[string]int64 `json:"errors"`
	Stalled  int64            `json:"stalled"`
	MaxStall time.Duration    `json:"max_stall_ns"`
	Borrowed time.Duration    `json:"borrowed_ns"`
}

func newEventJSON(e EventReport) eventJSON {
	out := eventJSON{Index: e.Index, Event: "none", Kind: "none", At: e.Event.At, Until: e.Until, Calls: e.Calls,
		Errors: errorsJSON(e.Errors), Stalled: e.Stalled, MaxStall: e.MaxStall, Borrowed: e.Borrowed}
	if e.Index >= 0 {
		out.Event, out.Kind = e.Event.Label(), e.Event.Kind.String()
	}
	return out
}

// errorsJSON returns the counts of every kind of error, zeros included.
func errorsJSON(m ErrorMap) map[string]int64 {
	out := map[string]int64{}
	for _, k := range errorKinds {
		out[k] = m[k]
	}
	return out
}

// promiseJSON is a report's promise in JSON: known is false when the
// strategy states none, and only uniqueness was checked.
type promiseJSON struct {
	Known     bool          `json:"known"`
	Monotonic bool          `json:"monotonic"`
	MaxStall  time.Duration `json:"max_stall_ns"`
	MaxLead   time.Duration `json:"max_lead_ns"`
	Reuses    bool          `json:"reuses"`
}
