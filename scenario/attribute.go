package scenario

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// EventReport is what happened in a replay while one scripted event was
// under way: the calls that started then, what they cost and how they
// failed. Each call counts under one event: the one under way when it
// started, or, when several were, the one that began last; calls that
// started while none was count in Report.Steady.
//
// An event is under way:
//   - a step back: from its instant until the wall clock (without jitter)
//     reads past both what it read before the step and the newest ID
//     issued by then — until the rollback is caught up;
//   - a step forward: at its instant only (it fails no call);
//   - a freeze: for its length; a pause: for its length, and at the
//     instant it ends, when the calls due meanwhile start;
//   - a drift or a jitter: until the next drift, or jitter; one of rate
//     0, or of bound 0, ends the one before and is under way at its
//     instant only;
//   - a restart: from its instant until the new run has started and the
//     wall clock has passed the mark the old run left.
type EventReport struct {
	// Event is the event, and Index its place in Scenario.Events; the zero
	// Event and -1 in Report.Steady.
	Event Event
	Index int
	// Until is the true time since the start at which the event was no
	// longer under way; -1 when it still was at the end of the replay.
	Until time.Duration
	// Calls counts the calls that started while the event was under way.
	Calls int64
	// Errors counts those that failed, by kind (see [ErrorMap]).
	Errors ErrorMap
	// Stalled counts those that took time (the generator slept), and
	// MaxStall is the longest of them, in true time.
	Stalled  int64
	MaxStall time.Duration
	// Borrowed is the time those calls took from the future (see
	// Report.Borrowed).
	Borrowed time.Duration
}

// String describes the row, for example "freeze 3s at 2s (under way
// until 5s): 15000 calls, errors frozen=632, 14990 stalled, max stall
// 5ms, borrowed 0s".
func (r EventReport) String() string {
	var b strings.Builder
	if r.Index < 0 {
		b.WriteString("no event under way")
	} else {
		b.WriteString(r.Event.Label())
		switch {
		case r.Until < 0:
			b.WriteString(" (under way to the end)")
		case r.Until > r.Event.At:
			b.WriteString(" (under way until " + formatDuration(r.Until) + ")")
		}
	}
	fmt.Fprintf(&b, ": %d calls, errors %s, %d stalled, max stall %s, borrowed %s",
		r.Calls, r.Errors, r.Stalled, formatDuration(r.MaxStall), formatDuration(r.Borrowed))
	return b.String()
}

// Label names the event as the replay report does, with the words of the
// file format: "step -80ms at 6s", "freeze 3s at 2s", "drift -0.5% at
// 0s", "jitter 2ms at 0s", "crash restart at 1s", "pause 2s at 4s".
func (e Event) Label() string {
	_, what, _ := strings.Cut(e.String(), ": ")
	if e.Kind == Restart {
		what = strings.TrimPrefix(what, "restart ") + " restart"
	}
	if e.Kind == Jitter {
		what, _, _ = strings.Cut(what, " seed ")
	}
	return what + " at " + formatDuration(e.At)
}

// attribution tells which scripted event was under way when each call
// started (see [EventReport]).
type attribution struct {
	order  []int         // indexes into Scenario.Events, in time order (file order at one instant)
	rows   []EventReport // per event of order
	steady EventReport
	fired  int   // events of order fired so far
	open   []int // positions in order of fired events that may still be under way, in the order they began
	over   []bool
	catch  []int64 // per step back: the tick the wall clock must pass for it to be over
	posOf  []int   // per index into Scenario.Events, its position in order
	report []int   // per restart event's position, its index in Report.Restarts once begun
}

// startAttribution sets up the rows of the events, given in time order
// with their indexes into Scenario.Events.
func (e *engine) startAttribution(order []int) {
	a := &e.attribution
	a.order = order
	a.rows = make([]EventReport, len(order))
	a.over = make([]bool, len(order))
	a.catch = make([]int64, len(order))
	a.posOf = make([]int, len(order))
	a.report = make([]int, len(order))
	for pos, i := range order {
		a.rows[pos] = EventReport{Event: e.s.Events[i], Index: i, Until: -1, Errors: ErrorMap{}}
		a.posOf[i] = pos
	}
	a.steady = EventReport{Index: -1, Until: -1, Errors: ErrorMap{}}
}

