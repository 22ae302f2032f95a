package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/calltrace"
	"github.com/ringflake/ringflake/strategies"
)

// checker is what the checks remember of the calls made so far.
type checker struct {
	promise strategies.Promise
	known   bool // the strategy states its promise
	ids     []issued
	maxID   ringflake.ID
	anyID   bool
	newest  int64 // greatest tick issued, -1 before the first
}

// issued is an ID a replay returned, kept to find duplicates: 24 bytes.
type issued struct {
	id   ringflake.ID
	at   time.Duration // true time when the call returned
	call uint32        // the call's number; MaxCalls fits
	run  uint32        // runs started before the call's: its generator's restarts
}

// before is what a call's checks need of the instant it started.
type before struct {
	n        int64 // the call's number
	mono     time.Duration
	wall     time.Time
	stepped  time.Duration
	allowed  int64        // the latest tick the generator may believe the clock reads
	floor    ringflake.ID // the greatest ID returned before, if anyID
	anyID    bool
	run      int   // the run the call is made in
	markTick int64 // the tick of the mark the run loaded, or -1
	catchUp  int   // the restart whose mark the wall clock has not passed, or -1
	alone    bool  // no other call under way
	starts   int64 // calls started so far
	event    int   // the position of the event under way (see attribution), or -1

	observed  ringflake.ID // the greatest ID the run observed before the call, if observing
	observing bool
}

// call makes one call to the generator as caller w and checks it. It
// reports whether the call was abandoned: under way when the process
// crashed.
func (e *engine) call(w *worker) bool {
	e.callN++
	event := e.underWay()
	if e.gen == nil && !e.down(e.callN, event) {
		e.ended(w)
		e.rep.Calls++
		e.row(event).Calls++
		return false
	}
	b := before{n: e.callN, mono: e.mono, wall: e.wall, stepped: e.stepped, allowed: e.clockTick(),
		floor: e.maxID, anyID: e.anyID, run: e.runs, markTick: e.floor, catchUp: e.catchingUp(),
		alone: e.busy == 1, starts: e.starts, event: event, observed: e.observed, observing: e.observing}

	id, err := e.next1(w)

	e.ended(w)
	e.rep.Calls++
	if w.abandoned {
		w.abandoned = false
		crashed := e.restartPos(len(e.rep.Restarts) - 1) // the crash ended it
		e.row(crashed).Calls++
		e.count("crash", crashed)
		e.rep.Restarts[len(e.rep.Restarts)-1].Abandoned++
		return true
	}
	e.row(event).Calls++
	e.checkTime(b, w.trace, err)
	if err != nil {
		e.failed(b.n, err, event)
		return false
	}
	e.checkID(b, id)
	return false
}

// ended marks w idle: its call ended.
func (e *engine) ended(w *worker) {
	w.busy = false
	e.busy--
	e.idle.push(w.n)
}

// next1 asks the running generator for an ID, as caller w; the engine's
// clock hears what the call waited for (Waited) and tells w.trace.
func (e *engine) next1(w *worker) (ringflake.ID, error) {
	w.trace = calltrace.Call{}
	return e.gen.NextContext(e.runCtx)
}

// checkTime counts the time the call that started at b took, by cause,
// and checks it against the promise.
func (e *engine) checkTime(b before, tr calltrace.Call, err error) {
	r := e.rep
	stall := e.mono - b.mono
	r.MaxStall = max(r.MaxStall, stall)
	if row := e.row(b.event); stall > 0 {
		row.Stalled++
		row.MaxStall = max(row.MaxStall, stall)
	}
	r.MaxStrategyWait = max(r.MaxStrategyWait, tr.Strategy)
	r.MaxQueue = max(r.MaxQueue, tr.Capacity)
	r.MaxReservationWait = max(r.MaxReservationWait, tr.Reservation)
	if b.run > 0 && tr.Reservation > 0 {
		re := &r.Restarts[b.run-1]
		re.ReservationWait = max(re.ReservationWait, tr.Reservation)
	}
	if b.catchUp >= 0 {
		re := &r.Restarts[b.catchUp]
		re.MaxStall = max(re.MaxStall, stall)
		if err != nil {
			re.Failed++
		}
	}
	e.checkStall(b.n, stall, tr, b.alone && e.starts == b.starts, b.wall, b.stepped)
}

