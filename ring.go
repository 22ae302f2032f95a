package ringflake

import (
	"math/rand/v2"
	"sync/atomic"
)

// ringSize is the number of slots of the ring: the ring remembers the last
// 256 ticks.
const (
	ringSize = 256
	ringMask = ringSize - 1
)

// ring holds the pairs a generator has issued. Slot t mod 256 holds the
// greatest (tick, sequence) pair ever issued at a tick with that residue,
// packed as (tick+1)<<seqBits | sequence so that the zero value means
// "nothing issued" and packed values order like the pairs. It is the
// issuing state; the generator keeps the rest (the newest tick, the saved
// high-water mark, the line of waiting callers, the lane).
//
// Two invariants make an ID unique, and each is enforced in one place,
// claim, the only code that moves a slot forward to issue:
//
//  1. No pair twice within a run. A take reads a slot and
//     compare-and-swaps it to a greater value, and the pairs it issues are
//     those between the slot's old value and its new one. Slot values only
//     grow, and all pairs of a slot share its residue, so no pair is ever
//     issued twice, whatever the clock does and however many goroutines
//     call. Which pairs a slot still has is one rule, room, applied by
//     every take.
//  2. No pair twice across restarts. Every take receives a ceiling and
//     issues at no tick above it; the ceiling is at most the tick of the
//     high-water mark saved in the MarkStore (Generator.hardTick, or the
//     fast path's horizon, which is below it), so a restart that treats
//     every pair up to the saved mark as issued (fill) cannot meet a pair
//     this run issued. Without a MarkStore the ceiling is the layout's
//     last tick.
//
// Everything else rests on these two; the strategies only choose which
// ticks a take may look at.
type ring struct {
	seqBits uint8
	maxSeq  uint64
	// spread and seed draw the first sequence number of each tick from
	// [0, spread) (WithSequenceOffset); spread <= 1 starts every tick at 0.
	spread, seed uint64
	_            [cacheLine]byte // the slots, written on every call, share no cache line
	slots        [ringSize]slot
	_            [cacheLine]byte // with the fields around them, read on every call

	// filled holds the values fill put in the slots: pairs counted as
	// issued on a restart, not issued by this generator. It does not
	// change after New.
	filled [ringSize]uint64

	// contended is set when a compare-and-swap on a slot fails because
	// another call changed it first: calls collide, and the generator
	// serialises them (see serial) until they stop. Collisions at ticks up
	// to the one after cappedAt — the latest tick whose sequence was used
	// up when a call waited for the next — do not set it: then the
	// layout's cap, not the CPUs, bounds the rate.
	contended atomic.Bool
	cappedAt  atomic.Int64

	// retired counts the IDs of ticks whose slot a later tick took over:
	// with the IDs still in the slots, every ID this ring issued.
	retired atomic.Uint64

	// burned counts the pairs Generator.Observe took out of the ring
	// without issuing them: retired and the slots count them, issued
	// leaves them out.
	burned atomic.Uint64
}

// sealed is the value seal puts in every slot: greater than any pair, so
// that every later take finds no room.
const sealed = ^uint64(0)

// cacheLine is the size of a CPU cache line (64 bytes on amd64 and arm64).
const cacheLine = 64

// slot is one slot of the ring: the packed pair, and how many IDs the ring
// reused from it during rollbacks (Stats.RingReuses is their sum). The
// count sits next to the pair, in the cache line the compare-and-swap that
// issued the ID has just taken, so counting a reuse never moves another
// line between CPUs: from many goroutines it costs next to nothing.
type slot struct {
	atomic.Uint64
	reused atomic.Uint64
}

// init sets the ring up for seqBits of sequence, with every tick's first
// sequence number drawn from [0, spread) when spread > 1.
func (r *ring) init(seqBits uint8, spread uint64) {
	r.seqBits, r.maxSeq = seqBits, uint64(1)<<seqBits-1
	if spread > 1 {
		r.spread, r.seed = min(spread, r.maxSeq+1), rand.Uint64()
	}
	r.cappedAt.Store(-1 << 63)
}

