package ringflake

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The ring's slot rule is written once (room) and applied by one take
// primitive (claim) for every way of taking: one ID at a tick, a run at a
// tick, a walk over a range. FuzzRingRule checks that against ruleModel, a
// model of the rule written for reading, not for speed: slots of explicit
// (tick, sequence) pairs, the three cases of the rule spelled out, the
// walk's two parts as design.md describes them. Every operation runs on
// three rings — one through takeRunAt where the operation is at one tick,
// one through the walk over the range [t, t], and one with no hot tick
// (every take a compare-and-swap on a slot) — and on the model; all must
// agree on every result, the first two rings on every slot, and the cold
// ring on every slot but the hot tick's, which the hot rings hold whole
// while the cold ring holds what was issued there. The operations include
// Observe's burn, which takes pairs out of a tick, hot or not, and Close's
// seal, after which nothing is issued; after each, every ring counts
// exactly the pairs the model issued.

// ruleModel is the reference for one ring.
type ruleModel struct {
	seqBits uint8
	offset  func(t int64) uint64 // the first sequence number of tick t
	slots   [ringSize]modelSlot
	issued  map[[2]int64]bool
	burned  int
	sealed  bool
}

type modelSlot struct {
	used bool
	tick int64
	seq  uint64
}

type modelTake struct {
	tick  int64
	seq   uint64
	n     uint64
	later bool // no room because the slot holds a later tick
}

// at applies the rule to tick t: up to want pairs, none above ceil.
func (m *ruleModel) at(t int64, want uint64, ceil int64) modelTake {
	if t < 0 || t > ceil || m.sealed {
		return modelTake{}
	}
	maxSeq := uint64(1)<<m.seqBits - 1
	s := &m.slots[t%ringSize]
	var start uint64
	switch {
	case !s.used || s.tick < t: // nothing issued at t
		start = m.offset(t)
	case s.tick == t && s.seq < maxSeq: // t has a spare sequence number
		start = s.seq + 1
	default: // t is used up, or the slot holds a later tick
		return modelTake{later: s.tick > t}
	}
	n := min(want, maxSeq-start+1)
	*s = modelSlot{used: true, tick: t, seq: start + n - 1}
	for q := start; q < start+n; q++ {
		k := [2]int64{t, int64(q)}
		if m.issued[k] {
			panic("the model issued a pair twice") // the model itself is wrong
		}
		m.issued[k] = true
	}
	return modelTake{tick: t, seq: start, n: n}
}

// walk is take over [from, limit] below ceil: the earliest tick of the
// first 256 with room (giving up, in a longer range, at the first slot
// holding a later tick), else the earliest of the last 256.
func (m *ruleModel) walk(from, limit int64, want uint64, ceil int64) modelTake {
	from, limit = max(from, 0), min(limit, ceil)
	if from > limit {
		return modelTake{}
	}
	long := limit-from >= ringSize
	next := from
	for ; next <= from+min(limit-from, ringSize-1); next++ {
		if r := m.at(next, want, ceil); r.n > 0 {
			return r
		} else if long && r.later {
			next++
			break
		}
	}
	if !long {
		return modelTake{}
	}
	for t := max(next, limit-(ringSize-1)); t <= limit; t++ {
		if r := m.at(t, want, ceil); r.n > 0 {
			return r
		}
	}
	return modelTake{}
}

// burn takes every pair of tick t up to sequence number q out of the
// model, as Observe's burn does: they count as taken, never as issued.
func (m *ruleModel) burn(t int64, q uint64) {
	if m.sealed {
		return
	}
	s := &m.slots[t%ringSize]
	switch {
	case !s.used || s.tick < t:
		if q < m.offset(t) {
			return // t's first pair is above it already
		}
		m.burned += int(q - m.offset(t) + 1)
	case s.tick == t && s.seq < q:
		m.burned += int(q - s.seq)
	default:
		return
	}
	*s = modelSlot{used: true, tick: t, seq: q}
}

// ruleOp is one operation of FuzzRingRule.
type ruleOp struct {
	kind           byte // 0: one ID at t, 1: a run at t, 2: a walk, 3: a burn up to (t, want-1), 4: seal
	t, from, limit int64
	want           uint64
	ceil           int64
	reuseBelow     int64
}

