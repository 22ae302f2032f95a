package ringflake_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// The combination harness: each case, drawn from a seed, combines a
// layout (under any of its spellings), a strategy or chain, options, a
// slow but correct mark store that sometimes fails a save, a schedule of
// clock steps and freezes, Observe calls, cancelled calls, clean restarts
// and crashes — and checks, across every run of the case, the promises
// where those features meet: no ID twice; no save of a run below an
// earlier one (except Close's exact mark, the run's last); no ID after
// the saved mark nor at or below the previous run's; IDs of calls that
// start after Observe(x) returned above x; in order for a monotonic
// strategy; ErrClockRollback only after the clock stepped back; no panic;
// no hang.

var (
	comboSeeds      = flag.Int("combo.seeds", 2000, "seeds of TestComboDeterministic")
	comboConcurrent = flag.Int("combo.concurrent", 40, "seeds of TestComboConcurrent")
	comboFirst      = flag.Uint64("combo.first", 1, "first seed of the combination tests")
	comboKeepGoing  = flag.Int("combo.keepgoing", 0, "run each seed as a subtest and stop after this many failing seeds (0: stop at the first)")
	comboTrace      = flag.Bool("combo.trace", false, "log every op of the combination tests (use with -combo.first and -combo.seeds=1)")
)

// comboLayouts are the layouts a case draws from, each under spellings
// that all lay out IDs alike (and so share marks).
var comboLayouts = [][]string{
	{"twitter", "twitter,node=10", "dc=5,worker=5", "epoch=2010-11-04T01:42:54.657Z,time=41,node=10,seq=12"},
	{"sonyflake", "sonyflake,order=time,seq,node"},
	{"twitter,node=18,seq=4", "node=18,seq=4", "dc=9,worker=9,seq=4"},
	{"sonyflake,node=20,seq=4", "sonyflake,seq=4,node=20"},
	{"twitter,node=16,seq=6", "time=41,node=16,seq=6"},
	{"epoch=2020-01-01T00:00:00Z,time=41,node=2,seq=20"}, // a wide one: a million IDs a tick
	{"unit=5ms,time=39,node=20,seq=4", "time=39,unit=5ms,seq=4,node=20"},
}

// comboStrategies are the strategies and chains a case draws from (Parse
// syntax, for 1 ms ticks; scaled to the layout's unit).
var comboStrategies = []string{
	"error", "wait:5ms", "wait:2ms", "logical:1s", "logical:20ms", "ring",
	"ring,wait:5ms,error", "ring,logical:1s", "ring,logical:5ms", "wait:5ms,logical:200ms", "ring,error",
}

var errSaveFailed = errors.New("combo: the mark store failed a save")

// comboStore is an orderedStore (saves applied in the order they are
// made) that fails a save now and then, as a disk or a network does.
type comboStore struct {
	*orderedStore
	mu       sync.Mutex
	rng      *rand.Rand
	failRate float64
	trace    func(format string, args ...any)
}

