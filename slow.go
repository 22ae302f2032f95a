package ringflake

import (
	"context"
	"fmt"
	"time"

	"github.com/ringflake/ringflake/internal/calltrace"
	"github.com/ringflake/ringflake/strategies"
)

// The slow path handles everything but a free sequence number at the
// clock's tick: a rollback, a used-up tick, callers waiting in line, a
// previous run's reservation, an expired layout, a high-water mark to
// save, a lost lease, a closed generator. Each round of resolve goes
// through the same steps:
//
//  1. preconditions: nothing may be issued now (closed, lease lost, layout
//     expired, before the epoch);
//  2. the situation the strategy is asked about;
//  3. when the clock is not behind: the clock's own tick — through the
//     line when callers wait in it;
//  4. ask the strategy, step by step, and carry out the first plan that
//     does something;
//  5. wait — as the plan says, or for the next tick with room — in line,
//     then read the clock and go round again.

// call is one call on the slow path: what it read last, where it waits and
// what it did.
type call struct {
	reading               // the latest readings
	want    uint64        // how many IDs the caller still needs
	exact   bool          // e is a fresh wall reading, not an estimate
	place   *place        // its place in line, or nil
	expect  int64         // the reading the last wait was to end at (ns since the epoch)
	slept   time.Duration // how long that wait was
	waited  time.Duration // strategy sleeps, for Situation.Waited
	step    int           // index of the step whose plan was carried out last, or -1
	report  bool          // this call reports a rollback event
	behind  time.Duration // how far behind, for the event
	at      int64         // clock reading when the rollback was met, for the event

}

// pause is a wait that step 5 of resolve carries out.
type pause struct {
	d     time.Duration // how long
	tick  int64         // the tick the caller waits for in line; -1: it does not wait in line
	cause waitCause     // what the call waits for, as Stats and the replay's trace tell it
	asked bool          // a strategy asked for it: it counts towards Situation.Waited
}

type waitCause uint8

const (
	waitCapacity    = waitCause(calltrace.Capacity)    // the tick is used up, or callers ahead took it
	waitStrategy    = waitCause(calltrace.Strategy)    // the strategy asked for it
	waitReservation = waitCause(calltrace.Reservation) // a previous run's mark reserved the ticks up to it
)

// slow is the slow path of one call that needs want IDs: it returns a run
// of at least one of them, or an error. It keeps the counters of Stats and
// reports the rollback event.
func (g *Generator) slow(ctx context.Context, r reading, want uint64) (run, error) {
	c := call{reading: r, want: want, exact: g.src.mono == nil, step: -1}
	out, err := g.resolve(ctx, &c)
	if c.place != nil {
		g.line.mu.Lock()
		lost := g.leave(c.place) // served while it went another way: never issued
		g.line.mu.Unlock()
		g.stats.abandoned.Add(lost.n)
	}
	if err != nil {
		g.stats.errors[kindOf(err)].Add(1)
	}
	if c.report {
		g.emit(&c, err)
	}
	return out, err
}

func (g *Generator) resolve(ctx context.Context, c *call) (run, error) {
	for {
		// 1. Preconditions.
		if err := g.precondition(c); err != nil {
			return run{}, err
		}

		// 1b. Behind an observed ID: lead (observe.go).
		if lead, ok := g.leads(c); ok {
			out, ok, err := g.lead(ctx, c, lead)
			if err != nil || out.n > 0 {
				return out, err
			}
			if ok {
				continue
			}
		}

		// 2. The situation.
		s := g.situation(c)

		// 3. Not behind: the clock's tick, through the line.
		if !s.IsBehind() {
			out, again, err := g.atClock(ctx, c)
			if out.n > 0 || err != nil {
				return out, err
			}
			if again {
				g.reread(c)
				continue
			}
			s.Full = true
		} else if !c.report && len(g.hooks) > 0 {
			g.claimReport(c, s)
		}

		// 4. Ask the strategy and carry out its plan.
		out, p, err := g.ask(ctx, c, s)
		if out.n > 0 || err != nil {
			return out, err
		}

		// 5. Wait, then look again.
		if err := g.await(ctx, c, s, p); err != nil {
			return run{}, err
		}
	}
}

// precondition returns the error of a call that may issue nothing now.
func (g *Generator) precondition(c *call) error {
	switch {
	case g.closed.Load():
		return ErrClosed
	case g.lease != nil && !g.lease.Held():
		return fmt.Errorf("%w: node %d", ErrLeaseLost, g.node)
	case c.now > g.last:
		return &timeError{err: ErrLayoutExpired, at: g.src.epoch.Add(time.Duration(c.e)), edge: g.layout.Last()}
	case c.now < 0 && c.newest < 0:
		return &timeError{err: ErrBeforeEpoch, at: g.src.epoch.Add(time.Duration(c.e)), edge: g.src.epoch}
	}
	return nil
}

