package ringflake

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// The errors a generator, a layout or a parser returns; every message
// starts with "ringflake:". Errors that carry details are typed
// ([*LayoutError], [*NodeError], [*SyntaxError], [*MarkError],
// [*ExistingIDError], [*strategies.RollbackError]) and match these with
// [errors.Is].
var (
	// ErrClockRollback is matched (with [errors.Is]) by the error a generator
	// returns when its clock reads earlier than the newest ID it has issued and
	// its strategy does not keep it available. Use [errors.As] with a
	// [*strategies.RollbackError] to learn how far behind the clock reads.
	// It is the same value as [strategies.ErrClockRollback].
	ErrClockRollback = strategies.ErrClockRollback

	// ErrClockFrozen is matched (with [errors.Is]) by the error a generator
	// returns when its clock stopped advancing: the sequence numbers of the
	// clock's tick are used up, the call waited for the next tick, and the
	// clock did not reach it — without stepping back — within the wait its
	// strategy allows. It does not match [ErrClockRollback]. Use [errors.As]
	// with a [*strategies.FrozenError] to learn how far short of the next
	// tick the clock stayed. It is the same value as
	// [strategies.ErrClockFrozen].
	ErrClockFrozen = strategies.ErrClockFrozen

	// ErrObservedTooFar is matched (with [errors.Is]) by the error of
	// [Generator.Observe] for an ID stamped further ahead of the
	// generator's clock than [WithMaxForward] allows. Use [errors.As] with
	// a [*strategies.AheadError] to learn how far ahead it was. It is the
	// same value as [strategies.ErrObservedTooFar].
	ErrObservedTooFar = strategies.ErrObservedTooFar

	// ErrClosed is returned by [Generator.Next] after [Generator.Close],
	// and matched by the errors of a Generator that [New] did not make.
	ErrClosed = errors.New("ringflake: generator closed")

	// ErrLeaseLost is returned by [Generator.Next] while the generator's
	// [Lease] does not hold its node id: the lease could not be renewed before
	// it may have expired, or someone else took the id. The generator issues
	// nothing under an id someone else may hold; it resumes when the lease
	// holds the id again.
	ErrLeaseLost = errors.New("ringflake: node id lease lost")

	// ErrMarkNotSaved is matched by the error of a call (or of [New], or
	// [Generator.Close]) that needed a later high-water mark, or the exact one,
	// and the [MarkStore] could not save it: the store's error is wrapped too
	// (errors.Is and errors.As reach it). Nothing is issued past a mark that
	// is not saved; the next call that needs the mark tries again.
	ErrMarkNotSaved = errors.New("ringflake: high-water mark not saved")

	// ErrBeforeEpoch is returned when the clock reads earlier than the layout's
	// epoch and nothing has been issued yet, so no ID time can express it: by
	// [New] for an epoch in the clock's future, and by [Generator.Next].
	ErrBeforeEpoch = errors.New("ringflake: clock reads before the layout's epoch")

	// ErrLayoutExpired is returned when the clock reads past the last instant
	// the layout can represent ([Layout.Last]): by [New], by [Layout.Compose],
	// and by [Generator.Next] once the layout has run out. IDs never wrap.
	ErrLayoutExpired = errors.New("ringflake: clock is past the layout's last representable time")

	// ErrInvalidOption is matched by errors about an option given to [New],
	// such as a nil clock.
	ErrInvalidOption = errors.New("ringflake: invalid option")

	// ErrInvalidLayout is matched by errors about a layout that cannot work:
	// bits that do not add up, a unit that is not a whole number of
	// milliseconds, a missing epoch, a lifetime too long to compute. Details are
	// in a [*LayoutError].
	ErrInvalidLayout = errors.New("ringflake: invalid layout")

	// ErrNodeOutOfRange is matched by errors about a node id that does not fit
	// the layout's node bits. Details are in a [*NodeError].
	ErrNodeOutOfRange = errors.New("ringflake: node id out of range")

	// ErrNodeInUse is matched by the error [New] returns when another live
	// generator of this process, on the system clock, has the same node id
	// and an equal layout ([Layout.Equal], whatever its name): two
	// generators on one node would issue the same IDs.
	// Details are in a [*NodeError].
	ErrNodeInUse = errors.New("ringflake: node id in use by another live generator")

	// ErrNodeUnavailable is matched by errors of a [NodeSource] that cannot
	// provide a node id: an unset environment variable, a host name without an
	// ordinal, a coordination service whose range of ids is used up.
	ErrNodeUnavailable = errors.New("ringflake: no node id available")

	// ErrInvalidID is matched by errors about a string or number that is not an
	// ID. Details are in a [*SyntaxError].
	ErrInvalidID = errors.New("ringflake: invalid ID")

	// ErrMarkCorrupt is matched by errors about a stored high-water mark that
	// exists but cannot be understood (truncated, altered, not a mark). A
	// generator refuses to start on it rather than treat it as "no mark".
	// Details are in a [*MarkError].
	ErrMarkCorrupt = errors.New("ringflake: high-water mark is corrupt")

	// ErrMarkMismatch is matched by the error [New] returns for a stored
	// high-water mark that was written for another node id or layout: reusing
	// it would protect the wrong IDs, and overwriting it would lose the other
	// node's. Details are in a [*MarkError].
	ErrMarkMismatch = errors.New("ringflake: high-water mark belongs to another node id or layout")

	// ErrBelowExisting is matched by the error [New] returns, with
	// [WithExistingID], when the greatest ID already in use lies in a tick
	// after the generator's first: its IDs would sort below it, as a new
	// layout or epoch can make them, and break ORDER BY id. Details are in
	// an [*ExistingIDError].
	ErrBelowExisting = errors.New("ringflake: new IDs would not sort above the existing ones")
)

