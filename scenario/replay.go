package scenario

import (
	"context"
	"sync"
	"time"

	"github.com/ringflake/ringflake"
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

// The engine replays a scenario. Its work is in parts, a file each:
//
//   - schedule.go: a discrete-event simulation of the callers and the
//     clock, which decides what happens next and moves the clock to it;
//   - checks.go: each call checked against the strategy's promise, and
//     the report's counts;
//   - attribute.go: the scripted event under way at each call, and what
//     the calls cost under each;
//   - trace.go: what a plot draws, when asked for.
//
// restart.go carries out restart events, between two calls.
type engine struct {
	ctx      context.Context
	s        *Scenario
	opt      options
	strategy strategies.Strategy
	layout   ringflake.Layout
	unit     time.Duration
	rep      *Report

	cancelled bool  // ctx ended, or a restart failed: no call starts any more
	err       error // ends the replay: a restart could not start the new generator

	running      // the generator running now
	restartState // the restart events
	wallClock    // the clock as last advanced
	scheduler    // the callers and the calls due
	checker      // what the checks remember of the calls made
	tracer       // what a plot draws
	attribution  // which event was under way at each call
}

// running is the generator running now and what belongs to its run.
type running struct {
	gen     *ringflake.Generator
	runs    int                // runs before this one: the restarts carried out
	runCtx  context.Context    // the context of the run's calls, cancelled when it crashes
	cancel  context.CancelFunc // cancels runCtx
	store   *markStore         // the mark store all runs share; nil when the scenario keeps no mark
	proc    *process           // the run's handle on store
	floor   int64              // the tick of the mark the run loaded; -1 for the first run
	downErr error              // why the last restart's process could not start; gen is nil meanwhile
}

// restartState is the scenario's restart events and the one under way.
type restartState struct {
	restarts  []restartEvent // in order
	nextRe    int            // index of the next restart event due
	pending   int            // index in rep.Restarts of the restart under way (the old run's calls are ending), or -1
	pendingEv restartEvent   // the event of the restart under way
	behind    int            // index in rep.Restarts of the restart whose mark the wall clock has not passed yet, or -1
	unwound   chan struct{}  // a caller whose call a crash ended hands the turn back on it
}

// wallClock is the simulated clock as the scheduler last moved it, and
// what the checks need to know of its script. Only the scheduler moves it.
type wallClock struct {
	clk     *simclock.Clock
	mono    time.Duration
	wall    time.Time     // without jitter
	stepped time.Duration // sum of the steps fired so far
	marks   []mark        // sliding maximum of the wall's tick over the last tick of true time
	slack   int64         // ticks the jitter may shift a reading
	fast    float64       // the largest rate at which the wall clock runs ahead of true time
	exact   bool          // no jitter, drift or freeze: true time bounds stalls exactly
}

func newEngine(ctx context.Context, s *Scenario, strategy strategies.Strategy, o options) (*engine, error) {
	l := s.layout()
	e := &engine{ctx: ctx, s: s, opt: o, strategy: strategy, layout: l, unit: l.Spec().Unit,
		rep: &Report{Scenario: s.Name, File: s.File, Strategy: strategy.String(), Errors: ErrorMap{}}}
	e.clk, e.exact = simclock.New(s.Start), true
	e.floor, e.pending, e.behind, e.newest = -1, -1, -1, -1
	e.unwound = make(chan struct{})
	e.promise, e.known = strategies.PromiseOf(strategy)
	e.rep.Promise, e.rep.PromiseKnown = e.promise, e.known

	events, err := e.script()
	if err != nil {
		return nil, err
	}
	if o.trace {
		e.startTrace(events)
	}
	e.sortStops()
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

// start makes the generator of a new run: at the start, and after each
// restart. With a mark store it loads the previous run's mark.
func (e *engine) start() error {
	e.observing = false // a new process has observed nothing
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
