package ringflake

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ringflake/ringflake/internal/calltrace"
	"github.com/ringflake/ringflake/strategies"
)

// The slow path handles everything but a free sequence number at the
// clock's tick: a rollback, a used-up tick, a previous run's reservation,
// an expired layout, a high-water mark to save, a lost lease, a closed
// generator. Each round of resolve goes through the same steps:
//
//  1. preconditions: nothing may be issued now (closed, lease lost, layout
//     expired, before the epoch);
//  2. the situation the strategy is asked about;
//  3. when the clock is not behind: the clock's own tick, or the call's
//     place in line once its tick has come;
//  4. ask the strategy, step by step, and carry out the first plan that
//     does something;
//  5. wait — as the plan says, or for the next tick with room — taking a
//     place in line first, then read the clock and go round again.

// lineTicks is how many ticks past the one it waits for a waiting call
// looks for its place in line. Beyond them (a queue of more than 128
// ticks' worth of IDs) a call waits without a place, and may be overtaken.
const lineTicks = 128

// call is one call on the slow path: what it read last, what it holds and
// what it did.
type call struct {
	reading               // the latest readings
	want    uint64        // how many IDs the caller still needs
	exact   bool          // e is a fresh wall reading, not an estimate
	held    run           // its place in line, taken before it slept; n == 0: none
	seen    uint64        // Stats.Rollbacks when it last slept, to tell a step during the wait
	waited  time.Duration // strategy sleeps, for Situation.Waited
	step    int           // index of the step whose plan was carried out last, or -1
	report  bool          // this call reports a rollback event
	behind  time.Duration // how far behind, for the event
	at      int64         // clock reading when the rollback was met, for the event

	trace *calltrace.Call // where the call's waits are told, or nil
}

// pause is a wait that step 5 of resolve carries out.
type pause struct {
	d     time.Duration // how long
	line  int64         // the tick from which to look for a place in line; -1: none
	cause waitCause
}

type waitCause uint8

const (
	waitCapacity    waitCause = iota // the tick is used up, or callers ahead took it
	waitStrategy                     // the strategy asked for it
	waitReservation                  // a previous run's mark reserved the ticks up to it
)

// slow is the slow path of one call that needs want IDs: it returns a run
// of at least one of them, or an error. It keeps the counters of Stats and
// reports the rollback event.
func (g *Generator) slow(ctx context.Context, r reading, want uint64) (run, error) {
	c := call{reading: r, want: want, exact: g.src.mono == nil, step: -1, trace: calltrace.From(ctx)}
	out, err := g.resolve(ctx, &c)
	if c.held.n > 0 {
		g.stats.abandoned.Add(c.held.n) // a place in line it did not use: never issued
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

		// 2. The situation.
		s := g.situation(c)

		// 3. Not behind: the clock's tick or the call's place in line.
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

// situation returns what the strategy is asked about. A call that holds a
// place in line and saw the clock step back while it waited for it is
// behind that place: the step is a rollback like any other, and the
// strategy decides.
func (g *Generator) situation(c *call) strategies.Situation {
	newest := c.newest
	if c.held.n > 0 && g.stats.rollbacks.Load() != c.seen {
		newest = max(newest, g.ring.tick(c.held.first))
	}
	return strategies.Situation{Elapsed: time.Duration(c.e), Unit: g.layout.unit,
		Newest: newest, Last: g.last, Waited: c.waited}
}

// atClock issues at the clock's tick, which is not behind the newest: the
// call's place in line when its tick has come, or the next sequence numbers
// of the tick. It reports again when it waited for a mark to be saved and
// the call must read the clock again. An empty run without again means the
// tick has no room for this call (used up, reserved by a previous run, or
// the call's place is in a later tick).
func (g *Generator) atClock(ctx context.Context, c *call) (out run, again bool, err error) {
	if c.held.n > 0 {
		if tick := g.ring.tick(c.held.first); tick <= c.now {
			g.issuedBy(tick, c.now, c.newest)
			out, c.held = c.held, run{}
			return out, false, nil
		}
		return run{}, false, nil // its place is in a later tick
	}
	if waited, err := g.prepare(ctx, c.now); err != nil || waited {
		return run{}, waited, err
	}
	if v, n := g.ring.takeRunAt(c.now, c.want); n > 0 {
		g.raise(c.now)
		return run{v, n}, false, nil
	}
	return run{}, false, nil
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
			if limit <= s.Newest {
				// Reusing: never past an ID issued. (A call's place in
				// line makes it behind when the clock steps back during
				// its wait, but the place is not an ID anyone has.)
				limit = min(limit, max(c.newest, c.now))
			} else {
				// Borrowing: as far as the lease's bound on the lead.
				limit = min(limit, max(s.Newest, addSat(c.now, g.maxLead)))
			}
			out, err := g.issue(ctx, c, from, limit, c.newest)
			if err != nil || out.n > 0 {
				if out.n > 0 && i == 0 && c.waited == 0 && g.stable && c.held.n == 0 {
					g.lane.set(c.now, c.newest, from, limit)
				}
				return out, pause{}, err
			}
			if d := p.SleepFor(); d > 0 {
				// OrSleep: wait, keeping a place just past the range.
				return run{}, pause{d: d, line: limit + 1, cause: waitStrategy}, nil
			}
			continue
		}
		if err := p.Err(); err != nil {
			return run{}, pause{}, err
		}
		if d := p.SleepFor(); d > 0 {
			return run{}, pause{d: d, line: s.Newest, cause: waitStrategy}, nil
		}
	}
	if s.IsBehind() {
		return run{}, pause{}, &RollbackError{Behind: s.Behind()}
	}
	// The tick is used up, or reserved by the previous run's mark: wait
	// for the next tick that may have room.
	g.ring.capped(c.now)
	free, cause := g.nextFree(c.now)
	if c.held.n > 0 {
		free = max(free, g.ring.tick(c.held.first))
	}
	return run{}, pause{d: s.Until(free), line: free, cause: cause}, nil
}

