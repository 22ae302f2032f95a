package ringflake

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// A Generator issues IDs for one node. It is safe for concurrent use by
// multiple goroutines; calls never allocate on the way to an ID.
//
// Every ID comes from the generator's ring (256 slots, one per tick
// residue) through an atomic compare-and-swap that only moves a slot
// forward, so a generator never issues the same ID twice, whatever its
// clock does. Within that guarantee its strategy decides what happens when
// the clock reads earlier than the newest ID issued: see package
// strategies.
//
// When no rollback is under way, IDs increase: an ID returned before
// another call starts is smaller than that call's ID. When a tick's
// sequence is used up, the call waits on the clock for the next tick (the
// logical strategy borrows the next tick instead); it never spins. While
// calls from several goroutines collide on the ring, the generator
// serialises them with a mutex, which on multi-core machines issues more
// IDs per second than letting them fight over one cache line; it goes back
// to lock-free calls after a tick without collisions.
//
// With a [MonotonicClock] (the default system clock is one), the
// generator reads the cheap monotonic clock on every call and the wall
// clock once per tick: a step of the wall clock is seen at the latest by
// the first call one tick of monotonic time after it, and until then IDs
// carry the time the wall clock read before the step.
type Generator struct {
	ring      ring
	newest    atomic.Int64 // greatest tick issued, -1 before the first ID
	horizon   atomic.Int64 // greatest tick the fast path may issue at (horizon.go)
	lane      lane         // the first strategy's plan for the current situation
	src       timeSource
	nodePart  int64 // node in its place: node << the layout's nodeShift
	timeShift uint8 // the layout's field order, for id: see Layout
	seqShift  uint8
	last      int64 // the layout's last tick
	closed    atomic.Bool

	// While calls collide on the ring (ring.contended), they take mu
	// around the fast path: see lock. The two fields below belong to
	// mu's holder.
	mu         sync.Mutex
	collided   bool  // the holder had to wait for mu
	collidedAt int64 // the tick at which a holder last had to wait
	hooks      []func(RollbackEvent)
	stats      counters
	lease      Lease   // nil without WithLease
	mark       *marker // nil without a MarkStore
	steps      []strategies.Strategy
	strategy   strategies.Strategy
	layout     Layout
	node       int64
}

