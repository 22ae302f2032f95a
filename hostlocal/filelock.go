package hostlocal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errNoFlock is the cause of the errors of file locks where flock(2)
// is missing.
var errNoFlock = errors.New("file locks (flock) are not available on this system")

// lockFile opens the file at path with flag (os.O_RDONLY or os.O_RDWR),
// creating it with mode perm — whatever the umask — if it does not exist,
// and returns it locked exclusively, or nil when another open file holds
// the lock. It never follows a symbolic link at path, never blocks on a
// named pipe, and refuses anything but a regular file.
func lockFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	name := filepath.Base(path)
	for range 8 {
		f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, 0)
		if errors.Is(err, fs.ErrNotExist) {
			f, err = os.OpenFile(path, flag|os.O_CREATE|os.O_EXCL|oNoFollow|oNonBlock, perm)
			if errors.Is(err, fs.ErrExist) {
				continue // another process made it first
			}
			if err == nil {
				if err = f.Chmod(perm); err != nil {
					f.Close()
				}
			}
		}
		if err != nil {
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s is a symbolic link, not a lock file", name)
			}
			return nil, fmt.Errorf("%s: %w", name, cause(err))
		}
		fi, err := f.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%s is %s, not a regular file", name, fileKind(fi.Mode()))
		}
		var ok bool
		if err == nil {
			ok, err = tryLock(f, false)
		}
		if err != nil || !ok {
			return nil, errors.Join(err, f.Close())
		}
		// The name must still lead to the file locked: a file removed or
		// replaced between the open and the lock locks nothing.
		if cur, err := os.Lstat(path); err == nil && os.SameFile(cur, fi) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("%s keeps being replaced", name)
}

// cause returns the error under a *fs.PathError, whose path the messages
// around it already name.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// fileKind names the type of a file that is not a regular file, for
// errors.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "mode " + m.String()
	}
}
