package ringflake_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// observeNode is one node of a chain: a generator on its own simulated
// clock, skewed from the others.
type observeNode struct {
	clk *simclock.Clock
	gen *ringflake.Generator
}

// newObserveNodes returns n generators of layout, each on a clock skewed
// by a random offset in [-maxSkew/2, maxSkew/2] from start, with strategy
// s and an in-memory mark store each.
func newObserveNodes(t testing.TB, n int, layout ringflake.Layout, s string, maxSkew time.Duration, rng *rand.Rand) []observeNode {
	t.Helper()
	st, err := strategies.Parse(s)
	require.NoError(t, err)
	nodes := make([]observeNode, n)
	for i := range nodes {
		skew := time.Duration(0)
		if maxSkew > 0 {
			skew = time.Duration(rng.Int64N(int64(maxSkew))) - maxSkew/2
		}
		clk := simclock.New(start.Add(skew))
		g, err := ringflake.New(int64(i+1), ringflake.WithClock(clk), ringflake.WithLayout(layout),
			ringflake.WithStrategy(st), ringflake.WithMarkStore(&recordingStore{}))
		require.NoError(t, err)
		nodes[i] = observeNode{clk: clk, gen: g}
	}
	return nodes
}

// hop has node k observe prev and issue want IDs; each must be greater
// than prev. It returns the greatest.
func hop(t testing.TB, nd observeNode, prev ringflake.ID, want int) ringflake.ID {
	t.Helper()
	require.NoError(t, nd.gen.Observe(prev))
	ids := make([]ringflake.ID, want)
	n, err := nd.gen.NextN(context.Background(), ids)
	require.NoError(t, err)
	require.Equal(t, want, n)
	for _, id := range ids {
		require.Greater(t, id, prev, "an ID issued after observing %d", prev)
	}
	return ids[want-1]
}

// A chain of 10,000 hops across 6 nodes whose clocks are up to 900 ms
// apart (within the default bound of 1 s), each hop taking 1 to 3 ms:
// every hop's IDs sort after the ID it received, under every strategy, in
// both field orders. (A hop takes at least a tick: in the time,node,seq
// order a hop within one tick to a lower node id moves to the next tick,
// so a chain of faster hops runs ahead of the clocks, up to the bound.)
func TestObserveChain(t *testing.T) {
	layouts := map[string]ringflake.Layout{"twitter": ringflake.TwitterLayout(), "sonyflake": ringflake.SonyflakeLayout()}
	for lname, layout := range layouts {
		for _, sc := range strategyCases {
			t.Run(lname+"/"+sc.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, uint64(len(sc.name))))
				nodes := newObserveNodes(t, 6, layout, sc.name, 900*time.Millisecond, rng)
				var prev ringflake.ID
				moved := 0
				for range 10_000 {
					for _, nd := range nodes { // time passes everywhere alike
						nd.clk.Add(time.Millisecond + time.Duration(rng.IntN(2000))*time.Microsecond)
					}
					k := rng.IntN(len(nodes))
					prev = hop(t, nodes[k], prev, 1+rng.IntN(3))
				}
				for _, nd := range nodes {
					s := nd.gen.Stats()
					moved += int(s.ObserveMoved)
					assert.Zero(t, s.ObserveRefused)
					assert.LessOrEqual(t, s.ObserveJump, time.Second)
				}
				assert.Positive(t, moved, "some hops went to a node whose clock is behind")
			})
		}
	}
}