// New returns a generator issuing IDs for node, a number in
// [0, layout.MaxNode()] that no other generator sharing the layout uses at
// the same time (see [Layout.NodeID] for split datacenter/worker layouts).
//
// Defaults: [TwitterLayout], [strategies.Default] and the system clock;
// no high-water mark and no lease. With a [MarkStore] ([WithMarkStore], or
// a [Lease] that is one), New loads the previous run's mark and saves this
// run's first mark before it returns.
//
// Errors:
//   - [ErrInvalidOption]: a nil clock, store or lease, a lease for another
//     node, a [MarkStore] given with a lease that keeps the mark itself, a
//     mark interval shorter than two ticks.
//   - [ErrInvalidLayout]: the zero Layout.
//   - [ErrNodeOutOfRange]: node does not fit the layout.
//   - [ErrInvalidStrategy]: the strategy does not fit the layout.
//   - [ErrBeforeEpoch]: the clock reads before the layout's epoch.
//   - [ErrLayoutExpired]: the clock (or a loaded mark) reads past the
//     layout's last tick.
//   - [ErrMarkCorrupt], or the store's own error: the mark cannot be
//     loaded or saved.
//   - [ErrBelowExisting]: with [WithExistingID], the first ID could sort
//     at or below the existing ID.
func New(node int64, opts ...Option) (*Generator, error) {
	cfg := config{layout: TwitterLayout(), strategy: strategies.Default(), ahead: DefaultMarkAhead}
	for _, o := range opts {
		if o == nil {
			invalidOption(&cfg, "nil Option")
			continue
		}
		o.apply(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	l := cfg.layout
	if l.IsZero() {
		return nil, &LayoutError{Field: "Layout", Reason: "zero value; use a preset, NewLayout or ParseLayout"}
	}
	if err := l.checkNode(node); err != nil {
		return nil, err
	}
	if err := strategies.Validate(cfg.strategy, l.unit); err != nil {
		return nil, err
	}
	if cfg.clock == nil {
		cfg.clock = systemClock{start: time.Now()}
	}
	now := cfg.clock.Now()
	switch tick := l.Tick(now); {
	case tick < 0:
		return nil, &timeError{err: ErrBeforeEpoch, at: now, edge: l.epoch}
	case tick > l.MaxTick():
		return nil, &timeError{err: ErrLayoutExpired, at: now, edge: l.Last()}
	}
	if cfg.lease != nil {
		if cfg.lease.Node() != node {
			return nil, fmt.Errorf("%w: WithLease: the lease holds node %d, not %d", ErrInvalidOption, cfg.lease.Node(), node)
		}
		if store, ok := cfg.lease.(MarkStore); ok {
			if cfg.marks != nil {
				return nil, fmt.Errorf("%w: WithMarkStore with a lease that keeps the mark itself: the next holder of node %d would not see this generator's mark", ErrInvalidOption, node)
			}
			cfg.marks = store
			if a, ok := store.(interface{ MarkAhead() time.Duration }); ok && !cfg.aheadSet {
				cfg.ahead = a.MarkAhead()
			}
		}
	}
	g := &Generator{
		nodePart:  node << l.nodeShift,
		timeShift: l.timeShift,
		seqShift:  l.seqShift,
		last:      l.MaxTick(),
		lease:     cfg.lease,
		hooks:     cfg.hooks,
		steps:     strategies.Flatten(cfg.strategy),
		strategy:  cfg.strategy,
		layout:    l,
		node:      node,
	}
	g.ring.seqBits, g.ring.maxSeq = l.seqBits, uint64(l.MaxSequence())
	g.ring.cappedAt.Store(math.MinInt64)
	g.newest.Store(-1)
	g.src.init(cfg.clock, now, l.epoch, l.unit, &g.stats, &g.newest)
	if cfg.marks != nil {
		ahead := int64(cfg.ahead / l.unit)
		if cfg.ahead%l.unit != 0 {
			ahead++
		}
		if ahead < 2 {
			return nil, fmt.Errorf("%w: WithMarkAhead(%v): want at least two ticks of %v", ErrInvalidOption, cfg.ahead, l.unit)
		}
		g.mark = &marker{store: cfg.marks, aheadTicks: ahead}
		if err := g.loadMark(context.Background(), l.Tick(now)); err != nil {
			return nil, err
		}
	}
	if err := g.checkExisting(&cfg, now); err != nil {
		return nil, err
	}
	g.setHorizon()
	return g, nil
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }

// Node returns the generator's node id.
func (g *Generator) Node() int64 { return g.node }

// Strategy returns the generator's strategy.
func (g *Generator) Strategy() strategies.Strategy { return g.strategy }

// Next returns a new ID. It is NextContext with [context.Background]: a
// wait the strategy asks for cannot be interrupted.
func (g *Generator) Next() (ID, error) { return g.NextContext(context.Background()) }

// NextContext returns a new ID, or an error:
//   - one matching [ErrClockRollback] (a [*RollbackError] telling how far
//     behind) when the clock reads behind the newest ID and the strategy
//     does not keep the generator available;
//   - any error a strategy's plan returns;
//   - [ErrLayoutExpired] once the clock reads past the layout's last tick;
//   - [ErrBeforeEpoch] when the clock reads before the epoch and no ID was
//     issued yet;
//   - [ErrLeaseLost] while the [Lease] does not hold the node id;
//   - [ErrClosed] after [Generator.Close];
//   - the [MarkStore]'s error when a call needs a later high-water mark
//     and it cannot be saved;
//   - ctx.Err() when ctx ends while the call waits (with the default
//     system clock, within about a millisecond of ctx's end: short waits
//     sleep in the kernel and look at ctx every millisecond).
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	var (
		id             ID
		ok             bool
		e, now, newest int64
	)
	if g.ring.contended.Load() {
		id, ok, e, now, newest = g.fastSerial()
	} else {
		id, ok, e, now, newest = g.fast()
	}
	if ok {
		return id, nil
	}
	return g.slow(ctx, e, now, newest)
}

// fastSerial is fast under the mutex of serial mode (see lock). The mutex
// is released by a deferred call, so that a panic in the clock or the
// lease, recovered by the caller, cannot leave it locked.
func (g *Generator) fastSerial() (id ID, ok bool, e, now, newest int64) {
	g.lock()
	defer func() { g.unlock(now) }()
	return g.fast()
}

// fast issues an ID without asking the strategy: at the clock's tick when
// it has room, or from the range the first strategy chose for this same
// situation. When it cannot (ok is false) it returns the readings the slow
// path starts from.
func (g *Generator) fast() (id ID, ok bool, e, now, newest int64) {
	// newest first: every tick in it was then stamped from an earlier
	// reading (or borrowed), so a call delayed between reading the clock
	// and loading newest cannot mistake another call's later tick for a
	// rollback.
	newest = g.newest.Load()
	e, now = g.src.readTick()
	if h := g.horizon.Load(); now <= h && now >= 0 && (g.lease == nil || g.lease.Held()) {
		if now >= newest {
			if v, ok := g.ring.takeAt(now); ok {
				if now > newest {
					g.raise(now)
				}
				return g.id(v), true, e, now, newest
			}
		}
		// A rollback or borrowed time under way: the range the first
		// strategy chose in this same situation, if any, still holds.
		if from, limit, ok := g.lane.get(now, newest); ok {
			limit = min(limit, h)
			if from == newest && from <= limit {
				// Counting on at the newest tick (the logical strategy
				// borrowing): while it has room, nothing moves and
				// nothing is counted.
				if v, ok := g.ring.takeAt(from); ok {
					return g.id(v), true, e, now, newest
				}
			}
			if v, ok := g.ring.take(from, limit, newest); ok {
				g.issuedBy(g.ring.tick(v), now, newest)
				return g.id(v), true, e, now, newest
			}
		}
	}
	return 0, false, e, now, newest
}

// lock serialises the fast path while calls collide on the ring.
//
// Every ID takes one compare-and-swap on the slot of its tick, so calls
// from goroutines on different CPUs move that slot's cache line between
// them on every ID, and a failed swap moves it again: on our 2-core VMs a
// contended atomic costs about 57 ns, more than a whole uncontended call.
// So once a swap fails (ring.contended), calls take a mutex around the
// fast path, the clock read included: its holder keeps the line while the
// others wait, as a mutex-based generator's do, and IDs come out at about
// the rate of one uncontended CPU instead of at the rate of cache-line
// transfers. The slow path — waits above all — runs outside the mutex.
// Serial mode ends at the first call that gets the mutex without waiting
// once no call has waited for it in the last two ticks, and at a call that
// waits for the next tick: while the layout's cap bounds the rate,
// serialising gains nothing and its hand-offs cost CPU.
// Uniqueness and order never depend on the mutex: every ID still comes
// from the ring's compare-and-swap.
func (g *Generator) lock() {
	if !g.mu.TryLock() {
		g.mu.Lock()
		g.collided = true
	}
}

// unlock releases the mutex taken by lock, for a call whose clock read tick
// now, and ends serial mode after a tick in which no call had to wait.
func (g *Generator) unlock(now int64) {
	switch {
	case g.collided:
		g.collided, g.collidedAt = false, now
	case now < g.collidedAt:
		g.collidedAt = now // the clock stepped back: count the tick from here
	case now > g.collidedAt+1:
		g.ring.contended.Store(false)
	}
	g.mu.Unlock()
}

// lane remembers the range of the last Issue plan of the generator's first
// strategy together with the situation it was made in — the clock's tick
// and the newest tick issued — so that later calls meeting the same
// situation take from that range without asking the strategy again: during
// a rollback (the ring) or while borrowing time (logical), only the first
// call of each situation takes the slow path. A sequence lock keeps the
// words consistent: seq is odd while they are written, and zero before the
// first plan.
type lane struct {
	seq         atomic.Uint64
	now, newest atomic.Int64
	from, limit atomic.Int64
}

// get returns the range remembered for the situation (now, newest), if any.
func (l *lane) get(now, newest int64) (from, limit int64, ok bool) {
	s := l.seq.Load()
	if s&1 != 0 || s == 0 || l.now.Load() != now || l.newest.Load() != newest {
		return 0, 0, false
	}
	from, limit = l.from.Load(), l.limit.Load()
	return from, limit, l.seq.Load() == s
}

// set remembers the range [from, limit] for the situation (now, newest),
// unless another call is setting the lane at the same time.
func (l *lane) set(now, newest, from, limit int64) {
	s := l.seq.Load()
	if s&1 != 0 || !l.seq.CompareAndSwap(s, s+1) {
		return
	}
	l.now.Store(now)
	l.newest.Store(newest)
	l.from.Store(from)
	l.limit.Store(limit)
	l.seq.Store(s + 2)
}

// call records what a call on the slow path did, for the rollback event
// it may report.
type call struct {
	waited time.Duration // strategy sleeps
	step   int           // index of the step whose plan was carried out last, or -1
	report bool          // this call reports a rollback event
	behind time.Duration
	at     int64 // clock reading when the rollback was met
}

// slow handles everything but a free sequence number at the clock's tick:
// a rollback, a used-up tick, an expired layout, a high-water mark to save,
// a lost lease. It keeps the counters of Stats.
func (g *Generator) slow(ctx context.Context, e, now, newest int64) (ID, error) {
	c := call{step: -1}
	id, err := g.resolve(ctx, &c, e, now, newest)
	if err != nil {
		g.stats.errors[kindOf(err)].Add(1)
	}
	if c.report {
		g.emit(&c, err)
	}
	return id, err
}

func (g *Generator) resolve(ctx context.Context, c *call, e, now, newest int64) (ID, error) {
	exact := g.src.mono == nil // whether e is a fresh wall reading, not an estimate
	for {
		switch {
		case g.closed.Load():
			return 0, ErrClosed
		case g.lease != nil && !g.lease.Held():
			return 0, fmt.Errorf("%w: node %d", ErrLeaseLost, g.node)
		case now > g.last:
			return 0, &timeError{err: ErrLayoutExpired, at: g.src.epoch.Add(time.Duration(e)), edge: g.layout.Last()}
		case now < 0 && newest < 0:
			return 0, &timeError{err: ErrBeforeEpoch, at: g.src.epoch.Add(time.Duration(e)), edge: g.src.epoch}
		}
		s := strategies.Situation{Elapsed: time.Duration(e), Unit: g.layout.unit,
			Newest: newest, Last: g.last, Waited: c.waited}
		if now >= newest {
			if waited, err := g.prepare(ctx, now); err != nil {
				return 0, err
			} else if waited {
				// Time passed waiting for the mark: look again, lease
				// and clock included.
				newest = g.newest.Load()
				e, now = g.src.readTick()
				continue
			}
			if v, ok := g.ring.take(now, now, -1); ok {
				g.raise(now)
				return g.id(v), nil
			}
			s.Full = true
		} else if !c.report && len(g.hooks) > 0 {
			g.claimReport(c, s, e)
		}
		var (
			sleep time.Duration
			err   error
		)
		for i, step := range g.steps {
			p := step.Decide(s)
			if !p.IsPass() {
				c.step = i
			}
			if from, limit, ok := p.Range(); ok {
				v, ok := g.ring.take(from, min(limit, g.hardTick()), newest)
				for !ok && g.mark != nil && min(limit, g.last) > g.hardTick() {
					// The saved mark is in the way: wait for a later one.
					if _, err := g.prepare(ctx, g.hardTick()+1); err != nil {
						return 0, err
					}
					if g.lease != nil && !g.lease.Held() {
						return 0, fmt.Errorf("%w: node %d", ErrLeaseLost, g.node)
					}
					v, ok = g.ring.take(from, min(limit, g.hardTick()), newest)
				}
				if ok {
					if i == 0 && c.waited == 0 {
						g.lane.set(now, newest, from, limit)
					}
					g.issuedBy(g.ring.tick(v), now, newest)
					return g.id(v), nil
				}
			}
			if err, sleep = p.Err(), p.SleepFor(); err != nil || sleep > 0 {
				break
			}
		}
		asked := sleep > 0 // a strategy's sleep, which counts towards Waited
		if err == nil && sleep == 0 {
			if s.IsBehind() {
				err = &RollbackError{Behind: s.Behind()}
			} else {
				sleep = s.Until(now + 1) // the tick is used up: wait for the next
				g.ring.capped(now)
			}
		}
		if err != nil {
			return 0, err
		}
		if !exact {
			// Never sleep on an estimate: a wall-clock step the estimate
			// has not seen yet would make the wait too long or too short.
			// Read the wall clock and decide again.
			exact = true
			newest = g.newest.Load()
			e, now = g.src.resyncTick()
			continue
		}
		if err := g.sleep(ctx, sleep); err != nil {
			return 0, err
		}
		if asked {
			c.waited += sleep
			g.stats.waits.Add(1)
			g.stats.waited.Add(int64(sleep))
		} else {
			g.stats.tickWaits.Add(1)
			g.stats.tickWaited.Add(int64(sleep))
		}
		newest = g.newest.Load()
		e, now = g.src.readTick()
		exact = g.src.mono == nil
	}
}

// issuedBy records an ID a strategy's plan issued at tick, when the clock
// read now and the newest tick was newest: it raises the newest tick, and
// counts borrowed time once per tick, in the call that moves the newest
// tick. A reuse (tick < newest) moves nothing; the ring counted it.
func (g *Generator) issuedBy(tick, now, newest int64) {
	if tick < newest {
		return
	}
	if prev, moved := g.raiseFrom(tick); moved && tick > now {
		g.stats.borrowed.Add(tick - max(prev, now))
		storeMax(&g.stats.maxLead, tick-now)
	}
}

// claimReport makes c the call that reports the latest rollback seen, if
// no call reported it yet.
func (g *Generator) claimReport(c *call, s strategies.Situation, e int64) {
	seen := g.stats.rollbacks.Load()
	for {
		done := g.stats.reported.Load()
		if done >= seen {
			return
		}
		if g.stats.reported.CompareAndSwap(done, seen) {
			c.report, c.behind, c.at = true, s.Behind(), e
			return
		}
	}
}

// emit hands the rollback event of c to the hooks.
func (g *Generator) emit(c *call, err error) {
	ev := RollbackEvent{At: g.src.epoch.Add(time.Duration(c.at)), Behind: c.behind,
		Outcome: Issued, Waited: c.waited, Err: err}
	if c.step >= 0 {
		ev.Strategy = g.steps[c.step].String()
	}
	if err != nil {
		ev.Outcome = Failed
	}
	for _, h := range g.hooks {
		h(ev)
	}
}

// Close ends the generator: later calls to Next fail with [ErrClosed].
// With a [MarkStore] it first waits for a save in flight and then saves the
// exact high-water mark — the newest tick issued rather than the mark
// written ahead — so that a clean restart need not wait out the lead of the
// ahead mark (a crash still leaves the ahead mark, which is safe). Close
// must not run concurrently with Next: call it once the last Next has
// returned. Closing twice returns nil the second time. It returns the
// store's error, or ctx's.
func (g *Generator) Close(ctx context.Context) error {
	if g.closed.Swap(true) {
		return nil
	}
	if g.mark == nil {
		g.horizon.Store(-1 << 63) // every call now takes the slow path, which fails
		return nil
	}
	g.mark.mu.Lock() // a save ending now must not raise the horizon again
	g.horizon.Store(-1 << 63)
	g.mark.mu.Unlock()
	if err := g.SyncMark(ctx); err != nil && ctx.Err() != nil {
		return err // a failed save is replaced below
	}
	newest := g.newest.Load()
	if newest < 0 || newest >= g.mark.hard.Load() {
		return nil
	}
	if err := g.mark.store.SaveMark(ctx, g.layout.TickTime(newest)); err != nil {
		return fmt.Errorf("ringflake: saving the high-water mark: %w", err)
	}
	return nil
}

// sleep waits d on the generator's clock, or until ctx is done.
func (g *Generator) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.src.sys && d <= preciseWait {
		return sleepPrecise(ctx, d)
	}
	return sleepTimer(ctx, g.src.clock.After(d))
}

// raise makes tick the newest tick issued unless a later one is.
func (g *Generator) raise(tick int64) { g.raiseFrom(tick) }

// raiseFrom is raise, reporting whether this call moved the newest tick,
// and from where.
func (g *Generator) raiseFrom(tick int64) (prev int64, moved bool) {
	for {
		n := g.newest.Load()
		if tick <= n {
			return n, false
		}
		if g.newest.CompareAndSwap(n, tick) {
			return n, true
		}
	}
}

// id composes the ID of a packed ring value, in the layout's field order
// (the shifts hold it: no branch). The shifts are below 63; masking them
// with 63 tells the compiler so, which spares it the checks Go's
// semantics for shifts of 64 or more would need.
func (g *Generator) id(v uint64) ID {
	return ID(g.ring.tick(v)<<(g.timeShift&63) | int64(v&g.ring.maxSeq)<<(g.seqShift&63) | g.nodePart)
}
