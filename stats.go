package ringflake

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Stats are a generator's counters since [New], as [Generator.Stats]
// returns them. Counting costs nothing on the way to an ordinary ID: the
// counters move on the slow path (rollbacks, used-up ticks, errors), once
// per tick, and during a rollback once per ID the ring reuses.
type Stats struct {
	// Issued is the number of IDs issued.
	Issued uint64

	// Rollbacks is the number of times the wall clock was seen to step
	// back, and LargestRollback the largest step. With a Monotonic clock
	// (see Clock) a step is measured against the monotonic clock when the generator
	// re-syncs, once per tick, and counts when it moves the reading into
	// an earlier tick and the wall reads less than at the previous re-sync
	// (or behind an ID issued), or when the wall reads behind a tick it was
	// read at before the re-sync began (once per step, or twice when two
	// re-syncs read it at once); a wall that moved on, only less than the
	// monotonic clock, is a freeze. Without one, readings are compared call to call,
	// and only steps of a whole tick or more count (concurrent calls read
	// the clock in no particular order).
	Rollbacks       uint64
	LargestRollback time.Duration

	// Freezes is the number of times the wall clock was seen to stand
	// still, or to run on slower than the monotonic clock, without going
	// back (with a Monotonic clock, at a re-sync); a freeze is not counted
	// in Rollbacks. (From two readings a step back smaller than the time
	// between them cannot be told from a freeze: it counts as one.)
	Freezes uint64

	// RingReuses is the number of IDs issued at a tick earlier than the
	// newest tick issued before them: spare sequence numbers the ring
	// handed out during a rollback.
	RingReuses uint64

	// Borrowed is the time borrowed ahead of the clock: every tick the
	// newest ID moved past both the previous newest and the clock's tick
	// (the logical strategy counting on from the newest ID) adds one unit.
	// MaxLead is the furthest ahead of the clock an ID was stamped.
	Borrowed time.Duration
	MaxLead  time.Duration

	// Waits and Waited count the sleeps strategies asked for during
	// rollbacks, and their total length.
	Waits  uint64
	Waited time.Duration

	// TickWaits and TickWaited count the waits for a tick with room —
	// the next tick when a tick's sequence was used up, or a later one
	// when callers that started waiting earlier took it — and their total
	// length.
	TickWaits  uint64
	TickWaited time.Duration

	// ReservationWaits and ReservationWaited count the waits of a
	// restarted generator for the time its previous run reserved ahead
	// (the clock past the previous mark's Since, behind the mark): a
	// reservation, not a rollback. See [Mark].
	ReservationWaits  uint64
	ReservationWaited time.Duration

	// Reserved is, when Stats was called, how long the clock had still to
	// run before the previous run's reservation ends: a call then first
	// waits that long (or, with a logical strategy, borrows across it).
	// It is zero without a reservation, and once the clock has passed it.
	Reserved time.Duration

	// Errors counts failed calls by kind.
	Errors ErrorCounts

	// Lead is, when Stats was called, how far the newest ID issued is
	// stamped ahead of the clock: positive while borrowed time or a
	// rollback is under way, negative (a lag) otherwise. It is zero
	// before the first ID.
	Lead time.Duration

	// TimeLeft is, when Stats was called, how long the generator's clock
	// has until the layout runs out (the end of its last tick, after
	// which Next fails with ErrLayoutExpired); zero once it has. Alert on
	// it long before it nears zero: changing a layout means a migration
	// (see [github.com/ringflake/ringflake/layoutplan.CheckMigration]).
	TimeLeft time.Duration

	// Observed counts the calls of [Generator.Observe]; ObserveMoved
	// those that moved the generator forward (its floor or newest tick),
	// ObserveRefused those that failed (an ID too far ahead, an invalid
	// ID, a closed generator). ObserveJump is the furthest ahead of the
	// clock an observed ID moved the floor (zero when none was ahead).
	Observed       uint64
	ObserveMoved   uint64
	ObserveRefused uint64
	ObserveJump    time.Duration
}