// situation returns what the strategy is asked about. A call that waited
// in line for a tick and then reads the clock well before the instant its
// wait was to end at saw the clock step back (or stand still) during the
// wait: it is behind the tick it waited for, a rollback like any other,
// and the strategy decides — instead of the call waiting on for capacity.
// "Well before" allows for a clock that runs slow by 1.5 % or less, far
// more than NTP ever slews. When no ID was issued past the clock's tick
// and the clock stood still during the wait (see timeSource.stoodStill),
// the situation is Frozen: an error for it names a frozen clock, not a
// rollback.
func (g *Generator) situation(c *call) strategies.Situation {
	newest := c.newest
	if c.place != nil && c.expect-c.e > int64(c.slept/64)+int64(time.Microsecond) {
		g.line.mu.Lock()
		if c.place.served.n == 0 {
			newest = max(newest, c.place.target)
		}
		g.line.mu.Unlock()
	}
	frozen := newest > c.newest && c.now >= c.newest && g.src.stoodStill(c.e, c.expect-int64(c.slept))
	return strategies.Situation{Elapsed: time.Duration(c.e), Unit: g.layout.unit, Epoch: g.layout.epoch,
		Newest: newest, Last: g.last, Waited: c.waited, Frozen: frozen}
}

// atClock issues at the clock's tick, which is not behind the newest: the
// next sequence numbers of the tick — when nobody waits in line — or the
// call's IDs once the line, served from its head, comes to it. It reports
// again when it waited for a mark to be saved and the call must read the
// clock again. An empty run without again means the call must wait: the
// tick has no room for it (used up, reserved by a previous run, or taken
// by callers ahead in line).
func (g *Generator) atClock(ctx context.Context, c *call) (out run, again bool, err error) {
	l := &g.line
	if c.place != nil {
		l.mu.Lock()
		out = g.takeServed(c)
		l.mu.Unlock()
		if out.n > 0 {
			return out, false, nil
		}
	}
	if waited, err := g.prepare(ctx, c.now); err != nil || waited {
		return run{}, waited, err
	}
	if c.place == nil && l.length.Load() == 0 {
		if v, n := g.ring.takeRunAt(c.now, c.want, g.hardTick()); n > 0 {
			g.raise(c.now)
			return run{v, n}, false, nil
		}
		return run{}, false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.place == nil {
		c.place = l.join(c.want, c.now) // behind those who waited
		if l.length.Load() == 1 {
			g.setHorizon()
		}
	}
	if c.now >= g.newest.Load() {
		g.serve(c.now)
	}
	return g.takeServed(c), false, nil
}

// takeServed returns the IDs the line served the call, if it did, and
// gives its place up. g.line.mu is held.
func (g *Generator) takeServed(c *call) run {
	out := c.place.served
	if out.n > 0 {
		g.line.recycle(c.place)
		c.place = nil
	}
	return out
}

// ask asks the steps of the strategy in turn and carries out the first
// plan that issues; it returns the IDs, the error of a plan that fails or
// of a rollback no step took care of, or the pause to wait.
func (g *Generator) ask(ctx context.Context, c *call, s strategies.Situation) (run, pause, error) {
	for i, step := range g.steps {
		p := step.Decide(s)
		if !p.IsPass() {
			c.step = i
		}
		if from, limit, ok := p.Range(); ok {
			from = max(from, g.floor.Load()) // never below an observed ID
			if limit <= s.Newest {
				// Reusing: never past an ID issued. (A call that waited
				// for a tick is behind that tick when the clock steps
				// back during its wait, but nobody has an ID there.)
				limit = min(limit, max(c.newest, c.now))
			} else {
				// Borrowing: as far as the lease's bound on the lead.
				limit = min(limit, max(s.Newest, addSat(c.now, g.maxLead)))
			}
			out, err := g.issue(ctx, c, from, limit)
			if err != nil || out.n > 0 {
				if out.n > 0 && i == 0 && c.waited == 0 && g.stable && c.place == nil {
					g.lane.set(c.now, c.newest, from, limit)
				}
				return out, pause{}, err
			}
			if d := p.SleepFor(); d > 0 {
				// OrSleep: the range has no room (a logical strategy at
				// its lead: more demand than the ticks it may borrow
				// hold), or the previous run's mark reserved all of it.
				cause := waitCapacity
				if g.mark != nil && min(limit, g.hardTick()) <= g.mark.reserved {
					cause = waitReservation
				}
				return run{}, pause{d: d, tick: -1, cause: cause, asked: true}, nil
			}
			continue
		}
		if err := p.Err(); err != nil {
			return run{}, pause{}, err
		}
		if d := p.SleepFor(); d > 0 {
			// Waiting out a rollback: in line for the newest tick.
			return run{}, pause{d: d, tick: s.Newest, cause: waitStrategy, asked: true}, nil
		}
	}
	if s.IsBehind() {
		return run{}, pause{}, s.BehindError()
	}
	// The tick is used up, or taken by callers ahead in line, or reserved
	// by the previous run's mark: wait in line for the next tick that may
	// have room.
	tick, cause := g.nextFree(c.now)
	if c.place != nil {
		g.line.mu.Lock()
		tick = max(tick, c.place.target)
		g.line.mu.Unlock()
	}
	return run{}, pause{d: s.Until(tick), tick: tick, cause: cause}, nil
}

// issue carries out an Issue plan over [from, limit]: the earliest room
// the ring has there, up to the saved high-water mark; when the mark is in
// the way it waits for a later one.
func (g *Generator) issue(ctx context.Context, c *call, from, limit int64) (run, error) {
	v, n := g.ring.take(from, limit, c.want, c.newest, g.hardTick())
	for n == 0 && g.mark != nil && min(limit, g.last) > g.hardTick() {
		// The saved mark is in the way: wait for a later one.
		if _, err := g.prepare(ctx, g.hardTick()+1); err != nil {
			return run{}, err
		}
		if g.lease != nil && !g.lease.Held() {
			return run{}, fmt.Errorf("%w: node %d", ErrLeaseLost, g.node)
		}
		v, n = g.ring.take(from, limit, c.want, c.newest, g.hardTick())
	}
	if n == 0 {
		return run{}, nil
	}
	g.issuedBy(g.ring.tick(v), c.now, c.newest)
	return run{v, n}, nil
}

// await carries out a pause: it keeps the call's place in line (or takes
// one), sleeps on the generator's clock and reads the clock again. It
// never sleeps on an estimate: a wall-clock step the estimate has not seen
// yet would make the wait too long or too short, so it first reads the
// wall clock and lets the call decide again.
func (g *Generator) await(ctx context.Context, c *call, s strategies.Situation, p pause) error {
	if !c.exact {
		c.exact = true
		c.newest = g.newest.Load()
		c.e, c.now = g.src.resyncTick()
		return nil
	}
	if p.tick >= 0 {
		g.wait(c, p.tick)
	} else if c.place != nil {
		g.line.mu.Lock()
		g.stats.abandoned.Add(g.leave(c.place).n)
		g.line.mu.Unlock()
		c.place = nil
	}
	before := c.e
	slept, err := g.sleep(ctx, c.e, p.d)
	if err != nil {
		return err
	}
	// A wait a step or Close ended early counts as long as it lasted.
	p.d = slept
	c.expect, c.slept = before+int64(slept), slept
	if p.asked {
		c.waited += p.d
	}
	switch p.cause {
	case waitStrategy:
		g.stats.waits.Add(1)
		g.stats.waited.Add(int64(p.d))
	case waitReservation:
		g.stats.reservationWaits.Add(1)
		g.stats.reservationWaited.Add(int64(p.d))
	default:
		g.stats.tickWaits.Add(1)
		g.stats.tickWaited.Add(int64(p.d))
	}
	if g.tracer != nil {
		g.tracer.Waited(calltrace.Cause(p.cause), p.d)
	}
	g.reread(c)
	c.exact = g.src.mono == nil
	return nil
}

// wait puts the call in line for tick, or moves its place's tick there.
func (g *Generator) wait(c *call, tick int64) {
	l := &g.line
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.place != nil {
		c.place.target = max(c.place.target, tick)
		return
	}
	c.place = l.join(c.want, tick)
	if l.length.Load() == 1 {
		g.setHorizon()
	}
}

// reread reads the newest tick and the clock again, in that order (see
// fast).
func (g *Generator) reread(c *call) {
	c.newest = g.newest.Load()
	c.e, c.now = g.src.readTick()
}

// nextFree returns the first tick after now that may have room, and why
// the call waits for it: the next tick, or the one after the previous
// run's mark while the clock reads inside its reservation.
func (g *Generator) nextFree(now int64) (int64, waitCause) {
	if g.mark != nil && g.mark.reserved > now {
		return g.mark.reserved + 1, waitReservation
	}
	return now + 1, waitCapacity
}

// issuedBy records IDs a plan issued at tick, when the clock read now and
// the newest tick was newest: it raises the newest tick, and counts
// borrowed time once per tick, in the call that moves the newest tick. A
// reuse (tick < newest) moves nothing; the ring counted it.
func (g *Generator) issuedBy(tick, now, newest int64) {
	if tick < newest {
		return
	}
	if prev, moved := g.raiseFrom(tick); moved && tick > now {
		g.stats.borrowed.Add(tick - max(prev, now))
		storeMax(&g.stats.maxLead, tick-now)
	}
}
