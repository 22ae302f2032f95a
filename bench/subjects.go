// Package bench compares ringflake with its peers. It is a module of its
// own, so the peers never enter the dependencies of ringflake itself.
//
// The benchmarks live in bench_test.go; the saturation and latency harness
// in cmd/saturate (its math in package saturate); scripts/bench.sh runs
// both and prints the ratio lines of BENCHMARKS.md.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package bench

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/snowflake"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// A Strategy is a ringflake strategy as the reports name it.
type Strategy struct {
	Name   string // row name: error, wait, logical, ring, default
	Config string // strategies.Parse syntax
}

// Strategies are the ringflake strategies every report has a row for. The
// logical strategy gets a lead of a minute rather than its usual second: a
// tight benchmark loop issues IDs about eight times faster than a 12-bit
// layout's 4,096,000 per second, so a one-second lead would be used up
// after about 1.2 s and the rest of the run would measure the cap, not
// the borrowing path. A minute lasts any -benchtime up to several seconds.
var Strategies = []Strategy{
	{"error", "error"},
	{"wait", "wait:5ms"},
	{"logical", LogicalStrategy},
	{"ring", "ring"},
	{"default", "ring,wait:5ms,error"},
}

// LogicalStrategy is the logical strategy as benchmarked: see [Strategies].
const LogicalStrategy = "logical:1m"

// WideLayout is the uncapped comparison layout: the Twitter epoch and 41
// bits of milliseconds, no node bits, 22 bits of sequence (41+0+22 = 63),
// the same bits as bwmarrin configured by [NewBwmarrinWide].
const WideLayout = "twitter,node=0,seq=22"

// NewRingflake returns a ringflake generator for node 1 (node 0 for
// layouts without node bits) with the given strategy and layout strings
// and the system clock.
func NewRingflake(strategy, layout string, opts ...ringflake.Option) (*ringflake.Generator, error) {
	s, err := strategies.Parse(strategy)
	if err != nil {
		return nil, err
	}
	l, err := ringflake.ParseLayout(layout)
	if err != nil {
		return nil, err
	}
	node := min(1, l.MaxNode())
	return ringflake.New(node, append([]ringflake.Option{ringflake.WithStrategy(s), ringflake.WithLayout(l)}, opts...)...)
}

// bwmarrinMu serialises the changes of bwmarrin/snowflake's package-level
// NodeBits and StepBits.
var bwmarrinMu sync.Mutex

// NewBwmarrin returns a bwmarrin/snowflake v0.3.0 node with its default
// layout (41 bits of ms, 10 bits of node, 12 bits of step).
func NewBwmarrin() (*snowflake.Node, error) { return newBwmarrin(10, 12) }

// NewBwmarrinWide returns a bwmarrin/snowflake node configured without its
// sequence cap: NodeBits 0, StepBits 22 (41+0+22 bits, the Twitter epoch),
// the layout of [WideLayout].
//
// bwmarrin reads its layout from the package-level variables NodeBits and
// StepBits when NewNode runs and copies them into the node, so this sets
// them, makes the node, and restores the defaults (10, 12) under a mutex.
// The node keeps 0/22; the package's derived variables that ID.Time,
// ID.Node and ID.Step use are left as NewNode set them, and the benchmarks
// never call those. Do not make nodes from other goroutines meanwhile.
func NewBwmarrinWide() (*snowflake.Node, error) { return newBwmarrin(0, 22) }

func newBwmarrin(nodeBits, stepBits uint8) (*snowflake.Node, error) {
	bwmarrinMu.Lock()
	defer bwmarrinMu.Unlock()
	snowflake.NodeBits, snowflake.StepBits = nodeBits, stepBits
	defer func() { snowflake.NodeBits, snowflake.StepBits = 10, 12 }()
	return snowflake.NewNode(0)
}

