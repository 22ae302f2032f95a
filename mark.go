package ringflake

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
	"time"
)

// DefaultMarkAhead is how far ahead of the IDs it issues a generator with a
// [MarkStore] writes its high-water mark, unless [WithMarkAhead] says
// otherwise — or two ticks of the layout, when they are longer.
const DefaultMarkAhead = time.Second

// A MarkStore persists a generator's high-water mark ([Mark]): an instant
// that no ID of the generator's node is stamped after. A generator writes
// the mark ahead of the IDs it issues — by [DefaultMarkAhead] or
// [WithMarkAhead] — so it writes about twice per such interval, not once per
// ID, and it never issues an ID stamped after the last mark it saved.
//
// On start, [New] loads the mark and treats every ID up to it as issued, so
// a restarted generator never issues an ID at or below the mark of a
// previous run. A mark tells a reservation from a rollback: a clock that
// reads behind the mark but not behind [Mark.Since] is behind only because
// the previous run reserved time ahead (it crashed without a clean
// [Generator.Close]); the generator waits out, or borrows across, that
// reservation without reporting a rollback. A clock behind Since is a
// rollback, and the generator's strategy decides.
//
// Implementations must be safe for concurrent use. [FileMarkStore] is the
// default implementation; lease implementations keep the mark of a leased
// node id with the lease, so that the next holder of the id starts after it.
// A store that keeps marks as text can use [Mark.MarshalText] and
// [Mark.UnmarshalText], which also read the bare RFC 3339 time earlier
// versions stored.
type MarkStore interface {
	// LoadMark returns the stored mark, or the zero Mark when nothing was
	// ever stored (a first start). A mark that exists but cannot be read
	// or understood is an error, never "no mark".
	LoadMark(ctx context.Context) (Mark, error)

	// SaveMark durably stores m before returning. A running generator
	// only saves marks later than the ones it loaded or saved before;
	// [Generator.Close] may then save an earlier one: the exact mark of
	// what was issued, in place of the mark written ahead. Generators
	// call it on a background goroutine without a deadline, and calls
	// that need the mark wait for it, so it must bound its own time (a
	// network store needs a timeout).
	SaveMark(ctx context.Context, m Mark) error
}

// A MarkHolder is a [MarkStore] that one generator holds at a time, as
// [FileMarkStore] holds its file: [New] calls Hold before it loads the
// mark and fails with Hold's error (so a second generator on the same
// store fails at once, instead of seeing the first one's mark as a
// rollback), and [Generator.Close] — or a New that fails after Hold —
// calls Release once. If Close's context ends before the final save, the
// store stays held until the process exits.
type MarkHolder interface {
	MarkStore
	Hold(ctx context.Context) error
	Release() error
}

// A Mark is a generator's high-water mark, as a [MarkStore] keeps it. The
// zero Mark means nothing was ever issued.
type Mark struct {
	// Limit is an instant no ID of the node was stamped after: the end of
	// the time a running generator reserved ahead of the IDs it issues or,
	// after a clean [Generator.Close], the time of its newest ID. The zero
	// Time means that nothing was issued.
	Limit time.Time

	// Since is the newest the writing generator knew of when it saved the
	// mark: the later of its clock's reading and its newest ID. IDs up to
	// Since may have been issued; the time between Since and Limit is a
	// reservation. A mark saved by a clean Close has Since equal to
	// Limit. A mark without Since (written by ringflake before v0.2) is
	// read as Since = Limit.
	Since time.Time

	// Node and Layout ([Layout.String]) say whom the mark was written
	// for: [New] refuses a mark of another node id or layout
	// ([ErrMarkMismatch]). The layouts' field order is not compared (a
	// mark bounds ticks, which both orders share). An empty Layout (a
	// mark written before v0.2) is not checked.
	Node   int64
	Layout string
}

// IsZero reports whether m is the zero Mark: nothing was ever issued.
func (m Mark) IsZero() bool { return m == Mark{} }

// markNone stands for a zero time in a mark's text.
const markNone = "none"

// MarshalText writes m as one line of text without a newline:
//
//	limit=2026-11-24T08:00:01.5Z since=2026-11-24T08:00:00.5Z node=7 layout=twitter
//
// with "none" for a zero time. The layout comes last: it is the rest of
// the line.
func (m Mark) MarshalText() ([]byte, error) {
	return m.appendText(nil), nil
}

func (m Mark) appendText(b []byte) []byte {
	stamp := func(b []byte, t time.Time) []byte {
		if t.IsZero() {
			return append(b, markNone...)
		}
		return t.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, "limit="...)
	b = stamp(b, m.Limit)
	b = append(b, " since="...)
	b = stamp(b, m.Since)
	b = append(b, " node="...)
	b = strconv.AppendInt(b, m.Node, 10)
	b = append(b, " layout="...)
	return append(b, m.Layout...)
}

