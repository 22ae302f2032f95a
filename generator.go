package ringflake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringflake/ringflake/internal/calltrace"
	"github.com/ringflake/ringflake/strategies"
)

// A Generator issues IDs for one node. It is safe for concurrent use by
// multiple goroutines.
//
// A call that does not wait allocates nothing: the ordinary ID, a batch of
// [Generator.NextN], a rollback the ring absorbs, time the logical
// strategy borrows. A call that waits — for the next tick when a tick's
// sequence is used up, or because its strategy asks — allocates what its
// clock's After allocates (time.After: a timer and its channel): every
// wait on a clock given with [WithClock], and on the system clock the
// waits longer than 10 ms, or any wait on systems other than Linux or
// inside a testing/synctest bubble. The shorter waits on the system clock
// on Linux wait in the generator's own queue, which reuses its waiters. A
// call that fails allocates its error.
//
// Every ID comes from the generator's ring (256 slots, one per tick
// residue): at the clock's tick through one atomic add on the counter of
// the tick, whose slot it holds whole; at other ticks through an atomic
// compare-and-swap that only moves a slot forward. So a generator never
// issues the same ID twice, whatever its clock does. Within that guarantee its strategy decides what happens when
// the clock reads earlier than the newest ID issued: see package
// strategies.
//
// When no rollback is under way, IDs increase: an ID returned before
// another call starts is smaller than that call's ID. When a tick's
// sequence is used up, the call waits on the clock for the next tick (the
// logical strategy borrows the next tick instead); it never spins. Callers
// that wait are served in the order they started waiting: each takes its
// place in a later tick before it sleeps, so no caller waits for a tick
// that later callers are served from. On the system clock the waiting
// callers do not each hold an OS thread: a caller sleeps in the kernel, to
// the precision of its timers, and wakes every caller due by then; threads
// sleep one per distinct deadline under way (the next tick's, a
// rollback's end), not one per caller.
//
// The clock's tick is the ring's hot tick: calls take its sequence
// numbers with one atomic add, which never retries, so calls from many
// goroutines share the tick without a lock and without contending
// retries.
//
// With a clock that has a Monotonic method (see [Clock]; the default
// system clock has one), the generator reads the cheap monotonic clock
// on every call and the wall clock once per tick: a step of the wall clock is seen at the latest by
// the first call one tick of monotonic time after it, and until then IDs
// carry the time the wall clock read before the step.
//
// On Linux on amd64, when the kernel's clock source is the CPU's
// time-stamp counter ("tsc"), a generator on the default system clock
// reads that counter instead of the monotonic clock within a tick: one
// instruction instead of a call into the vDSO, which was most of what a
// call cost (see BENCHMARKS.md). Once per tick it checks the counter against the
// monotonic clock, and it stops reading it for good after eight checks in
// a row find it off; a counter estimate is never used past the end of the
// tick it was checked in. The environment variable RINGFLAKE_CYCLES=off
// turns the counter off for the whole process.
//
// Make a Generator with [New]. The zero Generator (and a nil *Generator)
// issues nothing: its calls fail with an error matching [ErrClosed], its
// Stats are zero and Close returns nil.
type Generator struct {
	// Issuing: read or written on every call.
	ring    ring         // every pair issued, and the hot tick (ring.go)
	newest  atomic.Int64 // greatest tick issued, -1 before the first ID
	horizon atomic.Int64 // greatest tick the fast path may issue at (horizon.go)
	lane    lane         // the first strategy's plan for the current situation (lane.go)
	src     timeSource   // the clock, read as ticks (clock.go)
	closed  atomic.Bool

	// The layout and node, unpacked to compose IDs and bound ticks.
	layout    Layout
	node      int64
	nodePart  int64 // node in its place: node << the layout's nodeShift
	timeShift uint8 // the layout's field order, for id: see Layout
	seqShift  uint8
	last      int64 // the layout's last tick

	// The strategy, and the bounds on how far IDs may lead the clock.
	strategy strategies.Strategy
	steps    []strategies.Strategy // the strategy's steps (a chain's, or itself)
	stable   bool                  // the first step is TickStable: its plans may go in the lane
	maxLead  int64                 // the most ticks an ID may lead the clock past the newest (a lease's bound)
	forward  int64                 // the most ticks an observed ID may lead the clock (WithMaxForward)

	// Observe (observe.go). floor is the tick below which no ID may be
	// issued any more, -1 without one: the greatest observed ID's tick.
	// observedLead is the greatest tick an observed ID had when it was
	// above the newest tick (-1 without one): while the clock reads
	// behind it, calls issue at it and the tick after it, not further.
	floor        atomic.Int64
	observedLead atomic.Int64

	// Waiting callers.
	line  line  // callers waiting for a tick, in order (line.go)
	waits waitq // the sleeping of waiting callers on the system clock (wait.go)

	// What outlives the process, and who may issue.
	mark  *marker    // the saved high-water mark (mark.go); nil without a MarkStore
	hmu   sync.Mutex // recomputing the horizon from the mark
	lease Lease      // nil without WithLease

	// Telling what happened.
	stats  counters              // Stats (stats.go)
	hooks  []func(RollbackEvent) // rollback events (events.go)
	tracer calltrace.Tracer      // the clock, when it is one: told every wait (the replay of package scenario)
}

