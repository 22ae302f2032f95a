package ringflake

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

func newTestRing(seqBits uint8) *ring {
	r := &ring{}
	r.init(seqBits, 0)
	return r
}

// take1 takes one pair with r.take.
func take1(r *ring, from, limit, reuseBelow int64) (uint64, bool) {
	v, n := r.take(from, limit, 1, reuseBelow, math.MaxInt64)
	return v, n == 1
}

// The seed article's example: 4095 issued at 768 ms, 0 at 769 ms, then the
// clock goes back before 768. Its sketch moved from (768, 4095) to
// (769, 0), which was already issued.
func TestRingSeedOverflowCase(t *testing.T) {
	r := newTestRing(12)
	for i := 0; i < 4096; i++ {
		_, ok := take1(r, 768, 768, -1)
		require.True(t, ok)
	}
	v, ok := take1(r, 769, 769, -1)
	require.True(t, ok)
	assert.Equal(t, int64(769), r.tick(v))
	assert.Equal(t, uint64(0), v&r.maxSeq)

	// Back at 768 with 768 used up: the walk must go to 769 and find 1,
	// not reuse (769, 0).
	v, ok = take1(r, 768, 769, -1)
	require.True(t, ok)
	assert.Equal(t, int64(769), r.tick(v))
	assert.Equal(t, uint64(1), v&r.maxSeq)
}

func TestRingRules(t *testing.T) {
	r := newTestRing(2) // sequences 0..3
	take := func(from, limit int64) (int64, uint64, bool) {
		t.Helper()
		v, ok := take1(r, from, limit, -1)
		return r.tick(v), v & r.maxSeq, ok
	}
	// Empty slot: (t, 0), then (t, 1..3), then used up.
	for seq := uint64(0); seq < 4; seq++ {
		tick, s, ok := take(10, 10)
		require.True(t, ok)
		assert.Equal(t, int64(10), tick)
		assert.Equal(t, seq, s)
	}
	_, _, ok := take(10, 10)
	assert.False(t, ok, "tick 10 is used up and the limit forbids 11")

	// A slot holding a later tick (10+256) makes tick 10 unknown: skip it.
	r2 := newTestRing(2)
	_, ok = take1(r2, 266, 266, -1)
	require.True(t, ok)
	_, ok = take1(r2, 10, 10, -1)
	assert.False(t, ok, "slot 10 holds tick 266, so nothing at tick 10 may be assumed free")

	// The walk takes the earliest tick with room, never below tick 0.
	r3 := newTestRing(0)
	v, ok := take1(r3, -1000, 300, -1)
	require.True(t, ok)
	assert.Equal(t, int64(0), r3.tick(v))
	_, ok = take1(r3, -5, 0, -1)
	assert.False(t, ok, "tick 0 is used up")
	_, ok = take1(r3, -5, -1, -1)
	assert.False(t, ok)
	_, ok = take1(r3, math.MaxInt64-10, 1000, -1)
	assert.False(t, ok, "an empty range issues nothing, even when from+255 overflows")

	// Borrowing ahead moves one tick at a time, however far the limit.
	r4 := newTestRing(0)
	for want := int64(100); want < 105; want++ {
		v, ok = take1(r4, 100, 100+1000, -1)
		require.True(t, ok)
		assert.Equal(t, want, r4.tick(v))
	}

	// A range longer than the ring whose first 256 ticks are all unknown
	// (their slots hold later ticks) finds the room of its last 256.
	r5 := newTestRing(1)
	for tick := int64(1000); tick < 1256; tick++ {
		_, ok := take1(r5, tick, tick, -1) // one of two sequence numbers per tick
		require.True(t, ok)
	}
	v, ok = take1(r5, 10, 1255, -1)
	require.True(t, ok)
	assert.Equal(t, int64(1000), r5.tick(v))
	assert.Equal(t, uint64(1), v&r5.maxSeq)
}

func TestRingFill(t *testing.T) {
	r := newTestRing(3)
	r.fill(1000)
	for tick := int64(745); tick <= 1000; tick++ {
		_, ok := take1(r, tick, tick, -1)
		assert.False(t, ok, "tick %d is at or below the mark", tick)
	}
	v, ok := take1(r, 0, 1001, -1)
	require.True(t, ok)
	assert.Equal(t, int64(1001), r.tick(v))

	// fill below 256 leaves residues that have no tick yet alone.
	r2 := newTestRing(0)
	r2.fill(3)
	_, ok = take1(r2, 3, 3, -1)
	assert.False(t, ok)
	v, ok = take1(r2, 4, 4, -1)
	require.True(t, ok)
	assert.Equal(t, int64(4), r2.tick(v))
}

