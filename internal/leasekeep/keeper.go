package leasekeep

import (
	"context"
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
	// since: lost for good), or RenewFailed (the request failed; nothing
	// is known).
	Kind EventKind
	// Sent is when the request that started the new TTL was sent (or an
	// instant before); TTL is the TTL the server set from then.
	Sent time.Time
	TTL  time.Duration
	// Err is why the renewal failed (RenewFailed) or why the lease is
	// lost (Lost).
	Err error
}

// RenewFunc renews a lease once; at is when the renewal timer fired. It
// must bound its own time (the lease's Timeout): ctx is only cancelled by
// [Keeper.Stop].
type RenewFunc func(ctx context.Context, at time.Time) Renewal

// A Keeper keeps a lease: it renews it on a timer of the lease's clock and
// drops Held when the lease may have expired. Renewal requests run in a
// goroutine of their own, so a request that hangs (a partition without
// resets) cannot delay the expiry timer. Its methods are safe for
// concurrent use.
type Keeper struct {
	clk     clock.Clock
	node    int64
	every   time.Duration // renewal interval
	margin  time.Duration // subtracted from each TTL
	renew   RenewFunc
	onEvent func(Event)

	held atomic.Bool
	done chan struct{} // closed when the lease ended (lost or stopped)

	mu  sync.Mutex
	err error // why the lease ended

	stopOnce sync.Once
	cancel   context.CancelFunc // stops the loop and a request in flight
	stopped  chan struct{}      // closed when the loop has returned

	renewT, expireT *clock.Timer
}

// Start starts keeping the lease of node, which certainly holds the id
// until validUntil on c.Clock: it calls renew every c.RenewEvery, and
// onEvent (when not nil) with every event, one at a time, in order, from
// its own goroutine. c must be resolved ([Config.Resolve]). The timers are
// set up before Start returns, so that a test advancing a mock clock right
// after it cannot miss them.
func Start(c Config, node int64, validUntil time.Time, renew RenewFunc, onEvent func(Event)) *Keeper {
	ctx, cancel := context.WithCancel(context.Background())
	k := &Keeper{
		clk:     c.Clock,
		node:    node,
		every:   c.RenewEvery,
		margin:  c.Margin,
		renew:   renew,
		onEvent: onEvent,
		done:    make(chan struct{}),
		cancel:  cancel,
		stopped: make(chan struct{}),
	}
	k.held.Store(k.clk.Now().Before(validUntil))
	k.renewT = k.clk.Timer(k.every)
	k.expireT = k.clk.Timer(max(k.clk.Until(validUntil), 0))
	go k.loop(ctx, validUntil)
	return k
}

func (k *Keeper) loop(ctx context.Context, validUntil time.Time) {
	defer close(k.stopped)
	defer k.renewT.Stop()
	defer k.expireT.Stop()
	results := make(chan Renewal, 1)
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
			ev := Event{Node: k.node, Err: r.Err}
			switch r.Kind {
			case Lost:
				k.end(r.Err)
				ev.Kind, ev.At = Lost, k.clk.Now()
				k.emit(ev)
				return
			case Renewed, Retaken:
				ev.Kind = r.Kind
				until := r.Sent.Add(r.TTL - k.margin)
				if now := k.clk.Now(); now.Before(until) && k.hold() {
					// The id held our token without a break since
					// we set it (or nobody took it in between): safe
					// to hold again even after an expiry.
					validUntil = until
					k.expireT.Reset(until.Sub(now))
				}
				ev.ValidUntil = validUntil
			default:
				ev.Kind = RenewFailed
			}
			k.renewT.Reset(k.every)
			ev.At = k.clk.Now()
			k.emit(ev)
		case <-k.expireT.C:
			// A mock clock's timer may deliver a tick from before the
			// last Reset: only an expiry that is due counts.
			if now := k.clk.Now(); !now.Before(validUntil) && k.held.Swap(false) {
				k.emit(Event{Kind: Expired, Node: k.node, At: now, ValidUntil: validUntil})
			}
		}
	}
}

func (k *Keeper) emit(ev Event) {
	if k.onEvent != nil {
		k.onEvent(ev)
	}
}

// hold sets Held unless the lease has ended: a Stop that ran while a
// renewal was answered must leave Held false.
func (k *Keeper) hold() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return false
	}
	k.held.Store(true)
	return true
}

// end records why the lease ended, the first time only, and drops Held.
func (k *Keeper) end(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.held.Store(false)
	if k.err != nil {
		return
	}
	k.err = err
	close(k.done)
}

// Held reports whether the lease certainly holds the id. It is one atomic
// load.
func (k *Keeper) Held() bool { return k.held.Load() }

// Done returns a channel that is closed when the lease has ended: lost, or
// stopped.
func (k *Keeper) Done() <-chan struct{} { return k.done }

// Err returns nil while the lease may hold the id, and then what ended it
// first: the Err of a Lost renewal, or the reason given to Stop.
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// Stop ends the lease with reason (unless it was lost before), stops
// renewing, cancels a request in flight and waits for the renewal loop to
// return: no event follows. It reports whether this was the first Stop;
// later ones do nothing.
func (k *Keeper) Stop(reason error) (first bool) {
	k.stopOnce.Do(func() {
		first = true
		k.end(reason)
		k.cancel()
		<-k.stopped
	})
	return first
}
