package ringflake

import "sync/atomic"

// ringSize is the number of slots of the ring: the ring remembers the last
// 256 ticks.
const (
	ringSize = 256
	ringMask = ringSize - 1
)

// ring is the generator's whole issuing state. Slot t mod 256 holds the
// greatest (tick, sequence) pair ever issued at a tick with that residue,
// packed as (tick+1)<<seqBits | sequence so that the zero value means
// "nothing issued" and packed values order like the pairs.
//
// Every ID is issued by take, which reads a slot and compare-and-swaps it
// to a greater value, and the issued pair is the slot's new value. Slot
// values only grow, and all pairs of a slot share its residue, so no pair
// is ever issued twice, whatever the clock does and however many
// goroutines call. This is the invariant everything else rests on; the
// strategies only choose which ticks take may look at.
type ring struct {
	seqBits uint8
	maxSeq  uint64
	_       [cacheLine]byte // the slots, written on every call, share no cache line
	slots   [ringSize]slot
	_       [cacheLine]byte // with the fields around them, read on every call

	// filled holds the values fill put in the slots: pairs counted as
	// issued on a restart, not issued by this generator. It does not
	// change after New.
	filled [ringSize]uint64

	// contended is set when a compare-and-swap on a slot fails because
	// another call changed it first: calls collide, and the generator
	// serialises them (see Generator.lock) until they stop. Collisions at
	// ticks up to the one after cappedAt — the latest tick whose sequence
	// was used up when a call waited for the next — do not set it: then
	// the layout's cap, not the CPUs, bounds the rate.
	contended atomic.Bool
	cappedAt  atomic.Int64

	// retired counts the IDs of ticks whose slot a later tick took over:
	// with the IDs still in the slots, every ID this ring issued.
	retired atomic.Uint64
}

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

// take issues the pair at the earliest tick in [from, limit] whose slot
// has room, and returns its packed value. For each tick t it applies the
// rules of the original sketch with its overflow bug fixed:
//
//   - the slot holds a tick before t: nothing was issued at t; issue (t, 0).
//   - the slot holds t with a spare sequence number: issue (t, seq+1).
//   - otherwise (t's sequence is used up, or the slot holds a later tick,
//     so what happened at t is unknown): move on to t+1 and apply the same
//     rules to its slot. Never assume a sequence number is free.
//
// The walk has two parts of at most 256 ticks each, so each part looks at
// a slot at most once: first the 256 ticks from from on, which keeps an
// ID's time as close to from as the ring allows (a logical strategy borrows one tick at a time);
// then, when the range is longer, the last 256 ticks up to limit, where a
// long rollback finds the spare room recent load left (a slot's latest
// tick ≤ limit offers at least as much room as its earlier ones, which
// also covers the sketch's rule of reusing a later tick found in the
// slot). In a range longer than the ring, the first part ends at the first
// slot that holds a later tick: during a long rollback on a busy ring every
// slot does, and the walk goes straight to the last 256 ticks instead of
// reading all 256 slots in vain on every call; the ticks it skips are
// looked at again, at their latest tick, in the last part. Ticks below zero
// are never issued.
//
// A pair issued at a tick below reuseBelow (the newest tick issued, during
// a rollback) counts as a reuse of its slot, right after the swap that
// issued it, while the slot's cache line is still this CPU's.
func (r *ring) take(from, limit, reuseBelow int64) (uint64, bool) {
	if from == limit && from >= 0 {
		v, ok := r.takeAt(from) // the normal path: the clock's own tick
		if ok && from < reuseBelow {
			r.slots[from&ringMask].reused.Add(1)
		}
		return v, ok
	}
	from = max(from, 0)
	if from > limit {
		return 0, false
	}
	long := limit-from > ringMask // from+ringMask could overflow
	v, ok, next := r.walk(from, from+min(limit-from, ringMask), long, reuseBelow)
	if ok || !long {
		return v, ok
	}
	v, ok, _ = r.walk(max(next, limit-ringMask), limit, false, reuseBelow)
	return v, ok
}

// walk is take over [from, limit], at most 256 ticks. With stopAtLater it
// gives up at the first slot holding a later tick than the one it looks
// at. It returns the tick after the last one it looked at.
func (r *ring) walk(from, limit int64, stopAtLater bool, reuseBelow int64) (uint64, bool, int64) {
	for t := from; t <= limit; {
		slot := &r.slots[t&ringMask]
		base := uint64(t+1) << r.seqBits // (t, 0) packed
		v := slot.Load()
		var next uint64
		switch {
		case v < base:
			next = base
		case v < base+r.maxSeq:
			next = v + 1
		case stopAtLater && v > base+r.maxSeq:
			return 0, false, t + 1 // the slot holds a later tick
		default:
			t++
			continue
		}
		if slot.CompareAndSwap(v, next) {
			if t < reuseBelow {
				slot.reused.Add(1) // in the line the swap has just taken
			}
			r.retire(t, v, next, base)
			return next, true, t + 1
		}
		r.collide(t)
	}
	return 0, false, limit + 1
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

// takeAt is take(t, t) for t >= 0: the next sequence number of tick t, if
// it has one.
func (r *ring) takeAt(t int64) (uint64, bool) {
	slot := &r.slots[t&ringMask]
	base := uint64(t+1) << r.seqBits // (t, 0) packed
	for {
		v := slot.Load()
		next := base
		if v >= base {
			if v >= base+r.maxSeq {
				return 0, false // t is used up, or the slot holds a later tick
			}
			next = v + 1
		}
		if slot.CompareAndSwap(v, next) {
			r.retire(t, v, next, base)
			return next, true
		}
		r.collide(t)
	}
}

// retire counts the IDs of the tick a slot held before tick t took it over
// (next == base: the first pair of t), unless fill put them there. It runs
// once per tick.
func (r *ring) retire(t int64, v, next, base uint64) {
	if next == base && v != 0 && v != r.filled[t&ringMask] {
		r.retired.Add(v&r.maxSeq + 1)
	}
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

// tick returns the tick of a packed pair.
func (r *ring) tick(v uint64) int64 { return int64(v>>r.seqBits) - 1 }

// issued returns the number of pairs the ring has issued: those of retired
// ticks and those still in the slots (fill's pairs are not counted). Read
// while IDs are being issued, it may be a few behind.
func (r *ring) issued() uint64 {
	n := r.retired.Load()
	for i := range r.slots {
		if v := r.slots[i].Load(); v != 0 && v != r.filled[i] {
			n += v&r.maxSeq + 1
		}
	}
	return n
}

// reused returns the number of IDs the ring reused during rollbacks.
func (r *ring) reused() uint64 {
	var n uint64
	for i := range r.slots {
		n += r.slots[i].reused.Load()
	}
	return n
}