// first returns the packed first pair of tick t, whose (t, 0) is base:
// (t, 0), or with a sequence offset (t, r) for an r drawn once per tick
// from the tick and the ring's seed, so that every call agrees on it
// without a lock.
func (r *ring) first(t int64, base uint64) uint64 {
	if r.spread <= 1 {
		return base
	}
	return base + mix(uint64(t)^r.seed)%r.spread
}

// mix is SplitMix64's finaliser: a cheap, well-spread hash of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// room is the slot rule, the one every take applies: for tick t >= 0
// whose slot holds v, it returns the first pair t may issue next and the
// last pair t has (its greatest sequence number), packed, or ok false
// when t has no room. The three cases of the original sketch, with its
// overflow bug fixed:
//
//   - the slot holds a tick before t (or nothing): nothing was issued at
//     t; its first pair is (t, 0), or (t, r) with a sequence offset.
//   - the slot holds t with a spare sequence number: (t, seq+1).
//   - otherwise — t's sequence is used up, or the slot holds a later tick,
//     so what happened at t is unknown — no room at t. Never assume a
//     sequence number is free.
//
// It is small enough for the compiler to inline into claim, which runs it
// on every take: keep it so (go build -gcflags=-m shows it).
func (r *ring) room(t int64, v uint64) (first, last uint64, ok bool) {
	base := uint64(t+1) << r.seqBits // (t, 0) packed
	last = base + r.maxSeq
	if v < base {
		return r.first(t, base), last, true
	}
	return v + 1, last, v < last
}

// claim issues up to want > 0 consecutive pairs of tick t with one
// compare-and-swap, when 0 <= t <= ceil and the slot rule (room) gives t
// room: it returns the first packed pair and how many (0: none), and the
// value the slot held when it found no room. It is the one place where a
// slot moves forward to issue, and so where both invariants of the ring
// hold (see ring): the swap only moves a slot forward, and no tick above
// ceil is issued.
func (r *ring) claim(t int64, want uint64, ceil int64) (first, n uint64, later bool) {
	if t < 0 || t > ceil {
		return 0, 0, false
	}
	slot := &r.slots[t&ringMask]
	for {
		v := slot.Load()
		first, last, ok := r.room(t, v)
		if !ok {
			return 0, 0, v > last
		}
		n = min(want, last-first+1)
		if slot.CompareAndSwap(v, first+n-1) {
			if r.tick(v) < t {
				r.retire(t, v) // the first pairs of t
			}
			return first, n, false
		}
		r.collide(t)
	}
}

// takeRunAt issues up to want > 0 consecutive pairs of tick t, none above
// ceil: it returns the first and how many (0 when t has no room: t is
// below zero or above ceil, used up, or its slot holds a later tick).
func (r *ring) takeRunAt(t int64, want uint64, ceil int64) (first, n uint64) {
	first, n, _ = r.claim(t, want, ceil)
	return first, n
}

// take issues up to want > 0 pairs of the earliest tick in [from, limit]
// at or below ceil whose slot has room (room), and returns the first
// packed value and how many (0: none). A tick without room sends the walk
// on to the next tick, whose slot the same rule decides.
//
// The walk has two parts of at most 256 ticks each, so each part looks at
// a slot at most once: first the 256 ticks from from on, which keeps an
// ID's time as close to from as the ring allows (a logical strategy
// borrows one tick at a time); then, when the range is longer, the last
// 256 ticks up to limit, where a long rollback finds the spare room recent
// load left (a slot's latest tick ≤ limit offers at least as much room as
// its earlier ones, which also covers the sketch's rule of reusing a later
// tick found in the slot). In a range longer than the ring, the first part
// ends at the first slot that holds a later tick: during a long rollback
// on a busy ring every slot does, and the walk goes straight to the last
// 256 ticks instead of reading all 256 slots in vain on every call; the
// ticks it skips are looked at again, at their latest tick, in the last
// part. Ticks below zero are never issued.
//
// Pairs issued at a tick below reuseBelow (the newest tick issued, during
// a rollback) count as reuses of their slot, right after the swap that
// issued them, while the slot's cache line is still this CPU's.
func (r *ring) take(from, limit int64, want uint64, reuseBelow, ceil int64) (uint64, uint64) {
	from, limit = max(from, 0), min(limit, ceil)
	if from > limit {
		return 0, 0
	}
	long := limit-from > ringMask // from+ringMask could overflow
	v, n, next := r.walk(from, from+min(limit-from, ringMask), want, long, reuseBelow)
	if n > 0 || !long {
		return v, n
	}
	v, n, _ = r.walk(max(next, limit-ringMask), limit, want, false, reuseBelow)
	return v, n
}

