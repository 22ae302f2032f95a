package ringflake

import (
	"context"
	"math"
	"sync"
	"time"
)

// sleep waits d on the generator's clock, counted from the reading e (ns
// since the epoch) it was computed from, or until ctx is done, and returns
// ctx.Err() if it was. It returns early, with nil, when the generator is
// closed or another call sees the clock step (the caller then decides
// again). It returns how long it slept, as far as it can tell. Deadlines are on the monotonic clock, and no wait lasts more
// than d from when it starts. A generator on the system clock waits up to
// preciseWait in its waitq, until the monotonic instant of e plus d, so
// that callers waiting for one tick share one deadline however long they
// took to get here; longer waits, waits inside a testing/synctest bubble
// (whose clock a thread sleeping in the kernel never lets move: see
// [bubbled]), and waits on any other clock, go through the clock's After.
func (g *Generator) sleep(ctx context.Context, e int64, d time.Duration) (slept time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, nil
	}
	bubble := g.src.sys && bubbled(time.Now())
	if g.src.sys && d <= preciseWait && kernelSleep && !bubble {
		// The monotonic instant of e is now less the time since e, as
		// the estimate tells it. After another call re-synced across a
		// step, the estimate's offset is not the one e was read with:
		// the deadline is then at most d from now, never the step's
		// size.
		m := g.src.monotonic()
		left := min(max(e+int64(d)-(m+g.src.offset.Load()), 0), int64(d))
		err := g.waits.wait(ctx, m+left)
		return min(time.Duration(g.src.monotonic()-m), d), err
	}
	if bubble || g.tracer != nil {
		// Inside a testing/synctest bubble only the bubble's own timers
		// and channels let its clock move on; a generator made outside
		// the bubble has channels of the outside world, and waiting on
		// them would keep the bubble from ever being idle. A
		// simulation's clock (one that traces waits: the replay of
		// package scenario, package fleetsim) decides every wake-up
		// itself, one goroutine at a time; a wake-up by a step or by
		// Close from outside its schedule would let two calls run at
		// once, and a replay would no longer be deterministic. There a
		// wait lasts its time (or ends with ctx): a step or Close
		// meanwhile is seen when it is over.
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-g.src.clock.After(d):
			return d, nil
		}
	}
	step, done := g.waits.signals()
	var m int64
	if g.src.mono != nil {
		m = g.src.monotonic()
	}
	timer := g.src.clock.After(d) // the clock first: a test clock learns a sleep starts
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-timer:
		return d, nil
	case <-step: // the clock stepped: decide again
	case <-done: // closed
	}
	if g.src.mono == nil {
		return 0, nil // woken early, with no clock to tell how long it slept
	}
	return min(max(time.Duration(g.src.monotonic()-m), 0), d), nil
}

// waitq lets the callers of a generator on the system clock wait short
// times precisely without an OS thread each. The Go runtime's timers sleep
// in the network poller, whose timeout has whole milliseconds, so a wait of
// 300 µs for the next 1 ms tick would last about 1.1 ms and a saturated
// generator would lose ticks; a thread sleeping in the kernel wakes to the
// precision of the kernel's timers, but a thread per waiting caller runs a
// process into the runtime's thread limit under a burst. So callers wait
// on channels, and a caller sleeps in the kernel for the queue only when
// no sleeper wakes in time for it: a sleeper wakes every caller that is
// due and sleeps on towards the earliest deadline left, unless another
// sleeper wakes in time for that one. When a sleeper's own deadline has
// come and others still wait, a goroutine takes its place. So threads grow
// with the distinct deadlines under way — the next tick's, a rollback's
// end — never with the callers. Nothing spins.
//
// Deadlines are monotonic time since start. The zero waitq is ready once
// start is set.
type waitq struct {
	mu       sync.Mutex
	start    time.Time
	waiting  []*waiter
	sleepers []*sleeper // callers or goroutines sleeping in the kernel for the queue
	closed   bool       // the generator is closed: nobody waits any more
	// step is closed (and replaced) when a call sees the clock step, and
	// done when the generator closes: they end the waits on a clock's
	// After (see Generator.sleep). Both are made by init.
	step, done chan struct{}
}

// init readies q for a generator whose monotonic clock started at start.
func (q *waitq) init(start time.Time) {
	q.start = start
	q.step, q.done = make(chan struct{}), make(chan struct{})
}

// signals returns the channels that end a wait on a clock's After: the
// one closed at the next step, and the one closed by Close.
func (q *waitq) signals() (step, done <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.step, q.done
}

// wakeStep wakes every waiting caller, on the queue and on a clock's
// After, so that each decides again: a call saw the clock step.
func (q *waitq) wakeStep() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.step != nil {
		close(q.step)
		q.step = make(chan struct{})
	}
	q.wakeWaiting()
}

// sleeper is a thread sleeping in the kernel for the queue.
type sleeper struct {
	target int64 // the deadline it sleeps towards
}

// waiter is a caller in the queue; done receives once when it is due.
type waiter struct {
	at   int64
	done chan struct{}
}

var (
	waiters  = sync.Pool{New: func() any { return &waiter{done: make(chan struct{}, 1)} }}
	sleepers = sync.Pool{New: func() any { return new(sleeper) }}
)

// joinSlack is how much later than a caller's deadline a sleeper may wake
// and still serve it: the deadlines of callers waiting for one tick differ
// by the noise of their clock readings. The kernel's own timer slack for a
// thread is 50 µs.
const joinSlack = 50 * int64(time.Microsecond)

