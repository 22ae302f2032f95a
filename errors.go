package ringflake

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// ErrClockRollback is matched (with [errors.Is]) by the error a generator
// returns when its clock reads earlier than the newest ID it has issued and
// its strategy does not keep it available. Use [errors.As] with a
// [*RollbackError] to learn how far behind the clock reads.
// It is the same value as [strategies.ErrClockRollback].
var ErrClockRollback = strategies.ErrClockRollback

// RollbackError reports how far the clock reads behind the newest ID.
// It matches [ErrClockRollback].
type RollbackError = strategies.RollbackError

// ErrInvalidStrategy is matched by errors about a strategy that cannot be
// parsed or does not fit the layout. It is the same value as
// [strategies.ErrInvalidStrategy]; details are in a [*StrategyError].
var ErrInvalidStrategy = strategies.ErrInvalidStrategy

// StrategyError reports what is wrong with a strategy. It matches
// [ErrInvalidStrategy].
type StrategyError = strategies.StrategyError

// ErrInvalidLayout is matched by errors about a layout that cannot work:
// bits that do not add up, a unit that is not a whole number of
// milliseconds, a missing epoch, a lifetime too long to compute. Details are
// in a [*LayoutError].
var ErrInvalidLayout = errors.New("ringflake: invalid layout")

// ErrNodeOutOfRange is matched by errors about a node id that does not fit
// the layout's node bits. Details are in a [*NodeError].
var ErrNodeOutOfRange = errors.New("ringflake: node id out of range")

// ErrBeforeEpoch is returned when the clock reads earlier than the layout's
// epoch and nothing has been issued yet, so no ID time can express it: by
// [New] for an epoch in the clock's future, and by [Generator.Next].
var ErrBeforeEpoch = errors.New("ringflake: clock reads before the layout's epoch")

// ErrLayoutExpired is returned when the clock reads past the last instant
// the layout can represent ([Layout.Last]): by [New], by [Layout.Compose],
// and by [Generator.Next] once the layout has run out. IDs never wrap.
var ErrLayoutExpired = errors.New("ringflake: clock is past the layout's last representable time")

// ErrInvalidID is matched by errors about a string or number that is not an
// ID. Details are in a [*SyntaxError].
var ErrInvalidID = errors.New("ringflake: invalid ID")

// ErrInvalidEncoding is matched by the error [ParseEncoding] returns for a
// name that is not an encoding's.
var ErrInvalidEncoding = errors.New("ringflake: unknown encoding")

// ErrInvalidOption is matched by errors about an option given to [New],
// such as a nil clock.
var ErrInvalidOption = errors.New("ringflake: invalid option")

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

// NodeError reports a node id outside the layout's range. It matches
// [ErrNodeOutOfRange].
type NodeError struct {
	Field string // "node", "datacenter" or "worker"
	Value int64
	Max   int64 // the greatest valid value
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("ringflake: %s id %d out of range [0, %d]", e.Field, e.Value, e.Max)
}

// Is reports whether target is [ErrNodeOutOfRange].
func (e *NodeError) Is(target error) bool { return target == ErrNodeOutOfRange }

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

// EncodingError reports a name that is not an encoding's. It matches
// [ErrInvalidEncoding].
type EncodingError struct {
	Name string // the name as given
}

func (e *EncodingError) Error() string {
	return fmt.Sprintf("ringflake: unknown encoding %q: want %s", e.Name, encodingNames())
}

// Is reports whether target is [ErrInvalidEncoding].
func (e *EncodingError) Is(target error) bool { return target == ErrInvalidEncoding }

// timeError wraps ErrBeforeEpoch or ErrLayoutExpired with the instant at
// fault.
type timeError struct {
	err  error
	at   time.Time
	edge time.Time
}

func (e *timeError) Error() string {
	return fmt.Sprintf("%v: %s (limit %s)", e.err, e.at.UTC().Format(time.RFC3339Nano), e.edge.UTC().Format(time.RFC3339Nano))
}

func (e *timeError) Unwrap() error { return e.err }

