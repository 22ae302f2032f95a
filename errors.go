package ringflake

import (
	"errors"
	"fmt"
	"os"
	"strconv"
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

// ErrMarkMismatch is matched by the error [New] returns for a stored
// high-water mark that was written for another node id or layout: reusing
// it would protect the wrong IDs, and overwriting it would lose the other
// node's. Details are in a [*MarkMismatchError].
var ErrMarkMismatch = errors.New("ringflake: high-water mark belongs to another node id or layout")

// MarkMismatchError reports a stored mark of another node id or layout. It
// matches [ErrMarkMismatch].
type MarkMismatchError struct {
	Store          string // where the mark is stored, as the store names itself
	Node, WantNode int64  // the mark's node id, and the generator's
	Layout         string // the mark's layout, as [Layout.String] wrote it
	WantLayout     string // the generator's
}

func (e *MarkMismatchError) Error() string {
	return fmt.Sprintf("ringflake: high-water mark %s was written for node %d, layout %s; this generator is node %d, layout %s: give each node its own mark",
		e.Store, e.Node, e.Layout, e.WantNode, e.WantLayout)
}

// Is reports whether target is [ErrMarkMismatch].
func (e *MarkMismatchError) Is(target error) bool { return target == ErrMarkMismatch }

// ErrMarkNotSaved is matched by the error of a call (or of [New], or
// [Generator.Close]) that needed a later high-water mark, or the exact one,
// and the [MarkStore] could not save it: the store's error is wrapped too
// (errors.Is and errors.As reach it). Nothing is issued past a mark that
// is not saved; the next call that needs the mark tries again.
var ErrMarkNotSaved = errors.New("ringflake: high-water mark not saved")

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

// ErrNodeInUse is matched by the error [New] returns when another live
// generator of this process, on the system clock, has the same node id
// and layout: two generators on one node would issue the same IDs.
// Details are in a [*NodeInUseError].
var ErrNodeInUse = errors.New("ringflake: node id in use by another live generator")

// NodeInUseError reports a node id that another live generator of this
// process uses with the same layout. It matches [ErrNodeInUse].
type NodeInUseError struct {
	Node   int64
	Layout string // as [Layout.String] writes it
}

func (e *NodeInUseError) Error() string {
	return fmt.Sprintf("ringflake: node %d (layout %s) is in use by another live generator of this process: close it first, or give each generator its own node id",
		e.Node, e.Layout)
}

// Is reports whether target is [ErrNodeInUse].
func (e *NodeInUseError) Is(target error) bool { return target == ErrNodeInUse }

// ErrMarkInUse is matched by the error a [FileMarkStore] returns when
// another generator — in another process or in this one — holds its
// file. Details are in a [*MarkInUseError].
var ErrMarkInUse = errors.New("ringflake: high-water mark file in use by another generator")

// MarkInUseError reports a mark file that another generator holds. It
// matches [ErrMarkInUse].
type MarkInUseError struct {
	Path string // the mark file, as the store was given it
	Lock string // the lock file next to the mark file's target
	PID  int    // the holder's process id, as it recorded it in Lock; 0 if unknown
}

func (e *MarkInUseError) Error() string {
	holder := "another process"
	switch {
	case e.PID == os.Getpid():
		holder = "another generator of this process"
	case e.PID > 0:
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("ringflake: high-water mark file %s is in use by %s (lock %s): one file serves one running generator", e.Path, holder, e.Lock)
}

// Is reports whether target is [ErrMarkInUse].
func (e *MarkInUseError) Is(target error) bool { return target == ErrMarkInUse }

// LocalNodesFullError reports that every node id of a layout is held by
// processes of this host in a [LocalNode]'s directory. It matches
// [ErrNodeUnavailable].
type LocalNodesFullError struct {
	Dir   string // the lock directory
	Nodes int64  // how many node ids the layout has
}

func (e *LocalNodesFullError) Error() string {
	ids := fmt.Sprintf("all %d node ids of the layout are", e.Nodes)
	if e.Nodes == 1 {
		ids = "the layout's one node id is"
	}
	return fmt.Sprintf("ringflake: no node id available: %s held by processes of this host (lock files in %s)", ids, e.Dir)
}

// Is reports whether target is [ErrNodeUnavailable].
func (e *LocalNodesFullError) Is(target error) bool { return target == ErrNodeUnavailable }

// LocalNodeHeldError reports that the node id asked of
// [LocalNode.Claim] is held by another process of this host (or another
// LocalNode of this process). It matches [ErrNodeUnavailable].
type LocalNodeHeldError struct {
	Dir  string // the lock directory
	Node int64
}

func (e *LocalNodeHeldError) Error() string {
	return fmt.Sprintf("ringflake: no node id available: node %d is held by another process of this host, or another LocalNode of this one (lock file %s)", e.Node, localNodeFile(e.Dir, e.Node))
}

// Is reports whether target is [ErrNodeUnavailable].
func (e *LocalNodeHeldError) Is(target error) bool { return target == ErrNodeUnavailable }

// ErrMarkFileUnusable is matched by the errors of a [FileMarkStore] whose
// path leads to something it must not use: not a regular file (a
// directory, a named pipe, a device), or a file the process may not write
// or whose mode lets nobody write it. Details are in a [*MarkFileError].
var ErrMarkFileUnusable = errors.New("ringflake: high-water mark file unusable")

// MarkFileError reports a mark file path a [FileMarkStore] refuses. It
// matches [ErrMarkFileUnusable], and its cause through Unwrap (for example
// [fs.ErrPermission]).
type MarkFileError struct {
	Path   string // the path as the store was given it
	Target string // where its symbolic links lead, if elsewhere
	Reason string
	Err    error // the cause, or nil
}

func (e *MarkFileError) Error() string {
	path := e.Path
	if e.Target != "" {
		path += " (-> " + e.Target + ")"
	}
	return fmt.Sprintf("ringflake: high-water mark file %s is unusable: %s", path, e.Reason)
}

// Is reports whether target is [ErrMarkFileUnusable].
func (e *MarkFileError) Is(target error) bool { return target == ErrMarkFileUnusable }

// Unwrap returns the cause.
func (e *MarkFileError) Unwrap() error { return e.Err }
