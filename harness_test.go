package ringflake_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// This file holds what the rollback scenarios and the fuzz targets share:
// the strategies under test with the promises each makes, and a checker
// that issues IDs on a simulated clock and asserts those promises on every
// single call.

// strategyCase is a strategy and the promises its doc comment makes.
type strategyCase struct {
	name      string        // Parse syntax
	monotonic bool          // IDs increase in the order they are issued
	maxStall  time.Duration // longest a rollback may stall one call
	maxLead   time.Duration // how far ahead of the clock an ID may be stamped
	ring      bool          // may also stamp IDs up to the newest tick issued before the call
	config    string        // what the generator parses when it differs from name (scaled)
}

// scaled returns sc with every duration, in its strategy and its
// promises, k times as long: the same strategy for ticks k times as long.
func (sc strategyCase) scaled(t testing.TB, k time.Duration) strategyCase {
	if k == 1 {
		return sc
	}
	parts := strings.Split(sc.name, ",")
	for i, p := range parts {
		if kind, d, ok := strings.Cut(p, ":"); ok {
			dur, err := time.ParseDuration(d)
			require.NoError(t, err)
			parts[i] = kind + ":" + (dur * k).String()
		}
	}
	sc.config = strings.Join(parts, ",")
	sc.maxStall *= k
	sc.maxLead *= k
	return sc
}

// strategyCases lists every built-in strategy and the chains users are
// expected to write.
var strategyCases = []strategyCase{
	{name: "error", monotonic: true},
	{name: "wait:5ms", monotonic: true, maxStall: 5 * time.Millisecond},
	{name: "logical:1s", monotonic: true, maxLead: time.Second},
	{name: "ring", ring: true},
	{name: "ring,wait:5ms,error", maxStall: 5 * time.Millisecond, ring: true},
	{name: "ring,logical:1s", maxLead: time.Second, ring: true},
	{name: "wait:5ms,logical:200ms", monotonic: true, maxStall: 5 * time.Millisecond, maxLead: 200 * time.Millisecond},
}

// clockMode says how the generator sees the simulated clock.
type clockMode struct {
	name string
	// wrap returns the clock handed to the generator.
	wrap func(*simclock.Clock) ringflake.Clock
	// lag is how long a wall-clock step may go unseen by the generator.
	lag time.Duration
}

// wallOnly hides simclock's Monotonic method, so the generator reads the
// wall clock on every call.
type wallOnly struct{ c *simclock.Clock }

func (w wallOnly) Now() time.Time                         { return w.c.Now() }
func (w wallOnly) After(d time.Duration) <-chan time.Time { return w.c.After(d) }

func clockModes(unit time.Duration) []clockMode {
	return []clockMode{
		{name: "monotonic", wrap: func(c *simclock.Clock) ringflake.Clock { return c }, lag: unit},
		{name: "wall-only", wrap: func(c *simclock.Clock) ringflake.Clock { return wallOnly{c} }},
	}
}

// checker drives one generator on one simulated clock, single-goroutine,
// and asserts the strategy's promises on every call.
type checker struct {
	t      testing.TB
	clk    *simclock.Clock
	gen    *ringflake.Generator
	layout ringflake.Layout
	sc     strategyCase
	mode   clockMode
	exact  bool          // the clock has no jitter, drift or freeze, so amounts and stalls can be checked to the nanosecond
	slack  time.Duration // read noise of the clock: the generator may see the wall this far ahead
	// ms is a millisecond of the scenarios, which were written for 1 ms
	// ticks: one tick of the layout, so that a scenario tells the same
	// story in ticks on every layout (the strategies' durations and the
	// high-water mark's lead are scaled alike).
	ms time.Duration

	floor      int64              // tick of the mark the generator started from: it must issue only after it
	since      int64              // tick of the mark's Since: between it and floor the previous run reserved time
	markAhead  time.Duration      // WithMarkAhead of restarted generators; 0: the default
	opts       []ringflake.Option // more options for every generator
	offset     int                // the largest first sequence number of a tick (WithSequenceOffset - 1)
	process    *process           // the running generator's access to the mark store
	seen       map[ringflake.ID]bool
	last       ringflake.ID
	newest     int64      // greatest tick issued so far, -1 before the first
	recent     []wallMark // wall ticks of the last `lag` of monotonic time
	errs       map[string]int
	outOfOrder int
	issued     int
	maxStall   time.Duration
	maxLead    time.Duration
}