// An ID 2 s ahead, with a bound of 500 ms, is refused and changes
// nothing: the next ID is stamped at the local clock.
func TestObserveRefusesTooFar(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMaxForward(500*time.Millisecond))
	require.NoError(t, err)
	l := g.Layout()
	far, err := l.Compose(start.Add(2*time.Second), 9, 0)
	require.NoError(t, err)

	err = g.Observe(far)
	require.ErrorIs(t, err, ringflake.ErrObservedTooFar)
	var ahead *strategies.AheadError
	require.ErrorAs(t, err, &ahead)
	assert.Equal(t, 2*time.Second, ahead.Ahead)
	assert.Equal(t, 500*time.Millisecond, ahead.Max)

	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, start, id.Time(l), "the refused ID moved nothing")
	s := g.Stats()
	assert.Equal(t, []uint64{1, 0, 1}, []uint64{s.Observed, s.ObserveMoved, s.ObserveRefused})

	near, err := l.Compose(start.Add(500*time.Millisecond), 9, 7)
	require.NoError(t, err)
	require.NoError(t, g.Observe(near), "at the bound is accepted")
	id, err = g.Next()
	require.NoError(t, err)
	assert.Greater(t, id, near)
	assert.Equal(t, 500*time.Millisecond, g.Stats().ObserveJump)
}

// Bad input to Observe and WithMaxForward is an error, not a panic.
func TestObserveBadInput(t *testing.T) {
	clk := simclock.New(start)
	_, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMaxForward(-time.Millisecond))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)

	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(ringflake.JSSafeLayout()))
	require.NoError(t, err)
	require.ErrorIs(t, g.Observe(-1), ringflake.ErrInvalidID)
	require.ErrorIs(t, g.Observe(1<<60), ringflake.ErrInvalidID, "wider than the layout")
	require.NoError(t, g.Close(context.Background()))
	require.ErrorIs(t, g.Observe(1), ringflake.ErrClosed)
	assert.Equal(t, uint64(3), g.Stats().ObserveRefused)
}

// A lease that bounds its fleet's lead bounds WithMaxForward too, and
// lowers the default to it.
func TestMaxForwardWithinLeaseMaxLead(t *testing.T) {
	clk := simclock.New(start)
	lease := &boundedLease{fakeLease: fakeLease{node: 3, held: true}, maxLead: 200 * time.Millisecond}
	_, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(lease), ringflake.WithStrategy(strategies.Error()),
		ringflake.WithMaxForward(time.Second))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)

	g, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(lease), ringflake.WithStrategy(strategies.Error()))
	require.NoError(t, err)
	id, err := g.Layout().Compose(start.Add(300*time.Millisecond), 1, 0)
	require.NoError(t, err)
	require.ErrorIs(t, g.Observe(id), ringflake.ErrObservedTooFar, "the default is the lease's 200 ms")
}

// An ID of another node at the same tick: the next IDs are still
// greater, in both field orders, whichever node sorts first; and when
// this node sorts above, the IDs stay at the clock's tick.
func TestObserveSameTick(t *testing.T) {
	for _, layout := range []ringflake.Layout{ringflake.TwitterLayout(), ringflake.SonyflakeLayout()} {
		for _, tc := range []struct{ mine, theirs, seq int64 }{{1, 5, 100}, {7, 5, 100}, {5, 5, 100}, {1, 5, 0}, {7, 5, 0}} {
			t.Run(layout.String(), func(t *testing.T) {
				clk := simclock.New(start)
				g, err := ringflake.New(tc.mine, ringflake.WithClock(clk), ringflake.WithLayout(layout))
				require.NoError(t, err)
				obs, err := layout.Compose(start, tc.theirs, tc.seq)
				require.NoError(t, err)
				require.NoError(t, g.Observe(obs))
				for range 3 {
					id, err := g.Next()
					require.NoError(t, err)
					require.Greater(t, id, obs)
				}
				assert.LessOrEqual(t, g.Stats().Issued, uint64(3), "pairs taken out are not counted as issued")
			})
		}
	}
}

// Observe ahead, crash without Close, restart on the same mark store: the
// first ID is above every ID issued before the crash.
func TestObserveCrashRestart(t *testing.T) {
	for _, sc := range strategyCases {
		t.Run(sc.name, func(t *testing.T) {
			clk := simclock.New(start)
			store := &recordingStore{}
			st, err := strategies.Parse(sc.name)
			require.NoError(t, err)
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMarkStore(store), ringflake.WithStrategy(st))
			require.NoError(t, err)
			obs, err := g.Layout().Compose(start.Add(800*time.Millisecond), 2, 4095)
			require.NoError(t, err)
			require.NoError(t, g.Observe(obs))
			ids := make([]ringflake.ID, 20_000) // more than one tick holds: borrows further
			_, err = g.NextN(context.Background(), ids)
			require.NoError(t, err)
			greatest := ids[len(ids)-1]
			assert.Greater(t, ids[0], obs)
			// The crash: g is dropped; the ahead mark stays in the store.

			g2, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMarkStore(store), ringflake.WithStrategy(st))
			require.NoError(t, err)
			id, err := g2.Next()
			require.NoError(t, err)
			assert.Greater(t, id, greatest)
		})
	}
}

