package lease

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// A Renewal is what one renewal of a lease found.
type Renewal struct {
	// Kind is Renewed (the id was still ours and its TTL was reset),
	// Retaken (the id's key was gone, nobody had taken the id since, and
	// it is ours again), Lost (someone else holds the id, or took it
	// since, or the server lost the prefix's data: lost for good), or
	// RenewFailed (the request failed; nothing is known).
	Kind EventKind
	// Sent is when the request that started the new TTL was sent (or an
	// instant before); TTL is the TTL the server set from then.
	Sent time.Time
	TTL  time.Duration
	// NotBefore, when not zero, is an instant on the lease's clock before
	// which the lease must not count as holding the id even though the
	// server gave it to us: the end of a quiet period after the server
	// may have lost data (see [Config.Quiet]). Only Retaken uses it.
	NotBefore time.Time
	// Err is why the renewal failed (RenewFailed) or why the lease is
	// lost (Lost).
	Err error
	// Offset, when not zero, is the offset to the server's clock that the
	// module measured with a Renewed or Retaken renewal. The keeper puts
	// it in the renewal's event and, when it is beyond [Options.MaxSkew],
	// reports a [ClockSkewed] event first.
	Offset Offset
}

// RenewFunc renews a lease once; at is when the renewal timer fired. It
// must bound its own time (the lease's Timeout): ctx is only cancelled by
// the stop function of [Keep].
type RenewFunc func(ctx context.Context, at time.Time) Renewal

// A Keeper keeps a lease: it renews it on a timer of the lease's clock and
// knows until when the lease certainly holds its id. A lease module's
// Lease type embeds it, so its methods are the leases' own: Node, Held,
// WaitHeld, Done, Err, MarkAhead and MaxLead. [Keeper.Held]
// compares that instant with the clock itself, so a keeper goroutine that
// runs late (a long GC pause, a stopped process, a loaded machine) cannot
// make a lease look held for longer than it is. Renewal requests run in a
// goroutine of their own, so a request that hangs (a partition without
// resets) cannot delay anything else. Its methods are safe for concurrent
// use.
type Keeper struct {
	cfg   Config
	clk   clock.Clock
	base  time.Time // clk.Now() at Keep: from and until count from it
	node  int64
	renew RenewFunc

	// The lease holds the id from `from` (inclusive) until `until`
	// (exclusive), in nanoseconds after base on clk — monotonic time with
	// the system clock. Held reads them without a lock; they change under
	// mu, from before until, and Held loads until before from, so it never
	// pairs a new until with an old from.
	from, until atomic.Int64

	done chan struct{} // closed when the lease ended (lost or stopped)

	mu      sync.Mutex
	err     error         // why the lease ended
	changed chan struct{} // closed and replaced when from, until or err change

	stopOnce sync.Once
	cancel   context.CancelFunc // stops the loop and a request in flight
	stopped  chan struct{}      // closed when the loop has returned

	renewT, expireT *clock.Timer
	holdT           *clock.Timer // fires when a quiet period ends, for WaitHeld
}

// Keep starts keeping the lease of node, which certainly holds the id
// from validFrom (the zero Time: from now) until validUntil on c.Clock: it
// calls renew every c.RenewEvery, and c.OnEvent (when not nil) with every
// event, one at a time, in order, from its own goroutine. The timers are
// set up before Keep returns, so that a test advancing a mock clock right
// after it cannot miss them.
//
// stop ends the lease with a reason (unless it ended before), stops
// renewing, cancels a request in flight and waits for the renewal loop to
// return: no event follows. It reports whether this was the first stop;
// later ones do nothing. A module keeps stop to itself and calls it from
// its Close, so that the [Keeper] it embeds in its lease type offers
// only what is safe for users to call.
func Keep(c Config, node int64, validFrom, validUntil time.Time, renew RenewFunc) (k *Keeper, stop func(reason error) (first bool)) {
	ctx, cancel := context.WithCancel(context.Background())
	k = &Keeper{
		cfg:     c,
		clk:     c.Clock,
		base:    c.Clock.Now(),
		node:    node,
		renew:   renew,
		done:    make(chan struct{}),
		changed: make(chan struct{}),
		cancel:  cancel,
		stopped: make(chan struct{}),
	}
	k.from.Store(math.MinInt64)
	if !validFrom.IsZero() {
		k.from.Store(k.offset(validFrom))
	}
	k.until.Store(k.offset(validUntil))
	k.renewT = k.clk.Timer(c.RenewEvery)
	k.expireT = k.clk.Timer(max(k.clk.Until(validUntil), 0))
	k.holdT = k.clk.Timer(max(k.clk.Until(validFrom), 0))
	go k.loop(ctx, validUntil)
	return k, k.stop
}

