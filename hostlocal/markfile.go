package hostlocal

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ringflake/ringflake"
)

// MarkFile keeps a high-water mark in a small text file. It replaces
// the file atomically: it writes a temporary file in the file's directory,
// syncs it, renames it over the old one and syncs the directory, so a crash
// leaves either the old mark or the new one. The file holds one line with
// the mark's text ([ringflake.Mark.MarshalText]) and a CRC-32 checksum, so a
// truncated or damaged file is detected; files written by earlier versions
// (a bare time) are still read.
//
// The file is handled the way operators place it:
//   - a path that is a symbolic link (onto a persistent volume, say) is
//     followed, and the file it leads to is replaced (the temporary file
//     is made in that file's directory); the link stays;
//   - a replaced file keeps its mode, and its owner and group where the
//     process may set them; a new file gets mode 0600;
//   - a path that leads to anything but a regular file (a directory, a
//     named pipe — never opened in a way that could block —, a device),
//     and a file the process may not write or whose mode lets nobody
//     write it (0444), are refused with a [*ringflake.MarkError] matching
//     [ErrMarkFileUnusable], and left as they are.
//
// One generator at a time holds a MarkFile: [ringflake.New] takes it
// with [MarkFile.Hold] and [ringflake.Generator.Close] gives it back. It
// holds the file through an exclusive flock(2) lock on the file's target
// path with ".lock" appended (node.mark.lock next to node.mark), in which
// it records its process id. A second generator on the same file — in
// another process, or in this one through the same or another
// MarkFile — fails at once with a [*ringflake.MarkError] matching
// [ErrMarkInUse] that names the holder's pid, instead of taking the
// first one's mark for a rollback. The kernel frees the lock when the
// holder exits, also on kill -9. The lock file stays; do not delete it
// while a generator runs. The lock needs flock(2) (Linux, macOS, the
// BSDs); elsewhere Hold checks the file but locks nothing.
//
// A MarkFile is safe for concurrent use. One file serves one
// generator (one node) at a time. The zero MarkFile has no path: its
// methods fail with an error matching [ErrMarkFileUnusable]; make one
// with [NewMarkFile].
type MarkFile struct {
	path string

	mu     sync.Mutex
	held   bool
	lock   *os.File // the lock file while held; nil without flock
	heldAt string   // while held: the file path's symbolic links lead to
}

// NewMarkFile returns a store for the file at path. A missing file
// means no mark yet; its directory must exist.
func NewMarkFile(path string) *MarkFile { return &MarkFile{path: path} }

// Path returns the file the store reads and writes.
func (s *MarkFile) Path() string { return s.path }

// String returns the path, so that errors about the store name the file.
func (s *MarkFile) String() string { return s.path }

// The first words of a mark file's line: v2 files hold a [ringflake.Mark]'s text,
// v1 files (before v0.2) a bare RFC 3339 time.
const (
	markHeader   = "ringflake-mark v2 "
	markHeaderV1 = "ringflake-mark v1 "
)

// maxMarkFile is the most LoadMark reads of a mark file, whose one line
// takes about 200 bytes: a larger file is not a mark file.
const maxMarkFile = 1024

// Hold takes the store's file for the one generator that may use it;
// [ringflake.New] calls it. It fails with a [*ringflake.MarkError] (matching [ErrMarkInUse])
// when another generator holds the file, with a [*ringflake.MarkError]
// (matching [ErrMarkFileUnusable]) when the path leads to something the
// store must not use (see [MarkFile]), and with the cause (for
// example [fs.ErrPermission]) when the lock file next to the mark file
// cannot be made.
func (s *MarkFile) Hold(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		return inUse(s.path, s.heldAt+lockSuffix, os.Getpid())
	}
	target, err := s.resolve()
	if err != nil {
		return err
	}
	if _, err := s.check(target, true); err != nil {
		return err
	}
	if canLock {
		lock := target + lockSuffix
		f, err := lockFile(lock, os.O_RDWR, 0o644)
		if err != nil {
			if dir := filepath.Dir(target); errors.Is(err, fs.ErrNotExist) && !isDir(dir) {
				return fmt.Errorf("hostlocal: high-water mark file %s: its directory %s does not exist: create it first: %w", s.path, dir, fs.ErrNotExist)
			}
			return fmt.Errorf("hostlocal: high-water mark file %s: lock file %w", s.path, err)
		}
		if f == nil {
			return inUse(s.path, lock, readPID(lock))
		}
		// Tell the next one who holds it. The lock, not the text, is
		// what holds the file: a failed write only loses the pid.
		if f.Truncate(0) == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		s.lock = f
	}
	s.held, s.heldAt = true, target
	return nil
}

