package ringflake

import (
	"math"
	"sync"
	"sync/atomic"
)

// line is the queue of callers waiting for a tick — the next one when a
// tick's sequence is used up, the newest one when a strategy waits out a
// rollback — in the order they started waiting. A place in line holds no
// ID: when its tick has come, whichever caller of the line first reads the
// clock serves the line from its head, taking each waiter's IDs from the
// ring in order while the tick has room; waiters left over wait for the
// next tick, still in order. So no caller waits for a tick that later
// callers are served from, and a caller that leaves the line (its context
// ended, the clock stepped back and its strategy failed it) costs nothing.
//
// While anyone is in line the fast path is closed (the horizon is put at
// the bottom), so that a caller arriving at the new tick joins the line
// behind those already in it instead of taking the tick's room first.
//
// A place's target is the earliest tick its turn can come: the tick after
// the full one for the head, and for those behind it the tick where the
// IDs wanted ahead of them would run out if every tick had the layout's
// whole sequence (perTick) free — so a caller sleeps until its turn may
// have come instead of waking at every tick of a long line. With fewer
// numbers free (an offset, numbers already taken) the turn comes later
// and the caller waits again; it never comes earlier.
type line struct {
	mu      sync.Mutex
	queue   []*place // in order; queue[head:] wait
	head    int
	free    []*place     // places to reuse: waiting allocates nothing
	length  atomic.Int32 // len(queue) - head, for setHorizon
	perTick uint64       // the most IDs a tick has: the layout's sequence numbers

	// The tick the last place's turn is projected at, and how many of
	// that tick's numbers are left after it.
	tailTick int64
	tailRoom uint64
}

// place is a caller's place in line.
type place struct {
	want   uint64 // IDs it needs
	target int64  // the tick it waits for
	served run    // its IDs, once served; n == 0 until then
}

// init readies the line of a layout with perTick sequence numbers per
// tick, with a place to reuse, so that the first wait allocates nothing
// either.
func (l *line) init(perTick uint64) {
	l.perTick = perTick
	l.free = append(l.free, new(place))
}

// join puts a place for want IDs, waiting for tick target at the earliest,
// at the end of the line, projected behind the places ahead. l.mu is held.
func (l *line) join(want uint64, target int64) *place {
	var p *place
	if n := len(l.free); n > 0 {
		p, l.free = l.free[n-1], l.free[:n-1]
	} else {
		p = new(place)
	}
	if l.length.Load() == 0 || l.tailTick < target {
		l.tailTick, l.tailRoom = target, l.perTick
	}
	*p = place{want: want, target: l.project(want)}
	l.queue = append(l.queue, p)
	l.length.Add(1)
	return p
}

// project returns the tick a place for want IDs behind the tail would be
// served at, and moves the tail past it. A place is served once, from one
// tick: all it wants, or what that tick has left. l.mu is held.
func (l *line) project(want uint64) int64 {
	at := l.tailTick
	l.tailRoom -= min(want, l.tailRoom)
	if l.tailRoom == 0 {
		l.tailTick, l.tailRoom = addSat(l.tailTick, 1), l.perTick
	}
	return at
}

// leave takes p out of the line, served or not, and keeps it for reuse.
// It returns the IDs p was served, if any. g.line.mu is held.
func (g *Generator) leave(p *place) run {
	l := &g.line
	for i := l.head; i < len(l.queue); i++ {
		if l.queue[i] == p {
			copy(l.queue[i:], l.queue[i+1:])
			l.queue[len(l.queue)-1] = nil
			l.queue = l.queue[:len(l.queue)-1]
			if l.length.Add(-1) == 0 {
				l.queue, l.head = l.queue[:0], 0
				g.setHorizon()
			}
			break
		}
	}
	served := p.served
	l.recycle(p)
	return served
}

// recycle keeps p for reuse. l.mu is held.
func (l *line) recycle(p *place) {
	*p = place{}
	l.free = append(l.free, p)
}

// serve serves the line at clock tick now, which is not behind the newest
// tick and is covered by the saved mark: from the head, each waiter whose
// tick has come gets its IDs from the ring at now, in order, while the
// tick has room; when it has none, the waiters left wait for the next
// tick. l.mu is held.
func (g *Generator) serve(now int64) {
	l := &g.line
	for l.head < len(l.queue) {
		p := l.queue[l.head]
		if p.target > now {
			break // in order: those behind it wait too
		}
		v, n := g.ring.takeRunAt(now, p.want, g.hardTick())
		if n == 0 {
			// Tick now is full: project the line again from the next.
			l.tailTick, l.tailRoom = now+1, l.perTick
			for _, q := range l.queue[l.head:] {
				q.target = max(q.target, l.project(q.want))
			}
			break
		}
		g.raise(now)
		p.served = run{v, n}
		l.queue[l.head] = nil
		l.head++
		l.length.Add(-1)
	}
	if l.head == len(l.queue) {
		l.queue, l.head = l.queue[:0], 0
		g.setHorizon()
	}
}

// bottom is the horizon while the fast path is closed.
const bottom = math.MinInt64
