//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hostlocal_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
)

// markGen starts a generator on a simulated clock with s as its mark
// store.
func markGen(t *testing.T, node int64, s ringflake.MarkStore) (*ringflake.Generator, error) {
	t.Helper()
	return ringflake.New(node, ringflake.WithClock(simclock.New(start)), ringflake.WithMarkStore(s))
}

// One mark file serves one generator: a second one — through the same
// store or another — fails at once, naming the file and the holder,
// instead of reading the first one's mark as a rollback.
func TestMarkFileServesOneGeneratorAtATime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.mark")
	first := hostlocal.NewMarkFile(path)
	g, err := markGen(t, 7, first)
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)

	lock, err := os.ReadFile(path + ".lock")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(lock), "the lock file names its holder")

	for name, s := range map[string]*hostlocal.MarkFile{"same store": first, "another store": hostlocal.NewMarkFile(path)} {
		_, err = markGen(t, 7, s)
		require.ErrorIs(t, err, hostlocal.ErrMarkInUse, name)
		assert.NotErrorIs(t, err, ringflake.ErrClockRollback, name)
		var inUse *ringflake.MarkError
		require.ErrorAs(t, err, &inUse, name)
		assert.Equal(t, hostlocal.ErrMarkInUse, inUse.Kind, name)
		assert.Equal(t, path, inUse.Path, name)
		assert.Equal(t, os.Getpid(), inUse.PID, name)
		assert.Contains(t, inUse.Reason, path+".lock", "%s: the reason names the lock file", name)
	}

	require.NoError(t, g.Close(ctx))
	lock, err = os.ReadFile(path + ".lock")
	require.NoError(t, err)
	assert.Empty(t, lock, "Release clears the pid")
	g, err = markGen(t, 7, hostlocal.NewMarkFile(path))
	require.NoError(t, err, "Close released the file")
	require.NoError(t, g.Close(ctx))
}

// A mark file written for another node id or layout is refused with what
// it was written for, and left as it was; one written for the other field
// order of the same layout is used (a mark bounds ticks).
func TestMarkFileRefusesAnotherNodesMark(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.mark")
	clk := simclock.New(start)
	newGen := func(node int64, l ringflake.Layout) (*ringflake.Generator, error) {
		return ringflake.New(node, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithMarkStore(hostlocal.NewMarkFile(path)))
	}
	g, err := newGen(3, ringflake.SonyflakeLayout())
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)
	require.NoError(t, g.Close(ctx))
	written, err := os.ReadFile(path)
	require.NoError(t, err)

	twitter := ringflake.TwitterLayout()
	for name, tc := range map[string]struct {
		node   int64
		layout ringflake.Layout
	}{
		"another node":   {4, ringflake.SonyflakeLayout()},
		"another layout": {3, twitter},
	} {
		_, err := newGen(tc.node, tc.layout)
		require.ErrorIs(t, err, ringflake.ErrMarkMismatch, name)
		assert.NotErrorIs(t, err, ringflake.ErrClockRollback, name)
		var mismatch *ringflake.MarkError
		require.ErrorAs(t, err, &mismatch, name)
		assert.Equal(t, ringflake.MarkError{
			Kind: ringflake.ErrMarkMismatch, Path: path, Node: 3, WantNode: tc.node, Layout: "sonyflake", WantLayout: tc.layout.String(),
		}, *mismatch, name)
		now, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, written, now, "%s: the mark is left as it was", name)
	}

	oldOrder, err := ringflake.ParseLayout("sonyflake,order=time,node,seq")
	require.NoError(t, err)
	g, err = newGen(3, oldOrder)
	require.NoError(t, err, "the same layout in the other field order uses the mark, and the refusals released the file")
	require.NoError(t, g.Close(ctx))
}

