//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hostlocal

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// canLock reports whether this system has flock(2), which [Node] and
// [MarkFile]'s lock need.
const canLock = true

// Flags for opening a file another user may have placed: oNoFollow
// refuses a symbolic link as the last element, oNonBlock keeps a named
// pipe from blocking the open.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// tryLock takes an flock(2) lock on f — shared or exclusive — without
// waiting, and reports false when a conflicting lock is held through
// another open file (in this process or another). The kernel releases it
// when f is closed, also when the process dies.
func tryLock(f *os.File, shared bool) (bool, error) {
	how := syscall.LOCK_EX | syscall.LOCK_NB
	if shared {
		how = syscall.LOCK_SH | syscall.LOCK_NB
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if lerr = syscall.Flock(int(fd), how); !errors.Is(lerr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	if lerr != nil {
		return false, &fs.PathError{Op: "flock", Path: f.Name(), Err: lerr}
	}
	return true, nil
}

// keepOwner gives f, a new file about to replace the file fi describes,
// that file's owner and group where the process may (root may; others
// keep at least the group when they belong to it). It is best effort: the
// mode, which [MarkFile] always keeps, is what guards the file.
func keepOwner(f *os.File, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	uid, gid := int(st.Uid), int(st.Gid)
	if uid == os.Geteuid() && gid == os.Getegid() {
		return
	}
	if f.Chown(uid, gid) != nil {
		_ = f.Chown(-1, gid)
	}
}
