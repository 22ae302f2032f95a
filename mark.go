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
	"time"
)

// DefaultMarkAhead is how far ahead of the IDs it issues a generator with a
// [MarkStore] writes its high-water mark, unless [WithMarkAhead] says
// otherwise.
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
	// ([ErrMarkMismatch]). An empty Layout (a mark written before v0.2)
	// is not checked.
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
// the file atomically: it writes a temporary file in the same directory,
// syncs it, renames it over the old one and syncs the directory, so a crash
// leaves either the old mark or the new one. The file holds one line with
// the mark's text ([Mark.MarshalText]) and a CRC-32 checksum, so a
// truncated or damaged file is detected; files written by earlier versions
// (a bare time) are still read.
//
// A FileMarkStore is safe for concurrent use, but one file must serve one
// generator (one node) at a time.
type FileMarkStore struct {
	path string
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

// LoadMark reads the mark. A missing file gives the zero Mark. Errors match
// [ErrMarkCorrupt] for a file that is truncated, altered, larger than
// 1 KiB (it is not read whole) or not a mark file; read errors keep their
// cause (for example [fs.ErrPermission]).
func (s *FileMarkStore) LoadMark(ctx context.Context) (Mark, error) {
	if err := ctx.Err(); err != nil {
		return Mark{}, err
	}
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, fmt.Errorf("ringflake: reading mark file: %w", err)
	}
	defer f.Close()
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

// SaveMark replaces the file with one holding m, durably.
func (s *FileMarkStore) SaveMark(ctx context.Context, m Mark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(s.path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("ringflake: writing mark file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	_, err = f.WriteString(formatMarkFile(m))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
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