// LayoutError reports which part of a layout is wrong. It matches
// [ErrInvalidLayout].
type LayoutError struct {
	Field  string // the LayoutSpec field or ParseLayout key at fault
	Reason string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("ringflake: invalid layout: %s: %s", e.Field, e.Reason)
}

// Is reports whether target is [ErrInvalidLayout].
func (e *LayoutError) Is(target error) bool { return target == ErrInvalidLayout }

// NodeError reports a node id a generator cannot use: one outside the
// layout's range ([ErrNodeOutOfRange]), or one another live generator of
// this process uses with the same layout ([ErrNodeInUse]). It matches
// Kind.
type NodeError struct {
	// Kind is the sentinel the error matches; nil stands for
	// [ErrNodeOutOfRange].
	Kind  error
	Field string // "node", "datacenter" or "worker"
	Value int64
	// Max is the greatest valid value, for ErrNodeOutOfRange.
	Max int64
	// Layout is the generator's layout ([Layout.String]), for ErrNodeInUse.
	Layout string
}

func (e *NodeError) kind() error {
	if e.Kind == nil {
		return ErrNodeOutOfRange
	}
	return e.Kind
}

func (e *NodeError) Error() string {
	if e.kind() == ErrNodeInUse {
		return fmt.Sprintf("ringflake: node %d (layout %s) is in use by another live generator of this process: close it first, or give each generator its own node id",
			e.Value, e.Layout)
	}
	return fmt.Sprintf("ringflake: %s id %d out of range [0, %d]", e.Field, e.Value, e.Max)
}

// Is reports whether target is the error's Kind.
func (e *NodeError) Is(target error) bool { return target == e.kind() }

// SyntaxError reports why a string is not an ID. It matches [ErrInvalidID].
type SyntaxError struct {
	Input  string
	Offset int // byte offset of the problem in Input, or -1
	Reason string
}

func (e *SyntaxError) Error() string { return textError("invalid ID", e.Input, e.Reason, e.Offset) }

// textError is the message of an error about text: what is wrong, the
// text quoted, why, and at which byte offset when it is not -1.
func textError(what, text, reason string, offset int) string {
	if offset >= 0 {
		return fmt.Sprintf("ringflake: %s %q: %s at offset %d", what, text, reason, offset)
	}
	return fmt.Sprintf("ringflake: %s %q: %s", what, text, reason)
}

// Is reports whether target is [ErrInvalidID].
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalidID }

// timeError wraps ErrBeforeEpoch or ErrLayoutExpired with the instant at
// fault.
type timeError struct {
	err    error
	at     time.Time
	edge   time.Time
	bubble bool // the system clock read at inside a testing/synctest bubble
}

func (e *timeError) Error() string {
	msg := fmt.Sprintf("%v: %s (limit %s)", e.err, e.at.UTC().Format(time.RFC3339Nano), e.edge.UTC().Format(time.RFC3339Nano))
	if e.bubble && e.err == ErrBeforeEpoch {
		msg += "; a testing/synctest bubble's clock starts at 2000-01-01: move it past the epoch first" +
			" (time.Sleep(time.Until(date))) or use a layout with an earlier epoch"
	}
	return msg
}

func (e *timeError) Unwrap() error { return e.err }

// ExistingIDError reports that a generator's first IDs would sort below
// an existing ID, whose tick is later. It matches [ErrBelowExisting].
type ExistingIDError struct {
	Existing ID        // the ID given to WithExistingID
	First    ID        // the smallest ID the generator could issue first
	At       time.Time // the start of First's tick
}

func (e *ExistingIDError) Error() string {
	return fmt.Sprintf("%v: the first ID could be %d (%s), not above the existing %d",
		ErrBelowExisting, e.First, e.At.UTC().Format(time.RFC3339Nano), e.Existing)
}

// Is reports whether target is [ErrBelowExisting].
func (e *ExistingIDError) Is(target error) bool { return target == ErrBelowExisting }

// MarkError reports a high-water mark that a generator cannot use: a
// stored mark that cannot be understood ([ErrMarkCorrupt]), one written
// for another node id or layout ([ErrMarkMismatch]), or a store's own
// kind of refusal (a mark file that another generator holds, or that is
// not a regular file). It matches Kind with
// [errors.Is], and its cause, if any, through Unwrap.
//
// A [MarkStore] implementation reports a stored value it cannot read as
// &MarkError{Path: where, Reason: why}: the zero Kind is ErrMarkCorrupt.
type MarkError struct {
	// Kind is the sentinel the error matches; nil stands for
	// [ErrMarkCorrupt].
	Kind error
	// Path is where the mark is stored, as the store names itself: a
	// file's path, a key on a server.
	Path string
	// Reason says what is wrong, in words.
	Reason string

	// Node and Layout ([Layout.String]) are the stored mark's, WantNode
	// and WantLayout the generator's; set for ErrMarkMismatch.
	Node, WantNode     int64
	Layout, WantLayout string

	// PID is the process id of the generator that holds the store, for a
	// store that records it; 0 if unknown.
	PID int

	// Err is the cause, or nil.
	Err error
}

func (e *MarkError) kind() error {
	if e.Kind == nil {
		return ErrMarkCorrupt
	}
	return e.Kind
}

func (e *MarkError) Error() string {
	switch e.kind() {
	case ErrMarkCorrupt:
		return fmt.Sprintf("ringflake: high-water mark %s is corrupt: %s", e.Path, e.Reason)
	case ErrMarkMismatch:
		return fmt.Sprintf("ringflake: high-water mark %s was written for node %d, layout %s; this generator is node %d, layout %s: give each node its own mark",
			e.Path, e.Node, e.Layout, e.WantNode, e.WantLayout)
	}
	return fmt.Sprintf("%v: %s: %s", e.Kind, e.Path, e.Reason)
}

// Is reports whether target is the error's Kind.
func (e *MarkError) Is(target error) bool { return target == e.kind() }

// Unwrap returns the cause.
func (e *MarkError) Unwrap() error { return e.Err }

// notSavedError is the error of a mark the store could not save: it
// matches ErrMarkNotSaved and the store's error, and says "ringflake:" once
// when the store's error says it too (a lease's ErrLeaseLost).
type notSavedError struct{ err error }

func notSaved(err error) error { return &notSavedError{err} }

func (e *notSavedError) Error() string {
	return ErrMarkNotSaved.Error() + ": " + strings.TrimPrefix(e.err.Error(), "ringflake: ")
}

func (e *notSavedError) Unwrap() []error { return []error{ErrMarkNotSaved, e.err} }