// offset returns t as nanoseconds after k.base.
func (k *Keeper) offset(t time.Time) int64 { return int64(t.Sub(k.base)) }

func (k *Keeper) loop(ctx context.Context, validUntil time.Time) {
	defer close(k.stopped)
	defer k.renewT.Stop()
	defer k.expireT.Stop()
	defer k.holdT.Stop()
	results := make(chan Renewal, 1)
	expired := false // the Expired event of validUntil was reported
	for {
		select {
		case <-ctx.Done():
			return
		case at := <-k.renewT.C:
			// at, the instant the timer fired, is no later than the
			// request's send, so the lease's validity counts from it.
			go func() { results <- k.renew(ctx, at) }()
		case r := <-results:
			if ctx.Err() != nil {
				return
			}
			var (
				ended bool
				ev    Event
			)
			validUntil, ev, ended = k.apply(r, validUntil, func(until, now time.Time) {
				expired = false
				k.expireT.Reset(until.Sub(now))
				if r.NotBefore.After(now) {
					k.holdT.Reset(r.NotBefore.Sub(now))
				}
			})
			if ended {
				return
			}
			k.renewT.Reset(k.cfg.RenewEvery)
			ev.At = k.clk.Now()
			k.emit(ev)
		case <-k.holdT.C:
			// A quiet period ended: Held may be true now, without
			// anything changing; wake the callers of WaitHeld to look.
			k.mu.Lock()
			k.notify()
			k.mu.Unlock()
		case <-k.expireT.C:
			// Held needs no help here: it compares validUntil with the
			// clock itself. This only reports the expiry, once, if it is
			// due (a mock clock's timer may deliver a tick from before
			// the last Reset) and the lease has not ended.
			if now := k.clk.Now(); !now.Before(validUntil) && !expired && k.Err() == nil {
				expired = true
				k.emit(Event{Kind: Expired, Node: k.node, At: now, ValidUntil: validUntil})
			}
		}
	}
}

// apply takes the result of one renewal, made while the lease was valid
// until validUntil, and returns the new end of validity, the renewal's
// event for the caller to emit (its At not set) and whether the lease
// ended (Lost: apply emitted the event). It emits a ClockSkewed event
// itself. extended, when not nil, runs when the validity was extended to
// until, with the clock at now: the loop resets its timers there.
func (k *Keeper) apply(r Renewal, validUntil time.Time, extended func(until, now time.Time)) (time.Time, Event, bool) {
	ev := Event{Node: k.node, Err: r.Err}
	switch r.Kind {
	case Lost:
		k.end(r.Err)
		ev.Kind, ev.At = Lost, k.clk.Now()
		k.emit(ev)
		return validUntil, ev, true
	case Renewed, Retaken:
		ev.Kind = r.Kind
		until := r.Sent.Add(r.TTL - k.cfg.Margin)
		if now := k.clk.Now(); now.Before(until) && k.extend(r.NotBefore, until) {
			// The id held our token without a break since we set it
			// (or nobody took it in between): safe to hold again even
			// after an expiry.
			validUntil = until
			if extended != nil {
				extended(until, now)
			}
		}
		ev.ValidUntil = validUntil
		ev.Offset = r.Offset
		if !r.Offset.IsZero() && k.cfg.MeasuresSkew() && r.Offset.Beyond(k.cfg.MaxSkew) {
			k.emit(Event{Kind: ClockSkewed, Node: k.node, At: k.clk.Now(), ValidUntil: validUntil, Offset: r.Offset,
				Err: &SkewError{Package: k.cfg.Package, Offset: r.Offset, Max: k.cfg.MaxSkew}})
		}
	default:
		ev.Kind = RenewFailed
	}
	return validUntil, ev, false
}

func (k *Keeper) emit(ev Event) {
	if k.cfg.OnEvent != nil {
		k.cfg.OnEvent(ev)
	}
}

// notify wakes the callers of WaitHeld; k.mu must be held.
func (k *Keeper) notify() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// extend makes the lease hold the id until until, and not before from
// (unless from is zero or earlier than the current start), unless the
// lease has ended: a stop that ran while a renewal was answered must leave
// Held false.
func (k *Keeper) extend(from, until time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return false
	}
	if !from.IsZero() {
		if f := k.offset(from); f > k.from.Load() {
			k.from.Store(f)
		}
	}
	k.until.Store(k.offset(until))
	k.notify()
	return true
}

// end records why the lease ended, the first time only, and makes Held
// false for good.
func (k *Keeper) end(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.until.Store(math.MinInt64)
	if k.err != nil {
		return
	}
	k.err = err
	close(k.done)
	k.notify()
}

// Node returns the leased node id.
func (k *Keeper) Node() int64 { return k.node }