// Observe and Next from many goroutines: no ID twice, and every ID a
// goroutine issues after its Observe returned is greater than what it
// observed.
func TestObserveConcurrent(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMarkStore(&recordingStore{}))
	require.NoError(t, err)
	l := g.Layout()
	const workers, rounds = 8, 300
	out := make([][]ringflake.ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range rounds {
				ahead := time.Duration(rng.IntN(900)) * time.Millisecond
				obs, err := l.Compose(clk.Now().Add(ahead), rng.Int64N(32), rng.Int64N(4096))
				if !assert.NoError(t, err) {
					return
				}
				if !assert.NoError(t, g.Observe(obs)) {
					return
				}
				for range 1 + rng.IntN(4) {
					id, err := g.Next()
					if !assert.NoError(t, err) || !assert.Greater(t, id, obs) {
						return
					}
					out[w] = append(out[w], id)
				}
				if w == 0 {
					clk.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	seen := map[ringflake.ID]bool{}
	for _, ids := range out {
		for _, id := range ids {
			require.False(t, seen[id], "ID %d issued twice", id)
			seen[id] = true
		}
	}
	assert.Equal(t, uint64(len(seen)), g.Stats().Issued)
}

// FuzzObserve turns bytes into a chain of hops between three nodes with
// skewed clocks, under one strategy and layout, with clock steps back
// along the way, and asserts on every hop: an ID issued after Observe
// returned nil is greater than the observed ID; no generator issues an ID
// twice; a refusal is ErrObservedTooFar with a distance beyond the bound
// and changes nothing (the generator's lead, counters and issued IDs
// stay); a failed Next is one the strategy may return.
func FuzzObserve(f *testing.F) {
	f.Add([]byte{0, 0, 10, 200, 90, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 1, 255, 0, 128, 0, 0, 0, 0, 250, 251, 252, 10, 20})
	f.Add([]byte{6, 0, 1, 2, 3, 0xff, 0x80, 0x81, 0x7f, 0, 0xfe})
	f.Fuzz(fuzzObserve)
}

func fuzzObserve(t *testing.T, data []byte) {
	{
		if len(data) < 5 {
			return
		}
		sc := strategyCases[int(data[0])%len(strategyCases)]
		layout := ringflake.TwitterLayout()
		if data[1]&1 == 1 {
			layout = ringflake.SonyflakeLayout()
		}
		const bound = 300 * time.Millisecond
		st, err := strategies.Parse(sc.name)
		require.NoError(t, err)
		nodes := make([]observeNode, 3)
		for i := range nodes {
			skew := time.Duration(int8(data[2+i])) * 4 * time.Millisecond // ±512 ms: some beyond the bound
			clk := simclock.New(start.Add(skew))
			var c ringflake.Clock = clk
			if data[1]&2 != 0 {
				c = wallOnly{clk} // every step seen at once
			}
			g, err := ringflake.New(int64(i+1), ringflake.WithClock(c), ringflake.WithLayout(layout),
				ringflake.WithStrategy(st), ringflake.WithMarkStore(&recordingStore{}), ringflake.WithMaxForward(bound))
			require.NoError(t, err)
			nodes[i] = observeNode{clk: clk, gen: g}
		}
		seen := map[ringflake.ID]bool{}
		var prev ringflake.ID
		for _, b := range data[5:] {
			nd := nodes[int(b)%3]
			for _, o := range nodes {
				o.clk.Add(time.Duration(b>>2&7) * layout.Spec().Unit)
			}
			if b>>5 == 7 {
				nd.clk.Add(-time.Duration(b&3+1) * 20 * time.Millisecond) // a step back
			}
			before := nd.gen.Stats()
			err := nd.gen.Observe(prev)
			observed := err == nil
			if !observed {
				after := nd.gen.Stats()
				require.Equal(t, []any{before.Lead, before.ObserveMoved, before.ObserveRefused + 1, before.Issued},
					[]any{after.Lead, after.ObserveMoved, after.ObserveRefused, after.Issued}, "a refused ID changes nothing")
				require.ErrorIs(t, err, ringflake.ErrObservedTooFar)
				var ahead *strategies.AheadError
				require.ErrorAs(t, err, &ahead)
				require.Greater(t, ahead.Ahead, ahead.Max)
				require.Equal(t, bound, ahead.Max)
			}
			id, err := nd.gen.Next()
			if err != nil {
				require.True(t, errors.Is(err, ringflake.ErrClockRollback) || errors.Is(err, ringflake.ErrClockFrozen),
					"%s: %v", sc.name, err)
				continue
			}
			require.False(t, seen[id], "ID %d issued twice", id)
			seen[id] = true
			if observed {
				require.Greater(t, id, prev, "%s: issued after observing", sc.name)
			}
			prev = max(prev, id)
		}
	}
}

// A tick Observe borrows above the saved high-water mark is saved before
// any ID is issued there: while the store fails, Next fails with
// ErrMarkNotSaved and issues nothing; once it saves, the ID is under the
// saved mark.
func TestObserveSavesTheMarkFirst(t *testing.T) {
	clk := simclock.New(start)
	store := &recordingStore{}
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithMarkStore(store), ringflake.WithMarkAhead(100*time.Millisecond))
	require.NoError(t, err)
	limit, _ := store.snapshot()
	require.Equal(t, start.Add(100*time.Millisecond), limit)

	obs, err := g.Layout().Compose(start.Add(500*time.Millisecond), 2, 0)
	require.NoError(t, err)
	require.NoError(t, g.Observe(obs))
	store.mu.Lock()
	store.fail = errors.New("disk full")
	store.mu.Unlock()
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrMarkNotSaved)
	assert.Zero(t, g.Stats().Issued, "nothing issued above the saved mark")

	store.mu.Lock()
	store.fail = nil
	store.mu.Unlock()
	id, err := g.Next()
	require.NoError(t, err)
	assert.Greater(t, id, obs)
	limit, _ = store.snapshot()
	assert.False(t, id.Time(g.Layout()).After(limit), "the ID's tick is under the saved mark %v", limit)
}