// New returns a generator issuing IDs for node, a number in
// [0, layout.MaxNode()] that no other generator sharing the layout uses at
// the same time (see [Layout.NodeID] for split datacenter/worker layouts).
//
// Defaults: [TwitterLayout], [strategies.Default] and the system clock;
// no high-water mark and no lease. With a [MarkStore] ([WithMarkStore], or
// a [Lease] that is one), New holds the store if it has Hold and Release methods,
// loads the previous run's mark and, when the clock is past it, saves this
// run's first mark before it returns.
//
// Errors:
//   - [ErrInvalidOption]: a nil Option, clock, store, lease, node source,
//     rollback hook or logger; a nonzero node beside [WithNodeSource]; a negative [WithSequenceOffset] or [WithExistingID]; a
//     mark interval shorter than two ticks; a lease for another node; a
//     [MarkStore] given with a lease that keeps the mark itself; with a
//     lease that bounds how far IDs may lead the clock (a MaxLead method),
//     a strategy whose [strategies.Promise] leads further, or that states
//     no promise.
//   - [ErrInvalidLayout]: the zero Layout.
//   - [ErrNodeOutOfRange]: node does not fit the layout.
//   - the error of the [NodeSource] given with [WithNodeSource] (matching
//     [ErrNodeUnavailable] when it has no id to give).
//   - [strategies.ErrInvalidStrategy]: the strategy does not fit the layout.
//   - [ErrBeforeEpoch]: the clock reads before the layout's epoch — as the
//     clock of a testing/synctest bubble does until it is moved on, since
//     it starts at 2000-01-01 (see docs/testing.md).
//   - [ErrLayoutExpired]: the clock (or a loaded mark) reads past the
//     layout's last tick.
//   - [ErrMarkCorrupt], [ErrMarkMismatch], or the store's own error: the
//     mark cannot be held, loaded or saved, or belongs to another node id
//     or layout.
//   - [ErrBelowExisting]: with [WithExistingID], the existing ID's tick
//     is after the generator's first, so its IDs would sort below it.
//   - the store's Hold error: another generator holds the file of a
//     [github.com/ringflake/ringflake/hostlocal.MarkFile] (hostlocal.ErrMarkInUse).
//   - [ErrNodeInUse]: another live generator of this process, on the
//     system clock, has node and an equal layout ([Layout.Equal]: the
//     same bits under any name; a different layout is not checked)
//     (generators on a clock given with [WithClock] are not checked, so
//     tests can build many).
//     [Generator.Close] frees the node; so does the garbage collector,
//     once a generator that was not closed is unreachable.
func New(node int64, opts ...Option) (*Generator, error) {
	cfg, node, err := configure(node, opts)
	if err != nil {
		return nil, err
	}
	now := cfg.clock.Now()
	switch l, tick := cfg.layout, cfg.layout.Tick(now); {
	case tick < 0:
		_, sys := cfg.clock.(systemClock)
		return nil, &timeError{err: ErrBeforeEpoch, at: now, edge: l.epoch, bubble: sys && bubbled(now)}
	case tick > l.MaxTick():
		return nil, &timeError{err: ErrLayoutExpired, at: now, edge: l.Last()}
	}
	if err := cfg.useLease(node); err != nil {
		return nil, err
	}
	g := newGenerator(node, cfg, now)
	// The node first, so that a second generator on it is refused before
	// it touches the mark store; then the mark.
	if err := g.claimNode(); err != nil {
		return nil, err
	}
	if cfg.marks != nil {
		if err := g.openMark(cfg, g.layout.Tick(now)); err != nil {
			g.freeNode()
			return nil, err
		}
	}
	if err := g.checkExisting(&cfg, now); err != nil {
		g.freeNode()
		if g.mark != nil {
			return nil, errors.Join(err, g.releaseMark())
		}
		return nil, err
	}
	g.setHorizon()
	return g, nil
}

