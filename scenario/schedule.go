package scenario

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/calltrace"
	"github.com/ringflake/ringflake/simclock"
)

// The schedule is a discrete-event simulation. Simulated callers are real
// goroutines, but only one of them runs at a time: the one holding the
// turn. A caller gives up the turn when its call returns or when the
// generator waits on the clock (After); it then runs the scheduler, next,
// which picks what happens next — the earliest wake-up of a waiting
// caller, or the next due call for the lowest-numbered idle caller,
// wake-ups first when both can happen at the same instant — advances the
// simulated clock to that instant (firing the scenario's events on the
// way) and hands the turn over. So the order of
// everything is a function of the scenario and the strategy alone, and the
// hand-overs through channels order all memory accesses for the race
// detector. With one caller the turn never changes hands.
//
// A restart is a stop of the scheduler too (see restart.go): it replaces
// the generator between two calls.

// scheduler is the state of the schedule: the instants the clock stops
// at, the calls due and the callers.
type scheduler struct {
	stops        []stop // instants the scheduler stops at, in order
	nextStop     int
	due          *dueQueue    // the calls of the load not made yet
	observes     []Event      // the observe events, in time order
	nextOb       int          // index of the next observe event due
	observed     ringflake.ID // the greatest ID Observe accepted in this run, if observing
	observing    bool
	workers      []*worker        // in number order
	sleepers     minHeap[sleeper] // callers waiting in After
	idle         minHeap[int]     // numbers of the callers not making a call
	current      *worker
	busy         int   // callers making a call
	starts       int64 // calls started so far
	callN        int64 // calls made so far, each numbered when it is made
	nextProgress time.Duration
	pauses       []span // the pauses, merged: no call starts during them
	nextPause    int    // the first pause not over by the last call due
}

// worker is one simulated caller.
type worker struct {
	n         int // its number, from 0
	resume    chan struct{}
	trace     calltrace.Call // what the call under way waited for, by cause
	busy      bool           // making a call
	sleeping  bool           // waiting in After until wakeAt
	wakeAt    time.Duration
	sleepGen  uint64 // counts its sleeps, to tell stale entries of sleepers
	abandoned bool   // its call was under way when the process crashed: it ends in the dead generator
	handBack  bool   // the crash is being handled on another caller's turn: hand the turn back once the call ended
}

// stop is an instant the clock must pass through on its own: an event
// (steps sums the steps fired then), the end of a freeze, a trace sample.
type stop struct {
	at    time.Duration
	steps time.Duration
}

// mark is the wall clock's tick at a true time (see engine.mark).
type mark struct {
	mono time.Duration
	tick int64
}

// script schedules the scenario's clock events on the simulated clock,
// with a stop at each, and collects its restart events. It returns the
// events in time order.
func (e *engine) script() ([]Event, error) {
	s := e.s
	order := make([]int, len(s.Events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Events[a].At, s.Events[b].At) })
	events := make([]Event, len(order))
	for pos, i := range order {
		events[pos] = s.Events[i]
	}
	e.startAttribution(order)
	for i, ev := range s.Events {
		if ev.Kind == Restart { // the scheduler carries it out
			e.restarts = append(e.restarts, restartEvent{Event: ev, index: i, path: fmt.Sprintf("events[%d]", i)})
		}
		if ev.Kind == Observe { // so does it this
			e.observes = append(e.observes, ev)
		}
	}
	slices.SortStableFunc(e.restarts, func(a, b restartEvent) int { return cmp.Compare(a.At, b.At) })
	slices.SortStableFunc(e.observes, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	var script []simclock.Event
	for _, ev := range events {
		ce, ok := ev.clock()
		if !ok {
			continue
		}
		script = append(script, ce)
		st := stop{at: ev.At}
		switch ev.Kind {
		case Step:
			st.steps = ev.D
		case Freeze, Pause:
			e.exact = false
			if ev.D <= math.MaxInt64-ev.At {
				e.stops = append(e.stops, stop{at: ev.At + ev.D})
			}
			if ev.Kind == Pause {
				e.pauses = append(e.pauses, span{from: ev.At, to: addSat(ev.At, ev.D)})
			}
		case Drift:
			e.exact = e.exact && ev.Rate == 0
			e.fast = max(e.fast, ev.Rate)
		case Jitter:
			e.exact = e.exact && ev.D == 0
			slack := int64(ev.D / e.unit)
			if ev.D%e.unit != 0 {
				slack++
			}
			e.slack = max(e.slack, slack)
		}
		e.stops = append(e.stops, st)
	}
	if err := e.clk.Schedule(script...); err != nil {
		return nil, &Error{File: s.File, Field: "events", Reason: trimPrefix(err), Err: err}
	}
	e.pauses = mergeSpans(e.pauses)
	return events, nil
}

// span is an interval of true time, [from, to).
type span struct{ from, to time.Duration }