type wallMark struct {
	mono time.Duration
	tick int64
}

func newChecker(t testing.TB, clk *simclock.Clock, sc strategyCase, mode clockMode, layout ringflake.Layout, node int64) *checker {
	t.Helper()
	c := &checker{t: t, clk: clk, layout: layout, sc: sc.scaled(t, layout.Spec().Unit/time.Millisecond), mode: mode, exact: true,
		ms: layout.Spec().Unit, seen: map[ringflake.ID]bool{}, newest: -1, floor: -1, since: -1, errs: map[string]int{}}
	c.gen = c.newGenerator(node)
	return c
}

// newGenerator makes a generator for the checker's strategy, clock mode and
// layout, with extra options.
func (c *checker) newGenerator(node int64, opts ...ringflake.Option) *ringflake.Generator {
	c.t.Helper()
	config := c.sc.name
	if c.sc.config != "" {
		config = c.sc.config
	}
	s, err := strategies.Parse(config)
	require.NoError(c.t, err)
	opts = append(append([]ringflake.Option{ringflake.WithClock(c.mode.wrap(c.clk)), ringflake.WithStrategy(s),
		ringflake.WithLayout(c.layout)}, c.opts...), opts...)
	gen, err := ringflake.New(node, opts...)
	require.NoError(c.t, err)
	return gen
}

// restart replaces the generator by a new process's: same node, same
// clock, the state only of store. With clean, the old one is closed first;
// otherwise it crashes: a save it still has in flight ends, and it saves
// nothing more. It returns the mark the new generator starts from.
func (c *checker) restart(store ringflake.MarkStore, clean bool) ringflake.Mark {
	c.t.Helper()
	switch {
	case clean:
		require.NoError(c.t, c.gen.Close(context.Background()))
	case c.process != nil:
		require.NoError(c.t, c.gen.SyncMark(context.Background())) // the save in flight lands...
		c.process.crash()                                          // ...and nothing after it
	}
	c.process = &process{store: store}
	mark, err := store.LoadMark(context.Background())
	require.NoError(c.t, err)
	ahead := ringflake.DefaultMarkAhead / time.Millisecond * c.ms
	if c.markAhead > 0 {
		ahead = c.markAhead
	}
	c.gen = c.newGenerator(c.gen.Node(), ringflake.WithMarkStore(c.process), ringflake.WithMarkAhead(ahead))
	c.floor, c.since = -1, -1
	if !mark.Limit.IsZero() {
		c.floor, c.since = c.layout.Tick(mark.Limit), c.layout.Tick(mark.Since)
	}
	// The new generator counts everything up to the mark as issued, and
	// knows of IDs up to the mark's Since: a clock behind Since is a
	// rollback, measured from there.
	c.newest = c.since
	return mark
}

// observe records the wall clock's tick now, for the lag allowance.
func (c *checker) observe() {
	m := c.clk.Monotonic()
	tick := c.layout.Tick(c.clk.Wall())
	if n := len(c.recent); n > 0 && c.recent[n-1].mono == m {
		c.recent[n-1].tick = max(c.recent[n-1].tick, tick)
	} else {
		c.recent = append(c.recent, wallMark{mono: m, tick: tick})
	}
	keep := 0
	for _, w := range c.recent {
		if w.mono >= m-c.mode.lag {
			c.recent[keep] = w
			keep++
		}
	}
	c.recent = c.recent[:keep]
}

// clockTick is the latest wall tick the generator may still believe in:
// the greatest tick the wall clock showed within the last `lag`.
func (c *checker) clockTick() int64 {
	c.observe()
	t := c.recent[0].tick
	for _, w := range c.recent {
		t = max(t, w.tick)
	}
	return t
}

// next issues one ID and checks every promise. It returns the error, if any.
//
// It does not call t.Helper: next runs for every ID of every scenario and
// fuzz input, and Helper's stack walk costs more than the call it checks.
func (c *checker) next() error {
	var id [1]ringflake.ID
	return c.call(id[:], func() (int, error) {
		var err error
		id[0], err = c.gen.NextContext(context.Background())
		if err != nil {
			return 0, err
		}
		return 1, nil
	})
}