func (s *comboStore) SaveMark(_ context.Context, m ringflake.Mark) error {
	o := s.orderedStore
	o.mu.Lock()
	gate, started := o.gate, o.started
	o.mu.Unlock()
	if gate != nil { // held, as orderedStore holds a save, until the driver lets it through
		started <- struct{}{}
		<-gate
	}
	s.mu.Lock()
	fail := s.rng.Float64() < s.failRate
	s.mu.Unlock()
	if s.trace != nil {
		s.trace("SaveMark(limit %v since %v) fails %v", m.Limit.Sub(start), m.Since.Sub(start), fail)
	}
	if fail {
		return errSaveFailed
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mark = m
	o.runs[len(o.runs)-1] = append(o.runs[len(o.runs)-1], m)
	return nil
}

func (s *comboStore) current() ringflake.Mark {
	s.orderedStore.mu.Lock()
	defer s.orderedStore.mu.Unlock()
	return s.orderedStore.mark
}

// budgetClock counts the generator's clock reads and ends the calling
// goroutine, failing the test, when one case reads it more often than a
// case can without going round in circles: a hang, caught without a
// real-time timeout.
type budgetClock struct {
	clk    *simclock.Clock
	t      testing.TB
	seed   uint64
	reads  atomic.Int64
	budget int64
	// sleeping is set by After: the ctx.Done() the generator reads next
	// is a sleep's (wait.go), which the simulated clock ends at once, not
	// a wait for a save.
	sleeping atomic.Bool
}

func (b *budgetClock) count() {
	if b.reads.Add(1) == b.budget {
		b.t.Errorf("seed %d: more than %d clock reads: the generator goes round in circles", b.seed, b.budget)
		runtime.Goexit() // on the test's goroutine too: the test fails with the seed above
	}
}

func (b *budgetClock) Now() time.Time { b.count(); return b.clk.Now() }
func (b *budgetClock) After(d time.Duration) <-chan time.Time {
	b.count()
	b.sleeping.Store(true)
	return b.clk.After(d)
}

type monoBudgetClock struct{ *budgetClock }

func (b monoBudgetClock) Monotonic() time.Duration { b.count(); return b.clk.Monotonic() }

// comboCase is one case's draw.
type comboCase struct {
	seed       uint64
	spellings  []string
	layout     ringflake.Layout
	strategy   string // scaled to the layout's unit
	monotonic  bool   // the strategy promises increasing IDs
	wallOnly   bool   // the generator reads only the wall clock
	markAhead  time.Duration
	seqOffset  int
	maxForward time.Duration // < 0: the default
	failRate   float64
	runs       int
	ops        int // per run
}

func (cc comboCase) String() string {
	return fmt.Sprintf("seed %d: layout %q, strategy %q, wall-only %v, mark ahead %v, offset %d, max forward %v, fail rate %.2f, %d runs of %d ops",
		cc.seed, cc.spellings[0], cc.strategy, cc.wallOnly, cc.markAhead, cc.seqOffset, cc.maxForward, cc.failRate, cc.runs, cc.ops)
}

// drawCombo draws a case from seed.
func drawCombo(t testing.TB, seed uint64) comboCase {
	rng := rand.New(rand.NewPCG(seed, 0x636f6d626f))
	cc := comboCase{seed: seed, spellings: comboLayouts[rng.IntN(len(comboLayouts))]}
	var err error
	cc.layout, err = ringflake.ParseLayout(cc.spellings[0])
	require.NoError(t, err)
	// Only the spellings Layout.Equal takes for one layout: a mark of one
	// must be a mark of the others.
	var same []string
	for _, s := range cc.spellings {
		l, err := ringflake.ParseLayout(s)
		require.NoError(t, err)
		if l.Equal(cc.layout) {
			same = append(same, s)
		}
	}
	cc.spellings = same
	unit := cc.layout.Spec().Unit
	sname := comboStrategies[rng.IntN(len(comboStrategies))]
	sc := strategyCase{name: sname}.scaled(t, unit/time.Millisecond)
	cc.strategy = sc.name
	if sc.config != "" {
		cc.strategy = sc.config
	}
	s, err := strategies.Parse(cc.strategy)
	require.NoError(t, err)
	p, ok := strategies.PromiseOf(s)
	require.True(t, ok)
	cc.monotonic = p.Monotonic
	cc.wallOnly = rng.IntN(3) == 0
	cc.markAhead = []time.Duration{0, 2 * unit, 3 * unit, 8 * unit, 20 * unit, time.Second}[rng.IntN(6)]
	if perTick := cc.layout.MaxSequence() + 1; perTick >= 16 && rng.IntN(3) == 0 {
		cc.seqOffset = 1 + rng.IntN(int(min(perTick/2, 100)))
	}
	cc.maxForward = []time.Duration{-1, 0, 5 * unit, 50 * unit, time.Second}[rng.IntN(5)]
	cc.failRate = []float64{0, 0, 0.05, 0.3}[rng.IntN(4)]
	cc.runs = 1 + rng.IntN(4)
	cc.ops = 20 + rng.IntN(60)
	return cc
}

// comboRun is what a case knows while it runs: the checks' state.
type comboRun struct {
	t      testing.TB
	cc     comboCase
	clk    *simclock.Clock
	bc     *budgetClock
	store  *comboStore
	gen    *ringflake.Generator
	layout ringflake.Layout // the spelling the running generator was made with

	mu          sync.Mutex
	seen        map[ringflake.ID]int // ID -> run that issued it
	run         int
	floor       int64 // tick of the mark the run loaded: its IDs are after it (-1: none)
	last        ringflake.ID
	issuedInRun int
	steppedBack atomic.Bool  // the wall clock stepped back at some point of the case
	froze       atomic.Bool  // the wall clock stood still at some point of the case
	stepInRun   atomic.Bool  // the wall clock stepped back during the running generator's run
	startBehind bool         // the run started with the clock behind the loaded mark's Since
	observed    atomic.Int64 // the greatest ID an Observe of this run returned for (-1: none)
	issued      int
	errs        map[string]int
	workers     bool // workers call concurrently: the order check is off
	offMain     bool // calls run off the test's goroutine: a failure ends theirs
	blocked     chan struct{}
	cancelledOp bool     // the deterministic op in progress has a cancelled context
	held        bool     // a save waits at the gate
	proc        *process // the running generator's access to the store
}

func (r *comboRun) failf(format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("%v\nrun %d: %s", r.cc, r.run, fmt.Sprintf(format, args...))
	if r.workers || r.offMain {
		runtime.Goexit() // a worker's or an op's goroutine; the driver sees it finish
	}
	r.t.FailNow()
}

// trace logs an op with -combo.trace.
func (r *comboRun) trace(format string, args ...any) {
	if *comboTrace {
		r.t.Logf("[wall %v mono %v] %s", r.clk.Wall().Sub(start), r.clk.Monotonic(), fmt.Sprintf(format, args...))
	}
}

// newRun starts run r.run on what the store holds, with the spelling
// given; a start whose first save fails is tried again.
func (r *comboRun) newRun(spelling string) {
	layout, err := ringflake.ParseLayout(spelling)
	require.NoError(r.t, err)
	s, err := strategies.Parse(r.cc.strategy)
	require.NoError(r.t, err)
	var clk ringflake.Clock = r.bc
	if !r.cc.wallOnly {
		clk = monoBudgetClock{r.bc}
	}
	opts := []ringflake.Option{ringflake.WithClock(clk), ringflake.WithStrategy(s), ringflake.WithLayout(layout),
		ringflake.WithMarkStore(nil)}
	if r.cc.markAhead > 0 {
		opts = append(opts, ringflake.WithMarkAhead(r.cc.markAhead))
	}
	if r.cc.seqOffset > 0 {
		opts = append(opts, ringflake.WithSequenceOffset(r.cc.seqOffset))
	}
	if r.cc.maxForward >= 0 {
		opts = append(opts, ringflake.WithMaxForward(r.cc.maxForward))
	}
	for try := 0; ; try++ {
		mark := r.store.current()
		r.proc = &process{store: r.store}
		opts[3] = ringflake.WithMarkStore(r.proc)
		g, err := ringflake.New(1, opts...)
		if errors.Is(err, ringflake.ErrMarkNotSaved) && errors.Is(err, errSaveFailed) && try < 50 {
			r.clk.Add(layout.Spec().Unit)
			continue
		}
		if err != nil {
			r.failf("New: %v", err)
		}
		r.trace("New(%q) on mark limit %v since %v", spelling, mark.Limit.Sub(start), mark.Since.Sub(start))
		r.gen, r.layout = g, layout
		r.floor = -1
		if !mark.Limit.IsZero() {
			r.floor = layout.Tick(mark.Limit)
		}
		r.observed.Store(-1)
		r.stepInRun.Store(false)
		r.startBehind = r.clk.Wall().Before(mark.Since)
		r.issuedInRun = 0
		return
	}
}

// endRun ends the running generator, cleanly or by a crash, and checks
// the run's saves.
func (r *comboRun) endRun(clean bool) {
	r.trace("end of run: clean %v", clean)
	if clean {
		if err := r.gen.Close(context.Background()); err != nil && !errors.Is(err, errSaveFailed) {
			r.failf("Close: %v", err)
		}
	} else {
		_ = r.gen.SyncMark(context.Background()) // the save in flight lands...
		r.proc.crash()                           // ...and nothing after it
	}
	if low := r.store.lowered(clean); len(low) > 0 {
		r.failf("a save of the run went below an earlier one: %s", strings.Join(low, "; "))
	}
	if !clean {
		// The crash: nothing more of the run reaches the store.
		r.gen = nil
	}
}

// checkCall checks the IDs and the error of one call that started when
// Observe had covered obsBefore.
func (r *comboRun) checkCall(what string, ids []ringflake.ID, err error, obsBefore int64, cancelled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *comboTrace {
		var ts []string
		for _, id := range ids {
			ts = append(ts, fmt.Sprintf("%v/%d", id.Time(r.layout).Sub(start), id.Sequence(r.layout)))
		}
		if len(ts) > 4 {
			ts = append(ts[:2], "…", ts[len(ts)-1])
		}
		m := r.store.current()
		r.trace("%s -> %v err %v (mark limit %v since %v)", what, ts, err, m.Limit.Sub(start), m.Since.Sub(start))
	}
	limit := r.layout.Tick(r.store.current().Limit)
	for i, id := range ids {
		if prev, ok := r.seen[id]; ok {
			r.failf("%s: ID %d (tick %d seq %d) issued twice: first in run %d", what, id, r.layout.Tick(id.Time(r.layout)), id.Sequence(r.layout), prev)
		}
		r.seen[id] = r.run
		r.issued++
		tick := r.layout.Tick(id.Time(r.layout))
		if id.Node(r.layout) != 1 {
			r.failf("%s: ID %d of node %d", what, id, id.Node(r.layout))
		}
		if tick > limit {
			r.failf("%s: ID %d at tick %d after the saved mark's tick %d", what, id, tick, limit)
		}
		if tick <= r.floor {
			r.failf("%s: ID %d at tick %d at or below the previous run's mark %d", what, id, tick, r.floor)
		}
		if obsBefore >= 0 && int64(id) <= obsBefore {
			r.failf("%s: ID %d at or below %d, observed before the call started", what, id, obsBefore)
		}
		if i > 0 && id <= ids[i-1] {
			r.failf("%s: ID %d after %d in one batch", what, id, ids[i-1])
		}
	}
	if len(ids) > 0 {
		if r.cc.monotonic && r.issuedInRun > 0 && ids[0] <= r.last && !r.workers {
			r.failf("%s: ID %d after %d: %s promises increasing IDs", what, ids[0], r.last, r.cc.strategy)
		}
		r.last = ids[len(ids)-1]
		r.issuedInRun += len(ids)
	}
	if err == nil {
		return
	}
	var re *strategies.RollbackError
	switch {
	case errors.As(err, &re):
		r.errs["rollback"]++
		if !r.steppedBack.Load() {
			r.failf("%s: %v, but the clock never stepped back", what, err)
		}
		if re.Behind <= 0 {
			r.failf("%s: a rollback of %v", what, re.Behind)
		}
		if r.gen.Stats().Rollbacks == 0 && r.stepInRun.Load() && !r.startBehind && !r.cc.wallOnly {
			r.failf("%s: %v, but Stats.Rollbacks is 0", what, err)
		}
	case errors.Is(err, ringflake.ErrClockFrozen):
		r.errs["frozen"]++
		// A wall that stepped forward and back by as much between two
		// readings cannot be told from one that stood still.
		if !r.froze.Load() && !r.steppedBack.Load() {
			r.failf("%s: %v, but the clock never stood still", what, err)
		}
	case errors.Is(err, ringflake.ErrMarkNotSaved) && errors.Is(err, errSaveFailed):
		r.errs["not saved"]++
	case cancelled && errors.Is(err, context.Canceled):
		r.errs["cancelled"]++
	default:
		r.failf("%s: unexpected error %v", what, err)
	}
}

// ctx returns base as the calls get it: in the deterministic mode, a
// context that tells the driver when a call is about to wait for a save.
func (r *comboRun) ctx(base context.Context) context.Context {
	if r.blocked == nil {
		return base
	}
	return opContext{base, r}
}

// opContext reports each Done the generator reads, except a sleep's, to
// the driver: the call is about to wait for the save in flight.
type opContext struct {
	context.Context
	r *comboRun
}

func (c opContext) Done() <-chan struct{} {
	if !c.r.bc.sleeping.Swap(false) {
		c.r.blocked <- struct{}{}
	}
	return c.Context.Done()
}

// callOp makes one call of a kind drawn from rng and checks it.
func (r *comboRun) callOp(rng *rand.Rand, buf []ringflake.ID) {
	obs := r.observed.Load()
	g := r.gen
	perTick := int(r.layout.MaxSequence()) + 1
	switch k := rng.IntN(10); {
	case k < 3:
		id, err := g.NextContext(r.ctx(context.Background()))
		r.checkCall("NextContext", idsOf(id, err), err, obs, false)
	case k < 4:
		if !r.workers {
			r.cancelledOp = true // for the deterministic driver, who alone reads it
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		id, err := g.NextContext(r.ctx(ctx))
		r.checkCall("NextContext (cancelled)", idsOf(id, err), err, obs, true)
	case k < 8:
		n := 1 + rng.IntN(min(len(buf), 3*perTick))
		got, err := g.NextN(r.ctx(context.Background()), buf[:n])
		r.checkCall(fmt.Sprintf("NextN(%d)", n), buf[:got], err, obs, false)
	default:
		if !r.workers {
			r.cancelledOp = true // for the deterministic driver, who alone reads it
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n := 1 + rng.IntN(min(len(buf), 2*perTick))
		got, err := g.NextN(r.ctx(ctx), buf[:n])
		r.checkCall(fmt.Sprintf("NextN(%d) (cancelled)", n), buf[:got], err, obs, true)
	}
}

func idsOf(id ringflake.ID, err error) []ringflake.ID {
	if err != nil {
		return nil
	}
	return []ringflake.ID{id}
}

// observeOp observes a peer's ID near the clock or the newest ID.
func (r *comboRun) observeOp(rng *rand.Rand) {
	unit := r.layout.Spec().Unit
	maxSeq := r.layout.MaxSequence()
	var at time.Time
	seq := rng.Int64N(maxSeq + 1)
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	switch k := rng.IntN(4); {
	case k == 0 && last != 0: // at the newest ID's tick, above or below its sequence
		at = last.Time(r.layout)
		seq = min(max(last.Sequence(r.layout)+rng.Int64N(5)-2, 0), maxSeq)
	default: // around the clock
		at = r.clk.Wall().Add(time.Duration(rng.IntN(13)-6) * unit)
	}
	id, err := r.layout.Compose(at, 2, seq)
	if err != nil {
		return
	}
	err = r.gen.Observe(id)
	r.trace("Observe(%v/%d) -> %v", id.Time(r.layout).Sub(start), id.Sequence(r.layout), err)
	switch {
	case err == nil:
		for {
			old := r.observed.Load()
			if int64(id) <= old || r.observed.CompareAndSwap(old, int64(id)) {
				break
			}
		}
	case errors.Is(err, ringflake.ErrObservedTooFar):
	default:
		r.failf("Observe(%d): unexpected error %v", id, err)
	}
}

// clockOp moves the simulated clock: time passes, the wall steps back or
// forward, or stands still while time passes.
func (r *comboRun) clockOp(rng *rand.Rand) {
	unit := r.layout.Spec().Unit
	switch k := rng.IntN(20); {
	case k < 10:
		d := time.Duration(1+rng.IntN(4)) * unit / 2
		r.trace("Add(%v)", d)
		r.clk.Add(d)
	case k < 12:
		d := time.Duration(2+rng.IntN(30)) * unit
		r.trace("Add(%v)", d)
		r.clk.Add(d)
	case k < 15:
		d := []time.Duration{unit, 3 * unit, 20 * unit, 300 * unit, 2 * time.Second}[rng.IntN(5)]
		r.steppedBack.Store(true)
		r.stepInRun.Store(true)
		r.trace("Step(-%v)", d)
		r.clk.Step(-d)
	case k < 17:
		d := time.Duration(1+rng.IntN(50)) * unit
		r.trace("Step(%v)", d)
		r.clk.Step(d)
	default:
		d := time.Duration(1+rng.IntN(20)) * unit
		r.trace("Freeze(%v)", d)
		r.froze.Store(true)
		r.clk.Freeze(d)
	}
}

func newComboRun(t testing.TB, cc comboCase) *comboRun {
	clk := simclock.New(start)
	r := &comboRun{t: t, cc: cc, clk: clk, seen: map[ringflake.ID]int{}, errs: map[string]int{},
		bc:    &budgetClock{clk: clk, t: t, seed: cc.seed, budget: 2_000_000},
		store: &comboStore{orderedStore: &orderedStore{}, rng: rand.New(rand.NewPCG(cc.seed, 0x73746f7265)), failRate: cc.failRate}}
	r.store.trace = r.trace
	return r
}

// runComboDeterministic plays a case with one caller, in an order the
// seed fixes: each op runs on its own goroutine while the driver holds
// the save it starts at the store's gate, and lets it through when the
// call is about to wait for it — after moving the clock, as a slow store
// lets time pass — or after the op, or ops later (a save that lands
// late). The driver decides only where the call has finished or waits,
// so a seed replays exactly.
func runComboDeterministic(t testing.TB, seed uint64) *comboRun {
	cc := drawCombo(t, seed)
	r := newComboRun(t, cc)
	r.offMain, r.blocked = true, make(chan struct{})
	rng := rand.New(rand.NewPCG(seed, 0x6f7073))
	st := r.store.orderedStore
	buf := make([]ringflake.ID, 64)
	for run := range cc.runs {
		r.run = run
		r.newRun(cc.spellings[rng.IntN(len(cc.spellings))])
		st.mu.Lock()
		st.gate, st.started = make(chan struct{}), make(chan struct{})
		st.mu.Unlock()
		for range cc.ops {
			switch k := rng.IntN(10); {
			case k < 5:
				r.detOp(rng, func() { r.callOp(rng, buf) })
			case k < 6:
				r.detOp(rng, func() { r.observeOp(rng) })
			default:
				r.clockOp(rng)
			}
			if t.Failed() {
				t.FailNow()
			}
		}
		if r.held {
			r.letThrough(rng)
		}
		st.mu.Lock()
		st.gate = nil
		st.mu.Unlock()
		r.endRun(rng.IntN(2) == 0)
	}
	return r
}

// detOp runs one op of the deterministic mode (see runComboDeterministic).
func (r *comboRun) detOp(rng *rand.Rand, op func()) {
	st := r.store.orderedStore
	r.cancelledOp = false
	done := make(chan struct{})
	go func() {
		defer close(done)
		op()
	}()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-st.started:
			r.held = true
		case <-r.blocked:
			if r.cancelledOp {
				continue // its context ends the wait
			}
			if !r.held {
				<-st.started
				r.held = true
			}
			r.letThrough(rng)
		}
	}
	if !r.held && errors.Is(r.gen.SyncMark(cancelled), context.Canceled) {
		<-st.started // a save the op started is on its way to the gate
		r.held = true
	}
	if r.held && rng.IntN(3) != 0 {
		r.letThrough(rng)
		_ = r.gen.SyncMark(context.Background()) // no op runs: nothing starts another save
	}
}

// cancelled is a context that has ended: SyncMark with it tells whether a
// save is in flight.
var cancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// letThrough lets the save held at the gate through, after the clock
// moved on for a while: a slow save.
func (r *comboRun) letThrough(rng *rand.Rand) {
	for range rng.IntN(3) {
		r.clockOp(rng)
	}
	r.trace("the save in flight goes on")
	r.store.orderedStore.gate <- struct{}{}
	r.held = false
}

func TestComboDeterministic(t *testing.T) {
	issued, failed := 0, 0
	for seed := *comboFirst; seed < *comboFirst+uint64(*comboSeeds); seed++ {
		if *comboKeepGoing > 0 {
			if !t.Run(fmt.Sprint(seed), func(t *testing.T) { runComboDeterministic(t, seed) }) {
				if failed++; failed == *comboKeepGoing {
					return
				}
			}
			continue
		}
		r := runComboDeterministic(t, seed)
		if t.Failed() {
			return
		}
		issued += r.issued
	}
	t.Logf("%d seeds, %d IDs", *comboSeeds, issued)
}

// runComboConcurrent plays a case with a few goroutines calling one
// generator at a time, while the driver moves the clock once per call
// that completes (never by counting yields) and holds each save in
// flight for a few clock moves before it lets it land.
func runComboConcurrent(t testing.TB, seed uint64) *comboRun {
	cc := drawCombo(t, seed)
	r := newComboRun(t, cc)
	r.workers = true
	rng := rand.New(rand.NewPCG(seed, 0x6472697665))
	st := r.store.orderedStore
	for run := range cc.runs {
		r.run = run
		r.newRun(cc.spellings[rng.IntN(len(cc.spellings))])
		st.mu.Lock()
		st.gate, st.started = make(chan struct{}), make(chan struct{})
		gate, started := st.gate, st.started
		st.mu.Unlock()

		var wg sync.WaitGroup
		progress, quit, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
		for w := range 2 + rng.IntN(3) {
			wg.Add(1)
			wrng := rand.New(rand.NewPCG(seed, uint64(run*16+w)))
			go func() {
				defer wg.Done()
				buf := make([]ringflake.ID, 64)
				for range cc.ops {
					if wrng.IntN(6) == 0 {
						r.observeOp(wrng)
					} else {
						r.callOp(wrng, buf)
					}
					select {
					case progress <- struct{}{}:
					case <-quit:
						return
					}
				}
			}()
		}
		go func() {
			wg.Wait()
			close(finished)
		}()
	drive:
		for {
			select {
			case <-progress:
				if rng.IntN(2) == 0 {
					r.clockOp(rng)
				}
			case <-started: // a save is in flight: the clock moves meanwhile
				for range rng.IntN(3) {
					r.clockOp(rng)
				}
				gate <- struct{}{}
			case <-finished:
				break drive
			}
		}
		close(quit)
		// Saves go through at once from now on; one already at the gate
		// is let through.
		st.mu.Lock()
		st.gate = nil
		st.mu.Unlock()
		synced := make(chan struct{})
		go func() {
			_ = r.gen.SyncMark(context.Background())
			close(synced)
		}()
	drain:
		for {
			select {
			case <-started:
				gate <- struct{}{}
			case <-synced:
				break drain
			}
		}
		r.endRun(rng.IntN(2) == 0)
	}
	return r
}

func TestComboConcurrent(t *testing.T) {
	issued := 0
	for seed := *comboFirst; seed < *comboFirst+uint64(*comboConcurrent); seed++ {
		r := runComboConcurrent(t, seed)
		if t.Failed() {
			return
		}
		issued += r.issued
	}
	t.Logf("%d seeds, %d IDs", *comboConcurrent, issued)
}

// FuzzCombo draws the combination cases from fuzzed seeds, played
// deterministically.
func FuzzCombo(f *testing.F) {
	for _, seed := range []uint64{1, 157, 2026} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		runComboDeterministic(t, seed)
	})
}

// TestComboDeterministicReplays plays seeds twice: the same IDs, errors
// and saves each time, so that a failing seed replays exactly.
func TestComboDeterministicReplays(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		if drawCombo(t, seed).seqOffset > 0 {
			continue // each generator draws its own first sequence numbers
		}
		a, b := runComboDeterministic(t, seed), runComboDeterministic(t, seed)
		require.Equal(t, a.seen, b.seen, "seed %d: other IDs", seed)
		require.Equal(t, a.errs, b.errs, "seed %d: other errors", seed)
		require.Equal(t, a.store.orderedStore.runs, b.store.orderedStore.runs, "seed %d: other saves", seed)
	}
}
