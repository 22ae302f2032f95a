package fleetsim

import (
	"time"

	"github.com/ringflake/ringflake/internal/simhook"
)

// The world is a discrete-event simulation in true time. Its event loop
// pops the earliest event (ties in the order they were scheduled) and runs
// it. Code that blocks — a node's process waiting for its next call, a
// generator sleeping on its clock, a request waiting for its reply — runs
// as a proc: a goroutine that runs only while it holds the turn, which the
// loop hands it and which it hands back when it blocks on the world
// (block) or ends. The goroutines a generator starts for its mark saves
// come to the world through simhook.Runner.Go and become procs too, and a
// call that waits for such a save tells the world through Runner.Wait. So
// exactly one goroutine runs at a time, and what happens is a function of
// the scenario and its seed alone.

type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

// eventHeap is a min-heap of events by (at, seq), typed so that pushing
// and popping allocate nothing.
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q[n] = event{}
	q = q[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

type world struct {
	now   time.Duration // true time since the start
	seq   uint64
	queue eventHeap
	yield chan struct{}
	cur   *proc

	spawned []*proc // started by the current turn, to run when it yields
	waiting []*proc // blocked in Runner.Wait, in the order they blocked
}

// proc is a goroutine of the world. owner is the node process it belongs
// to (nil for none).
type proc struct {
	w      *world
	owner  *incarnation
	resume chan struct{}
	token  uint64          // counts its blocks: a wake-up for an older block is stale
	done   <-chan struct{} // what it waits for in Runner.Wait
	ended  bool
}

func newWorld() *world {
	return &world{yield: make(chan struct{})}
}

// at schedules fn at true time t (not before now).
func (w *world) at(t time.Duration, fn func()) {
	if t < w.now {
		t = w.now
	}
	w.seq++
	w.queue.push(event{at: t, seq: w.seq, fn: fn})
}

// nextAt returns the time of the earliest event, and false when none.
func (w *world) nextAt() (time.Duration, bool) {
	if len(w.queue) == 0 {
		return 0, false
	}
	return w.queue[0].at, true
}

// loop runs the events due up to end, in order.
func (w *world) loop(end time.Duration) {
	for len(w.queue) > 0 && w.queue[0].at <= end {
		ev := w.queue.pop()
		w.now = ev.at
		ev.fn()
	}
}

// spawn makes a proc that runs f, and runs it until it first blocks.
func (w *world) spawn(owner *incarnation, f func()) *proc {
	p := w.newProc(owner, f)
	if w.cur != nil {
		// Started by a proc: it runs when this turn is over.
		w.spawned = append(w.spawned, p)
		return p
	}
	w.run(p)
	return p
}

func (w *world) newProc(owner *incarnation, f func()) *proc {
	p := &proc{w: w, owner: owner, resume: make(chan struct{})}
	if owner != nil {
		owner.procs = append(owner.procs, p)
	}
	go func() {
		<-p.resume
		f()
		p.ended = true
		w.yield <- struct{}{}
	}()
	return p
}

// run hands the turn to p until it blocks or ends, then to the procs it
// started and those whose wait is over, until nobody is left to run.
func (w *world) run(p *proc) {
	w.turn(p)
	for {
		switch {
		case len(w.spawned) > 0:
			q := w.spawned[0]
			w.spawned = w.spawned[1:]
			w.turn(q)
		case w.wakeWaiter():
		default:
			return
		}
	}
}

func (w *world) turn(p *proc) {
	if p.ended {
		return
	}
	prev := w.cur
	w.cur = p
	p.resume <- struct{}{}
	<-w.yield
	w.cur = prev
}

// wakeWaiter runs the first proc waiting in Runner.Wait whose channel is
// closed, and reports whether there was one.
func (w *world) wakeWaiter() bool {
	for i, p := range w.waiting {
		select {
		case <-p.done:
		default:
			if !p.owner.dead {
				continue
			}
		}
		w.waiting = append(w.waiting[:i], w.waiting[i+1:]...)
		p.done = nil
		p.token++
		w.turn(p)
		return true
	}
	return false
}

// block hands the turn back until someone runs p again. It must be called
// by p itself, holding the turn.
// A proc of a dead process never blocks: it runs on to its end, as
// every wait of a dead process returns at once.
func (p *proc) block() {
	p.token++
	if p.owner != nil && p.owner.dead {
		return
	}
	p.w.yield <- struct{}{}
	<-p.resume
}

// A wake is one block of a proc that several events may end: the first
// to fire resumes the proc, the others do nothing.
type wake struct {
	p     *proc
	tok   uint64
	fired bool
}

// prepare returns the wake of the block p makes next.
func (p *proc) prepare() *wake { return &wake{p: p, tok: p.token + 1} }

// fire resumes the proc, unless the wake fired already or is stale; a
// proc of a stopped (paused) host resumes when the pause ends.
func (k *wake) fire() {
	p := k.p
	if k.fired || p.token != k.tok || p.ended {
		return
	}
	if p.w.cur != nil {
		// Called by a proc: the loop runs p, once this turn is over.
		p.w.at(p.w.now, k.fire)
		return
	}
	k.fired = true
	if o := p.owner; o != nil && !o.dead && o.node.pausedUntil > p.w.now {
		p.w.at(o.node.pausedUntil, func() {
			if p.token == k.tok && !p.ended {
				p.w.run(p)
			}
		})
		return
	}
	p.w.run(p)
}

// wakeAt schedules p to run at t: the wake of its next block.
func (p *proc) wakeAt(t time.Duration) *wake {
	k := p.prepare()
	p.w.at(t, k.fire)
	return k
}

// sleep blocks the calling proc for d of true time (a node's pause
// delays it further: see incarnation.runAt).
func (p *proc) sleep(d time.Duration) {
	p.wakeAt(p.w.now + max(d, 0))
	p.block()
}

// runner is the simhook.Runner of a node process's lease.
type runner struct{ inc *incarnation }

var _ simhook.Runner = runner{}

// Go makes f a proc of the node process, run when the current turn ends.
func (r runner) Go(f func()) {
	w := r.inc.node.sim.w
	p := w.newProc(r.inc, f)
	w.spawned = append(w.spawned, p)
}

// Wait blocks the calling proc until done is closed or its process dies.
func (r runner) Wait(done <-chan struct{}) {
	w := r.inc.node.sim.w
	p := w.cur
	if p == nil || r.inc.dead {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	p.done = done
	w.waiting = append(w.waiting, p)
	p.block()
}
