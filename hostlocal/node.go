package hostlocal

import (
	"context"
	"errors"
	"fmt"
	"github.com/ringflake/ringflake"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// DefaultDir is the directory a [Node] made with an empty
// dir locks node ids in. It is one directory for every user of the host,
// so that all their processes draw from one range of ids: the first
// Node to need it creates it world-writable with the sticky bit, as
// /tmp is (a user can then remove only their own files).
const DefaultDir = "/tmp/ringflake-nodes"

// Node is a [ringflake.NodeSource] that gives each process of one host a node
// id that no other process of the host holds, without a server: it holds
// the id with an flock(2) lock on the file DIR/node-N.lock, which the
// kernel releases when the process ends — also on kill -9 or a crash — so
// the id is free again at once. [Node.NodeID] takes the lowest free
// id of the layout and keeps returning it until [Node.Close]; while
// one Node holds an id, no other Node on the same directory
// gets it, in this process or another.
//
// It guards one host only: processes on other hosts, and containers or
// services that see another directory under the same name (a container's
// own /tmp, a systemd service with PrivateTmp=yes), draw from their own
// range. Give containers a shared directory (a bind mount) to share one
// range; give separate hosts separate ranges (a fleet lease, or static
// ids with a layout whose node bits have room). Node ids that fit several
// layouts are shared by them: the directory is one range of numbers, and
// a layout with fewer ids than another only uses the low ones. The
// directory must be on a local file system (flock over NFS is not
// reliable).
//
// The directory may be shared by users who do not trust each other only
// in the sense /tmp is: any user who can create files in it can also hold
// ids and so keep others from getting them. Node never writes to,
// truncates or deletes a file in it; it opens existing lock files read-only
// (flock needs no more), refuses symbolic links, named pipes and anything
// else that is not a regular file there, and refuses a world-writable
// directory without the sticky bit, in which any user could remove a held
// lock file so that a second process could take the same id. The sticky
// bit does not hold back the directory's owner, who may remove any file
// in it: on a host whose users do not trust each other, have root make
// the directory (mode 1777) at boot, as systemd-tmpfiles can, before any
// user can make it first. Lock files
// are kept after use; do not delete them while a process runs (on macOS,
// which removes files in /tmp that were not accessed for three days, give
// a process that runs longer its own directory). systemd-tmpfiles, which
// ages out files in /tmp on Linux, skips the directory while any process
// holds an id in it: a Node also holds a shared lock on the
// directory.
//
// File locks need flock(2): Linux, macOS and the BSDs. Elsewhere NodeID
// fails with an error matching [ringflake.ErrNodeUnavailable].
//
// An id stays held until [Node.Close] or the end of the process,
// also when the program drops every reference to its Node: the
// package keeps a held Node reachable, because the garbage collector
// closes the lock file of an unreachable one, and with it the lock.
//
// A Node is safe for concurrent use. Its zero value has no directory:
// NodeID and Claim fail with an error matching
// [ringflake.ErrNodeUnavailable]; make one with [NewNode].
type Node struct {
	dir string
	def bool // dir is DefaultDir: made shared by every user

	mu   sync.Mutex
	dirf *os.File // the directory, locked shared while an id is held
	file *os.File // the held id's lock file; nil while none is held
	node int64
}

// heldNodes keeps every Node that holds an id reachable until
// its Close: an *os.File the garbage collector finds unreachable is
// closed, which would free the id while a generator still issues on it.
var heldNodes sync.Map // *Node → struct{}

// NewNode returns a source that locks node ids in dir, or in
// [DefaultDir] when dir is "". Another dir that does not exist is
// created (with its parents) when an id is first asked for, with mode 0700:
// private to the user who created it — make it group-writable, or
// world-writable with the sticky bit, to share it between users.
func NewNode(dir string) *Node {
	if dir == "" || filepath.Clean(dir) == DefaultDir {
		return &Node{dir: DefaultDir, def: true}
	}
	return &Node{dir: dir}
}

// Dir returns the directory the source locks node ids in.
func (n *Node) Dir() string { return n.dir }

// NodeID returns the node id n holds, first taking the lowest id of l
// that no other process of the host holds. Errors:
//   - a [*NodeError], matching [ringflake.ErrNodeUnavailable], when every
//     id of l is held;
//   - [ringflake.ErrNodeUnavailable] with the cause (for example [fs.ErrPermission])
//     when the directory or a lock file cannot be used, and on systems
//     without flock;
//   - [ringflake.ErrNodeOutOfRange] when the id n already holds does not fit l;
//   - [ringflake.ErrInvalidLayout] for the zero Layout; ctx.Err() when ctx is done.
func (n *Node) NodeID(ctx context.Context, l ringflake.Layout) (int64, error) {
	return n.take(ctx, l, -1)
}

// Claim takes the given node id of l, as [Node.NodeID] takes the
// lowest free one: a process that keeps a high-water mark per node id
// uses it to get the id its mark was written for. It fails with a
// [*NodeError] (matching [ringflake.ErrNodeUnavailable]) when another
// process holds the id, with [ringflake.ErrNodeOutOfRange] when it does not fit l,
// with [ringflake.ErrNodeUnavailable] when n already holds another id, and
// otherwise as NodeID does.
func (n *Node) Claim(ctx context.Context, l ringflake.Layout, node int64) error {
	if l.IsZero() {
		return &ringflake.LayoutError{Field: "Layout", Reason: "zero value; use a preset, ringflake.NewLayout or ParseLayout"}
	}
	if err := checkNode(l, node); err != nil {
		return err
	}
	_, err := n.take(ctx, l, node)
	return err
}

// take returns the held id, or takes want (the lowest free id of l when
// want < 0).
func (n *Node) take(ctx context.Context, l ringflake.Layout, want int64) (int64, error) {
	if l.IsZero() {
		return 0, &ringflake.LayoutError{Field: "Layout", Reason: "zero value; use a preset, ringflake.NewLayout or ParseLayout"}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.file != nil {
		if want >= 0 && want != n.node {
			return 0, fmt.Errorf("%w: this Node holds node %d already; Close it to claim node %d", ringflake.ErrNodeUnavailable, n.node, want)
		}
		if err := checkNode(l, n.node); err != nil {
			return 0, err
		}
		return n.node, nil
	}
	if !canLock {
		return 0, fmt.Errorf("%w: local node ids on %s: %v", ringflake.ErrNodeUnavailable, runtime.GOOS, errNoFlock)
	}
	dirf, err := n.openDir(ctx)
	if err != nil {
		return 0, err
	}
	first, last := int64(0), l.MaxNode()
	if want >= 0 {
		first, last = want, want
	}
	for id := first; id <= last; id++ {
		if err := ctx.Err(); err != nil {
			return 0, errors.Join(err, dirf.Close())
		}
		// Read-only: other users' lock files are readable, not
		// writable, and flock needs no more.
		f, err := lockFile(nodeFile(n.dir, id), os.O_RDONLY, 0o444)
		if err != nil {
			return 0, errors.Join(fmt.Errorf("%w: lock directory %s: %w", ringflake.ErrNodeUnavailable, n.dir, err), dirf.Close())
		}
		if f != nil {
			n.dirf, n.file, n.node = dirf, f, id
			heldNodes.Store(n, struct{}{})
			return id, nil
		}
	}
	if err := dirf.Close(); err != nil {
		return 0, err
	}
	if want >= 0 {
		return 0, &NodeError{Dir: n.dir, Node: want, Nodes: l.MaxNode() + 1, PID: lockHolder(nodeFile(n.dir, want))}
	}
	return 0, &NodeError{Dir: n.dir, Node: -1, Nodes: l.MaxNode() + 1}
}

// Close gives the held id back (nothing when none is held). The lock file
// stays for the next process. After Close, NodeID takes an id again.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.file == nil {
		return nil
	}
	err := errors.Join(n.file.Close(), n.dirf.Close())
	n.file, n.dirf = nil, nil
	heldNodes.Delete(n)
	return err
}