// A rollback while the generator leads because of an observed ID: within
// the bound it is absorbed (IDs count on above the floor, under "error"
// too); beyond it the strategy decides as for any rollback. (The
// generator reads the wall clock on every call, so it sees each step at
// once.)
func TestObserveRollbackWhileLeading(t *testing.T) {
	clk := simclock.New(start)
	g, err := ringflake.New(1, ringflake.WithClock(wallOnly{clk}), ringflake.WithStrategy(strategies.Error()),
		ringflake.WithMaxForward(500*time.Millisecond))
	require.NoError(t, err)
	obs, err := g.Layout().Compose(start.Add(300*time.Millisecond), 2, 0)
	require.NoError(t, err)
	require.NoError(t, g.Observe(obs))
	prev := obs
	for _, back := range []time.Duration{100 * time.Millisecond, 50 * time.Millisecond} {
		clk.Add(-back) // 400 ms behind the floor in all: within the bound of the clock
		id, err := g.Next()
		require.NoError(t, err, "absorbed while the newest tick is within the bound")
		require.Greater(t, id, prev)
		prev = id
	}
	assert.Equal(t, uint64(2), g.Stats().Rollbacks, "both steps seen")
	clk.Add(-200 * time.Millisecond) // now 600 ms behind: beyond the bound
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback, "the error strategy decides")
	assert.Positive(t, g.Stats().Rollbacks)
}