// Release gives back the file [MarkFile.Hold] took; [ringflake.Generator.Close]
// calls it. Releasing a store that is not held does nothing.
func (s *MarkFile) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return nil
	}
	var err error
	if s.lock != nil {
		// The pid of a process that no longer holds the file would
		// mislead whoever reads it.
		err = errors.Join(s.lock.Truncate(0), s.lock.Close())
	}
	s.held, s.lock, s.heldAt = false, nil, ""
	if err != nil {
		return fmt.Errorf("hostlocal: releasing high-water mark file %s: %w", s.path, err)
	}
	return nil
}

// lockSuffix ends the name of a mark file's lock file.
const lockSuffix = ".lock"

// readPID returns the process id recorded in the lock file at path, or 0.
func readPID(path string) int {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	b, _ := io.ReadAll(io.LimitReader(f, 24))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// maxLinks bounds the symbolic links followed from a mark file's path, as
// the kernel bounds them (Linux follows 40).
const maxLinks = 40

// resolve returns the file the store reads and replaces: the one held, or
// where path's symbolic links lead — a file that may not exist yet, as
// behind a link made before the first save.
func (s *MarkFile) resolve() (string, error) {
	if s.held {
		return s.heldAt, nil
	}
	if s.path == "" {
		return "", unusable("", "", "no path: the zero MarkFile; make one with NewMarkFile", nil)
	}
	path := s.path
	for range maxLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if err == nil {
			var dest string
			if dest, err = os.Readlink(path); err == nil {
				if !filepath.IsAbs(dest) {
					// Relative to the link's directory, as the kernel
					// reads it: not cleaned, so that ".." after a
					// linked directory leads where it would.
					dest = path[:len(path)-len(filepath.Base(path))] + dest
				}
				path = dest
				continue
			}
		}
		return "", fmt.Errorf("hostlocal: high-water mark file %s: %w", s.path, cause(err))
	}
	return "", unusable(s.path, path, fmt.Sprintf("more than %d symbolic links", maxLinks), nil)
}

// check returns what the store knows of target, the file its path leads
// to (nil when there is none yet), or an error when the store must not
// use it: not a regular file, or, when it is to be written, a file the
// process may not write or whose mode says nobody should.
func (s *MarkFile) check(target string, write bool) (fs.FileInfo, error) {
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hostlocal: high-water mark file %s: %w", s.path, cause(err))
	}
	unusable := func(reason string, err error) error {
		return unusable(s.path, target, reason, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, unusable(fileKind(fi.Mode())+", not a regular file", nil)
	}
	if !write {
		return fi, nil
	}
	if fi.Mode().Perm()&0o222 == 0 {
		return nil, unusable(fmt.Sprintf("read-only (mode %04o): the generator must replace it", fi.Mode().Perm()), fs.ErrPermission)
	}
	// The kernel has the last word (other owners, read-only mounts,
	// immutable files); opening for writing changes nothing.
	f, err := os.OpenFile(target, os.O_WRONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, unusable("cannot be written: "+cause(err).Error(), err)
	}
	f.Close()
	return fi, nil
}

// file returns the file the store reads and replaces, checked.
func (s *MarkFile) file(write bool) (string, fs.FileInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	target, err := s.resolve()
	if err != nil {
		return "", nil, err
	}
	fi, err := s.check(target, write)
	return target, fi, err
}