// decodeRuleOps turns 4 bytes into each operation: ticks in [0, 1024), so
// that ticks 256 apart meet in one slot; ceilings around the tick, some
// below it; walks that reach up to 600 ticks back (longer than the ring)
// and a few forward.
func decodeRuleOps(data []byte) []ruleOp {
	var ops []ruleOp
	for ; len(data) >= 4; data = data[4:] {
		b0, b1, b2, b3 := data[0], data[1], data[2], data[3]
		t := int64(b1) + ringSize*int64(b0>>6)
		op := ruleOp{kind: b0 % 3, t: t, want: 1, ceil: t + int64(b3%8) - 2, reuseBelow: -1}
		switch {
		case b2 == 0xfe && b3 == 0xfe:
			op.kind = 4 // rare: it ends the run
		case b2 >= 0xe0:
			op.kind, op.want = 3, uint64(b3%9)+1
		}
		switch op.kind {
		case 1:
			op.want = uint64(b2%9) + 1
		case 2:
			op.want = uint64(b3>>5) + 1
			op.from, op.limit = t-int64(b2)*int64(b3&3), t+int64(b3>>3&3)
			op.ceil = op.limit - int64(b0>>2&3)
			op.reuseBelow = op.limit
		}
		ops = append(ops, op)
	}
	return ops
}

func FuzzRingRule(f *testing.F) {
	f.Add(byte(2), byte(0), []byte{0, 10, 0, 7, 0, 10, 0, 7, 64, 10, 0, 7, 2, 10, 0, 7})
	f.Add(byte(0), byte(0), []byte{0, 0, 0, 2, 64, 0, 0, 2, 2, 0, 200, 3, 2, 0, 255, 99})
	f.Add(byte(3), byte(5), []byte{1, 1, 8, 4, 1, 1, 8, 4, 1, 1, 8, 4, 130, 1, 3, 255, 194, 1, 200, 251})
	f.Add(byte(1), byte(2), []byte{192, 255, 9, 7, 0, 255, 0, 6, 2, 254, 100, 27, 66, 0, 255, 255})
	f.Add(byte(2), byte(0), []byte{0, 10, 0, 7, 0, 10, 0, 7, 0, 11, 0, 7, 2, 10, 0, 7, 0, 10, 0xe0, 2, 0, 12, 0, 7, 0, 11, 0xfe, 0xfe, 0, 11, 0, 7})
	f.Fuzz(func(t *testing.T, seqBits, spread byte, data []byte) {
		seqBits %= 4
		a, b, c := newFuzzRing(seqBits, uint64(spread%6)), newFuzzRing(seqBits, uint64(spread%6)), newFuzzRing(seqBits, uint64(spread%6))
		c.hotOK = false
		m := &ruleModel{seqBits: seqBits, issued: map[[2]int64]bool{}, offset: func(t int64) uint64 {
			base := uint64(t+1) << a.seqBits
			return a.first(t, base) - base
		}}
		for i, op := range decodeRuleOps(data) {
			var want modelTake
			var av, an, bv, bn, cv, cn uint64
			switch op.kind {
			case 0, 1:
				want = m.at(op.t, op.want, op.ceil)
				av, an = a.takeRunAt(op.t, op.want, op.ceil)
				bv, bn = b.take(op.t, op.t, op.want, op.reuseBelow, op.ceil)
				cv, cn = c.takeRunAt(op.t, op.want, op.ceil)
			case 2:
				want = m.walk(op.from, op.limit, op.want, op.ceil)
				av, an = a.take(op.from, op.limit, op.want, op.reuseBelow, op.ceil)
				bv, bn = b.take(op.from, op.limit, op.want, op.reuseBelow, op.ceil)
				cv, cn = c.take(op.from, op.limit, op.want, op.reuseBelow, op.ceil)
			case 3:
				q := min(op.want-1, a.maxSeq)
				m.burn(op.t, q)
				target := uint64(op.t+1)<<a.seqBits | q
				for _, r := range []*ring{a, b, c} {
					if n, ok := r.burn(op.t, target); ok {
						r.burned.Add(n)
					}
				}
			case 4:
				m.sealed = true
				for _, r := range []*ring{a, b, c} {
					r.seal()
				}
			}
			// Plain comparisons: require's reflection on every operation
			// would cost the fuzzer most of its executions.
			switch {
			case an != want.n:
				t.Fatalf("op %d %+v: issued %d, the model %d", i, op, an, want.n)
			case bn != an || cn != an:
				t.Fatalf("op %d %+v: the single-tick take issued %d, the walk over [t, t] %d, the cold ring %d", i, op, an, bn, cn)
			case an > 0 && (a.tick(av) != want.tick || av&a.maxSeq != want.seq):
				t.Fatalf("op %d %+v: issued from (%d, %d), the model from (%d, %d)", i, op, a.tick(av), av&a.maxSeq, want.tick, want.seq)
			case an > 0 && (bv != av || cv != av):
				t.Fatalf("op %d %+v: the rings issued from %#x, %#x and %#x (cold)", i, op, av, bv, cv)
			case an > 0 && a.tick(av) > op.ceil:
				t.Fatalf("op %d %+v: issued at tick %d, above the ceiling", i, op, a.tick(av))
			}
			hotSlot, hotTick := -1, int64(-1)
			if e := a.epoch.Load(); e&1 == 0 {
				hotTick = int64(e>>1) - 1
				hotSlot = int(hotTick & ringMask)
			}
			for s := range a.slots {
				x, y, z := a.slots[s].Load(), b.slots[s].Load(), c.slots[s].Load()
				if x != y {
					t.Fatalf("op %d %+v: slot %d holds %#x in one ring and %#x in the other", i, op, s, x, y)
				}
				if s == hotSlot && a.tick(x) == hotTick {
					// Claimed whole (unless a burn of a later tick took
					// the slot over); the cold ring holds what was
					// issued, and next is the sequence number after it.
					if x|a.maxSeq != x || z>>a.seqBits != x>>a.seqBits || min(a.next.Load(), a.maxSeq+1) != z&a.maxSeq+1 {
						t.Fatalf("op %d %+v: the hot slot %d holds %#x, next %d; the cold ring %#x", i, op, s, x, a.next.Load(), z)
					}
				} else if x != z {
					t.Fatalf("op %d %+v: slot %d holds %#x in the hot ring and %#x in the cold one", i, op, s, x, z)
				}
			}
			for _, r := range []*ring{a, b, c} {
				if got := r.issued(); got != uint64(len(m.issued)) {
					t.Fatalf("op %d %+v: the ring counts %d issued, the model %d", i, op, got, len(m.issued))
				}
			}
		}
	})
}