// Held reports whether the lease certainly holds the id now: the clock
// reads at or after the start of the lease's validity (the end of a quiet
// period, if any) and before its end (the last successful renewal's send
// + TTL − Margin), and the lease has not ended. It is two atomic loads
// and one reading of the clock — monotonic time, with the system clock —
// and does not depend on the keeper's goroutine running on time, so a
// renewal goroutine held up by a GC pause or a loaded machine cannot
// stretch the lease. It implements ringflake.Lease.
func (k *Keeper) Held() bool {
	until := k.until.Load()
	from := k.from.Load()
	now := int64(k.clk.Since(k.base))
	return from <= now && now < until
}

// WaitHeld blocks until [Keeper.Held] is true and returns nil: at once,
// normally; at the end of the quiet period after a first start under the
// prefix or a server that may have lost data; when a renewal succeeds
// after an outage. It returns what ended the lease ([Keeper.Err]) when it
// ends first, and ctx.Err() when ctx is done first. The keeper's goroutine
// wakes it, so a late goroutine makes WaitHeld return late, never early.
func (k *Keeper) WaitHeld(ctx context.Context) error {
	for {
		k.mu.Lock()
		changed, err := k.changed, k.err
		k.mu.Unlock()
		if err != nil {
			return err
		}
		if k.Held() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Done returns a channel that is closed when the lease ends for good: it
// was lost (another holder holds or took the id, or the server lost the
// prefix's data) or closed. [Keeper.Err] then says which.
func (k *Keeper) Done() <-chan struct{} { return k.done }

// Err returns nil while the lease may still hold the id; once the lease
// has ended, what ended it first: an error matching ringflake.ErrLeaseLost
// when it was lost for good (and [ErrDataLost] when the server lost the
// prefix's data), [ErrClosed] when it was closed.
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// MarkAhead returns TTL/2: the lead with which a generator that keeps its
// high-water mark with the lease writes it, unless ringflake.WithMarkAhead
// says otherwise. A generator then saves a mark about every TTL/4 instead
// of twice a second, and keeps issuing through a server stall of up to
// about TTL/4 before it waits for a save; after a crash the next holder
// cannot get the id before the crashed holder's mark is in the past (the
// key outlives the mark), so a longer lead costs a new holder nothing
// unless its clock is behind.
func (k *Keeper) MarkAhead() time.Duration { return k.cfg.MarkAhead() }

// MaxLead returns [Options.MaxLead]: the longest any generator of the
// prefix may stamp an ID ahead of its clock. ringflake.New refuses a
// generator on the lease whose strategy may lead further.
func (k *Keeper) MaxLead() time.Duration { return k.cfg.MaxLead }

// stop is the stop function [Keep] returns.
func (k *Keeper) stop(reason error) (first bool) {
	k.stopOnce.Do(func() {
		first = true
		k.end(reason)
		k.cancel()
		<-k.stopped
	})
	return first
}

// A Driver is a [Keeper] without a goroutine or timers: its owner sends
// the renewals, when it chooses, and hands their results to
// [Driver.Apply], which does what Keep's renewal loop does with them. A
// deterministic simulation (package fleetsim) drives a lease this way
// from its event loop, so the Held, quiet periods and loss it checks are
// the Keeper's own. It reports no Expired event (no timer fires).
type Driver struct {
	*Keeper
	validUntil time.Time
}

// Drive returns a [Driver] keeping the lease of node, which certainly
// holds the id from validFrom (the zero Time: from now) until validUntil
// on c.Clock, as [Keep] would.
func Drive(c Config, node int64, validFrom, validUntil time.Time) *Driver {
	k := &Keeper{
		cfg:     c,
		clk:     c.Clock,
		base:    c.Clock.Now(),
		node:    node,
		done:    make(chan struct{}),
		changed: make(chan struct{}),
		cancel:  func() {},
		stopped: make(chan struct{}),
	}
	close(k.stopped)
	k.from.Store(math.MinInt64)
	if !validFrom.IsZero() {
		k.from.Store(k.offset(validFrom))
	}
	k.until.Store(k.offset(validUntil))
	return &Driver{Keeper: k, validUntil: validUntil}
}

// Apply takes the result of one renewal, as Keep's loop does: it extends
// the lease's validity, ends it on Lost, and calls c.OnEvent with the
// renewal's events. It reports whether the lease ended.
func (d *Driver) Apply(r Renewal) (ended bool) {
	var ev Event
	d.validUntil, ev, ended = d.apply(r, d.validUntil, nil)
	if !ended {
		ev.At = d.clk.Now()
		d.emit(ev)
	}
	return ended
}

// Stop ends the lease with reason, unless it ended before, and reports
// whether this was the first stop.
func (d *Driver) Stop(reason error) bool { return d.stop(reason) }