// UnmarshalText reads a mark written by [Mark.MarshalText], or a bare RFC
// 3339 time as earlier versions stored it (read as Limit = Since, no node
// or layout). Errors match [ErrMarkCorrupt].
func (m *Mark) UnmarshalText(text []byte) error {
	v, err := parseMark(string(text))
	if err != nil {
		return &MarkError{Path: "mark", Reason: err.Error()}
	}
	*m = v
	return nil
}

// parseMark reads the text of a mark; its errors say what is wrong, for a
// MarkError.
func parseMark(s string) (Mark, error) {
	if !strings.HasPrefix(s, "limit=") {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || t.IsZero() {
			return Mark{}, fmt.Errorf("%q is neither a mark nor an RFC 3339 time", shorten(s))
		}
		return Mark{Limit: t, Since: t}, nil
	}
	var m Mark
	rest := s
	for _, key := range []string{"limit=", "since=", "node=", "layout="} {
		var val string
		if key == "layout=" {
			val, rest = rest, ""
		} else {
			val, rest, _ = strings.Cut(rest, " ")
		}
		val, ok := strings.CutPrefix(val, key)
		if !ok {
			return Mark{}, fmt.Errorf("want %s… in %q", key, shorten(s))
		}
		switch key {
		case "limit=", "since=":
			t := time.Time{}
			if val != markNone {
				var err error
				if t, err = time.Parse(time.RFC3339Nano, val); err != nil || t.IsZero() {
					return Mark{}, fmt.Errorf("%s%q is not an RFC 3339 time", key, shorten(val))
				}
			}
			if key == "limit=" {
				m.Limit = t
			} else {
				m.Since = t
			}
		case "node=":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 {
				return Mark{}, fmt.Errorf("node=%q is not a node id", shorten(val))
			}
			m.Node = n
		case "layout=":
			m.Layout = val
		}
	}
	switch {
	case m.Limit.IsZero() && !m.Since.IsZero():
		return Mark{}, fmt.Errorf("since=%s without a limit", m.Since.UTC().Format(time.RFC3339Nano))
	case m.Since.After(m.Limit):
		return Mark{}, fmt.Errorf("since=%s is after limit=%s", m.Since.UTC().Format(time.RFC3339Nano), m.Limit.UTC().Format(time.RFC3339Nano))
	case !m.Limit.IsZero() && m.Since.IsZero():
		return Mark{}, fmt.Errorf("limit=%s without since", m.Limit.UTC().Format(time.RFC3339Nano))
	}
	return m, nil
}

// shorten returns s, cut to 40 bytes with "…" for error messages.
func shorten(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}

// FileMarkStore keeps a high-water mark in a small text file. It replaces
// the file atomically: it writes a temporary file in the file's directory,
// syncs it, renames it over the old one and syncs the directory, so a crash
// leaves either the old mark or the new one. The file holds one line with
// the mark's text ([Mark.MarshalText]) and a CRC-32 checksum, so a
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
//     write it (0444), are refused with a [*MarkFileError] matching
//     [ErrMarkFileUnusable], and left as they are.
//
// A FileMarkStore is a [MarkHolder]: a generator holds the file while it
// uses it, through an exclusive flock(2) lock on the file's target path
// with ".lock" appended (node.mark.lock next to node.mark), in which it
// records its process id. A second generator on the same file — in
// another process, or in this one through the same or another
// FileMarkStore — fails at once with a [*MarkInUseError] matching
// [ErrMarkInUse] that names the holder's pid, instead of taking the
// first one's mark for a rollback. The kernel frees the lock when the
// holder exits, also on kill -9. The lock file stays; do not delete it
// while a generator runs. The lock needs flock(2) (Linux, macOS, the
// BSDs); elsewhere Hold checks the file but locks nothing.
//
// A FileMarkStore is safe for concurrent use. One file serves one
// generator (one node) at a time.
type FileMarkStore struct {
	path string

	mu     sync.Mutex
	held   bool
	lock   *os.File // the lock file while held; nil without flock
	heldAt string   // while held: the file path's symbolic links lead to
}

// NewFileMarkStore returns a store for the file at path. A missing file
// means no mark yet; its directory must exist.
func NewFileMarkStore(path string) *FileMarkStore { return &FileMarkStore{path: path} }

// Path returns the file the store reads and writes.
func (s *FileMarkStore) Path() string { return s.path }

// String returns the path, so that errors about the store name the file.
func (s *FileMarkStore) String() string { return s.path }

// The first words of a mark file's line: v2 files hold a [Mark]'s text,
// v1 files (before v0.2) a bare RFC 3339 time.
const (
	markHeader   = "ringflake-mark v2 "
	markHeaderV1 = "ringflake-mark v1 "
)

