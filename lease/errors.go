package lease

import (
	"errors"
	"fmt"

	"github.com/ringflake/ringflake"
)

// ErrClosed is what a lease's Err returns after its Close.
var ErrClosed = errors.New("ringflake: lease closed")

// ErrDataLost is matched, together with ringflake.ErrLeaseLost, by the
// error of a lease lost because the server no longer has the prefix's
// epoch: it lost the prefix's data (a restart without persistence, an
// etcd rebuilt empty, a failover to an empty replica) or an operator
// deleted the epoch to force a quiet period.
var ErrDataLost = errors.New("ringflake: the lease server lost the prefix's data")

// ErrStaleSave is matched by the error of a mark save that changed
// nothing because the server had already stored a later save of the same
// lease. A lease numbers its saves, and the server keeps the number of
// the last one it stored: saves take effect in the order they were made,
// so a request that reaches the server late (one its caller gave up on,
// say) never replaces a later mark — and an exact mark saved last by
// ringflake's Generator.Close, below the mark it reserved before, does.
var ErrStaleSave = errors.New("ringflake: a later mark save of this lease was stored first")

// ErrClockSkew is matched by the error of an acquire or a claim refused
// because this host's clock is certainly further from the lease server's
// clock than [Options.MaxSkew], a [*SkewError] naming the measured offset
// and its uncertainty; and by the Err of a [ClockSkewed] event.
var ErrClockSkew = errors.New("ringflake: clock skew to the lease server beyond the maximum")

// An OptionError reports lease options that cannot work. It matches
// ringflake.ErrInvalidOption.
type OptionError struct {
	Package string // the lease module's package, "redislease" or "etcdlease"
	Reason  string
}

// Error names the module and the reason.
func (e *OptionError) Error() string {
	return fmt.Sprintf("%v: %s: %s", ringflake.ErrInvalidOption, e.Package, e.Reason)
}

// Is reports whether target is ringflake.ErrInvalidOption.
func (e *OptionError) Is(target error) bool { return target == ringflake.ErrInvalidOption }

// A RangeFullError reports that every node id of a prefix's range is
// held: Acquire found none free. It matches ringflake.ErrNodeUnavailable.
type RangeFullError struct {
	Package string // the lease module's package
	Prefix  string
	// Nodes is how many ids the range has: Layout.MaxNode() + 1.
	Nodes int64
}

// Error names the prefix and the size of its range.
func (e *RangeFullError) Error() string {
	return fmt.Sprintf("%v: %s: all %d node ids under prefix %q are held", ringflake.ErrNodeUnavailable, e.Package, e.Nodes, e.Prefix)
}

// Is reports whether target is ringflake.ErrNodeUnavailable.
func (e *RangeFullError) Is(target error) bool { return target == ringflake.ErrNodeUnavailable }

// A HeldError reports that the node id a Claim asked for is held by
// another lease: another process runs with the same configured node id.
// It matches ringflake.ErrNodeUnavailable.
type HeldError struct {
	Package string // the lease module's package
	Prefix  string
	Node    int64
	// Holder is the [Options.Holder] of the lease that holds the id;
	// empty when the server does not know it (a key written by hand, or
	// one whose holder is being replaced).
	Holder string
}

// Error names the node id and, when known, its holder.
func (e *HeldError) Error() string {
	by := "another holder"
	if e.Holder != "" {
		by = fmt.Sprintf("%q", e.Holder)
	}
	return fmt.Sprintf("%v: %s: node %d under prefix %q is held by %s", ringflake.ErrNodeUnavailable, e.Package, e.Node, e.Prefix, by)
}

// Is reports whether target is ringflake.ErrNodeUnavailable.
func (e *HeldError) Is(target error) bool { return target == ringflake.ErrNodeUnavailable }
