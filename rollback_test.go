package ringflake_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// start is where every simulated clock begins: a whole millisecond, well
// after the Twitter epoch.
var start = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// scenario is a clock-skew story told to one generator. Every call is
// checked against its strategy's promises by the checker (harness_test.go);
// on top, the scenario says which strategies must fail some calls and which
// must issue some IDs out of order (proving the ring was used). Stories
// count time in c.ms, one tick of the layout: the same story in ticks on
// Twitter's 1 ms layout and on Sonyflake's 10 ms one.
type scenario struct {
	name       string
	play       func(c *checker)
	wantErrors []string         // strategies that must fail at least one call; all others must fail none
	wantOrder  []string         // strategies that must issue at least one ID out of order
	layout     ringflake.Layout // zero: Twitter's
}

var (
	failFast      = []string{"error"}
	failBeyond5ms = []string{"error", "wait:5ms"}
	ringOnly      = []string{"ring", "ring,wait:5ms,error", "ring,logical:1s"}
)

var scenarios = []scenario{
	{
		name: "small step back (-3ms)",
		play: func(c *checker) {
			c.run(20, 10)
			c.step(-3 * c.ms)
			c.run(20, 10)
		},
		wantErrors: failFast,
		wantOrder:  ringOnly,
	},
	{
		name: "step beyond the wait limit (-50ms)",
		play: func(c *checker) {
			c.run(100, 10)
			c.step(-50 * c.ms)
			c.run(100, 10)
		},
		wantErrors: failBeyond5ms,
		wantOrder:  ringOnly,
	},
	{
		name: "step longer than the ring window (-2s)",
		play: func(c *checker) {
			c.run(400, 5)
			c.step(-2000 * c.ms)
			c.run(2100, 5)
		},
		// logical:1s cannot absorb 2s; the chains behind a ring can.
		wantErrors: []string{"error", "wait:5ms", "logical:1s", "wait:5ms,logical:200ms"},
		wantOrder:  ringOnly,
	},
	{
		name: "repeated small steps",
		play: func(c *checker) {
			for range 10 {
				c.run(15, 8)
				c.step(-2 * c.ms)
			}
			c.run(30, 8)
		},
		wantErrors: failFast,
		wantOrder:  ringOnly,
	},
	{
		name: "step back during sequence overflow",
		play: func(c *checker) {
			c.issue(3 * c.perTick()) // saturate: overflow waits move the clock on
			c.step(-3 * c.ms)
			c.issue(3 * c.perTick())
			c.run(10, 10)
		},
		// The ring has no spare room in saturated ticks, so the ring alone
		// fails; the chains fall back to waiting or borrowing.
		wantErrors: []string{"error", "ring"},
	},
	{
		name: "the seed's overflow case: 4095 at 768, 0 at 769, back before 768",
		play: func(c *checker) {
			// The clock starts at tick 768 of this scenario's layout.
			c.issue(4096 + 1) // (768, 0..4095), then the overflow wait gives (769, 0)
			c.step(-5 * c.ms)
			c.run(8, 3) // ticks 764..771: passing 768 and 769 again
		},
		wantErrors: failFast,
		wantOrder:  ringOnly,
		layout:     seedLayout,
	},
	{
		name: "forward jump then step back (VM resume, then NTP)",
		play: func(c *checker) {
			c.run(10, 10)
			c.step(30000 * c.ms)
			c.run(10, 10)
			c.step(-30000*c.ms + 20*c.ms)
			c.run(50, 10)
		},
		// 30 s back is beyond every wait and lead; the ring still has the
		// ticks before the jump's spare room.
		wantErrors: []string{"error", "wait:5ms", "logical:1s", "wait:5ms,logical:200ms"},
		wantOrder:  ringOnly,
	},
	{
		name: "step back to before the epoch",
		play: func(c *checker) {
			c.run(5, 3)
			c.step(-(start.Sub(c.layout.Spec().Epoch) + time.Hour))
			c.run(5, 3)
		},
		wantErrors: []string{"error", "wait:5ms", "logical:1s", "wait:5ms,logical:200ms"},
		wantOrder:  ringOnly,
	},
	{
		name: "crash and restart during a rollback",
		play: func(c *checker) {
			store := hostlocal.NewMarkFile(filepath.Join(c.t.TempDir(), "mark"))
			c.restart(store, false) // the first run keeps its mark too
			c.run(50, 10)
			c.step(-50 * c.ms)
			c.run(5, 10)
			c.restart(store, false)
			// The crashed run saved its mark a second ahead when it
			// started, before the step: the new run's clock is past that
			// mark's Since, so the gap to the mark is the reservation,
			// not a rollback. Every strategy waits it out (logical:1s
			// borrows across it). Only the first run's own rollback
			// fails calls, where the ring cannot help.
			c.run(1200, 3)
		},
		wantErrors: []string{"error", "wait:5ms"},
	},
	{
		name: "crash and restart during a rollback, the mark saved after the step",
		play: func(c *checker) {
			c.markAhead = 10 * c.ms
			store := hostlocal.NewMarkFile(filepath.Join(c.t.TempDir(), "mark"))
			c.restart(store, false)
			c.run(50, 10)
			c.step(-50 * c.ms)
			c.run(20, 10)
			c.restart(store, false)
			// The last mark was saved while the clock was 50 ms behind
			// the newest ID: the new run is behind that mark's Since,
			// which is a rollback, and the strategies decide.
			c.run(100, 3)
		},
		wantErrors: []string{"error", "wait:5ms", "ring", "ring,wait:5ms,error"},
	},
	{
		name: "clean restart during a rollback",
		play: func(c *checker) {
			store := hostlocal.NewMarkFile(filepath.Join(c.t.TempDir(), "mark"))
			c.restart(store, false)
			c.run(50, 10)
			c.step(-50 * c.ms)
			c.run(5, 10)
			c.restart(store, true)
			// Close saved the exact mark: 50ms ahead of the clock. The
			// new process's ring knows nothing spare, so only the logical
			// strategies stay available.
			c.run(100, 3)
		},
		wantErrors: []string{"error", "wait:5ms", "ring", "ring,wait:5ms,error"},
	},
	{
		name: "jitter of ±2ms",
		play: func(c *checker) {
			c.exact, c.slack = false, 2*c.ms
			require.NoError(c.t, c.clk.SetJitter(2*c.ms, 42))
			c.run(300, 4)
		},
		wantErrors: failFast,
		wantOrder:  ringOnly,
	},
	{
		name: "frozen wall clock for 20ms",
		play: func(c *checker) {
			c.run(10, 5)
			c.exact = false
			c.clk.Freeze(20 * c.ms)
			c.run(40, 5)
		},
		// A freeze is not a step back: the wall clock stands still, and
		// afterwards runs on from where it stopped.
	},
	{
		name: "slow slew (0.5%)",
		play: func(c *checker) {
			c.exact = false
			require.NoError(c.t, c.clk.SetDrift(-0.005))
			c.run(2000, 3)
		},
	},
}