// TestRingNeverIssuesTwice hammers one ring from many goroutines with random
// ranges — normal ticks, rollbacks far beyond the window, borrowing ahead —
// and checks the invariant: every pair is issued once and lies in the
// walked range.
func TestRingNeverIssuesTwice(t *testing.T) {
	const goroutines, perG = 8, 4000
	r := newTestRing(3)
	var mu sync.Mutex
	seen := make(map[uint64]bool, goroutines*perG)
	var g errgroup.Group
	for w := 0; w < goroutines; w++ {
		rng := rand.New(rand.NewPCG(uint64(w), 7))
		g.Go(func() error {
			got := make([]uint64, 0, perG)
			for i := 0; i < perG; i++ {
				limit := int64(rng.IntN(2000))
				from := limit - int64(rng.IntN(600))
				v, ok := take1(r, from, limit, -1)
				if !ok {
					continue
				}
				tick := r.tick(v)
				if tick > limit || tick < max(from, 0) {
					t.Errorf("tick %d outside [%d, %d]", tick, from, limit)
				}
				got = append(got, v)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, v := range got {
				if seen[v] {
					t.Errorf("pair (%d, %d) issued twice", r.tick(v), v&r.maxSeq)
				}
				seen[v] = true
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	assert.NotEmpty(t, seen)
}

// During a rollback longer than the ring on a busy ring, the slot of the
// clock's tick holds a later tick: the walk goes straight to the last 256
// ticks of the range rather than through 256 slots that cannot help, and
// still finds every residue's latest tick there.
func TestRingLongRangeSkipsToItsLastTicks(t *testing.T) {
	r := newTestRing(1) // two sequence numbers per tick
	for tick := int64(1000); tick < 1256; tick++ {
		_, ok := take1(r, tick, tick, -1)
		require.True(t, ok)
	}
	// Slot 10 holds tick 1034, later than 10: skip to [1000, 1255].
	v, ok := take1(r, 10, 1255, -1)
	require.True(t, ok)
	assert.Equal(t, int64(1000), r.tick(v))

	// A slot holding an earlier tick (or nothing) is free at the range's
	// start: the walk takes it, as close to from as the ring allows.
	r2 := newTestRing(0)
	_, ok = take1(r2, 300, 300, -1) // slot 44 holds tick 300
	require.True(t, ok)
	v, ok = take1(r2, 45, 600, -1)
	require.True(t, ok)
	assert.Equal(t, int64(45), r2.tick(v), "slot 45 is empty")
	v, ok = take1(r2, 44, 600, -1)
	require.True(t, ok)
	assert.Equal(t, int64(345), r2.tick(v), "slot 44 holds a later tick: the last 256 ticks, from 345")

	// Ranges between 256 and 511 ticks long: the last part starts right
	// after the tick the first part stopped at, so no residue is lost.
	r3 := newTestRing(0)
	for tick := int64(256); tick < 512; tick++ {
		_, ok := take1(r3, tick, tick, -1) // every slot holds one of 256..511, used up
		require.True(t, ok)
	}
	v, ok = take1(r3, 0, 300, -1)
	assert.False(t, ok, "nothing at or below 300 is free: %d", r3.tick(v))
	v, ok = take1(r3, 0, 512, -1)
	require.True(t, ok)
	assert.Equal(t, int64(512), r3.tick(v))
}

// A hot add that sees the epoch move (a later tick heated between the
// add and the check) issues nothing, and what it took of a counter is
// counted as burned, so Stats still count exactly the pairs issued. Here
// the add lands in the old tick's counter before the cooling: the cooled
// tick keeps the pair as taken (never reused), and issued() leaves it out.
func TestHotAddThatSeesTheEpochMoveIssuesNothing(t *testing.T) {
	r := newTestRing(2) // four pairs a tick
	_, n := r.takeRunAt(10, 1, math.MaxInt64)
	require.Equal(t, uint64(1), n)
	e := r.epoch.Load()
	require.Equal(t, hotKey(10), e)

	// A call's add, then another call heats tick 11 before the first one
	// checks the epoch again.
	s := r.next.Add(1) - 1
	require.Equal(t, uint64(1), s)
	_, n = r.takeRunAt(11, 1, math.MaxInt64)
	require.Equal(t, uint64(1), n)
	require.False(t, r.missed(s, 1, e), "the epoch moved: not the hot tick's pair")
	assert.Equal(t, uint64(2), r.issued(), "(10, 0) and (11, 0); (10, 1) was taken, not issued")

	// Tick 10 cooled with (10, 1) taken: a rollback reuses (10, 2) on.
	v, n := r.takeRunAt(10, 4, math.MaxInt64)
	require.Equal(t, uint64(2), n)
	assert.Equal(t, [2]uint64{10, 2}, [2]uint64{uint64(r.tick(v)), v & r.maxSeq})
	assert.Equal(t, uint64(4), r.issued())
}