// A mark file held by another process is refused with that process's pid;
// the kernel frees it when that process is killed.
func TestMarkFileHeldByAnotherProcess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.mark")
	h := startHolder(t, "mark:"+path)
	s := hostlocal.NewMarkFile(path)
	err := s.Hold(ctx)
	require.ErrorIs(t, err, hostlocal.ErrMarkInUse)
	var inUse *ringflake.MarkError
	require.ErrorAs(t, err, &inUse)
	assert.Equal(t, h.pid(), inUse.PID)
	assert.NotContains(t, err.Error(), "\n")

	h.kill(t)
	require.NoError(t, s.Hold(ctx), "kill -9 frees the file")
	require.NoError(t, s.Release())
	require.NoError(t, s.Release(), "releasing what is not held does nothing")
}

// A mark file given as a symbolic link (onto a volume, say) is followed:
// its target is replaced, from a temporary file in the target's directory,
// and locked; the link stays.
func TestMarkFileFollowsSymbolicLinks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		first bool // the target does not exist yet
	}{{"existing target", false}, {"first run", true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			conf, vol := filepath.Join(root, "conf"), filepath.Join(root, "vol")
			require.NoError(t, os.Mkdir(conf, 0o755))
			require.NoError(t, os.Mkdir(vol, 0o755))
			target := filepath.Join(vol, "node.mark")
			if !tc.first {
				require.NoError(t, hostlocal.NewMarkFile(target).SaveMark(ctx, ringflake.Mark{Node: 3, Layout: "twitter"}))
			}
			link := filepath.Join(conf, "state")
			require.NoError(t, os.Symlink("../vol/node.mark", link), "a relative link")

			g, err := markGen(t, 3, hostlocal.NewMarkFile(link))
			require.NoError(t, err)
			id, err := g.Next()
			require.NoError(t, err)
			_, err = markGen(t, 3, hostlocal.NewMarkFile(target))
			require.ErrorIs(t, err, hostlocal.ErrMarkInUse, "the target is held, by whatever path")
			require.NoError(t, g.Close(ctx))

			fi, err := os.Lstat(link)
			require.NoError(t, err)
			assert.Equal(t, fs.ModeSymlink, fi.Mode().Type(), "the link stays a link")
			mark, err := hostlocal.NewMarkFile(target).LoadMark(ctx)
			require.NoError(t, err)
			assert.Equal(t, id.Time(ringflake.TwitterLayout()), mark.Limit, "the target has the exact mark")
			names := func(dir string) []string {
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				return names
			}
			assert.Equal(t, []string{"state"}, names(conf), "nothing is written next to the link")
			assert.Equal(t, []string{"node.mark", "node.mark.lock"}, names(vol))
		})
	}
}

// A replaced mark file keeps its mode; a new one is private.
func TestMarkFileKeepsTheMode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fresh := hostlocal.NewMarkFile(filepath.Join(dir, "fresh"))
	require.NoError(t, fresh.SaveMark(ctx, ringflake.Mark{Node: 1, Layout: "twitter"}))
	fi, err := os.Stat(fresh.Path())
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode())

	for _, mode := range []fs.FileMode{0o640, 0o666, 0o200} {
		path := filepath.Join(dir, mode.String())
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		require.NoError(t, os.Chmod(path, mode))
		s := hostlocal.NewMarkFile(path)
		require.NoError(t, s.SaveMark(ctx, ringflake.Mark{Limit: start, Since: start, Node: 1, Layout: "twitter"}))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode(), "mode %v", mode)
	}
}

