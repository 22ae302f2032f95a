package etcdlease

import (
	"time"

	"github.com/ringflake/ringflake/internal/leasekeep"
)

// EventKind tells what happened to a [Lease]; see [Event].
type EventKind int

const (
	// Renewed: a renewal reset the id's TTL; the lease holds the id at
	// least until Event.ValidUntil.
	Renewed EventKind = EventKind(leasekeep.Renewed)
	// RenewFailed: a renewal request failed (Event.Err says why). The
	// lease still holds the id until Event.ValidUntil of the last renewal;
	// the next attempt follows one interval later.
	RenewFailed EventKind = EventKind(leasekeep.RenewFailed)
	// Expired: no renewal succeeded in time, so the id may have expired
	// on the server. Held is false — generators fail with
	// ringflake.ErrLeaseLost — until a renewal succeeds.
	Expired EventKind = EventKind(leasekeep.Expired)
	// Retaken: the id's key was gone (it expired or was deleted) and
	// nobody had taken the id since, so the lease set it again with its
	// own token; it holds the id until Event.ValidUntil.
	Retaken EventKind = EventKind(leasekeep.Retaken)
	// Lost: another holder holds the id, or took it since this lease last
	// held it. The lease is lost for good (Event.Err, [Lease.Err]);
	// acquire a new one and start a new generator.
	Lost EventKind = EventKind(leasekeep.Lost)
)

// String returns the kind in lower case words ("renew failed").
func (k EventKind) String() string { return leasekeep.EventKind(k).String() }

// An Event reports a change or a renewal of a [Lease] to [Options.OnEvent],
// for logs and metrics. A lease's events come one at a time, in order,
// from its renewal goroutine; none follows Lost or the return of Close.
type Event struct {
	Kind EventKind
	Node int64
	// At is the time on the lease's clock ([Options.Clock]).
	At time.Time
	// ValidUntil is the instant, on the lease's clock, until which the
	// lease certainly holds the id unless it is renewed again (zero when
	// it never held it).
	ValidUntil time.Time
	// Err is the failure of a RenewFailed event and the reason of a Lost
	// one.
	Err error
}

// forward returns what the lease's keeper calls with its events: f, with
// each event converted to an [Event]; nil when f is nil.
func forward(f func(Event)) func(leasekeep.Event) {
	if f == nil {
		return nil
	}
	return func(e leasekeep.Event) {
		f(Event{Kind: EventKind(e.Kind), Node: e.Node, At: e.At, ValidUntil: e.ValidUntil, Err: e.Err})
	}
}