// newFuzzRing returns a ring with a fixed seed, so that two rings and the
// model agree on every tick's first sequence number.
func newFuzzRing(seqBits uint8, spread uint64) *ring {
	r := &ring{}
	r.init(seqBits, spread)
	r.seed = 0x5eed
	return r
}

// Every take refuses ticks above its ceiling and below zero, whatever
// room the slots have.
func TestRingTakesStayAtOrBelowTheCeiling(t *testing.T) {
	r := newTestRing(2)
	for _, tc := range []struct {
		name string
		take func(ceil int64) (uint64, uint64)
	}{
		{"one ID", func(ceil int64) (uint64, uint64) { return r.takeRunAt(100, 1, ceil) }},
		{"a run", func(ceil int64) (uint64, uint64) { return r.takeRunAt(100, 3, ceil) }},
		{"a walk", func(ceil int64) (uint64, uint64) { return r.take(99, 120, 1, 110, ceil) }},
		{"a long walk", func(ceil int64) (uint64, uint64) { return r.take(0, 2000, 2, 2000, ceil) }},
		{"a walk below zero", func(ceil int64) (uint64, uint64) { return r.take(-50, 2000, 2, 2000, ceil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ceil := range []int64{math.MinInt64, -1, 0, 98, 99} {
				if v, n := tc.take(ceil); n > 0 {
					require.LessOrEqual(t, r.tick(v), ceil, "issued above the ceiling %d", ceil)
				}
			}
			v, n := tc.take(math.MaxInt64)
			require.NotZero(t, n, "with no ceiling in the way it issues")
			require.GreaterOrEqual(t, r.tick(v), int64(0))
		})
	}
	_, n := r.takeRunAt(-1, 1, math.MaxInt64)
	require.Zero(t, n, "tick -1")
}

// BenchmarkRingTakeOne measures the take of one ID at the clock's tick,
// the path every Next takes: the general primitive with want 1 (a
// specialised single-ID take was measured against it and did not pay).
func BenchmarkRingTakeOne(b *testing.B) {
	r := newTestRing(22)
	t := int64(1000)
	for b.Loop() {
		if _, n := r.takeRunAt(t, 1, math.MaxInt64); n == 0 {
			t++
		}
	}
}