// fire puts under way the clock events (and pauses) due by now; steps is
// the sum of the steps that fired at this instant, which moved the wall
// clock from what it read before. Restart events are put under way by
// begin.
func (e *engine) fire(steps time.Duration) {
	a := &e.attribution
	for a.fired < len(a.order) && a.rows[a.fired].Event.At <= e.mono {
		pos := a.fired
		a.fired++
		ev := a.rows[pos].Event
		switch ev.Kind {
		case Restart:
			continue
		case Observe: // an instant
			e.endAt(pos, ev.At)
			continue
		case Step:
			if ev.D > 0 {
				e.endAt(pos, ev.At)
				continue
			}
			a.catch[pos] = max(e.layout.Tick(e.wall.Add(-steps)), e.newest)
		case Freeze, Pause:
			a.rows[pos].Until = addSat(ev.At, ev.D)
		case Drift, Jitter:
			for _, q := range a.open { // the one before ends now
				if a.rows[q].Event.Kind == ev.Kind && !a.over[q] {
					e.endAt(q, ev.At)
				}
			}
			if ev.Rate == 0 && ev.D == 0 {
				e.endAt(pos, ev.At)
				continue
			}
		}
		a.open = append(a.open, pos)
	}
}

// openRestart puts the restart event ev under way, as restart i of the
// report.
func (e *engine) openRestart(ev restartEvent, i int) {
	a := &e.attribution
	pos := a.posOf[ev.index]
	a.report[pos] = i
	a.open = append(a.open, pos)
}

// restartPos returns the position of restart i of the report.
func (e *engine) restartPos(i int) int {
	return e.attribution.posOf[e.restarts[i].index]
}

// endAt ends the event at pos at true time at.
func (e *engine) endAt(pos int, at time.Duration) {
	e.over[pos] = true
	e.rows[pos].Until = at
}

// closeWindows ends the events that are over by now. Called as the clock
// moves, and before each call (atCall): a restart is judged only then, as
// the restart's own report judges whether a call was made behind its mark.
func (e *engine) closeWindows(atCall bool) {
	a := &e.attribution
	for _, pos := range a.open {
		if a.over[pos] {
			continue
		}
		ev := a.rows[pos].Event
		switch ev.Kind {
		case Step:
			if e.layout.Tick(e.wall) > a.catch[pos] {
				e.endAt(pos, e.mono)
			}
		case Freeze:
			if e.mono >= a.rows[pos].Until {
				a.over[pos] = true
			}
		case Pause: // the calls due during it start at its end, under it
			if e.mono > a.rows[pos].Until {
				a.over[pos] = true
			}
		case Restart:
			if atCall && !e.restartUnderWay(pos) {
				e.endAt(pos, e.mono)
			}
		}
	}
}

// restartUnderWay reports whether the restart event at pos is under way:
// its old run's calls are ending, its new process is down, or the new
// run's wall clock has not passed the mark.
func (e *engine) restartUnderWay(pos int) bool {
	i := e.attribution.report[pos]
	return e.pending == i || i == len(e.rep.Restarts)-1 && e.gen == nil || e.catchingUp() == i
}

// underWay returns the position of the event under way now (the one that
// began last, when several are), or -1.
func (e *engine) underWay() int {
	e.closeWindows(true)
	a := &e.attribution
	for n := len(a.open); n > 0; n = len(a.open) {
		if pos := a.open[n-1]; !a.over[pos] {
			return pos
		}
		a.open = a.open[:n-1]
	}
	return -1
}

// row returns the row of the event at pos, or the steady one for -1.
func (e *engine) row(pos int) *EventReport {
	if pos < 0 {
		return &e.attribution.steady
	}
	return &e.attribution.rows[pos]
}

// frozen reports whether the event at pos stops the wall clock.
func (e *engine) frozen(pos int) bool {
	if pos < 0 {
		return false
	}
	k := e.attribution.rows[pos].Event.Kind
	return k == Freeze || k == Pause
}

// errorKind names the kind of a call's error in the report, the call
// having started while the event at pos was under way. The generator's
// error tells the kind: a used-up tick of a clock that stands still is
// ringflake.ErrClockFrozen, "frozen", not a rollback. A rollback error of
// a call that started during a freeze or a pause (begun after any step
// back still under way) is counted as frozen too: the generator names a
// freeze only when it saw the clock stand still across a whole wait, and
// a freeze that began between two of its re-syncs can look like a step
// of less than a tick.
func (e *engine) errorKind(err error, pos int) string {
	var re *strategies.RollbackError
	switch {
	case errors.Is(err, ringflake.ErrClockFrozen):
		return "frozen"
	case errors.As(err, &re):
		if e.frozen(pos) {
			return "frozen"
		}
		return "rollback"
	case errors.Is(err, ringflake.ErrLayoutExpired):
		return "expired"
	case errors.Is(err, ringflake.ErrBeforeEpoch):
		return "before_epoch"
	}
	return "other"
}

// finishAttribution puts the rows in the report.
func (e *engine) finishAttribution() {
	e.closeWindows(true)
	e.rep.Events = e.attribution.rows
	e.rep.Steady = e.attribution.steady
}
