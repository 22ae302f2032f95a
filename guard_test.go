package ringflake_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
)

// The node ids of these tests are their own (90x): other tests of the
// package on the system clock use low ones.

func TestNewRefusesASecondLiveGeneratorOnANode(t *testing.T) {
	ctx := context.Background()
	g, err := ringflake.New(901)
	require.NoError(t, err)

	_, err = ringflake.New(901)
	require.ErrorIs(t, err, ringflake.ErrNodeInUse)
	var inUse *ringflake.NodeError
	require.ErrorAs(t, err, &inUse)
	assert.Equal(t, int64(901), inUse.Value)
	assert.Equal(t, "twitter", inUse.Layout)

	// The same layout under another name issues the same IDs.
	tw := ringflake.TwitterLayout()
	same, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: tw.Spec().Epoch, Unit: tw.Spec().Unit, TimeBits: 41,
		DatacenterBits: 5, WorkerBits: 5, SequenceBits: 12})
	require.NoError(t, err)
	_, err = ringflake.New(901, ringflake.WithLayout(same))
	require.ErrorIs(t, err, ringflake.ErrNodeInUse, "an equal layout")

	// Another node, or another layout, is another generator's to have.
	other, err := ringflake.New(902)
	require.NoError(t, err)
	elsewhere, err := ringflake.New(901, ringflake.WithLayout(ringflake.SonyflakeLayout()))
	require.NoError(t, err, "Sonyflake's node 901 is not Twitter's")

	require.NoError(t, g.Close(ctx))
	again, err := ringflake.New(901)
	require.NoError(t, err, "Close frees the node")
	for _, g := range []*ringflake.Generator{again, other, elsewhere} {
		require.NoError(t, g.Close(ctx))
	}
}

// Generators on a clock given with WithClock are not checked: tests build
// many of them, on simulated clocks, under one node id.
func TestNewOnAnInjectedClockIsNotChecked(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC))
	a, err := ringflake.New(903, ringflake.WithClock(clk))
	require.NoError(t, err)
	b, err := ringflake.New(903, ringflake.WithClock(clk))
	require.NoError(t, err)
	real, err := ringflake.New(903)
	require.NoError(t, err, "a generator on the system clock does not see those of simulated clocks")
	for _, g := range []*ringflake.Generator{a, b, real} {
		require.NoError(t, g.Close(context.Background()))
	}
}

// TestNewAndCloseRacing: goroutines race New and Close on a few node ids;
// at any moment at most one generator per node is live, every refusal is
// ErrNodeInUse, and every node is had many times.
func TestNewAndCloseRacing(t *testing.T) {
	const nodes, workers, rounds = 3, 8, 300
	var (
		live  [nodes]atomic.Int32
		had   [nodes]atomic.Int32
		wg    sync.WaitGroup
		ctx   = context.Background()
		first = int64(910)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				n := (w + i) % nodes
				g, err := ringflake.New(first + int64(n))
				if err != nil {
					if !errors.Is(err, ringflake.ErrNodeInUse) {
						t.Errorf("New: %v", err)
					}
					continue
				}
				if l := live[n].Add(1); l != 1 {
					t.Errorf("node %d: %d live generators", first+int64(n), l)
				}
				had[n].Add(1)
				if _, err := g.Next(); err != nil {
					t.Errorf("Next: %v", err)
				}
				live[n].Add(-1)
				if err := g.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	for n := range nodes {
		assert.Positive(t, had[n].Load(), "node %d", first+int64(n))
	}
	for n := range nodes { // and every node is free at the end
		g, err := ringflake.New(first + int64(n))
		require.NoError(t, err)
		require.NoError(t, g.Close(ctx))
	}
}

// A generator that is dropped without Close frees its node once the
// garbage collector finds it unreachable: it can issue nothing more.
func TestNodeFreedWhenTheGeneratorIsCollected(t *testing.T) {
	func() {
		g, err := ringflake.New(904)
		require.NoError(t, err)
		_, err = g.Next()
		require.NoError(t, err)
		_, err = ringflake.New(904)
		require.ErrorIs(t, err, ringflake.ErrNodeInUse, "while it is reachable")
	}()
	var g *ringflake.Generator
	require.Eventually(t, func() bool {
		runtime.GC()
		var err error
		g, err = ringflake.New(904)
		return err == nil
	}, 10*time.Second, time.Millisecond)
	require.NoError(t, g.Close(context.Background()))
}

// A New refused for its node gives back the mark file it held.
func TestNewRefusedForItsNodeReleasesTheMarkFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g, err := ringflake.New(905, ringflake.WithMarkStore(hostlocal.NewMarkFile(filepath.Join(dir, "a"))))
	require.NoError(t, err)
	second := hostlocal.NewMarkFile(filepath.Join(dir, "b"))
	_, err = ringflake.New(905, ringflake.WithMarkStore(second))
	require.ErrorIs(t, err, ringflake.ErrNodeInUse)
	require.NoError(t, second.Hold(ctx), "the refused New released b")
	require.NoError(t, second.Release())
	require.NoError(t, g.Close(ctx))
}
