package hostlocal

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/ringflake/ringflake"
)

// ErrMarkFileUnusable is matched by the errors of a [MarkFile] whose path
// leads to something it must not use: not a regular file (a directory, a
// named pipe, a device), or a file the process may not write or whose
// mode lets nobody write it. Such an error is a [*ringflake.MarkError]
// whose Kind is ErrMarkFileUnusable and whose Err is the cause, if any
// (for example [fs.ErrPermission]).
var ErrMarkFileUnusable = errors.New("hostlocal: high-water mark file unusable")

// unusable returns the error for a mark file at path that leads to target
// (the same file, or "" when it is not known to be elsewhere).
func unusable(path, target, reason string, cause error) error {
	if target != "" && target != path {
		reason = "it leads to " + target + ": " + reason
	}
	return &ringflake.MarkError{Kind: ErrMarkFileUnusable, Path: path, Reason: reason, Err: cause}
}

// ErrMarkInUse is matched by the error [MarkFile.Hold] (and so
// [ringflake.New]) returns when another generator — in another process
// or in this one — holds the file, so that a second generator fails at
// once instead of taking the first one's mark for a rollback. Such an
// error is a [*ringflake.MarkError] whose PID is the holder's, when it
// recorded it.
var ErrMarkInUse = errors.New("hostlocal: high-water mark file in use by another generator")

// inUse returns the error for a mark file at path whose lock file lock is
// held, by the process pid if it is known (0 if not).
func inUse(path, lock string, pid int) error {
	holder := "another process"
	switch {
	case pid == os.Getpid():
		holder = "another generator of this process"
	case pid > 0:
		holder = "process " + strconv.Itoa(pid)
	}
	return &ringflake.MarkError{Kind: ErrMarkInUse, Path: path, PID: pid,
		Reason: fmt.Sprintf("held by %s (lock %s): one file serves one running generator", holder, lock)}
}

// NodeError reports that a [Node] found no node id it may hold: every id
// of the layout is held by processes of this host (Node is -1), or the
// id asked of [Node.Claim] is held by another process of this host, or
// another Node of this one. It matches [ringflake.ErrNodeUnavailable].
type NodeError struct {
	Dir   string // the lock directory
	Node  int64  // the id asked for, or -1 for any
	Nodes int64  // how many node ids the layout has
	// PID is the process that holds the id asked for, where the system
	// tells (Linux lists flock holders in /proc/locks); 0 if unknown.
	PID int
}

func (e *NodeError) Error() string {
	if e.Node >= 0 {
		holder := "another process of this host, or another Node of this one"
		switch {
		case e.PID == os.Getpid():
			holder = "another Node of this process"
		case e.PID > 0:
			holder = "process " + strconv.Itoa(e.PID) + " of this host"
		}
		return fmt.Sprintf("%v: node %d is held by %s (lock file %s)",
			ringflake.ErrNodeUnavailable, e.Node, holder, nodeFile(e.Dir, e.Node))
	}
	ids := fmt.Sprintf("all %d node ids of the layout are", e.Nodes)
	if e.Nodes == 1 {
		ids = "the layout's one node id is"
	}
	return fmt.Sprintf("%v: %s held by processes of this host (lock files in %s)", ringflake.ErrNodeUnavailable, ids, e.Dir)
}

// Is reports whether target is [ringflake.ErrNodeUnavailable].
func (e *NodeError) Is(target error) bool { return target == ringflake.ErrNodeUnavailable }