// configure applies opts over the defaults and checks what can be checked
// before the clock is read: the layout, the node (which it returns, from
// WithNodeSource when given) and the strategy.
func configure(node int64, opts []Option) (config, int64, error) {
	cfg := config{layout: TwitterLayout(), strategy: strategies.Default(), ahead: DefaultMarkAhead, maxForward: defaultMaxForward}
	for _, o := range opts {
		if o == nil {
			invalidOption(&cfg, "nil Option")
			continue
		}
		o.apply(&cfg)
	}
	l := cfg.layout
	switch {
	case cfg.err != nil:
		return cfg, node, cfg.err
	case l.IsZero():
		return cfg, node, &LayoutError{Field: "Layout", Reason: "zero value; use a preset, NewLayout or ParseLayout"}
	}
	if cfg.nodes != nil {
		if node != 0 {
			return cfg, node, fmt.Errorf("%w: node %d given to New beside WithNodeSource: pass 0", ErrInvalidOption, node)
		}
		n, err := cfg.nodes.NodeID(context.Background(), l)
		if err != nil {
			return cfg, node, err
		}
		node = n
	}
	if err := l.checkNode(node); err != nil {
		return cfg, node, err
	}
	if err := strategies.Validate(cfg.strategy, l.unit); err != nil {
		return cfg, node, err
	}
	if cfg.clock == nil {
		cfg.clock = systemClock{start: time.Now()}
	}
	return cfg, node, nil
}

// newGenerator returns the generator of cfg for node, whose clock read now
// when New started, with nothing issued yet.
func newGenerator(node int64, cfg config, now time.Time) *Generator {
	l := cfg.layout
	g := &Generator{
		layout: l, node: node, nodePart: node << l.nodeShift,
		timeShift: l.timeShift, seqShift: l.seqShift, last: l.MaxTick(),
		strategy: cfg.strategy, steps: strategies.Flatten(cfg.strategy),
		maxLead: math.MaxInt64, forward: int64(cfg.maxForward / l.unit),
		lease: cfg.lease, hooks: cfg.hooks,
	}
	g.tracer, _ = cfg.clock.(calltrace.Tracer)
	if ts, ok := g.steps[0].(strategies.TickStable); ok {
		g.stable = ts.TickStable()
	}
	if b, ok := cfg.lease.(interface{ MaxLead() time.Duration }); ok {
		g.maxLead = int64(b.MaxLead() / l.unit)
	}
	g.ring.init(l.seqBits, cfg.seqOffset)
	g.line.init(uint64(l.MaxSequence()) + 1)
	g.newest.Store(-1)
	g.floor.Store(-1)
	g.observedLead.Store(-1)
	g.src.init(cfg.clock, now, l.epoch, l.unit, &g.stats, &g.newest)
	g.waits.init(g.src.start)
	g.src.onStep = g.waits.wakeStep
	return g
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout {
	if g == nil {
		return Layout{}
	}
	return g.layout
}

// Node returns the generator's node id.
func (g *Generator) Node() int64 {
	if g == nil {
		return 0
	}
	return g.node
}

// errUnmade is the error of the zero (or nil) Generator's methods, which
// New did not make: it matches [ErrClosed].
var errUnmade = fmt.Errorf("%w: the zero Generator; make one with New", ErrClosed)

// unmade reports whether g is nil or the zero Generator.
func (g *Generator) unmade() bool { return g == nil || g.src.unit == 0 }

// Next returns a new ID. It is NextContext with [context.Background]: a
// wait the strategy asks for cannot be interrupted.
func (g *Generator) Next() (ID, error) {
	out, err := g.take(context.Background(), 1) // NextContext, one call shorter
	if err != nil {
		return 0, err
	}
	return g.id(out.first), nil
}

// NextContext returns a new ID, or an error:
//   - one matching [ErrClockRollback] (a [*strategies.RollbackError] telling how far
//     behind) when the clock reads behind the newest ID and the strategy
//     does not keep the generator available;
//   - any error a strategy's plan returns;
//   - [ErrLayoutExpired] once the clock reads past the layout's last tick;
//   - [ErrBeforeEpoch] when the clock reads before the epoch and no ID was
//     issued yet;
//   - [ErrLeaseLost] while the [Lease] does not hold the node id;
//   - [ErrClosed] after [Generator.Close], or when Close ends the call's
//     wait;
//   - [ErrMarkNotSaved], wrapping the [MarkStore]'s error, when a call
//     needs a later high-water mark and it cannot be saved;
//   - ctx.Err() when ctx ends while the call waits.
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	out, err := g.take(ctx, 1)
	if err != nil {
		return 0, err
	}
	return g.id(out.first), nil
}

