package leasekeep

import (
	"fmt"
	"time"
)

// EventKind tells what happened to a lease; the modules' EventKind types
// have the same values and document them for users.
type EventKind int

const (
	// Renewed: a renewal reset the id's TTL.
	Renewed EventKind = iota + 1
	// RenewFailed: a renewal request failed; nothing is known.
	RenewFailed
	// Expired: no renewal succeeded in time; Held is false.
	Expired
	// Retaken: the id's key was gone and nobody had taken the id since,
	// so the lease set it again.
	Retaken
	// Lost: another holder holds the id, or took it since: lost for good.
	Lost
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
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// An Event is what a [Keeper] reports; the modules convert it to their
// own Event type, whose fields have the same names and meanings.
type Event struct {
	Kind       EventKind
	Node       int64
	At         time.Time // on the lease's clock
	ValidUntil time.Time // zero when the lease never held the id
	Err        error     // the failure of RenewFailed, the reason of Lost
}