// nextN issues k IDs with one NextN call and checks every promise, for the
// call and for each ID. It returns the error, if any.
func (c *checker) nextN(k int) error {
	ids := make([]ringflake.ID, k)
	return c.call(ids, func() (int, error) { return c.gen.NextN(context.Background(), ids) })
}

// call makes one call that fills ids — Next or NextN — and checks it: its
// stall, its error, and every ID it filled, which must be strictly
// increasing.
func (c *checker) call(ids []ringflake.ID, do func() (int, error)) error {
	allowed := c.clockTick()
	newestBefore := c.newest
	wallBefore := c.clk.Wall()
	start := c.clk.Monotonic()
	n, err := do()
	stall := c.clk.Monotonic() - start
	c.maxStall = max(c.maxStall, stall)

	// A rollback may stall a call by maxStall; waiting for the next tick
	// when a tick is used up adds up to one tick (plus the clock's read
	// noise) of wall-clock progress, for every strategy — and for a batch,
	// a tick for each tick's worth of IDs it needs. Measured on the wall
	// clock, the bound holds even while the wall stands still; on a clock
	// without freezes or drift it holds for true time as well.
	perTick := int(c.layout.MaxSequence()) + 1 - c.offset // the fewest IDs a tick offers
	ticks := time.Duration((len(ids)+perTick-1)/perTick) * c.layout.Spec().Unit
	limit := c.sc.maxStall + ticks + 2*c.slack
	if c.floor >= 0 {
		// A restart inside the previous run's reservation — the clock
		// past the mark's Since but not past the mark — waits it out,
		// whatever the strategy: that is not a rollback's stall.
		end := c.layout.TickTime(c.floor + 1)
		if r := end.Sub(later(wallBefore, c.layout.TickTime(c.since))); end.After(wallBefore) && r > 0 {
			limit += r
		}
	}
	if moved := c.clk.Wall().Sub(wallBefore); moved > limit {
		c.t.Fatalf("%s: the wall clock moved %v during one call, promise is at most %v", c.sc.name, moved, limit)
	}
	if c.exact && stall > limit {
		c.t.Fatalf("%s: call stalled %v, promise is at most %v", c.sc.name, stall, limit)
	}
	if err == nil && n != len(ids) {
		c.t.Fatalf("%s: filled %d of %d IDs without an error", c.sc.name, n, len(ids))
	}
	for i, id := range ids[:n] {
		if i > 0 && id <= ids[i-1] {
			c.t.Fatalf("%s: ID %d follows %d in one batch: not strictly increasing", c.sc.name, id, ids[i-1])
		}
		c.checkID(id, allowed, newestBefore)
	}
	if err != nil {
		var re *strategies.RollbackError
		switch {
		case errors.As(err, &re):
			c.errs["rollback"]++
			if re.Behind <= 0 {
				c.t.Fatalf("%s: rollback error with non-positive amount %v", c.sc.name, re.Behind)
			}
			if c.exact && stall == 0 && c.mode.lag == 0 && n == 0 {
				want := c.layout.TickTime(newestBefore).Sub(wallBefore)
				if re.Behind != want {
					c.t.Fatalf("%s: rollback amount %v, the clock reads %v behind the newest ID", c.sc.name, re.Behind, want)
				}
			}
		case errors.Is(err, ringflake.ErrClockFrozen):
			var fe *strategies.FrozenError
			c.errs["frozen"]++
			if !errors.As(err, &fe) || fe.Behind <= 0 || errors.Is(err, ringflake.ErrClockRollback) {
				c.t.Fatalf("%s: frozen-clock error %v: want a *FrozenError with a positive amount, not a rollback", c.sc.name, err)
			}
		case errors.Is(err, ringflake.ErrLayoutExpired):
			c.errs["expired"]++
		default:
			c.t.Fatalf("%s: unexpected error %v", c.sc.name, err)
		}
	}
	return err
}