// checkID checks the ID the call that started at b returned, and counts
// it.
func (e *engine) checkID(b before, id ringflake.ID) {
	r, p, n := e.rep, e.promise, b.n
	r.Issued++
	e.ids = append(e.ids, issued{id: id, at: e.mono, call: uint32(n), run: uint32(b.run)})
	if b.anyID && id < b.floor {
		r.OutOfOrder++
		if e.known && p.Monotonic {
			e.violate(n, "monotonic", "ID %d is smaller than ID %d, returned before the call started", id, b.floor)
		}
	}
	if !e.anyID || id > e.maxID {
		e.maxID, e.anyID = id, true
	}
	if b.observing && id <= b.observed {
		e.violate(n, "observe", "ID %d is not above ID %d, which Observe accepted before the call started", id, b.observed)
	}
	if node := id.Node(e.layout); node != e.s.Node {
		e.violate(n, "node", "ID %d carries node %d, want %d", id, node, e.s.Node)
	}

	tick := e.layout.Tick(id.Time(e.layout))
	if tick <= b.markTick {
		e.violate(n, "restart", "ID %d is stamped %s, not after the mark %s the previous run left",
			id, id.Time(e.layout).Format(time.RFC3339Nano), e.layout.TickTime(b.markTick).Format(time.RFC3339Nano))
	}
	if e.known {
		clock := max(b.allowed, e.clockTick())
		if e.observing {
			// An observed ID lets the generator lead its clock up to
			// it, and past it by a tick when it is the last of its tick
			// — calls under way when it was observed too.
			clock = max(clock, e.layout.Tick(e.observed.Time(e.layout))+1)
		}
		lead := time.Duration(tick-clock-e.slack) * e.unit
		if lead > p.MaxLead && !(p.Reuses && tick <= e.newest) {
			e.violate(n, "lead", "ID %d is stamped %v ahead of the clock; the promise allows %v (newest tick issued before: %d, this one: %d)",
				id, lead, p.MaxLead, e.newest, tick)
		}
	}
	wallTick := e.layout.Tick(e.wall)
	r.MaxLead = max(r.MaxLead, time.Duration(tick-wallTick)*e.unit)
	r.MaxLag = max(r.MaxLag, time.Duration(wallTick-tick)*e.unit)
	if tick > e.newest && tick > wallTick {
		r.Borrowed += e.unit
		e.row(b.event).Borrowed += e.unit
	}
	e.newest = max(e.newest, tick)
	e.traceID(id, tick)
}

// checkStall checks call n's stall against the promise. The generator
// tells, through the call's trace, what it slept for: the strategy's own
// sleeps, a tick with room, a restart's reservation. A stall is judged on
// the strategy's part: at most the promise's MaxStall, plus one tick (a
// logical step at its lead sleeps until the next tick). Every moment of
// the stall must have one of those causes. A call that was alone — no
// other call under way from its start to its end — has nobody ahead of
// it in line, so the generator's promise of at most one tick for a
// used-up sequence holds for the whole call, reservation aside: measured
// on the wall clock with its steps taken out (and stretched by the
// fastest drift: waits are reckoned in wall time), which holds even while
// the wall stands still, and on true time as well when the clock has no
// freeze, drift or jitter.
func (e *engine) checkStall(n int64, stall time.Duration, tr calltrace.Call, alone bool, wallBefore time.Time, steppedBefore time.Duration) {
	if !e.known {
		return
	}
	p := e.promise
	if limit := addSat(p.MaxStall, e.unit); tr.Strategy > limit {
		e.violate(n, "stall", "the strategy made the call sleep %v; the promise allows %v", tr.Strategy, limit)
	}
	if told := addSat(addSat(tr.Strategy, tr.Capacity), tr.Reservation); told != stall {
		e.violate(n, "stall", "the call took %v, but the generator slept %v for the strategy, %v for a tick with room and %v for a reservation",
			stall, tr.Strategy, tr.Capacity, tr.Reservation)
	}
	if !alone {
		return
	}
	limit := addSat(addSat(addSat(p.MaxStall, e.unit), mulSat(2*e.slack, e.unit)), tr.Reservation)
	wallLimit := limit
	if extra := math.Ceil(float64(limit) * e.fast); extra < math.MaxInt64 {
		wallLimit = addSat(limit, time.Duration(extra))
	} else {
		wallLimit = math.MaxInt64
	}
	moved := e.wall.Sub(wallBefore) - (e.stepped - steppedBefore)
	switch {
	case moved > wallLimit:
		e.violate(n, "stall", "the wall clock moved %v during a call no other call was under way with; the promise allows %v", moved, wallLimit)
	case e.exact && stall > limit:
		e.violate(n, "stall", "the call took %v with no other call under way; the promise allows %v", stall, limit)
	}
}