// mergeSpans returns the spans in time order, those that overlap or touch
// merged.
func mergeSpans(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var out []span
	for _, sp := range spans {
		if n := len(out); n > 0 && sp.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, sp.to)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// resumeAt returns when a call due at t starts, pauses aside: t, or the
// end of the pause t falls in. t never decreases from one call to the
// next, so the pauses before it are passed for good.
func (e *engine) resumeAt(t time.Duration) time.Duration {
	for e.nextPause < len(e.pauses) && e.pauses[e.nextPause].to <= t {
		e.nextPause++
	}
	if e.nextPause < len(e.pauses) && e.pauses[e.nextPause].from <= t {
		return e.pauses[e.nextPause].to
	}
	return t
}

// sortStops puts the stops in order and merges stops at the same instant,
// adding up their steps.
func (e *engine) sortStops() {
	slices.SortStableFunc(e.stops, func(a, b stop) int { return cmp.Compare(a.at, b.at) })
	out := e.stops[:0]
	for _, st := range e.stops {
		if n := len(out); n > 0 && out[n-1].at == st.at {
			out[n-1].steps += st.steps
			continue
		}
		out = append(out, st)
	}
	e.stops = out
}

// work is the life of one caller: wait for the turn, make a call, pick the
// next thing to happen, hand the turn on.
func (e *engine) work(w *worker) {
	if _, ok := <-w.resume; !ok {
		return
	}
	for {
		if e.call(w) && w.handBack {
			// A crash ended this call on another caller's turn: hand it
			// back, and wait for a turn of one's own.
			w.handBack = false
			e.unwound <- struct{}{}
			if _, ok := <-w.resume; !ok {
				return
			}
			continue
		}
		next := e.next()
		if next == nil {
			e.stopWorkers()
			return
		}
		if next != w {
			next.resume <- struct{}{}
			if _, ok := <-w.resume; !ok {
				return
			}
		}
	}
}

func (e *engine) stopWorkers() {
	for _, w := range e.workers {
		close(w.resume)
	}
}

// next is the scheduler: it picks the caller to run next, advances the
// clock to when that happens, and returns the caller, marked as current. It
// returns nil when every call has been made and no caller is waiting.
//
// A restart due before the next thing happens is carried out first (see
// restart.go); while one is under way, no call starts. When the current
// caller's call was under way at a crash, next returns that caller, so
// that its call ends in the dead generator before anything else happens.
func (e *engine) next() *worker {
	if e.store != nil && e.gen != nil {
		// A mark save the last call started lands before the replay moves
		// on, however long it takes in real time: in simulated time it
		// completes within the call that started it.
		_ = e.gen.SyncMark(context.Background())
	}
	for {
		if w := e.current; w != nil && w.abandoned {
			return w
		}
		if e.pending >= 0 && e.busy == 0 {
			e.restart()
		}
		sleeper := e.firstSleeper()
		due, st := e.nextDue()
		// A call due in the past can only start now, so a caller waking
		// now goes first: otherwise late calls could use up the tick it
		// waited for, and it would wait again.
		wake := sleeper != nil && (!st || sleeper.wakeAt <= max(due, e.mono))
		if e.restartDue(sleeper, wake, due, st) || e.observeDue(sleeper, wake, due, st) {
			continue
		}
		switch {
		case wake:
			e.sleepers.pop()
			e.advance(sleeper.wakeAt)
			sleeper.sleeping = false
			e.current = sleeper
			return sleeper
		case st:
			e.due.take()
			e.advance(due) // a call due while every caller was busy starts now
			idle := e.workers[e.idle.pop()]
			idle.busy = true
			e.busy++
			e.starts++
			e.current = idle
			return idle
		}
		if !e.cancelled {
			e.advance(e.s.Duration) // the rest of the events, for the trace
		}
		return nil
	}
}

// firstSleeper returns the caller that wakes first, or nil, dropping the
// stale entries before it.
func (e *engine) firstSleeper() *worker {
	for e.sleepers.len() > 0 {
		if top := e.sleepers.top(); top.w.sleeping && top.w.sleepGen == top.gen {
			return top.w
		}
		e.sleepers.pop() // stale
	}
	return nil
}

// nextDue returns the instant the next call is due, and whether one can
// start: one is due, a caller is idle, no restart is under way and the
// replay goes on.
func (e *engine) nextDue() (time.Duration, bool) {
	if e.idle.len() == 0 || e.cancelled || e.pending >= 0 {
		return 0, false
	}
	if e.callN%1024 == 0 && e.ctx.Err() != nil {
		e.cancelled = true
		return 0, false
	}
	due, ok := e.due.peek()
	if ok && len(e.pauses) > 0 {
		due = e.resumeAt(max(due, e.mono))
	}
	return due, ok
}

// restartDue puts the next restart event under way when it is due before
// whatever would happen next (the sleeper waking, or the call due), and
// reports whether it did.
func (e *engine) restartDue(sleeper *worker, wake bool, due time.Duration, st bool) bool {
	if e.nextRe >= len(e.restarts) || e.pending >= 0 || e.cancelled {
		return false
	}
	at := time.Duration(math.MaxInt64)
	switch {
	case wake:
		at = sleeper.wakeAt
	case st:
		at = max(due, e.mono)
	}
	ev := e.restarts[e.nextRe]
	if ev.At > at {
		return false
	}
	e.nextRe++
	e.advance(ev.At)
	e.begin(ev)
	return true
}

// observeDue makes the service observe the ID of the next observe event
// when it is due before whatever would happen next, and reports whether
// it did. The current caller does it, between two calls, holding the
// turn.
func (e *engine) observeDue(sleeper *worker, wake bool, due time.Duration, st bool) bool {
	if e.nextOb >= len(e.observes) || e.cancelled || e.pending >= 0 {
		return false
	}
	at := time.Duration(math.MaxInt64)
	switch {
	case wake:
		at = sleeper.wakeAt
	case st:
		at = max(due, e.mono)
	}
	ev := e.observes[e.nextOb]
	if ev.At > at {
		return false
	}
	e.nextOb++
	e.advance(max(ev.At, e.mono))
	if e.gen == nil {
		return true // the process is down: nobody receives it
	}
	spec := e.layout.Spec()
	x, err := e.layout.Compose(e.layout.TickTime(e.layout.Tick(e.wall.Add(ev.D))), e.layout.MaxNode(), 1<<spec.SequenceBits-1)
	if err != nil {
		return true // beyond the layout: there is no such ID to receive
	}
	if err := e.gen.Observe(x); err == nil && (!e.observing || x > e.observed) {
		e.observed, e.observing = x, true
	}
	return true
}

// advance moves the clock to true time t, stopping at every stop on the way.
func (e *engine) advance(t time.Duration) {
	for e.nextStop < len(e.stops) && e.stops[e.nextStop].at <= t {
		st := e.stops[e.nextStop]
		e.nextStop++
		e.moveTo(st.at)
		e.fire(st.steps)
		if st.steps != 0 {
			pre := e.wall.Add(-st.steps)
			e.stepped += st.steps
			e.mark(e.layout.Tick(pre))
			e.sample(pre)
		}
		e.sample(e.wall)
	}
	e.moveTo(t)
}

// moveTo lets true time pass up to t, firing the events due on the way.
func (e *engine) moveTo(t time.Duration) {
	if t <= e.mono {
		return
	}
	e.clk.Add(t - e.mono)
	e.mono = t
	e.wall = e.clk.Wall()
	e.mark(e.layout.Tick(e.wall))
	if len(e.open) > 0 {
		e.closeWindows(false)
	}
	if e.opt.progress != nil && e.mono >= e.nextProgress {
		e.progress()
	}
}

func (e *engine) progress() {
	if e.opt.progress == nil {
		return
	}
	d := e.s.Duration
	e.opt.progress(min(e.mono, d), d)
	e.nextProgress = addSat(e.mono, max(d/100, 1))
}

// mark records that the wall clock showed tick at the current true time.
// The generator reads the wall clock once per tick and estimates it from
// the monotonic clock in between, so it may still believe in any tick the
// wall clock showed during the last tick of true time. marks keeps the
// maximum of that window: a deque of decreasing ticks.
func (e *engine) mark(tick int64) {
	for n := len(e.marks); n > 0 && e.marks[n-1].tick <= tick; n-- {
		e.marks = e.marks[:n-1]
	}
	e.marks = append(e.marks, mark{mono: e.mono, tick: tick})
}

// clockTick returns the latest tick the generator may believe the wall
// clock reads (before jitter).
func (e *engine) clockTick() int64 {
	i := 0
	for i < len(e.marks)-1 && e.marks[i].mono < e.mono-e.unit {
		i++
	}
	if i > 0 {
		e.marks = append(e.marks[:0], e.marks[i:]...)
	}
	return e.marks[0].tick
}

// engineClock is the clock the generator reads: the scenario's simulated
// clock, whose waits hand the turn to the scheduler.
type engineClock struct{ e *engine }

func (c engineClock) Now() time.Time           { return c.e.clk.Now() }
func (c engineClock) Monotonic() time.Duration { return c.e.clk.Monotonic() }

// Waited is told each wait of the current caller's call, after it: the
// generator finds it on its clock (calltrace.Tracer).
func (c engineClock) Waited(cause calltrace.Cause, d time.Duration) {
	c.e.current.trace.Add(cause, d)
}

// After parks the current caller until true time has advanced by d, while
// the other callers run, and returns a channel holding the wall reading
// then.
//
// When the process crashes during the wait, the channel never delivers:
// the call's context, cancelled by the crash, ends it instead.
func (c engineClock) After(d time.Duration) <-chan time.Time {
	e := c.e
	if d > 0 {
		e.rep.sleeps++
		w := e.current
		w.sleeping, w.wakeAt = true, e.mono+min(d, math.MaxInt64-e.mono)
		w.sleepGen++
		e.sleepers.push(sleeper{at: w.wakeAt, w: w, gen: w.sleepGen})
		if next := e.next(); next != w {
			next.resume <- struct{}{}
			<-w.resume
		}
		if w.abandoned {
			return nil
		}
	}
	ch := make(chan time.Time, 1)
	ch <- e.clk.Now()
	return ch
}