// ErrorCounts counts a generator's failed calls by the sentinel their
// error matches.
type ErrorCounts struct {
	Rollback    uint64 // ErrClockRollback
	Frozen      uint64 // ErrClockFrozen
	LeaseLost   uint64 // ErrLeaseLost
	Expired     uint64 // ErrLayoutExpired
	BeforeEpoch uint64 // ErrBeforeEpoch
	Closed      uint64 // ErrClosed
	Canceled    uint64 // the caller's context ended
	Other       uint64 // anything else: a strategy's own error, a high-water mark that could not be saved
}

// counters are the atomic counters behind Stats. They live apart from the
// ring so that counting never contends with issuing.
type counters struct {
	_          [64]byte
	rollbacks  atomic.Uint64
	largest    atomic.Int64 // ns
	borrowed   atomic.Int64 // ticks
	maxLead    atomic.Int64 // ticks
	waits      atomic.Uint64
	waited     atomic.Int64 // ns
	tickWaits  atomic.Uint64
	tickWaited atomic.Int64 // ns
	errors     [errKinds]atomic.Uint64
	reported   atomic.Uint64 // rollbacks already reported to the hook

	reservationWaits  atomic.Uint64
	reservationWaited atomic.Int64  // ns
	abandoned         atomic.Uint64 // places in line taken from the ring and never issued

	observed       atomic.Uint64
	observeMoved   atomic.Uint64
	observeRefused atomic.Uint64
	observeJump    atomic.Int64 // ticks
}

type errKind int

const (
	errRollback errKind = iota
	errFrozen
	errLeaseLost
	errExpired
	errBeforeEpoch
	errClosed
	errCanceled
	errOther
	errKinds
)

func kindOf(err error) errKind {
	switch {
	case errors.Is(err, ErrClockRollback):
		return errRollback
	case errors.Is(err, ErrClockFrozen):
		return errFrozen
	case errors.Is(err, ErrLeaseLost):
		return errLeaseLost
	case errors.Is(err, ErrLayoutExpired):
		return errExpired
	case errors.Is(err, ErrBeforeEpoch):
		return errBeforeEpoch
	case errors.Is(err, ErrClosed):
		return errClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errCanceled
	}
	return errOther
}

// seeRollback counts a step back of the wall clock by back nanoseconds.
// When the step left the clock at or past the newest tick issued (behind
// is false: say the generator was idle) no call will find the clock behind
// the newest ID because of it, so there is no event to report: it counts
// as reported at once, and a later call that is behind for another reason
// (borrowed time, a previous run's mark) reports nothing.
func (c *counters) seeRollback(back int64, behind bool) {
	n := c.rollbacks.Add(1)
	storeMax(&c.largest, back)
	for !behind {
		done := c.reported.Load()
		if done >= n || c.reported.CompareAndSwap(done, n) {
			return
		}
	}
}