// failed counts call n, started while the event at pos was under way,
// which failed with err.
func (e *engine) failed(n int64, err error, pos int) {
	if re := (*strategies.RollbackError)(nil); errors.As(err, &re) && re.Behind <= 0 && e.known {
		e.violate(n, "rollback-amount", "rollback error with amount %v; it must be positive", re.Behind)
	}
	e.count(e.errorKind(err, pos), pos)
}

// count counts a failed call of kind, started while the event at pos was
// under way.
func (e *engine) count(kind string, pos int) {
	e.rep.Errors[kind]++
	e.row(pos).Errors[kind]++
	e.traceError()
}

func (e *engine) violate(call int64, promise, format string, args ...any) {
	r := e.rep
	r.ViolationCount++
	if len(r.Violations) < MaxViolations {
		r.Violations = append(r.Violations, Violation{Promise: promise, Call: call, At: e.mono, Detail: fmt.Sprintf(format, args...)})
	}
}

// finish checks the order calls were served in, counts duplicates and
// completes the report.
func (e *engine) finish() *Report {
	r := e.rep
	if len(e.s.Events) == 0 && e.known && e.promise.MaxLead == 0 {
		// A borrowing strategy at its lead bound retries tick by tick
		// rather than wait in line: only the others promise the order.
		for _, v := range servedOutOfOrder(e.ids) {
			e.violate(v.Call, v.Promise, "%s", v.Detail)
		}
	}
	if dups := duplicates(e.ids, r.Restarts); len(dups) > 0 {
		r.Duplicates = int64(len(dups))
		r.ViolationCount += int64(len(dups))
		r.Violations = append(r.Violations, dups...)
		slices.SortStableFunc(r.Violations, func(a, b Violation) int { return cmp.Compare(a.Call, b.Call) })
		r.Violations = r.Violations[:min(len(r.Violations), MaxViolations)]
	}
	e.ids = nil
	r.Trace = e.finishTrace()
	e.finishAttribution()
	if e.opt.progress != nil {
		e.opt.progress(e.s.Duration, e.s.Duration)
	}
	return r
}

// servedOutOfOrder returns a violation for every call served after a call
// that started later: without clock events, callers that wait for a tick
// are served in the order they started waiting, and a caller that does
// not wait is served at once. ids are in the order the calls returned;
// call numbers are the order they started.
func servedOutOfOrder(ids []issued) []Violation {
	var out []Violation
	latest := int64(-1) // the latest-started call served at an earlier instant than ids[i]
	pending := int64(-1)
	for i, x := range ids {
		if i > 0 && x.at > ids[i-1].at {
			latest = max(latest, pending)
		}
		if int64(x.call) < latest && len(out) < MaxViolations {
			out = append(out, Violation{Promise: "order", Call: int64(x.call), At: x.at,
				Detail: fmt.Sprintf("served after call %d, which started later and was served before it", latest)})
		}
		pending = max(pending, int64(x.call))
	}
	return out
}

// duplicates sorts ids and returns a violation for every ID returned
// again, at the call that returned it again. A duplicate across restarts
// also counts in the Duplicates of the restart that started the run of
// the copy; restarts[i] started run i+1.
func duplicates(ids []issued, restarts []RestartReport) []Violation {
	slices.SortFunc(ids, func(a, b issued) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.call, b.call))
	})
	var dups []Violation
	for i := 1; i < len(ids); i++ {
		a, b := ids[i-1], ids[i]
		if a.id != b.id {
			continue
		}
		detail := fmt.Sprintf("ID %d was already returned by call %d", b.id, a.call)
		if b.run != a.run {
			re := &restarts[b.run-1]
			re.Duplicates++
			detail += ", before the restart at " + formatDuration(re.At)
		}
		dups = append(dups, Violation{Promise: "unique", Call: int64(b.call), At: b.at, Detail: detail})
	}
	return dups
}
