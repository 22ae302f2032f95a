package ringflake

import (
	"math"
	"math/rand/v2"
	"sync"
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
// "nothing issued" and packed values order like the pairs. One tick at a
// time is hot: its slot is claimed whole, and calls take its sequence
// numbers with one atomic add on a counter (next), which never retries
// however many goroutines call. It is the issuing state; the generator
// keeps the rest (the newest tick, the saved high-water mark, the line of
// waiting callers, the lane).
//
// Two invariants make an ID unique, and each is enforced in one place,
// claim, the only code that issues:
//
//  1. No pair twice within a run. A cold take reads a slot and
//     compare-and-swaps it to a greater value, and the pairs it issues are
//     those between the slot's old value and its new one. Slot values only
//     grow, and all pairs of a slot share its residue, so no pair is ever
//     issued twice, whatever the clock does and however many goroutines
//     call. Which pairs a slot still has is one rule, room, applied by
//     every take. The hot tick is the one exception, and it keeps the
//     rule: heat takes every pair room leaves at the tick into its slot
//     before any of them is added out of next, so no cold take finds room
//     there; when the tick cools (a later tick heats, Close seals), next
//     is swapped out before the slot gives the pairs no add reached back,
//     so none of those was issued.
//  2. No pair twice across restarts. Every take receives a ceiling and
//     issues at no tick above it; the ceiling is at most the tick of the
//     high-water mark saved in the MarkStore (Generator.hardTick, or the
//     fast path's horizon, which is below it), so a restart that treats
//     every pair up to the saved mark as issued (fill) cannot meet a pair
//     this run issued. Without a MarkStore the ceiling is the layout's
//     last tick.
//
// An add belongs to the hot tick when the epoch reads the same before and
// after it: the epoch only grows ((tick+1)<<1 while the tick is hot, one
// more while no tick is), and next changes hands (cool swaps it out, heat
// stores the new tick's start) only while the epoch is odd,
// so an add between two equal even readings hit that tick's counter. An
// add that sees the epoch move is dropped; what it took of a counter is
// counted in burned.
//
// Everything else rests on these two; the strategies only choose which
// ticks a take may look at.
type ring struct {
	seqBits uint8
	maxSeq  uint64
	// spread and seed draw the first sequence number of each tick from
	// [0, spread) (WithSequenceOffset); spread <= 1 starts every tick at 0.
	spread, seed uint64
	// epoch is (t+1)<<1 while tick t is hot, odd while no tick is
	// (between two hot ticks, after a rollback cooled one, once sealed).
	// It only grows. hotOK is false for layouts whose sequence is too
	// wide for next's headroom: every take is then cold.
	epoch atomic.Uint64
	hotOK bool
	_     [cacheLine]byte // the slots, written on every cold take, share no cache line
	slots [ringSize]slot
	_     [cacheLine]byte
	// next is the hot tick's next sequence number, above maxSeq once the
	// tick is used up: the one word every hot take adds to.
	next atomic.Uint64
	_    [cacheLine]byte // with the fields below

	// mu is held to heat, cool and seal, and to burn: the epoch and next
	// change hands under it, while hot takes go on without it.
	mu sync.Mutex

	// filled holds the values fill put in the slots: pairs counted as
	// issued on a restart, not issued by this generator. It does not
	// change after New.
	filled [ringSize]uint64

	// retired counts the IDs of ticks whose slot a later tick took over:
	// with the IDs still in the slots, every ID this ring issued.
	retired atomic.Uint64

	// burned counts the pairs the ring counts as taken without issuing
	// them: those Generator.Observe took out, those of hot adds that saw
	// the epoch move, those a hot tick could not give back to its slot.
	// retired and the slots count them, issued leaves them out.
	burned atomic.Uint64
}

// maxHotSeqBits is the widest sequence a hot tick serves: next counts
// past maxSeq while a used-up tick is still hot, and must never wrap
// (see missed).
const maxHotSeqBits = 40

// overrun is where missed pulls next back to a used-up value: far above
// any sequence number, far below a wrap.
const overrun = 1 << 62

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
	r.hotOK = seqBits <= maxHotSeqBits
	r.epoch.Store(1) // no tick is hot
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

// claim issues up to want > 0 consecutive pairs of tick t, when
// 0 <= t <= ceil and the slot rule (room) gives t room: it returns the
// first packed pair and how many (0: none), and whether the slot held a
// later tick when it found no room. It is the one take primitive, and so
// where both invariants of the ring hold (see ring): the hot tick takes
// with one atomic add, a later tick becomes the hot one (heat), and an
// earlier tick — a rollback reusing, a tick cooled — takes with a
// compare-and-swap that only moves its slot forward (claimSlot). No tick
// above ceil is issued.
//
// The hot case is written out here, not called: it is every Next's path.
func (r *ring) claim(t int64, want uint64, ceil int64) (first, n uint64, later bool) {
	if t < 0 || t > ceil {
		return 0, 0, false
	}
	want = min(want, r.maxSeq+1) // what a tick has at most: next's adds stay far below a wrap
	h := hotKey(t)               // no epoch equals it for t >= 1<<61, which never heats
	for {
		e := r.epoch.Load()
		switch {
		case e == h:
			s := r.next.Add(want) - want
			if r.epoch.Load() == e && s <= r.maxSeq {
				return uint64(t+1)<<r.seqBits | s, min(want, r.maxSeq+1-s), false
			}
			if r.missed(s, want, e) {
				return 0, 0, false // used up
			}
			// The epoch moved during the add: t cooled. Once the cooling
			// is over (it holds mu), the slot has t's room back.
			r.mu.Lock()
			r.mu.Unlock() // an empty critical section: it waits for the cooling
			continue
		case e < h && r.hotOK && t < 1<<61:
			if first, n, later, heated := r.heat(t, want); !heated {
				return first, n, later
			}
			continue // another call heated t meanwhile: take it hot
		}
		return r.claimSlot(t, want)
	}
}

// hotKey is the epoch of tick t while it is hot.
func hotKey(t int64) uint64 { return uint64(t+1) << 1 }

// missed is claim's hot case for an add that issued nothing: one whose
// epoch moved (ok false; what it took of a counter counts as burned), or
// one past the tick's last sequence number (ok true: the tick is used up).
func (r *ring) missed(s, want, e uint64) (ok bool) {
	if r.epoch.Load() != e {
		if s <= r.maxSeq {
			r.burned.Add(min(want, r.maxSeq+1-s))
		}
		return false
	}
	if s >= overrun {
		r.pullBack()
	}
	return true
}

// pullBack brings next, gone past overrun on a used-up hot tick (many
// calls at a tick that no later tick replaces: a frozen clock), back to
// maxSeq+1 before adds could wrap it round to sequence numbers again.
func (r *ring) pullBack() {
	for {
		v := r.next.Load()
		if v < overrun || r.next.CompareAndSwap(v, r.maxSeq+1) {
			return
		}
	}
}

// heat makes tick t, later than the hot tick, the hot one and issues up
// to want of its pairs: it cools the hot tick, claims every pair room
// leaves t in t's slot, and starts next after the pairs it issues. When t
// has no room the ring is left with no hot tick. It reports heated when
// another call made t hot first (claim then takes it hot).
func (r *ring) heat(t int64, want uint64) (first, n uint64, later, heated bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e, h := r.epoch.Load(), hotKey(t); {
	case e == h:
		return 0, 0, false, true
	case e > h: // a later tick is hot, or the ring is sealed
		first, n, later = r.claimSlot(t, want)
		return first, n, later, false
	}
	r.cool()
	slot := &r.slots[t&ringMask]
	for {
		v := slot.Load()
		first, last, ok := r.room(t, v)
		if !ok {
			return 0, 0, v > last, false
		}
		if slot.CompareAndSwap(v, last) {
			if r.tick(v) < t {
				r.retire(t, v)
			}
			n = min(want, last-first+1)
			r.next.Store(first&r.maxSeq + n)
			r.epoch.Store(hotKey(t))
			return first, n, false, false
		}
	}
}

// cool ends the hot tick, if there is one: the epoch turns odd, next is
// swapped out, and the pairs no add reached go back to the tick's slot,
// where cold takes find them (a rollback reusing them). r.mu is held.
func (r *ring) cool() {
	e := r.epoch.Load()
	if e&1 != 0 {
		return
	}
	r.epoch.Store(e | 1)
	used := min(r.next.Swap(r.maxSeq+1), r.maxSeq+1) // sequence numbers taken
	if used > r.maxSeq {
		return // used up: the slot holds the tick's last pair already
	}
	t := int64(e>>1) - 1
	base := uint64(t+1) << r.seqBits
	if !r.slots[t&ringMask].CompareAndSwap(base|r.maxSeq, base+used-1) {
		// A later tick took the slot over and retired all of t's pairs:
		// those no add reached were never issued.
		r.burned.Add(r.maxSeq + 1 - used)
	}
}

// claimSlot is claim for a tick that is not hot: a compare-and-swap of its
// slot, retried while other calls change the slot first.
func (r *ring) claimSlot(t int64, want uint64) (first, n uint64, later bool) {
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
	r.mu.Lock()
	r.cool()
	r.epoch.Store(math.MaxUint64) // odd, and above every hot tick's: every take is cold
	r.mu.Unlock()
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
	var n uint64
	for range 8 { // a hot tick cooling meanwhile makes it count again
		e := r.epoch.Load()
		n = r.retired.Load()
		for i := range r.slots {
			if v := r.slots[i].Load(); v != 0 && v != r.filled[i] && v != sealed {
				n += r.count(v)
			}
		}
		if e&1 == 0 {
			// The hot tick's slot holds its last pair: leave out those
			// no add reached yet.
			n = subFloor(n, r.maxSeq+1-min(r.next.Load(), r.maxSeq+1))
		}
		if r.epoch.Load() == e {
			break
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

// burn moves tick t on to target, a pair of t, unless it is there or
// past it already, and returns how many pairs of t that counts as issued:
// the pairs up to target are never issued. At the hot tick it moves next;
// elsewhere, like claimSlot, it only moves the slot forward.
func (r *ring) burn(t int64, target uint64) (uint64, bool) {
	r.mu.Lock() // the hot tick stays the hot tick meanwhile
	defer r.mu.Unlock()
	e := r.epoch.Load()
	if hot := int64(e>>1) - 1; e&1 == 0 && hot < t && hot&ringMask == t&ringMask {
		// t takes the hot tick's slot over: the hot tick cools first, so
		// that what it issued is in the slot the later tick retires, and
		// it issues no more once its slot holds a later tick (the slot
		// rule: no room at a tick whose slot holds a later one).
		r.cool()
	}
	if e == hotKey(t) {
		after := target&r.maxSeq + 1 // the first sequence number left
		for {
			v := r.next.Load()
			if v >= after {
				return 0, false
			}
			if r.next.CompareAndSwap(v, after) {
				return after - v, true
			}
		}
	}
	first := r.first(t, uint64(t+1)<<r.seqBits)
	if target < first {
		return 0, false // t's first pair is above it already
	}
	slot := &r.slots[t&ringMask]
	for {
		v := slot.Load()
		if v >= target {
			return 0, false
		}
		if slot.CompareAndSwap(v, target) {
			if r.tick(v) < t {
				r.retire(t, v)
				return target - first + 1, true
			}
			return target - v, true
		}
	}
}