// nodeFile returns the lock file of node id in dir.
func nodeFile(dir string, id int64) string {
	return filepath.Join(dir, "node-"+strconv.FormatInt(id, 10)+".lock")
}

// dirLockRetry is how often openDir tries again to lock the directory
// while systemd-tmpfiles (or anyone) holds it exclusively.
const dirLockRetry = 10 * time.Millisecond

// openDir makes the directory if need be, checks it, and returns it
// locked shared.
func (n *Node) openDir(ctx context.Context) (*os.File, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: lock directory %s: "+format, append([]any{ringflake.ErrNodeUnavailable, n.dir}, args...)...)
	}
	if n.dir == "" {
		return nil, fmt.Errorf("%w: no lock directory: the zero Node; make one with NewNode", ringflake.ErrNodeUnavailable)
	}
	if n.def {
		if err := os.Mkdir(n.dir, 0o700); err == nil {
			// Shared by every user, as /tmp is; Mkdir's mode went
			// through the umask, Chmod's does not.
			if err := os.Chmod(n.dir, 0o777|os.ModeSticky); err != nil {
				return nil, fail("%w", cause(err))
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, fail("%w", cause(err))
		}
		// In a directory every user can write to, the name itself
		// must not lead elsewhere.
		if fi, err := os.Lstat(n.dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fail("is a symbolic link; the default directory must be a directory itself")
		}
	} else if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return nil, fail("%w", cause(err))
	}
	fi, err := os.Stat(n.dir)
	switch {
	case err != nil:
		return nil, fail("%w", cause(err))
	case !fi.IsDir():
		return nil, fail("not a directory")
	case fi.Mode().Perm()&0o002 != 0 && fi.Mode()&os.ModeSticky == 0:
		return nil, fail("world-writable without the sticky bit: any user could remove a held lock file; chmod +t it")
	}
	d, err := os.Open(n.dir)
	if err != nil {
		return nil, fail("%w", cause(err))
	}
	for {
		ok, err := tryLock(d, true)
		if ok {
			return d, nil
		}
		if err != nil {
			return nil, errors.Join(fail("%w", cause(err)), d.Close())
		}
		// Someone holds it exclusively, as systemd-tmpfiles does while it
		// cleans it: wait until it is done.
		t := time.NewTimer(dirLockRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(ctx.Err(), d.Close())
		case <-t.C:
		}
	}
}

// checkNode returns the error for a node id that does not fit l.
func checkNode(l ringflake.Layout, node int64) error {
	if node < 0 || node > l.MaxNode() {
		return &ringflake.NodeError{Field: "node", Value: node, Max: l.MaxNode()}
	}
	return nil
}