// A path that leads to anything but a regular file, or to a file nobody
// may write, is refused by every operation, with a one-line error naming
// it, and left as it was. A named pipe is never opened in a way that
// could block.
func TestMarkFileRefusesUnusableFiles(t *testing.T) {
	ctx := context.Background()
	good := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "good"))
	require.NoError(t, good.SaveMark(ctx, ringflake.Mark{Limit: start, Since: start, Node: 1, Layout: "twitter"}))
	content, err := os.ReadFile(good.Path())
	require.NoError(t, err)

	for _, tc := range []struct {
		name     string
		place    func(t *testing.T, path string)
		readable bool // LoadMark still reads it
	}{
		{"read-only file", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, content, 0o444))
		}, true},
		{"read-only file behind a link", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "target")
			require.NoError(t, os.WriteFile(target, content, 0o444))
			require.NoError(t, os.Symlink(target, path))
		}, true},
		{"directory", func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(path, 0o755))
		}, false},
		{"named pipe", func(t *testing.T, path string) {
			require.NoError(t, syscall.Mkfifo(path, 0o644))
		}, false},
		{"device", func(t *testing.T, path string) {
			require.NoError(t, os.Symlink(os.DevNull, path))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "node.mark")
			tc.place(t, path)
			before, err := os.Stat(path)
			require.NoError(t, err)

			ctx, cancel := context.WithTimeout(ctx, time.Minute) // a hang guard
			defer cancel()
			done := make(chan []error, 1)
			go func() {
				s := hostlocal.NewMarkFile(path)
				_, newErr := markGen(t, 1, s)
				_, loadErr := s.LoadMark(ctx)
				done <- []error{newErr, s.Hold(ctx), s.SaveMark(ctx, ringflake.Mark{Limit: start, Since: start, Node: 1, Layout: "twitter"}), loadErr}
			}()
			var errs []error
			select {
			case errs = <-done:
			case <-ctx.Done():
				t.Fatal("the store hangs on the file")
			}
			for i, err := range errs[:3] {
				require.ErrorIs(t, err, hostlocal.ErrMarkFileUnusable, "operation %d", i)
				var fe *ringflake.MarkError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, path, fe.Path)
				assert.Equal(t, hostlocal.ErrMarkFileUnusable, fe.Kind)
				assert.NotContains(t, err.Error(), "\n")
			}
			if tc.readable {
				require.NoError(t, errs[3], "a read-only mark still reads")
			} else {
				require.ErrorIs(t, errs[3], hostlocal.ErrMarkFileUnusable)
			}

			after, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "the mode is kept")
			assert.True(t, os.SameFile(before, after), "nothing replaced it")
			if before.Mode().IsRegular() {
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, content, b, "nothing overwritten")
			}
			_, err = os.Stat(path + ".lock")
			assert.ErrorIs(t, err, fs.ErrNotExist, "no lock file next to what is not a mark file")
		})
	}
}

func TestMarkFileRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
	mark, err := s.LoadMark(ctx)
	require.NoError(t, err, "a missing file is a first start")
	assert.True(t, mark.IsZero())

	at := time.Date(2026, 11, 22, 12, 0, 1, 500_000_000, time.UTC)
	want := ringflake.Mark{Limit: at, Since: at.Add(-time.Second), Node: 7, Layout: "twitter"}
	require.NoError(t, s.SaveMark(ctx, want))
	mark, err = s.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, mark)

	want = ringflake.Mark{Limit: at.Add(time.Hour), Since: at.Add(time.Hour), Node: 7, Layout: "epoch=2020-01-01T00:00:00Z,unit=1ms,time=41,node=0,seq=22"}
	require.NoError(t, s.SaveMark(ctx, want))
	mark, err = s.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, mark, "a layout of key=value pairs")

	nothing := ringflake.Mark{Node: 7, Layout: "twitter"}
	require.NoError(t, s.SaveMark(ctx, nothing))
	mark, err = s.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, nothing, mark, "the mark of nothing issued keeps its node and layout")
	assert.False(t, mark.IsZero())

	entries, err := os.ReadDir(filepath.Dir(s.Path()))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files are left behind")
}