// NextN fills ids with new IDs and returns how many it filled: all of them
// unless it returns an error, in which case the IDs it filled before are
// valid and issued. The IDs of one call are strictly increasing. NextN
// follows the strategy exactly as [Generator.NextContext] does, and returns
// the same errors; it takes the sequence numbers of one tick with one
// atomic operation, not one per ID, and allocates nothing. Waiting callers
// take their place in line for the whole run they still need.
func (g *Generator) NextN(ctx context.Context, ids []ID) (n int, err error) {
	if g.unmade() {
		return 0, errUnmade
	}
	unsorted := false // a run during a rollback started below the IDs before it
	defer func() {
		if unsorted {
			slices.Sort(ids[:n])
		}
	}()
	for n < len(ids) {
		run, err := g.take(ctx, uint64(len(ids)-n))
		if err != nil {
			return n, err
		}
		if n > 0 && g.id(run.first) < ids[n-1] {
			unsorted = true
		}
		for v := run.first; v < run.first+run.n; v++ {
			ids[n] = g.id(v)
			n++
		}
	}
	return n, nil
}

// Close ends the generator: later calls fail with [ErrClosed], and so do
// calls waiting for a tick or for their strategy, at once, on any clock
// (on the system clock the one caller sleeping in the kernel for the
// others ends its current slice first, at most 10 ms). It may run
// concurrently with calls in flight: it seals the ring, so that no call
// can issue an ID after it, and learns from the ring the newest tick any
// call issued. With a [MarkStore] it then waits for a save in flight and
// saves the exact high-water mark — that newest tick rather than the mark
// written ahead — so that a clean restart need not wait out the lead of
// the ahead mark (a crash leaves the ahead mark, which is safe); a run
// that issued nothing leaves the mark of nothing issued, and a run that
// saved no mark of its own (it issued nothing past the previous run's
// mark) leaves the store as it was. A run that started inside a previous
// run's reservation keeps it a reservation: the mark's Since stays what
// this run knew of. It releases a store New held. Closing twice returns
// nil the second time. It returns the store's error, or ctx's.
// Close frees the node id for another generator of this process (see
// [ErrNodeInUse]), also when it fails.
func (g *Generator) Close(ctx context.Context) error {
	if g.unmade() || g.closed.Swap(true) {
		return nil
	}
	defer g.freeNode()      // after the seal: no call of this generator issues then
	g.hmu.Lock()            // no later setHorizon raises it again: they see closed
	g.horizon.Store(bottom) // every call now takes the slow path, which fails
	g.hmu.Unlock()
	sealed := g.ring.seal()
	g.waits.wakeAll()
	if g.mark == nil {
		return nil
	}
	if err := g.SyncMark(ctx); err != nil && ctx.Err() != nil {
		return err // a failed save is replaced below
	}
	if !g.mark.saved.Load() {
		// This run saved no mark, so it issued nothing past the
		// previous run's, which the store still holds: leave it as it
		// is, byte for byte (a start that was refused changes nothing).
		return g.releaseMark()
	}
	// The exact mark: the newest tick issued — or, when this run issued
	// nothing past the previous run's mark, that mark, whose reservation
	// may hide IDs of that run. Since stays what this run knew of (its
	// clock, its newest ID, the previous run's Since), never the
	// reservation's end: a reservation stays a reservation.
	newest := max(g.newest.Load(), sealed)
	_, now := g.src.readTick()
	mark := g.markOf(max(newest, g.mark.reserved), g.since(now, newest))
	if err := g.mark.store.SaveMark(ctx, mark); err != nil {
		return errors.Join(notSaved(err), g.releaseMark())
	}
	return g.releaseMark()
}

// id composes the ID of a packed ring value, in the layout's field order
// (the shifts hold it: no branch). The shifts are below 63; masking them
// with 63 tells the compiler so, which spares it the checks Go's
// semantics for shifts of 64 or more would need.
func (g *Generator) id(v uint64) ID {
	return ID(g.ring.tick(v)<<(g.timeShift&63) | int64(v&g.ring.maxSeq)<<(g.seqShift&63) | g.nodePart)
}
