package lease

import (
	"fmt"
	"time"
)

// EventKind tells what happened to a lease; see [Event].
type EventKind int

const (
	// Renewed: a renewal reset the id's TTL; the lease holds the id at
	// least until Event.ValidUntil.
	Renewed EventKind = iota + 1
	// RenewFailed: a renewal request failed (Event.Err says why). The
	// lease still holds the id until Event.ValidUntil of the last renewal;
	// the next attempt follows one interval later.
	RenewFailed
	// Expired: no renewal succeeded in time, so the id may have expired
	// on the server. Held is false — generators fail with
	// ringflake.ErrLeaseLost — until a renewal succeeds.
	Expired
	// Retaken: the id's key was gone (it expired or was deleted) and
	// nobody had taken the id since, so the lease set it again with its
	// own token; it holds the id until Event.ValidUntil (after a quiet
	// period, when the server may have lost data).
	Retaken
	// Lost: another holder holds the id, or took it since this lease last
	// held it, or the server lost the prefix's data ([ErrDataLost]). The
	// lease is lost for good (Event.Err, the lease's Err): acquire a new
	// one and start a new generator.
	Lost
	// ClockSkewed: a renewal measured this host's clock certainly further
	// from the server's than [Options.MaxSkew] (Event.Offset; Event.Err
	// is a [*SkewError], matching [ErrClockSkew]). It comes just before
	// the Renewed or Retaken event of the renewal that measured it, once
	// per such renewal. The lease keeps its id and its generators keep
	// issuing: [Options.MaxSkew] says why.
	ClockSkewed
)

// String returns the kind in lower case words ("renew failed").
func (k EventKind) String() string {
	switch k {
	case Renewed:
		return "renewed"
	case RenewFailed:
		return "renew failed"
	case Expired:
		return "expired"
	case Retaken:
		return "retaken"
	case Lost:
		return "lost"
	case ClockSkewed:
		return "clock skewed"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// An Event reports a change or a renewal of a lease to [Options.OnEvent],
// for logs and metrics.
type Event struct {
	Kind EventKind
	Node int64
	// At is the time on the lease's clock ([Options.Clock]).
	At time.Time
	// ValidUntil is the instant, on the lease's clock, until which the
	// lease certainly holds the id unless it is renewed again (zero when
	// it never held it).
	ValidUntil time.Time
	// Err is the failure of a RenewFailed event, the reason of a Lost
	// one, and the [*SkewError] of a ClockSkewed one.
	Err error
	// Offset is the offset of the server's clock from this host's that
	// the renewal of a Renewed, Retaken or ClockSkewed event measured;
	// zero when it measured none (the module's server has no clock to
	// read, Options.MaxSkew is negative, or the measurement failed).
	Offset Offset
}

// A Holding is a node id in use, as a module's List reports it.
type Holding struct {
	Node int64
	// Holder is the [Options.Holder] of the lease that holds the id;
	// empty for a key the module did not write.
	Holder string
	// TTL is how long the id stays held on the server unless renewed (etcd
	// reports whole seconds).
	TTL time.Duration
	// Mark is the Limit of the node's saved high-water mark; zero when none
	// was saved (or the mark cannot be read).
	Mark time.Time
}
