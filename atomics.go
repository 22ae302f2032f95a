package ringflake

import (
	"math"
	"sync/atomic"
)

// The generator's shared words only grow: the newest tick, the floor, the
// counters of largest values. These helpers raise them with a
// compare-and-swap loop, off the fast path's common case; and read
// counters that move while they are read without going below zero.

// storeMax makes v the value of a unless a holds more.
func storeMax(a *atomic.Int64, v int64) { raiseMax(a, v) }

// raiseMax makes v the value of a unless a holds as much or more, and
// reports whether this call moved it, and from where.
func raiseMax(a *atomic.Int64, v int64) (prev int64, moved bool) {
	for {
		old := a.Load()
		if v <= old {
			return old, false
		}
		if a.CompareAndSwap(old, v) {
			return old, true
		}
	}
}

// raise makes tick the newest tick issued unless a later one is.
func (g *Generator) raise(tick int64) { raiseMax(&g.newest, tick) }

// raiseFrom is raise, reporting whether this call moved the newest tick,
// and from where.
func (g *Generator) raiseFrom(tick int64) (prev int64, moved bool) { return raiseMax(&g.newest, tick) }

// subFloor returns a-b, or 0 when b > a (counters read one by one while
// IDs are issued may be a little apart).
func subFloor(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// addSat returns a+b for b >= 0, saturating at the largest int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