// LoadMark reads the mark. A missing file gives the zero Mark. Errors match
// [ringflake.ErrMarkCorrupt] for a file that is truncated, altered, larger than
// 1 KiB (it is not read whole) or not a mark file, and
// [ErrMarkFileUnusable] for a path that leads to something other than a
// regular file; read errors keep their cause (for example
// [fs.ErrPermission]).
func (s *MarkFile) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	if err := ctx.Err(); err != nil {
		return ringflake.Mark{}, err
	}
	target, fi, err := s.file(false)
	if err != nil || fi == nil {
		return ringflake.Mark{}, err
	}
	f, err := os.OpenFile(target, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return ringflake.Mark{}, nil
	}
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("hostlocal: reading mark file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() { // replaced since the check
		return ringflake.Mark{}, unusable(s.path, "", fileKind(fi.Mode())+", not a regular file", nil)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMarkFile+1))
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("hostlocal: reading mark file: %w", err)
	}
	if len(b) > maxMarkFile {
		size := fmt.Sprintf("more than %d bytes", maxMarkFile)
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fmt.Sprintf("%d bytes", fi.Size())
		}
		return ringflake.Mark{}, &ringflake.MarkError{Path: s.path, Reason: fmt.Sprintf("%s; a mark file is one line, at most %d bytes", size, maxMarkFile)}
	}
	return parseMarkFile(s.path, string(b))
}

func parseMarkFile(path, content string) (ringflake.Mark, error) {
	corrupt := func(reason string) (ringflake.Mark, error) {
		return ringflake.Mark{}, &ringflake.MarkError{Path: path, Reason: reason}
	}
	if content == "" {
		// Not a file MarkFile wrote (it replaces the file whole, so a
		// crash leaves the old mark or the new one): say so rather than
		// call it truncated.
		return corrupt("empty: not a mark file ringflake wrote (it never leaves one empty); remove it only if no ID was issued under it")
	}
	line, ok := strings.CutSuffix(content, "\n")
	if !ok {
		return corrupt("no final newline (truncated?)")
	}
	header := markHeader
	rest, ok := strings.CutPrefix(line, header)
	if !ok {
		header = markHeaderV1
		if rest, ok = strings.CutPrefix(line, header); !ok {
			return corrupt("does not start with " + strings.TrimSpace(markHeader))
		}
	}
	body, sum, ok := strings.Cut(rest, " crc32=")
	if !ok {
		return corrupt("no checksum")
	}
	if want := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(header+body))); sum != want {
		return corrupt(fmt.Sprintf("checksum %s, want %s", sum, want))
	}
	if header == markHeaderV1 && strings.HasPrefix(body, "limit=") {
		return corrupt(fmt.Sprintf("%q is not an RFC 3339 time", shorten(body)))
	}
	var m ringflake.Mark
	if err := m.UnmarshalText([]byte(body)); err != nil {
		var me *ringflake.MarkError
		if errors.As(err, &me) {
			return corrupt(me.Reason)
		}
		return corrupt(err.Error())
	}
	return m, nil
}

func formatMarkFile(m ringflake.Mark) string {
	text, _ := m.MarshalText() // never fails
	head := markHeader + string(text)
	return fmt.Sprintf("%s crc32=%08x\n", head, crc32.ChecksumIEEE([]byte(head)))
}

// keptMode is the part of a file's mode a replacement keeps.
const keptMode = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// SaveMark replaces the file with one holding m, durably. It refuses, with
// a [*ringflake.MarkError] matching [ErrMarkFileUnusable], to replace anything
// the store must not (see [MarkFile]); other errors keep their
// cause.
func (s *MarkFile) SaveMark(ctx context.Context, m ringflake.Mark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	target, fi, err := s.file(true)
	if err != nil {
		return err
	}
	dir := target[:len(target)-len(filepath.Base(target))]
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("hostlocal: writing mark file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if fi != nil {
		keepOwner(f, fi) // before the mode: a change of owner clears set-id bits
		err = f.Chmod(fi.Mode() & keptMode)
	}
	if err == nil {
		_, err = f.WriteString(formatMarkFile(m))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("hostlocal: writing mark file: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// shorten returns s, cut to 40 bytes with "…" for error messages.
func shorten(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}

// isDir reports whether path is a directory (following symbolic links).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