// checkID checks one ID a call returned: unique, of the node, in order
// where promised, within the lead, after the previous run's mark. allowed
// is the clock's tick and newestBefore the newest tick when the call
// started.
func (c *checker) checkID(id ringflake.ID, allowed, newestBefore int64) {
	c.issued++
	if c.seen[id] {
		c.t.Fatalf("%s: ID %d issued twice", c.sc.name, id)
	}
	c.seen[id] = true
	if id.Node(c.layout) != c.gen.Node() {
		c.t.Fatalf("%s: ID %d carries node %d, want %d", c.sc.name, id, id.Node(c.layout), c.gen.Node())
	}
	if c.issued > 1 && id < c.last {
		c.outOfOrder++
		if c.sc.monotonic {
			c.t.Fatalf("%s: ID %d issued after %d: not monotonic", c.sc.name, id, c.last)
		}
	}
	c.last = id

	tick := id.Time(c.layout)
	idTick := c.layout.Tick(tick)
	clockAfter := max(allowed, c.clockTick())
	// The generator may read the wall up to slack ahead (jitter); the tick
	// of such a reading is at most slack's worth of ticks further on.
	unit := c.layout.Spec().Unit
	lead := time.Duration(idTick-clockAfter)*unit - (c.slack+unit-1)/unit*unit
	c.maxLead = max(c.maxLead, lead)
	if lead > c.sc.maxLead && !(c.sc.ring && idTick <= newestBefore) {
		c.t.Fatalf("%s: ID tick %d leads the clock's %d by %v, beyond the promised %v (newest tick before the call: %d)",
			c.sc.name, idTick, clockAfter, lead, c.sc.maxLead, newestBefore)
	}
	if c.floor >= 0 && idTick <= c.floor {
		c.t.Fatalf("%s: ID tick %d is at or below the mark %d of the previous run", c.sc.name, idTick, c.floor)
	}
	c.newest = max(c.newest, idTick)
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// issue makes n calls.
func (c *checker) issue(n int) {
	for range n {
		_ = c.next()
	}
}

// step moves the wall clock by d (negative: back) without time passing.
func (c *checker) step(d time.Duration) {
	c.observe()
	c.clk.Step(d)
	c.observe()
}

// run issues perTick IDs and then lets one tick pass, ticks times.
func (c *checker) run(ticks, perTick int) {
	for range ticks {
		c.issue(perTick)
		c.clk.Add(c.layout.Spec().Unit)
	}
}

// perTick returns how many IDs one tick of the layout holds.
func (c *checker) perTick() int { return int(c.layout.MaxSequence()) + 1 }

// errorCount returns how many calls failed.
func (c *checker) errorCount() int {
	n := 0
	for _, v := range c.errs {
		n += v
	}
	return n
}

// process is one run's access to a MarkStore: crash ends it as a crash
// would, waiting for a save in flight and failing every later one, so that
// a dead run's background save cannot land after the next run started.
type process struct {
	store   ringflake.MarkStore
	mu      sync.RWMutex
	crashed bool
}

func (p *process) LoadMark(ctx context.Context) (ringflake.Mark, error) { return p.store.LoadMark(ctx) }

func (p *process) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.crashed {
		return errCrashed
	}
	return p.store.SaveMark(ctx, mark)
}

func (p *process) crash() {
	p.mu.Lock() // waits for saves in flight
	defer p.mu.Unlock()
	p.crashed = true
}

var errCrashed = errors.New("the process crashed")

// The harness's promises are written by hand, from the strategies' doc
// comments, so that they check the generator independently of the code
// that states them; they must still say what strategies.PromiseOf says,
// or the two oracles — these tests and the replays, which use PromiseOf —
// would drift apart.
func TestStrategyCasesMatchPromiseOf(t *testing.T) {
	for _, sc := range strategyCases {
		s, err := strategies.Parse(sc.name)
		require.NoError(t, err)
		p, ok := strategies.PromiseOf(s)
		require.True(t, ok, "%s states no promise", sc.name)
		want := strategies.Promise{Monotonic: sc.monotonic, MaxStall: sc.maxStall, MaxLead: sc.maxLead, Reuses: sc.ring}
		require.Equal(t, want, p, "%s: the harness's promise and strategies.PromiseOf differ", sc.name)
	}
}
