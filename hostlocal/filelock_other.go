//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package hostlocal

import (
	"io/fs"
	"os"
)

// canLock reports whether this system has flock(2), which [Node] and
// [MarkFile]'s lock need.
const canLock = false

// Without flock there is nothing to refuse links and pipes with: the
// checks of the file's type before it is opened stay.
const (
	oNoFollow = 0
	oNonBlock = 0
)

func tryLock(f *os.File, shared bool) (bool, error) { return false, errNoFlock }

func keepOwner(f *os.File, fi fs.FileInfo) {}
