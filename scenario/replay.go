package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/calltrace"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// An Option configures [Replay].
type Option interface {
	apply(*options)
}

type options struct {
	progress func(done, total time.Duration)
	trace    bool
	slowSave func() // runs inside every save of the mark store: tests of slow stores
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithProgress makes [Replay] call f as the replay advances, with the true
// time replayed so far and the scenario's duration: at the start, about
// every 1 % of the duration, and at the end. f is called from the
// replay's goroutines, one call at a time, and should return quickly.
func WithProgress(f func(done, total time.Duration)) Option {
	return optionFunc(func(o *options) { o.progress = f })
}

// WithTrace makes [Replay] record a [Trace] in the report, for drawing.
func WithTrace() Option {
	return optionFunc(func(o *options) { o.trace = true })
}

// withSlowSaves makes the replay's mark store run f inside every save, for
// tests of stores that take their time.
func withSlowSaves(f func()) Option {
	return optionFunc(func(o *options) { o.slowSave = f })
}

// Replay runs scenario s against strategy on a simulated clock and
// reports what happened. It checks every call against the strategy's
// promise (strategies.PromiseOf; violations are in the report, not an
// error) and the report
// against the scenario's expectations for every strategy and for this one
// (Report.Unmet). Report.OK tells whether both held.
//
// A scenario with restart events replaces the generator at each, on a
// mark store kept in memory (see the package documentation); the report's
// Restarts tell what each did.
//
// Errors: those of [Scenario.Validate] (matching [ErrInvalid]);
// strategies.ErrInvalidStrategy when strategy is nil or does not fit the
// layout; an [*Error] about the start, matching [ErrInvalid] and the
// generator's error, should the first generator fail to start (Validate
// keeps the clock at the start within the layout, so it should not; a
// restart's generator that fails to start is replayed, see the package
// documentation), or about a restart event whose old generator fails to
// close; ctx.Err() when ctx ends first, which stops the replay within 1024
// calls.
func Replay(ctx context.Context, s *Scenario, strategy strategies.Strategy, opts ...Option) (*Report, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := strategies.Validate(strategy, s.layout().Spec().Unit); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	e, err := newEngine(ctx, s, strategy, o)
	if err != nil {
		return nil, err
	}
	e.run()
	if e.err != nil {
		return nil, e.err
	}
	if e.cancelled {
		return nil, ctx.Err()
	}
	r := e.finish()
	r.Unmet = s.check(r)
	return r, nil
}

// The engine is a discrete-event simulation. Simulated callers are real
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
type engine struct {
	ctx      context.Context
	s        *Scenario
	opt      options
	clk      *simclock.Clock
	strategy strategies.Strategy
	layout   ringflake.Layout
	unit     time.Duration
	promise  strategies.Promise
	known    bool // the strategy states its promise
	rep      *Report

	// The running generator and what belongs to its run.
	gen     *ringflake.Generator
	runs    int                // runs before this one: the restarts carried out
	runCtx  context.Context    // the context of the run's calls, cancelled when it crashes
	cancel  context.CancelFunc // cancels runCtx
	store   *markStore         // the mark store all runs share; nil when the scenario keeps no mark
	proc    *process           // the run's handle on store
	floor   int64              // the tick of the mark the run loaded; -1 for the first run
	downErr error              // why the last restart's process could not start; gen is nil meanwhile

	restarts  []restartEvent // the restart events, in order
	nextRe    int            // index of the next restart event due
	pending   int            // index in rep.Restarts of the restart under way (the old run's calls are ending), or -1
	pendingEv restartEvent   // the event of the restart under way
	behind    int            // index in rep.Restarts of the restart whose mark the wall clock has not passed yet, or -1
	unwound   chan struct{}  // a caller whose call a crash ended hands the turn back on it
	err       error          // ends the replay: a restart could not start the new generator

	// The clock as last advanced. Only the scheduler moves it.
	mono    time.Duration
	wall    time.Time     // without jitter
	stepped time.Duration // sum of the steps fired so far
	marks   []mark        // sliding maximum of the wall's tick over the last tick of true time
	slack   int64         // ticks the jitter may shift a reading
	fast    float64       // the largest rate at which the wall clock runs ahead of true time
	exact   bool          // no jitter, drift or freeze: true time bounds stalls exactly

	stops    []stop // instants the scheduler stops at, in order
	nextStop int
	due      *dueQueue        // the calls of the load not made yet
	workers  []*worker        // in number order
	sleepers minHeap[sleeper] // callers waiting in After
	idle     minHeap[int]     // numbers of the callers not making a call
	current  *worker
	busy     int   // callers making a call
	starts   int64 // calls started so far

	cancelled    bool
	callN        int64
	ids          []issued
	maxID        ringflake.ID
	anyID        bool
	newest       int64 // greatest tick issued, -1 before the first
	nextProgress time.Duration
	trace        *Trace
	buckets      []IDBucket
	errBuckets   []int64
}

type worker struct {
	n         int // its number, from 0
	resume    chan struct{}
	trace     calltrace.Call  // what the call under way waited for, by cause
	ctx       context.Context // the run's context, carrying trace
	ctxRun    int             // the run ctx belongs to
	busy      bool            // making a call
	sleeping  bool            // waiting in After until wakeAt
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

type mark struct {
	mono time.Duration
	tick int64
}

// issued is an ID a replay returned, kept to find duplicates: 24 bytes.
type issued struct {
	id   ringflake.ID
	at   time.Duration // true time when the call returned
	call uint32        // the call's number; MaxCalls fits
	run  uint32        // runs started before the call's: its generator's restarts
}

func newEngine(ctx context.Context, s *Scenario, strategy strategies.Strategy, o options) (*engine, error) {
	l := s.layout()
	e := &engine{ctx: ctx, s: s, opt: o, strategy: strategy, layout: l, unit: l.Spec().Unit,
		clk: simclock.New(s.Start), newest: -1, exact: true, floor: -1, pending: -1, behind: -1, unwound: make(chan struct{}),
		rep: &Report{Scenario: s.Name, File: s.File, Strategy: strategy.String(), Errors: ErrorMap{}}}
	e.promise, e.known = strategies.PromiseOf(strategy)
	e.rep.Promise, e.rep.PromiseKnown = e.promise, e.known

	events := slices.Clone(s.Events)
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	for i, ev := range s.Events {
		if ev.Kind == Restart { // the scheduler carries it out
			e.restarts = append(e.restarts, restartEvent{Event: ev, path: fmt.Sprintf("events[%d]", i)})
		}
	}
	slices.SortStableFunc(e.restarts, func(a, b restartEvent) int { return cmp.Compare(a.At, b.At) })
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
		case Freeze:
			e.exact = false
			if ev.D <= math.MaxInt64-ev.At {
				e.stops = append(e.stops, stop{at: ev.At + ev.D})
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
	if o.trace {
		// Buckets of Duration/TraceBuckets rounded up, to a whole number
		// of ticks (so that each holds as many ticks' IDs as the next): at
		// most TraceBuckets of them start before the end. Counted by index,
		// so that no sum can overflow however long the scenario.
		bucket := s.Duration / TraceBuckets
		if s.Duration%TraceBuckets != 0 {
			bucket++
		}
		if r := bucket % e.unit; r != 0 && bucket <= math.MaxInt64-e.unit {
			bucket += e.unit - r
		}
		e.trace = &Trace{Start: s.Start, Unit: e.unit, Bucket: bucket, Events: events}
		for i := range time.Duration(TraceBuckets) {
			if i*bucket >= s.Duration {
				break
			}
			e.stops = append(e.stops, stop{at: i * bucket})
		}
		e.stops = append(e.stops, stop{at: s.Duration})
	}
	slices.SortStableFunc(e.stops, func(a, b stop) int { return cmp.Compare(a.at, b.at) })
	e.mergeStops()

	streams, err := s.calls()
	if err != nil {
		return nil, err
	}
	e.due = newDueQueue(streams)
	// Every call may issue an ID: room for all of them at once, rather
	// than growing the slice by doubling (which, at MaxCalls, allocates
	// several times what it keeps).
	e.ids = make([]issued, 0, s.Calls())
	e.workers = make([]*worker, s.goroutines())
	for i := range e.workers {
		e.workers[i] = &worker{n: i, resume: make(chan struct{})}
	}
	e.sleepers, e.idle = newSleepers(), newIdle(len(e.workers))
	e.wall = e.clk.Wall()
	e.mark(l.Tick(e.wall))
	if s.keepsMark() {
		e.store = newMarkStore(o.slowSave)
	}
	if err := e.start(); err != nil {
		// Validate keeps the clock within the layout, so this does not
		// happen; should it, the error still names the scenario.
		return nil, &Error{File: s.File, Line: s.line("start"), Field: "start", Reason: trimPrefix(err), Err: err}
	}
	return e, nil
}

// mergeStops merges stops at the same instant, adding up their steps.
func (e *engine) mergeStops() {
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

// start makes the generator of a new run: at the start, and after each
// restart. With a mark store it loads the previous run's mark.
func (e *engine) start() error {
	opts := []ringflake.Option{ringflake.WithClock(engineClock{e}),
		ringflake.WithStrategy(e.strategy), ringflake.WithLayout(e.layout)}
	if e.store != nil {
		e.proc = &process{store: e.store}
		opts = append(opts, ringflake.WithMarkStore(e.proc), ringflake.WithMarkAhead(e.s.markAhead()))
	}
	g, err := ringflake.New(e.s.Node, opts...)
	if err != nil {
		return err
	}
	e.gen = g
	e.runCtx, e.cancel = context.WithCancel(context.Background())
	return nil
}

// run lets the callers make every call of the load.
func (e *engine) run() {
	e.progress()
	var wg sync.WaitGroup
	for _, w := range e.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.work(w)
		}()
	}
	if first := e.next(); first != nil {
		first.resume <- struct{}{}
	} else {
		e.stopWorkers()
	}
	wg.Wait()
	// The last run ends cleanly, so that no save of its mark is left
	// under way when Replay returns.
	if e.gen != nil {
		_ = e.gen.Close(context.Background())
	}
	e.cancel()
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
		var sleeper *worker
		for e.sleepers.len() > 0 && sleeper == nil {
			if top := e.sleepers.top(); top.w.sleeping && top.w.sleepGen == top.gen {
				sleeper = top.w
			} else {
				e.sleepers.pop() // stale
			}
		}
		var (
			due time.Duration
			st  bool // a call is due and a caller is idle
		)
		if e.idle.len() > 0 && !e.cancelled && e.pending < 0 {
			if e.callN%1024 == 0 && e.ctx.Err() != nil {
				e.cancelled = true
			} else {
				due, st = e.due.peek()
			}
		}
		// A call due in the past can only start now, so a caller waking
		// now goes first: otherwise late calls could use up the tick it
		// waited for, and it would wait again.
		wake := sleeper != nil && (!st || sleeper.wakeAt <= max(due, e.mono))
		if e.nextRe < len(e.restarts) && e.pending < 0 && !e.cancelled {
			at := time.Duration(math.MaxInt64)
			switch {
			case wake:
				at = sleeper.wakeAt
			case st:
				at = max(due, e.mono)
			}
			if ev := e.restarts[e.nextRe]; ev.At <= at {
				e.nextRe++
				e.advance(ev.At)
				e.begin(ev)
				continue
			}
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

// advance moves the clock to true time t, stopping at every stop on the way.
func (e *engine) advance(t time.Duration) {
	for e.nextStop < len(e.stops) && e.stops[e.nextStop].at <= t {
		st := e.stops[e.nextStop]
		e.nextStop++
		e.moveTo(st.at)
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

// call makes one call to the generator as caller w and checks it. It
// reports whether the call was abandoned: under way when the process
// crashed.
func (e *engine) call(w *worker) bool {
	e.callN++
	n := e.callN
	if e.gen == nil && !e.down(n) {
		e.ended(w)
		e.rep.Calls++
		return false
	}
	start, wallBefore, steppedBefore := e.mono, e.wall, e.stepped
	allowed := e.clockTick()
	floor, hasFloor := e.maxID, e.anyID
	run, markTick := e.runs, e.floor
	catchUp := e.catchingUp()
	alone, starts := e.busy == 1, e.starts // no other call under way

	id, err := e.next1(w)

	e.ended(w)
	r, p := e.rep, e.promise
	r.Calls++
	if w.abandoned {
		w.abandoned = false
		e.count("crash")
		r.Restarts[len(r.Restarts)-1].Abandoned++
		return true
	}
	stall, tr := e.mono-start, w.trace
	r.MaxStall = max(r.MaxStall, stall)
	r.MaxStrategyWait = max(r.MaxStrategyWait, tr.Strategy)
	r.MaxQueue = max(r.MaxQueue, tr.Capacity)
	r.MaxReservationWait = max(r.MaxReservationWait, tr.Reservation)
	if run > 0 && tr.Reservation > 0 {
		re := &r.Restarts[run-1]
		re.ReservationWait = max(re.ReservationWait, tr.Reservation)
	}
	if catchUp >= 0 {
		re := &r.Restarts[catchUp]
		re.MaxStall = max(re.MaxStall, stall)
		if err != nil {
			re.Failed++
		}
	}
	e.checkStall(n, stall, tr, alone && e.starts == starts, wallBefore, steppedBefore)
	if err != nil {
		e.failed(n, err)
		return false
	}

	r.Issued++
	e.ids = append(e.ids, issued{id: id, at: e.mono, call: uint32(n), run: uint32(run)})
	if hasFloor && id < floor {
		r.OutOfOrder++
		if e.known && p.Monotonic {
			e.violate(n, "monotonic", "ID %d is smaller than ID %d, returned before the call started", id, floor)
		}
	}
	if !e.anyID || id > e.maxID {
		e.maxID, e.anyID = id, true
	}
	if node := id.Node(e.layout); node != e.s.Node {
		e.violate(n, "node", "ID %d carries node %d, want %d", id, node, e.s.Node)
	}

	tick := e.layout.Tick(id.Time(e.layout))
	if tick <= markTick {
		e.violate(n, "restart", "ID %d is stamped %s, not after the mark %s the previous run left",
			id, id.Time(e.layout).Format(time.RFC3339Nano), e.layout.TickTime(markTick).Format(time.RFC3339Nano))
	}
	if e.known {
		clock := max(allowed, e.clockTick())
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
	}
	e.newest = max(e.newest, tick)
	if e.trace != nil {
		b := e.bucket()
		bk := &e.buckets[b]
		t := id.Time(e.layout).Sub(e.s.Start)
		off := time.Duration(tick-e.layout.Tick(e.s.Start.Add(e.mono))) * e.unit
		if bk.Count == 0 {
			*bk = IDBucket{At: time.Duration(b) * e.trace.Bucket, Min: t, Max: t, MinOffset: off, MaxOffset: off}
		}
		bk.Min, bk.Max = min(bk.Min, t), max(bk.Max, t)
		bk.MinOffset, bk.MaxOffset = min(bk.MinOffset, off), max(bk.MaxOffset, off)
		bk.Count++
	}
	return false
}

// ended marks w idle: its call ended.
func (e *engine) ended(w *worker) {
	w.busy = false
	e.busy--
	e.idle.push(w.n)
}

// next1 asks the running generator for an ID, as caller w, with a context
// that lets the generator tell w.trace what the call waited for.
func (e *engine) next1(w *worker) (ringflake.ID, error) {
	w.trace = calltrace.Call{}
	if w.ctx == nil || w.ctxRun != e.runs {
		w.ctx, w.ctxRun = calltrace.With(e.runCtx, &w.trace), e.runs
	}
	return e.gen.NextContext(w.ctx)
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

// failed counts a failed call.
func (e *engine) failed(n int64, err error) {
	var re *strategies.RollbackError
	kind := "other"
	switch {
	case errors.As(err, &re):
		kind = "rollback"
		if re.Behind <= 0 && e.known {
			e.violate(n, "rollback-amount", "rollback error with amount %v; it must be positive", re.Behind)
		}
	case errors.Is(err, ringflake.ErrLayoutExpired):
		kind = "expired"
	case errors.Is(err, ringflake.ErrBeforeEpoch):
		kind = "before_epoch"
	}
	e.count(kind)
}

// count counts a failed call of kind.
func (e *engine) count(kind string) {
	e.rep.Errors[kind]++
	if e.trace != nil {
		b := e.bucket()
		for len(e.errBuckets) <= b {
			e.errBuckets = append(e.errBuckets, 0)
		}
		e.errBuckets[b]++
	}
}

// bucket returns the trace bucket of the current time, growing the
// buckets as needed.
func (e *engine) bucket() int {
	b := int(e.mono / e.trace.Bucket)
	for len(e.buckets) <= b {
		e.buckets = append(e.buckets, IDBucket{})
	}
	return b
}

// sample adds a point of the wall clock to the trace.
func (e *engine) sample(wall time.Time) {
	if e.trace != nil {
		e.trace.Wall = append(e.trace.Wall, Point{At: e.mono, T: wall.Sub(e.s.Start)})
	}
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
	if e.trace != nil {
		e.sample(e.wall)
		for _, b := range e.buckets {
			if b.Count > 0 {
				e.trace.IDs = append(e.trace.IDs, b)
			}
		}
		for i, n := range e.errBuckets {
			if n > 0 {
				e.trace.Errors = append(e.trace.Errors, Point{At: time.Duration(i) * e.trace.Bucket, T: time.Duration(n)})
			}
		}
		r.Trace = e.trace
	}
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