// seedLayout is Twitter's layout with its epoch put so that the simulated
// start is tick 768, the seed's case.
var seedLayout = func() ringflake.Layout {
	l, err := ringflake.ParseLayout("twitter,epoch=" + start.Add(-768*time.Millisecond).Format(time.RFC3339Nano))
	if err != nil {
		panic(err)
	}
	return l
}()

// suiteLayouts are the layouts every scenario without a layout of its own
// runs on: Twitter's (time | node | sequence, 1 ms) and Sonyflake's (time |
// sequence | node, 10 ms, 8-bit sequence). The ring and the strategies do
// not know the field order; the checker reads each ID's node back.
var suiteLayouts = []ringflake.Layout{ringflake.TwitterLayout(), ringflake.SonyflakeLayout()}

// layoutsFor returns the layouts a scenario runs on.
func layoutsFor(sc scenario) []ringflake.Layout {
	if sc.layout.IsZero() {
		return suiteLayouts
	}
	return []ringflake.Layout{sc.layout}
}

func TestRollbackScenarios(t *testing.T) {
	runs := 0
	for _, sc := range scenarios {
		for _, layout := range layoutsFor(sc) {
			for _, mode := range clockModes(layout.Spec().Unit) {
				for _, strat := range strategyCases {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", sc.name, layout, mode.name, strat.name), func(t *testing.T) {
						runs++
						c := newChecker(t, simclock.New(start), strat, mode, layout, 7)
						sc.play(c)
						require.NoError(t, c.gen.Close(context.Background())) // ends mark saves in flight

						if contains(sc.wantErrors, strat.name) {
							assert.Positive(t, c.errorCount(), "this strategy must fail some calls here")
						} else {
							assert.Zero(t, c.errorCount(), "this strategy must stay available here: %v", c.errs)
						}
						if contains(sc.wantOrder, strat.name) {
							assert.Positive(t, c.outOfOrder, "the ring should have reused earlier ticks")
						}
						assert.Positive(t, c.issued)
					})
				}
			}
		}
	}
	t.Logf("%d scenario × clock mode × strategy runs", runs)
}

