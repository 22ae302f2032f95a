package scenario

import (
	"context"
	"errors"
)

// A restart event is carried out by the scheduler in two steps.
//
// At the event's instant, begin puts it under way: no call starts from then
// on. A clean restart is a graceful shutdown: the calls under way go on in
// the old generator until they end, in simulated time. A crash ends them at
// once: the run's context is cancelled, and each caller parked in a wait
// of the generator is handed the turn, gets a channel that never delivers
// from After, returns from its call with the context's error and hands the
// turn back. Such calls count as errors of kind "crash".
//
// Once no call is under way, restart closes the old generator and starts
// the new one on the same mark store, at the same simulated instant. When
// the new one cannot start (ringflake.New fails: the clock reads before the
// layout's epoch) the process is down; each call made while it is down
// starts it again first, as a supervisor restarts a process that exits,
// and fails with New's error when that fails too. A
// crash also goes through Close, with a context that makes the old run's
// handle on the store refuse the exact mark Close saves: Close waits for
// the save of the mark in flight, if any, which completes as it would
// after a crash (the store has it), and the exact mark is lost, as it is
// in a crash. Then the handle refuses every save, for good. Close is the
// only way to wait for a save in flight that ringflake offers, and waiting
// is what keeps the mark the new run loads independent of how long the
// save takes.

// restartEvent is a restart event with its place in the file.
type restartEvent struct {
	Event
	index int    // in Scenario.Events
	path  string // "events[3]"
}

// begin puts the restart ev under way.
func (e *engine) begin(ev restartEvent) {
	e.rep.Restarts = append(e.rep.Restarts, RestartReport{At: ev.At, Clean: ev.Clean})
	e.pending = len(e.rep.Restarts) - 1
	e.pendingEv = ev
	e.openRestart(ev, e.pending)
	if ev.Clean {
		return
	}
	e.cancel()
	for _, w := range e.workers {
		if !w.busy {
			continue
		}
		w.abandoned, w.sleeping = true, false
		if w != e.current { // the current caller ends its call when next returns to it
			w.handBack = true
			w.resume <- struct{}{}
			<-e.unwound
		}
	}
}

// restart carries out the restart under way once no call is.
func (e *engine) restart() {
	i := e.pending
	re := &e.rep.Restarts[i]
	e.pending = -1
	if e.gen != nil {
		var err error
		if re.Clean {
			err = e.gen.Close(context.Background()) // saves the exact mark
		} else {
			// A crash: the save under way lands, nothing after it does.
			err = e.gen.SyncMark(context.Background())
		}
		e.cancel()
		e.proc.dead.Store(true)
		if err != nil && !errors.Is(err, errCrashed) {
			e.stop(err)
			return
		}
		e.gen = nil
	}
	e.runs++
	e.behind = -1
	e.launch(i)
}

// launch starts the new process of restart i: a new generator on the mark
// the previous run left, at the current instant. When ringflake.New fails
// (a clock before the layout's epoch) the process is down: e.gen is nil,
// and the calls made meanwhile start it again (see down).
func (e *engine) launch(i int) bool {
	re := &e.rep.Restarts[i]
	mark := e.store.saved()
	if err := e.start(); err != nil {
		e.downErr = err
		re.FailedStarts++
		re.Resumed = -1
		return false
	}
	e.downErr = nil
	re.Resumed = e.mono
	since := mark.Since
	if since.IsZero() {
		since = mark.Limit
	}
	re.Mark, re.Since = mark.Limit, since
	e.floor = -1
	if !mark.Limit.IsZero() {
		re.Behind = max(mark.Limit.Sub(e.wall), 0)
		re.Rollback = max(since.Sub(e.wall), 0)
		re.Reservation = re.Behind - re.Rollback
		e.floor = e.layout.Tick(mark.Limit)
	}
	if e.floor >= 0 && e.layout.Tick(e.wall) <= e.floor {
		e.behind = i
	}
	return true
}

// down handles call n, started while the event at pos was under way,
// while the process of the last restart is down: it starts the process
// again, as a supervisor would, and reports false when that fails too;
// the call then fails with New's error.
func (e *engine) down(n int64, pos int) bool {
	i := len(e.rep.Restarts) - 1
	if e.launch(i) {
		return true
	}
	e.rep.Restarts[i].Failed++
	e.failed(n, e.downErr, pos)
	return false
}

// stop ends the replay with the error of a restart that failed.
func (e *engine) stop(err error) {
	ev := e.pendingEv
	e.err = &Error{File: e.s.File, Line: e.s.line(ev.path), Field: ev.path,
		Reason: "restart at " + formatDuration(ev.At) + ": " + trimPrefix(err), Err: err}
	e.cancelled = true
}

// catchingUp returns the index in Report.Restarts of the restart whose
// mark the wall clock has not passed yet, or -1.
func (e *engine) catchingUp() int {
	if e.behind >= 0 && e.layout.Tick(e.wall) > e.floor {
		e.behind = -1
	}
	return e.behind
}