// issue carries out an Issue plan over [from, limit]: the call's place in
// line if it lies in the range, or the earliest room the ring has there,
// up to the saved high-water mark; when the mark is in the way it waits
// for a later one.
func (g *Generator) issue(ctx context.Context, c *call, from, limit, newest int64) (run, error) {
	if c.held.n > 0 {
		if tick := g.ring.tick(c.held.first); from <= tick && tick <= limit {
			g.issuedBy(tick, c.now, newest)
			out := c.held
			c.held = run{}
			return out, nil
		}
	}
	v, n := g.ring.take(from, min(limit, g.hardTick()), c.want, newest)
	for n == 0 && g.mark != nil && min(limit, g.last) > g.hardTick() {
		// The saved mark is in the way: wait for a later one.
		if _, err := g.prepare(ctx, g.hardTick()+1); err != nil {
			return run{}, err
		}
		if g.lease != nil && !g.lease.Held() {
			return run{}, fmt.Errorf("%w: node %d", ErrLeaseLost, g.node)
		}
		v, n = g.ring.take(from, min(limit, g.hardTick()), c.want, newest)
	}
	if n == 0 {
		return run{}, nil
	}
	g.issuedBy(g.ring.tick(v), c.now, newest)
	return run{v, n}, nil
}

// await carries out a pause: it takes the call's place in line, sleeps on
// the generator's clock and reads the clock again. It never sleeps on an
// estimate: a wall-clock step the estimate has not seen yet would make the
// wait too long or too short, so it first reads the wall clock and lets
// the call decide again.
func (g *Generator) await(ctx context.Context, c *call, s strategies.Situation, p pause) error {
	if !c.exact {
		c.exact = true
		c.newest = g.newest.Load()
		c.e, c.now = g.src.resyncTick()
		return nil
	}
	if c.held.n == 0 && p.line >= 0 && p.cause != waitReservation {
		g.takePlace(ctx, c, p.line)
	}
	d := p.d
	if p.cause == waitCapacity && c.held.n > 0 {
		d = max(d, s.Until(g.ring.tick(c.held.first)))
	}
	c.seen = g.stats.rollbacks.Load()
	if err := g.sleep(ctx, d); err != nil {
		return err
	}
	switch p.cause {
	case waitStrategy:
		c.waited += d
		g.stats.waits.Add(1)
		g.stats.waited.Add(int64(d))
	case waitReservation:
		g.stats.reservationWaits.Add(1)
		g.stats.reservationWaited.Add(int64(d))
	default:
		g.stats.tickWaits.Add(1)
		g.stats.tickWaited.Add(int64(d))
	}
	if t := c.trace; t != nil {
		switch p.cause {
		case waitStrategy:
			t.Strategy += d
		case waitReservation:
			t.Reservation += d
		default:
			t.Capacity += d
		}
	}
	g.reread(c)
	c.exact = g.src.mono == nil
	return nil
}

// takePlace takes the call's place in line before it sleeps: the first
// room for its IDs at tick line or later (within lineTicks), so that callers
// that start waiting later are served after it. A place is taken within the
// saved high-water mark only; for the next tick it first starts saving a
// later mark when that is due, as a call at that tick would.
func (g *Generator) takePlace(ctx context.Context, c *call, line int64) {
	line = max(line, 0)
	if line > g.last {
		return
	}
	if line <= c.now+1 {
		if _, err := g.prepare(ctx, line); err != nil {
			return // the call meets the error again when it tries to issue
		}
	}
	v, n := g.ring.take(line, min(addSat(line, lineTicks), g.hardTick()), c.want, -1)
	if n > 0 {
		c.held = run{v, n}
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

// addSat returns a+b for b >= 0, saturating at the largest int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