// walk is take over [from, limit], at most 256 ticks, all at or below the
// ceiling and not below zero. With stopAtLater it gives up at the first
// slot holding a later tick than the one it looks at. It returns the tick
// after the last one it looked at.
func (r *ring) walk(from, limit int64, want uint64, stopAtLater bool, reuseBelow int64) (uint64, uint64, int64) {
	for t := from; t <= limit; t++ {
		first, n, later := r.claim(t, want, limit)
		if n > 0 {
			if t < reuseBelow {
				r.slots[t&ringMask].reused.Add(n) // in the line the swap has just taken
			}
			return first, n, t + 1
		}
		if stopAtLater && later {
			return 0, 0, t + 1 // the slot holds a later tick
		}
	}
	return 0, 0, limit + 1
}

// collide notes that a compare-and-swap on the slot of tick t lost to
// another call (see contended).
func (r *ring) collide(t int64) {
	if t > r.cappedAt.Load()+1 && !r.contended.Load() {
		r.contended.Store(true)
	}
}

// capped notes that a call waits for the tick after t, whose sequence is
// used up, and ends serial mode (see contended).
func (r *ring) capped(t int64) {
	if r.cappedAt.Load() < t {
		r.cappedAt.Store(t)
	}
	if r.contended.Load() {
		r.contended.Store(false)
	}
}

// retire counts the IDs of the tick whose slot value v tick t has just
// taken over, unless fill put v there. It runs once per tick.
func (r *ring) retire(t int64, v uint64) {
	if v != 0 && v != r.filled[t&ringMask] {
		r.retired.Add(r.count(v))
	}
}

// count returns how many pairs the slot value v stands for: those of its
// tick up to it.
func (r *ring) count(v uint64) uint64 {
	t := r.tick(v)
	return v - r.first(t, uint64(t+1)<<r.seqBits) + 1
}

// fill marks every pair at or before tick mark as issued, as after a
// restart whose previous run may have issued up to mark.
func (r *ring) fill(mark int64) {
	for i := int64(0); i < ringSize; i++ {
		t := mark - (mark-i)&ringMask // the latest tick ≤ mark with residue i
		if t < 0 {
			continue
		}
		full := uint64(t+1)<<r.seqBits | r.maxSeq
		r.filled[i] = full
		for {
			v := r.slots[i].Load()
			if v >= full || r.slots[i].CompareAndSwap(v, full) {
				break
			}
		}
	}
}

// seal makes every later take fail, and returns the greatest tick any
// take issued before, or -1: not a tick fill marked, which a restart
// only reserved. A take that swapped a slot before seal did is counted;
// none can after. Stats stay right: the IDs still in the slots move to
// retired.
func (r *ring) seal() int64 {
	newest := int64(-1)
	for i := range r.slots {
		v := r.slots[i].Swap(sealed)
		if v == sealed || v == 0 || v == r.filled[i] {
			continue
		}
		newest = max(newest, r.tick(v))
		r.retired.Add(r.count(v))
	}
	return newest
}

// tick returns the tick of a packed pair.
func (r *ring) tick(v uint64) int64 { return int64(v>>r.seqBits) - 1 }

// issued returns the number of pairs the ring has issued: those of retired
// ticks and those still in the slots (fill's pairs are not counted). Read
// while IDs are being issued, it may be a few behind.
func (r *ring) issued() uint64 {
	n := r.retired.Load()
	for i := range r.slots {
		if v := r.slots[i].Load(); v != 0 && v != r.filled[i] && v != sealed {
			n += r.count(v)
		}
	}
	return subFloor(n, r.burned.Load())
}

// reused returns the number of IDs the ring reused during rollbacks.
func (r *ring) reused() uint64 {
	var n uint64
	for i := range r.slots {
		n += r.slots[i].reused.Load()
	}
	return n
}