// The seed's case, spelled out on the public API: the ID after the clock
// comes back to 768 must not be (769, 0), which was already issued.
func TestSeedOverflowCaseIsNotDuplicated(t *testing.T) {
	layout := seedLayout
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(layout), ringflake.WithStrategy(strategies.Ring()))
	require.NoError(t, err)

	var last ringflake.ID
	for range 4096 {
		last, err = g.Next()
		require.NoError(t, err)
	}
	assert.Equal(t, int64(768), layout.Tick(last.Time(layout)))
	assert.Equal(t, int64(4095), last.Sequence(layout))

	at769, err := g.Next() // tick 768 is used up: waits for 769
	require.NoError(t, err)
	assert.Equal(t, int64(769), layout.Tick(at769.Time(layout)))
	assert.Equal(t, int64(0), at769.Sequence(layout))

	clk.Step(-2 * time.Millisecond) // back to 767
	clk.Add(time.Millisecond)       // 768 again: used up, so the ring moves on to 769
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(769), layout.Tick(id.Time(layout)))
	assert.Equal(t, int64(1), id.Sequence(layout), "the sketch would have issued (769, 0) again")
}

// Many goroutines share one generator while its clock steps back and
// forth: no ID is issued twice, and for strategies that promise order,
// each goroutine sees its own IDs increase.
func TestConcurrentRollbacks(t *testing.T) {
	for _, strat := range strategyCases {
		t.Run(strat.name, func(t *testing.T) {
			clk := simclock.New(start)
			s, err := strategies.Parse(strat.name)
			require.NoError(t, err)
			g, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithStrategy(s))
			require.NoError(t, err)

			const workers, perWorker = 8, 3000
			var mu sync.Mutex
			seen := make(map[ringflake.ID]bool, workers*perWorker)
			var eg errgroup.Group
			for w := range workers {
				eg.Go(func() error {
					ids := make([]ringflake.ID, 0, perWorker)
					for i := range perWorker {
						switch {
						case w == 0 && i%500 == 250:
							clk.Step(-4 * time.Millisecond)
						case w == 1 && i%700 == 350:
							clk.Step(-300 * time.Millisecond)
						case i%50 == 0:
							clk.Add(time.Millisecond)
						}
						id, err := g.Next()
						if err != nil {
							if !errors.Is(err, ringflake.ErrClockRollback) {
								return err
							}
							continue
						}
						if strat.monotonic && len(ids) > 0 && id <= ids[len(ids)-1] {
							return fmt.Errorf("worker %d: %d after %d", w, id, ids[len(ids)-1])
						}
						ids = append(ids, id)
					}
					mu.Lock()
					defer mu.Unlock()
					for _, id := range ids {
						if seen[id] {
							return fmt.Errorf("ID %d issued twice", id)
						}
						seen[id] = true
					}
					return nil
				})
			}
			require.NoError(t, eg.Wait())
			assert.NotEmpty(t, seen)
		})
	}
}

// A waiting strategy gives up when the caller's context ends.
// A wait under way ends with the context's error when the context is
// cancelled, not when the wait would have ended.
func TestWaitHonoursContext(t *testing.T) {
	clk := simclock.New(start)
	blocked := blockingAfter{clk, make(chan struct{})}
	g, err := ringflake.New(0, ringflake.WithClock(blocked), ringflake.WithStrategy(strategies.Wait(5*time.Millisecond)))
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)
	clk.Step(-3 * time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-blocked.waiting // the call is waiting now
		cancel()
	}()
	_, err = g.NextContext(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// blockingAfter is a clock whose waits never end on their own; After
// signals on waiting that a wait began.
type blockingAfter struct {
	c       *simclock.Clock
	waiting chan struct{}
}

func (b blockingAfter) Now() time.Time { return b.c.Now() }
func (b blockingAfter) After(time.Duration) <-chan time.Time {
	close(b.waiting)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