// wait returns once the monotonic time since start is at, or with ctx's
// error when ctx ends first. It returns at once when the generator is
// closed (wakeAll).
func (q *waitq) wait(ctx context.Context, at int64) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	w := waiters.Get().(*waiter)
	w.at = at
	q.waiting = append(q.waiting, w)
	if !q.covered(at, nil) {
		s := sleepers.Get().(*sleeper)
		s.target = at
		q.sleepers = append(q.sleepers, s)
		q.mu.Unlock()
		return q.lead(ctx, w, s)
	}
	q.mu.Unlock()
	return q.follow(ctx, w)
}

// follow waits on w's channel until a sleeper wakes it or ctx ends.
func (q *waitq) follow(ctx context.Context, w *waiter) error {
	select {
	case <-w.done:
		waiters.Put(w)
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		queued := q.remove(w)
		q.mu.Unlock()
		if !queued {
			<-w.done // it was woken meanwhile
		}
		waiters.Put(w)
		return ctx.Err()
	}
}

// lead sleeps for the queue as s, the caller of w, until w is due or ctx
// ends; either way it hands the rest of the queue on. While another
// sleeper wakes in time for every deadline left, it waits on w's channel
// instead.
func (q *waitq) lead(ctx context.Context, w *waiter, s *sleeper) error {
	for {
		q.mu.Lock()
		now := q.now()
		next := q.wakeDue(now)
		select {
		case <-w.done:
			q.handOn(s, next)
			q.mu.Unlock()
			waiters.Put(w)
			return nil
		default:
		}
		if err := ctx.Err(); err != nil {
			q.remove(w)
			q.handOn(s, q.earliest())
			q.mu.Unlock()
			waiters.Put(w)
			return err
		}
		if q.covered(next, s) {
			q.drop(s)
			q.mu.Unlock()
			return q.follow(ctx, w)
		}
		s.target = next
		q.mu.Unlock()
		d := time.Duration(next - now)
		if ctx.Done() != nil {
			d = min(d, cancelSlice)
		}
		sleepThread(d)
	}
}

// serve sleeps for the queue as s, on a goroutine of its own, until
// nobody waits or another sleeper wakes in time for every deadline left.
// A waitq's waits are short (preciseWait), so its slices cost a few
// wake-ups at most.
func (q *waitq) serve(s *sleeper) {
	for {
		q.mu.Lock()
		now := q.now()
		next := q.wakeDue(now)
		if len(q.waiting) == 0 || q.covered(next, s) {
			q.drop(s)
			q.mu.Unlock()
			return
		}
		s.target = next
		q.mu.Unlock()
		// In slices, so that it stops soon after the callers it sleeps
		// for have left (cancelled) or an earlier sleeper took over.
		sleepThread(min(time.Duration(next-now), cancelSlice))
	}
}

// handOn leaves the queue, which s slept for, to a goroutine that sleeps
// for it towards next — unless nobody waits or another sleeper wakes in
// time for next. q.mu is held.
func (q *waitq) handOn(s *sleeper, next int64) {
	if len(q.waiting) == 0 || q.covered(next, s) {
		q.drop(s)
		return
	}
	s.target = next
	go q.serve(s)
}

// covered reports whether a sleeper other than self wakes in time for a
// caller due at at. q.mu is held.
func (q *waitq) covered(at int64, self *sleeper) bool {
	for _, s := range q.sleepers {
		if s != self && s.target <= at+joinSlack {
			return true
		}
	}
	return false
}

// drop takes s out of the sleepers, for reuse: its thread no longer
// sleeps for the queue. q.mu is held.
func (q *waitq) drop(s *sleeper) {
	for i, x := range q.sleepers {
		if x == s {
			last := len(q.sleepers) - 1
			q.sleepers[i] = q.sleepers[last]
			q.sleepers[last] = nil
			q.sleepers = q.sleepers[:last]
			sleepers.Put(s)
			return
		}
	}
}

// earliest returns the earliest deadline in the queue (math.MaxInt64 when
// none). q.mu is held.
func (q *waitq) earliest() int64 {
	next := int64(math.MaxInt64)
	for _, w := range q.waiting {
		next = min(next, w.at)
	}
	return next
}

// wakeDue wakes and removes every waiter due at now, and returns the
// earliest deadline left (math.MaxInt64 when none). q.mu is held.
func (q *waitq) wakeDue(now int64) int64 {
	next := int64(math.MaxInt64)
	keep := q.waiting[:0]
	for _, w := range q.waiting {
		if w.at <= now {
			w.done <- struct{}{}
			continue
		}
		next = min(next, w.at)
		keep = append(keep, w)
	}
	clear(q.waiting[len(keep):])
	q.waiting = keep
	return next
}

// remove takes w out of the queue and reports whether it was there. q.mu
// is held.
func (q *waitq) remove(w *waiter) bool {
	for i, x := range q.waiting {
		if x == w {
			last := len(q.waiting) - 1
			q.waiting[i] = q.waiting[last]
			q.waiting[last] = nil
			q.waiting = q.waiting[:last]
			return true
		}
	}
	return false
}

// wakeAll wakes every waiter and lets no caller wait any more: the
// generator is closed.
func (q *waitq) wakeAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed && q.done != nil {
		close(q.done)
	}
	q.closed = true
	q.wakeWaiting()
}

// wakeWaiting wakes and removes every caller waiting in the queue. q.mu
// is held.
func (q *waitq) wakeWaiting() {
	for _, w := range q.waiting {
		w.done <- struct{}{}
	}
	clear(q.waiting)
	q.waiting = q.waiting[:0]
}

// now returns the monotonic time since start.
func (q *waitq) now() int64 { return int64(time.Since(q.start)) }
