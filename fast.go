package ringflake

import "context"

// The fast path issues IDs without asking the strategy: at the clock's
// tick when it has room, or from the range the first strategy chose for
// this same situation (the lane). Everything else is the slow path's.

// reading is what the fast path read before it gave up, for the slow path
// to start from: the clock as nanoseconds since the epoch (e) and as a
// tick (now), and the newest tick issued, loaded before the clock.
type reading struct {
	e, now, newest int64
}

// run is a run of pairs of one tick that the ring issued together: n
// consecutive packed values from first on.
type run struct {
	first, n uint64
}

// take is the one entry of every way of taking IDs (Next, NextN; Observe's
// floor is applied on the way): up to want IDs of one tick. Its first part
// is the fast path: at the clock's tick — usually the ring's hot tick,
// taken with one atomic add — or from the range the first strategy chose
// for this same situation (the lane). When that cannot issue, the slow
// path starts from what the fast path read. Both take from the ring
// through claim. The fast path is written out here rather than called:
// it is every Next's path, and one call less is a tenth of its cost.
func (g *Generator) take(ctx context.Context, want uint64) (run, error) {
	if g.unmade() {
		return run{}, errUnmade
	}
	// newest first: every tick in it was then stamped from an earlier
	// reading (or borrowed), so a call delayed between reading the clock
	// and loading newest cannot mistake another call's later tick for a
	// rollback.
	var r reading
	r.newest = g.newest.Load()
	// The cycle counter where it is trusted and in its record's tick
	// (cycleClock), else readTick, whose reading is in order.
	var counted bool
	if c := &g.src.cyc; c.on.Load() {
		r.e, r.now, counted = c.read(cycles())
	}
	if !counted {
		r.e, r.now = g.src.readTick()
	}
	h := g.horizon.Load() // the ceiling of the fast path's takes
	if g.lease == nil || g.lease.Held() {
		if r.now >= r.newest {
			if v, n := g.ring.takeRunAt(r.now, want, h); n > 0 {
				if r.now > r.newest {
					g.raise(r.now)
				}
				return run{v, n}, nil
			}
		}
		// Past the horizon the slow path saves the next mark.
		if r.now <= h && r.now >= 0 {
			if v, n := g.fromLane(r, h, want, counted); n > 0 {
				return run{v, n}, nil
			}
		}
	}
	if counted {
		// The cycle counter may have been read before newest was
		// loaded: the slow path, which tells rollbacks, reads in order.
		r.newest = g.newest.Load()
		r.e, r.now = g.src.readTick()
	}
	return g.slow(ctx, r, want)
}

// fromLane takes up to want pairs from the range the first strategy chose
// in the situation r, if the lane remembers one: during a rollback or
// while borrowing, only the first call of each situation asks the
// strategy. h is the horizon the caller loaded: the ceiling of its takes.
//
// A reading of the cycle counter (counted) may be a little older
// than the newest tick loaded before it: one tick behind newest, it may
// have been taken as the clock reached newest's tick, when a rollback that
// left a plan reusing ticks below newest (the ring) had just ended. Such a
// reading does not reuse: the slow path reads again in order, so that an
// ID below one a call already got at the clock's tick is issued only while
// the clock really reads behind it.
func (g *Generator) fromLane(r reading, h int64, want uint64, counted bool) (uint64, uint64) {
	from, limit, ok := g.lane.get(r.now, r.newest)
	if !ok || from < g.floor.Load() { // never below an observed ID
		return 0, 0
	}
	if from < r.newest && counted && r.newest-r.now <= 1 {
		return 0, 0
	}
	if from == r.newest && from <= limit {
		// Counting on at the newest tick (the logical strategy
		// borrowing): while it has room, nothing moves and nothing is
		// counted.
		if v, n := g.ring.takeRunAt(from, want, h); n > 0 {
			return v, n
		}
	}
	v, n := g.ring.take(from, limit, want, r.newest, h)
	if n == 0 {
		return 0, 0
	}
	g.issuedBy(g.ring.tick(v), r.now, r.newest)
	return v, n
}