// ErrMarkCorrupt is matched by errors about a stored high-water mark that
// exists but cannot be understood (truncated, altered, not a mark). A
// generator refuses to start on it rather than treat it as "no mark".
// Details are in a [*MarkError].
var ErrMarkCorrupt = errors.New("ringflake: high-water mark is corrupt")

// ErrLeaseLost is returned by [Generator.Next] while the generator's
// [Lease] does not hold its node id: the lease could not be renewed before
// it may have expired, or someone else took the id. The generator issues
// nothing under an id someone else may hold; it resumes when the lease
// holds the id again.
var ErrLeaseLost = errors.New("ringflake: node id lease lost")

// ErrNodeUnavailable is matched by errors of a [NodeSource] that cannot
// provide a node id: an unset environment variable, a host name without an
// ordinal, a coordination service whose range of ids is used up.
var ErrNodeUnavailable = errors.New("ringflake: no node id available")

// MarkError reports a stored high-water mark that cannot be understood. It
// matches [ErrMarkCorrupt].
type MarkError struct {
	Path   string // where the mark is stored
	Reason string
}

func (e *MarkError) Error() string {
	return fmt.Sprintf("ringflake: high-water mark %s is corrupt: %s", e.Path, e.Reason)
}

// Is reports whether target is [ErrMarkCorrupt].
func (e *MarkError) Is(target error) bool { return target == ErrMarkCorrupt }

// ErrClosed is returned by [Generator.Next] after [Generator.Close].
var ErrClosed = errors.New("ringflake: generator closed")

// ErrBelowExisting is matched by the error [New] returns, with
// [WithExistingID], when the generator's first ID could sort at or below
// the greatest ID already in use: a new layout, epoch or node whose IDs
// would break ORDER BY id. Details are in an [*ExistingIDError].
var ErrBelowExisting = errors.New("ringflake: new IDs would not sort above the existing ones")

// ExistingIDError reports that a generator's first ID would not sort above
// an existing ID. It matches [ErrBelowExisting].
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

// ErrInvalidDemand is matched by errors about a [Demand] that cannot be
// planned for: no nodes, a rate or lifetime that is not positive, a unit
// that is not a whole number of milliseconds. Details are in a
// [*DemandError].
var ErrInvalidDemand = errors.New("ringflake: invalid demand")

// DemandError reports which field of a [Demand] is wrong. It matches
// [ErrInvalidDemand].
type DemandError struct {
	Field  string // the Demand field at fault
	Reason string
}

func (e *DemandError) Error() string {
	return fmt.Sprintf("ringflake: invalid demand: %s: %s", e.Field, e.Reason)
}

// Is reports whether target is [ErrInvalidDemand].
func (e *DemandError) Is(target error) bool { return target == ErrInvalidDemand }

// ErrNoLayoutFits is matched by the error [Plan] returns when no layout of
// 63 bits meets a [Demand]. Details, per unit tried, are in a
// [*PlanError].
var ErrNoLayoutFits = errors.New("ringflake: no layout fits")

// PlanError reports a demand no layout can meet: for each unit tried, the
// bits it would need. It matches [ErrNoLayoutFits].
type PlanError struct {
	Demand Demand
	Short  []Shortfall
}

func (e *PlanError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s:", ErrNoLayoutFits, e.Demand)
	for i, s := range e.Short {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s", s)
	}
	return b.String()
}

// Is reports whether target is [ErrNoLayoutFits].
func (e *PlanError) Is(target error) bool { return target == ErrNoLayoutFits }

// ErrInvalidSerialFormat is matched by errors about a serial number
// pattern that [NewSerialFormat] cannot use for a layout. Details are in a
// [*SerialFormatError].
var ErrInvalidSerialFormat = errors.New("ringflake: invalid serial format")

// SerialFormatError reports what is wrong with a serial number pattern,
// and where. It matches [ErrInvalidSerialFormat].
type SerialFormatError struct {
	Pattern string
	Offset  int // byte offset of the problem in Pattern, or -1
	Reason  string
}

func (e *SerialFormatError) Error() string {
	return textError("invalid serial format", e.Pattern, e.Reason, e.Offset)
}

// Is reports whether target is [ErrInvalidSerialFormat].
func (e *SerialFormatError) Is(target error) bool { return target == ErrInvalidSerialFormat }