// Stats returns the generator's counters. It is safe to call concurrently
// with Next; the counters are read one by one, so under load they may be a
// few IDs apart from each other.
func (g *Generator) Stats() Stats {
	if g.unmade() {
		return Stats{}
	}
	c := &g.stats
	s := Stats{
		Issued:          subFloor(g.ring.issued(), c.abandoned.Load()),
		Rollbacks:       c.rollbacks.Load(),
		LargestRollback: time.Duration(c.largest.Load()),
		Freezes:         g.src.freezes.Load(),
		RingReuses:      g.ring.reused(),
		Borrowed:        time.Duration(c.borrowed.Load()) * g.layout.unit,
		MaxLead:         time.Duration(c.maxLead.Load()) * g.layout.unit,
		Waits:           c.waits.Load(),
		Waited:          time.Duration(c.waited.Load()),
		TickWaits:       c.tickWaits.Load(),
		TickWaited:      time.Duration(c.tickWaited.Load()),

		Observed:       c.observed.Load(),
		ObserveMoved:   c.observeMoved.Load(),
		ObserveRefused: c.observeRefused.Load(),
		ObserveJump:    time.Duration(c.observeJump.Load()) * g.layout.unit,

		ReservationWaits:  c.reservationWaits.Load(),
		ReservationWaited: time.Duration(c.reservationWaited.Load()),
		Errors: ErrorCounts{
			Rollback:    c.errors[errRollback].Load(),
			Frozen:      c.errors[errFrozen].Load(),
			LeaseLost:   c.errors[errLeaseLost].Load(),
			Expired:     c.errors[errExpired].Load(),
			BeforeEpoch: c.errors[errBeforeEpoch].Load(),
			Closed:      c.errors[errClosed].Load(),
			Canceled:    c.errors[errCanceled].Load(),
			Other:       c.errors[errOther].Load(),
		},
	}
	if newest := g.newest.Load(); newest >= 0 {
		s.Lead = g.layout.TickTime(newest).Sub(g.src.clock.Now())
	}
	now := g.src.clock.Now()
	s.TimeLeft = g.layout.timeLeft(now)
	if g.mark != nil && g.mark.reserved >= 0 && g.mark.reserved > g.layout.Tick(now) {
		s.Reserved = g.layout.TickTime(g.mark.reserved + 1).Sub(now)
	}
	return s
}

// RollbackEvent reports a rollback to the hook of [WithRollbackHook] and to
// the logger of [WithLogger]: one event for the first call that finds the
// clock behind the newest ID after the clock was seen to step back. A step
// that leaves the clock at or past the newest ID (an idle generator) is
// counted in [Stats.Rollbacks] but reports no event; neither does time the
// logical strategy borrows, nor a start behind a previous run's high-water
// mark (the strategy handles those calls, and [Stats] counts their waits,
// errors and lead). A clock that stands still reports no event: calls
// that fail on it return [ErrClockFrozen], counted in [ErrorCounts].
type RollbackEvent struct {
	// At is the clock's reading.
	At time.Time
	// Behind is how far the clock read behind the newest ID.
	Behind time.Duration
	// Strategy is the step of the strategy (in Parse syntax) whose plan
	// the call carried out last, or "" when every step passed.
	Strategy string
	// Waited is how long the call slept.
	Waited time.Duration
	// Err is the call's error, or nil when it issued an ID.
	Err error
}

// WithRollbackHook makes the generator call f with a [RollbackEvent] for
// each rollback it meets, synchronously, from the call that met it, after
// that call's outcome is known. f must be quick, safe for concurrent use,
// and must not call the generator. A nil f makes [New] fail with
// [ErrInvalidOption]. Without a hook, nothing is spent on events.
func WithRollbackHook(f func(RollbackEvent)) Option {
	return optionFunc(func(cfg *config) {
		if f == nil {
			invalidOption(cfg, "WithRollbackHook(nil)")
			return
		}
		cfg.hooks = append(cfg.hooks, f)
	})
}

// WithLogger makes the generator log each [RollbackEvent] to l at level
// Warn (Error when the call failed), with the event's fields as
// attributes. A nil l makes [New] fail with [ErrInvalidOption].
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(cfg *config) {
		if l == nil {
			invalidOption(cfg, "WithLogger(nil)")
			return
		}
		cfg.hooks = append(cfg.hooks, func(e RollbackEvent) {
			level, msg := slog.LevelWarn, "ringflake: clock behind the newest ID"
			if e.Err != nil {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.Time("at", e.At), slog.Duration("behind", e.Behind),
				slog.String("strategy", e.Strategy), slog.String("outcome", outcome(e.Err)),
				slog.Duration("waited", e.Waited),
			}
			if e.Err != nil {
				attrs = append(attrs, slog.String("error", e.Err.Error()))
			}
			l.LogAttrs(context.Background(), level, msg, attrs...)
		})
	})
}

// outcome names how a call ended, for logs: "issued" or "failed".
func outcome(err error) string {
	if err != nil {
		return "failed"
	}
	return "issued"
}
