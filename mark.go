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
	"strings"
	"time"
)

// DefaultMarkAhead is how far ahead of the IDs it issues a generator with a
// [MarkStore] writes its high-water mark, unless [WithMarkAhead] says
// otherwise.
const DefaultMarkAhead = time.Second

// A MarkStore persists a generator's high-water mark: an instant that no ID
// of the generator's node is stamped after. A generator writes the mark
// ahead of the IDs it issues — by [DefaultMarkAhead] or [WithMarkAhead] — so
// it writes about twice per such interval, not once per ID, and it never
// issues an ID stamped after the last mark it saved.
//
// On start, [New] loads the mark and treats every ID up to it as issued:
// when the clock reads earlier than the mark (a restart during a rollback)
// the generator is behind, and its strategy decides — wait until the clock
// passes the mark, start counting logically after it, or fail. So a
// restarted generator never issues an ID at or below the mark of a previous
// run.
//
// Implementations must be safe for concurrent use. [FileMarkStore] is the
// default implementation; lease implementations keep the mark of a leased
// node id with the lease, so that the next holder of the id starts after it.
type MarkStore interface {
	// LoadMark returns the stored mark, or the zero Time when nothing was
	// ever stored (a first start). A mark that exists but cannot be read
	// or understood is an error, never "no mark".
	LoadMark(ctx context.Context) (time.Time, error)

	// SaveMark durably stores mark before returning. A running generator
	// only saves marks later than the ones it loaded or saved before;
	// [Generator.Close] may then save an earlier one: the exact mark of
	// what was issued, in place of the mark written ahead. Generators
	// call it on a background goroutine without a deadline, and calls
	// that need the mark wait for it, so it must bound its own time (a
	// network store needs a timeout).
	SaveMark(ctx context.Context, mark time.Time) error
}

// FileMarkStore keeps a high-water mark in a small text file. It replaces
// the file atomically: it writes a temporary file in the same directory,
// syncs it, renames it over the old one and syncs the directory, so a crash
// leaves either the old mark or the new one. The file holds one line with
// the mark in RFC 3339 and a CRC-32 checksum, so a truncated or damaged file
// is detected.
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

const markHeader = "ringflake-mark v1 "

// maxMarkFile is the most LoadMark reads of a mark file, whose one line
// takes about 70 bytes: a larger file is not a mark file.
const maxMarkFile = 1024

// LoadMark reads the mark. A missing file gives the zero Time. Errors match
// [ErrMarkCorrupt] for a file that is truncated, altered, larger than
// 1 KiB (it is not read whole) or not a mark file; read errors keep their
// cause (for example [fs.ErrPermission]).
func (s *FileMarkStore) LoadMark(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("ringflake: reading mark file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMarkFile+1))
	if err != nil {
		return time.Time{}, fmt.Errorf("ringflake: reading mark file: %w", err)
	}
	if len(b) > maxMarkFile {
		size := fmt.Sprintf("more than %d bytes", maxMarkFile)
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fmt.Sprintf("%d bytes", fi.Size())
		}
		return time.Time{}, &MarkError{Path: s.path, Reason: fmt.Sprintf("%s; a mark file is one line, at most %d bytes", size, maxMarkFile)}
	}
	return parseMarkFile(s.path, string(b))
}

func parseMarkFile(path, content string) (time.Time, error) {
	corrupt := func(reason string) (time.Time, error) {
		return time.Time{}, &MarkError{Path: path, Reason: reason}
	}
	line, ok := strings.CutSuffix(content, "\n")
	if !ok {
		return corrupt("no final newline (truncated?)")
	}
	rest, ok := strings.CutPrefix(line, markHeader)
	if !ok {
		return corrupt("does not start with " + strings.TrimSpace(markHeader))
	}
	stamp, sum, ok := strings.Cut(rest, " crc32=")
	if !ok {
		return corrupt("no checksum")
	}
	if want := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(markHeader+stamp))); sum != want {
		return corrupt(fmt.Sprintf("checksum %s, want %s", sum, want))
	}
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil || t.IsZero() {
		return corrupt(fmt.Sprintf("%q is not an RFC 3339 time", stamp))
	}
	return t, nil
}

func formatMarkFile(mark time.Time) string {
	head := markHeader + mark.UTC().Format(time.RFC3339Nano)
	return fmt.Sprintf("%s crc32=%08x\n", head, crc32.ChecksumIEEE([]byte(head)))
}

// SaveMark replaces the file with one holding mark, durably.
func (s *FileMarkStore) SaveMark(ctx context.Context, mark time.Time) error {
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
	_, err = f.WriteString(formatMarkFile(mark))
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