func TestMarkFileRejectsDamage(t *testing.T) {
	ctx := context.Background()
	good := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	require.NoError(t, good.SaveMark(ctx, ringflake.Mark{Limit: at, Since: at, Node: 0, Layout: "twitter"}))
	content, err := os.ReadFile(good.Path())
	require.NoError(t, err)

	for _, tc := range []struct {
		name    string
		content string
	}{
		{"empty", ""},
		{"truncated", string(content[:len(content)/2])},
		{"no final newline", string(content[:len(content)-1])},
		{"altered digit", string(content[:30]) + "9" + string(content[31:])},
		{"altered checksum", string(content[:len(content)-2]) + "0\n"},
		{"not a mark file", "hello\n"},
		{"a megabyte, not read whole", string(make([]byte, 1<<20))},
		{"garbage time with a valid checksum", withChecksum("ringflake-mark v1 yesterday")},
		{"v2 without since", withChecksum("ringflake-mark v2 limit=2026-11-22T12:00:00Z node=0 layout=twitter")},
		{"since after limit", withChecksum("ringflake-mark v2 limit=2026-11-22T12:00:00Z since=2026-11-22T12:00:01Z node=0 layout=twitter")},
		{"negative node", withChecksum("ringflake-mark v2 limit=2026-11-22T12:00:00Z since=2026-11-22T12:00:00Z node=-1 layout=twitter")},
		{"since without a limit", withChecksum("ringflake-mark v2 limit=none since=2026-11-22T12:00:00Z node=0 layout=twitter")},
		{"v1 header, v2 body", withChecksum("ringflake-mark v1 limit=2026-11-22T12:00:00Z since=2026-11-22T12:00:00Z node=0 layout=twitter")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
			require.NoError(t, os.WriteFile(s.Path(), []byte(tc.content), 0o600))
			_, err := s.LoadMark(ctx)
			require.ErrorIs(t, err, ringflake.ErrMarkCorrupt)
			var me *ringflake.MarkError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, s.Path(), me.Path)
			if tc.content == "" {
				assert.NotContains(t, me.Reason, "truncated", "an empty file was never written, not cut short")
			}

			// A generator refuses to start on it rather than start fresh.
			_, err = ringflake.New(0, ringflake.WithClock(simclock.New(start)), ringflake.WithMarkStore(s))
			require.ErrorIs(t, err, ringflake.ErrMarkCorrupt)
		})
	}
}

// withChecksum returns a mark file of one line with a valid checksum.
func withChecksum(line string) string {
	return fmt.Sprintf("%s crc32=%08x\n", line, crc32.ChecksumIEEE([]byte(line)))
}

// A mark file written before v0.2 holds a bare time: it still reads, as
// an exact mark of unknown node and layout.
func TestMarkFileReadsVersion1(t *testing.T) {
	s := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
	require.NoError(t, os.WriteFile(s.Path(), []byte(withChecksum("ringflake-mark v1 2026-11-22T12:00:00.5Z")), 0o600))
	mark, err := s.LoadMark(context.Background())
	require.NoError(t, err)
	at := time.Date(2026, 11, 22, 12, 0, 0, 500_000_000, time.UTC)
	assert.Equal(t, ringflake.Mark{Limit: at, Since: at}, mark)

	var m ringflake.Mark
	require.NoError(t, m.UnmarshalText([]byte("2026-11-22T12:00:00.5Z")), "a lease's mark of an earlier version")
	assert.Equal(t, ringflake.Mark{Limit: at, Since: at}, m)
	require.ErrorIs(t, m.UnmarshalText([]byte("tomorrow")), ringflake.ErrMarkCorrupt)
}

func TestMarkFileUnreadable(t *testing.T) {
	dir := t.TempDir()
	s := hostlocal.NewMarkFile(dir) // a directory is not a readable file
	_, err := s.LoadMark(context.Background())
	require.Error(t, err)
	assert.NotErrorIs(t, err, ringflake.ErrMarkCorrupt)
	_, err = ringflake.New(0, ringflake.WithClock(simclock.New(start)), ringflake.WithMarkStore(s))
	require.Error(t, err)

	missingDir := hostlocal.NewMarkFile(filepath.Join(dir, "no", "such", "dir", "mark"))
	err = missingDir.SaveMark(context.Background(), ringflake.Mark{Limit: start, Since: start})
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A mark file in a directory that does not exist is refused at start with
// an error that names the directory, not the lock file next to the mark.
func TestMarkFileMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	s := hostlocal.NewMarkFile(filepath.Join(dir, "node.mark"))
	err := s.Hold(context.Background())
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), dir, "the error names the missing directory")
	_, err = markGen(t, 1, s)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