// maxMarkFile is the most LoadMark reads of a mark file, whose one line
// takes about 200 bytes: a larger file is not a mark file.
const maxMarkFile = 1024

// Hold takes the store's file for one generator ([MarkHolder]); [New]
// calls it. It fails with a [*MarkInUseError] (matching [ErrMarkInUse])
// when another generator holds the file, with a [*MarkFileError]
// (matching [ErrMarkFileUnusable]) when the path leads to something the
// store must not use (see [FileMarkStore]), and with the cause (for
// example [fs.ErrPermission]) when the lock file next to the mark file
// cannot be made.
func (s *FileMarkStore) Hold(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		return &MarkInUseError{Path: s.path, Lock: s.heldAt + lockSuffix, PID: os.Getpid()}
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
			return fmt.Errorf("ringflake: high-water mark file %s: lock file %w", s.path, err)
		}
		if f == nil {
			return &MarkInUseError{Path: s.path, Lock: lock, PID: readPID(lock)}
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

// Release gives back the file [FileMarkStore.Hold] took; [Generator.Close]
// calls it. Releasing a store that is not held does nothing.
func (s *FileMarkStore) Release() error {
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
		return fmt.Errorf("ringflake: releasing high-water mark file %s: %w", s.path, err)
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
func (s *FileMarkStore) resolve() (string, error) {
	if s.held {
		return s.heldAt, nil
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
		return "", fmt.Errorf("ringflake: high-water mark file %s: %w", s.path, cause(err))
	}
	return "", &MarkFileError{Path: s.path, Target: path, Reason: fmt.Sprintf("more than %d symbolic links", maxLinks)}
}

// check returns what the store knows of target, the file its path leads
// to (nil when there is none yet), or an error when the store must not
// use it: not a regular file, or, when it is to be written, a file the
// process may not write or whose mode says nobody should.
func (s *FileMarkStore) check(target string, write bool) (fs.FileInfo, error) {
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ringflake: high-water mark file %s: %w", s.path, cause(err))
	}
	unusable := func(reason string, err error) error {
		t := target
		if t == s.path {
			t = ""
		}
		return &MarkFileError{Path: s.path, Target: t, Reason: reason, Err: err}
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
func (s *FileMarkStore) file(write bool) (string, fs.FileInfo, error) {
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
// [ErrMarkCorrupt] for a file that is truncated, altered, larger than
// 1 KiB (it is not read whole) or not a mark file, and
// [ErrMarkFileUnusable] for a path that leads to something other than a
// regular file; read errors keep their cause (for example
// [fs.ErrPermission]).
func (s *FileMarkStore) LoadMark(ctx context.Context) (Mark, error) {
	if err := ctx.Err(); err != nil {
		return Mark{}, err
	}
	target, fi, err := s.file(false)
	if err != nil || fi == nil {
		return Mark{}, err
	}
	f, err := os.OpenFile(target, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, fmt.Errorf("ringflake: reading mark file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() { // replaced since the check
		return Mark{}, &MarkFileError{Path: s.path, Reason: fileKind(fi.Mode()) + ", not a regular file"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMarkFile+1))
	if err != nil {
		return Mark{}, fmt.Errorf("ringflake: reading mark file: %w", err)
	}
	if len(b) > maxMarkFile {
		size := fmt.Sprintf("more than %d bytes", maxMarkFile)
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fmt.Sprintf("%d bytes", fi.Size())
		}
		return Mark{}, &MarkError{Path: s.path, Reason: fmt.Sprintf("%s; a mark file is one line, at most %d bytes", size, maxMarkFile)}
	}
	return parseMarkFile(s.path, string(b))
}

func parseMarkFile(path, content string) (Mark, error) {
	corrupt := func(reason string) (Mark, error) {
		return Mark{}, &MarkError{Path: path, Reason: reason}
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
	m, err := parseMark(body)
	if err != nil {
		return corrupt(err.Error())
	}
	return m, nil
}

func formatMarkFile(m Mark) string {
	head := string(m.appendText([]byte(markHeader)))
	return fmt.Sprintf("%s crc32=%08x\n", head, crc32.ChecksumIEEE([]byte(head)))
}

// keptMode is the part of a file's mode a replacement keeps.
const keptMode = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// SaveMark replaces the file with one holding m, durably. It refuses, with
// a [*MarkFileError] matching [ErrMarkFileUnusable], to replace anything
// the store must not (see [FileMarkStore]); other errors keep their
// cause.
func (s *FileMarkStore) SaveMark(ctx context.Context, m Mark) error {
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
		return fmt.Errorf("ringflake: writing mark file: %w", err)
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
		return fmt.Errorf("ringflake: writing mark file: %w", err)
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
