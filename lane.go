package ringflake

import "sync/atomic"

// lane remembers the range of the last Issue plan of the generator's first
// strategy together with the situation it was made in — the clock's tick
// and the newest tick issued — so that later calls meeting the same
// situation take from that range without asking the strategy again: during
// a rollback (the ring) or while borrowing time (logical), only the first
// call of each situation takes the slow path. Only strategies that say
// they decide on ticks alone ([strategies.TickStable]) have their plans
// put in the lane. A sequence lock keeps the words consistent: seq is odd
// while they are written, and zero before the first plan.
type lane struct {
	seq         atomic.Uint64
	now, newest atomic.Int64
	from, limit atomic.Int64
}

// get returns the range remembered for the situation (now, newest), if any.
func (l *lane) get(now, newest int64) (from, limit int64, ok bool) {
	s := l.seq.Load()
	if s&1 != 0 || s == 0 || l.now.Load() != now || l.newest.Load() != newest {
		return 0, 0, false
	}
	from, limit = l.from.Load(), l.limit.Load()
	return from, limit, l.seq.Load() == s
}

// set remembers the range [from, limit] for the situation (now, newest),
// unless another call is setting the lane at the same time.
func (l *lane) set(now, newest, from, limit int64) {
	s := l.seq.Load()
	if s&1 != 0 || s != 0 && l.holds(now, newest, from, limit) || !l.seq.CompareAndSwap(s, s+1) {
		return
	}
	l.now.Store(now)
	l.newest.Store(newest)
	l.from.Store(from)
	l.limit.Store(limit)
	l.seq.Store(s + 2)
}

// holds reports whether the lane remembers [from, limit] for (now,
// newest) already: the calls that met a new situation together and went
// to the strategy together all set the lane to the same plan, and each
// write would make the others' gets miss (a write in progress is a miss)
// and send them to the strategy again.
func (l *lane) holds(now, newest, from, limit int64) bool {
	return l.now.Load() == now && l.newest.Load() == newest && l.from.Load() == from && l.limit.Load() == limit
}
