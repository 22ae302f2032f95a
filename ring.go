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
	slots   [ringSize]atomic.Uint64
	seqBits uint8
	maxSeq  uint64
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
// The walk starts no earlier than limit-255: each slot is visited at most
// once, at the latest tick ≤ limit with its residue, which offers at least
// as much room as any earlier tick with the same residue (the sketch's rule
// of reusing a later tick found in the slot is thereby covered). Ticks
// below zero are never issued.
func (r *ring) take(from, limit int64) (uint64, bool) {
	from = max(from, limit-ringMask, 0)
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
		default:
			t++
			continue
		}
		if slot.CompareAndSwap(v, next) {
			return next, true
		}
	}
	return 0, false
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