// SteppedClock is the system clock with a wall clock that can be stepped
// back while the process runs, as an NTP step would: Now reads time.Now()
// minus the step, Monotonic reads the monotonic clock since the clock was
// made, After is time.After. It has the optional Monotonic method of a
// [ringflake.Clock], so a generator reads its monotonic clock on every call and its wall clock
// once per tick, like the default clock. It is safe for concurrent use.
type SteppedClock struct {
	start time.Time
	back  atomic.Int64 // nanoseconds the wall clock reads behind
}

// NewSteppedClock returns a clock that is not stepped yet.
func NewSteppedClock() *SteppedClock { return &SteppedClock{start: time.Now()} }

// StepBack sets the wall clock d behind the real wall clock, for good.
func (c *SteppedClock) StepBack(d time.Duration) { c.back.Store(int64(d)) }

// Now returns the stepped wall clock.
func (c *SteppedClock) Now() time.Time { return time.Now().Add(-time.Duration(c.back.Load())) }

// Monotonic returns the monotonic time since the clock was made.
func (c *SteppedClock) Monotonic() time.Duration { return time.Since(c.start) }

// After is time.After.
func (c *SteppedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// RollbackStep is how far [NewRollback] steps the wall clock back: longer
// than any benchmark or harness run, so the rollback lasts to the end.
const RollbackStep = 10 * time.Minute

// Rollback is a ringflake generator, with the ring strategy alone, whose
// clock has been stepped back by [RollbackStep] after a warm-up, so that
// every call takes the ring path: the clock reads far behind the newest
// tick issued, and the ring hands out the spare room of the last 256 ticks.
//
// The warm-up issues IDs for [RollbackWarmUp], so that every slot of the
// ring holds one of the last 256 ticks, as on a service that issues IDs
// every millisecond. The layout has 30 bits of sequence (about a billion
// IDs per tick; 33 bits of ms from an epoch 30 days before the run, no
// node bits), so the ring cannot run out during a run: the 256 ticks hold
// 2^38 IDs. The generator's own counter ([ringflake.Stats] RingReuses)
// tells how many IDs the ring path issued.
type Rollback struct {
	Gen    *ringflake.Generator
	Clock  *SteppedClock
	Layout ringflake.Layout
}

// RollbackWarmUp is how long [NewRollback] keeps a generator busy before
// the step: longer than the ring's 256 ticks of 1 ms.
const RollbackWarmUp = 300 * time.Millisecond

// RollbackLayout returns the layout of [Rollback]: the epoch 30 days
// before now (truncated to a day), 33 bits of ms (99 days), no node, 30
// bits of sequence.
func RollbackLayout() (ringflake.Layout, error) {
	epoch := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -30)
	return ringflake.NewLayout(ringflake.LayoutSpec{Epoch: epoch, Unit: time.Millisecond,
		TimeBits: 33, WorkerBits: 0, SequenceBits: 30})
}

// NewRollback returns a generator on a [SteppedClock] with the ring
// strategy and [RollbackLayout], busy for [RollbackWarmUp]. With step, it
// then steps the clock back by [RollbackStep] and issues IDs until the
// generator has seen the step (its first ring reuse), so that every later
// call takes the ring path. Without step, the clock is never stepped: the
// same generator and clock on the normal path, the baseline the ring path
// is compared with.
func NewRollback(step bool) (*Rollback, error) {
	l, err := RollbackLayout()
	if err != nil {
		return nil, err
	}
	clk := NewSteppedClock()
	g, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Ring()))
	if err != nil {
		return nil, err
	}
	r := &Rollback{Gen: g, Clock: clk, Layout: l}
	for deadline := time.Now().Add(RollbackWarmUp); time.Now().Before(deadline); {
		for range 1000 {
			if _, err := g.Next(); err != nil {
				return nil, err
			}
		}
	}
	if !step {
		return r, nil
	}
	clk.StepBack(RollbackStep)
	for deadline := time.Now().Add(time.Second); r.RingReuses() == 0; {
		if _, err := g.Next(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("bench: the generator did not see the clock step within a second")
		}
	}
	return r, nil
}

// RingReuses returns how many IDs the generator issued on the ring path,
// at a tick earlier than the newest issued before them.
func (r *Rollback) RingReuses() uint64 { return r.Gen.Stats().RingReuses }
