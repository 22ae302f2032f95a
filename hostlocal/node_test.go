//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hostlocal_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
)

// smallLayout has four node ids.
func smallLayout(t *testing.T) ringflake.Layout {
	t.Helper()
	l, err := ringflake.ParseLayout("twitter,node=2,seq=20")
	require.NoError(t, err)
	return l
}

func TestLocalNodeGivesEachHolderItsOwnID(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nodes") // made on first use
	tw := ringflake.TwitterLayout()
	a, b := hostlocal.NewNode(dir), hostlocal.NewNode(dir)
	id, err := a.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.Equal(t, int64(0), id, "the lowest free id")
	id, err = b.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.Equal(t, int64(1), id)
	id, err = a.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.Equal(t, int64(0), id, "a holder keeps its id")

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm(), "a directory it makes is private to its user")
	fi, err = os.Stat(filepath.Join(dir, "node-0.lock"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o444), fi.Mode().Perm(), "lock files are readable by every user, whatever the umask")

	require.NoError(t, a.Close())
	c := hostlocal.NewNode(dir)
	id, err = c.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.Equal(t, int64(0), id, "Close gives the id back")
	require.NoError(t, a.Close(), "closing twice")
	require.NoError(t, b.Close())
	require.NoError(t, c.Close())
}

func TestLocalNodeConcurrentHoldersInOneProcess(t *testing.T) {
	const holders = 16
	dir := t.TempDir()
	ids := make([]int64, holders)
	srcs := make([]*hostlocal.Node, holders)
	var wg sync.WaitGroup
	for i := range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srcs[i] = hostlocal.NewNode(dir)
			id, err := srcs[i].NodeID(context.Background(), ringflake.TwitterLayout())
			assert.NoError(t, err)
			ids[i] = id
		}()
	}
	wg.Wait()
	assert.ElementsMatch(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, ids)
	for _, s := range srcs {
		require.NoError(t, s.Close())
	}
}

func TestLocalNodeAllIDsHeld(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := smallLayout(t)
	for want := range int64(4) {
		s := hostlocal.NewNode(dir)
		t.Cleanup(func() { s.Close() })
		id, err := s.NodeID(ctx, l)
		require.NoError(t, err)
		require.Equal(t, want, id)
	}
	_, err := hostlocal.NewNode(dir).NodeID(ctx, l)
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	var full *hostlocal.NodeError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, int64(4), full.Nodes)
	assert.Equal(t, dir, full.Dir)

	// A layout with more ids shares the directory's range: it gets the
	// first id above those held.
	big := hostlocal.NewNode(dir)
	id, err := big.NodeID(ctx, ringflake.TwitterLayout())
	require.NoError(t, err)
	assert.Equal(t, int64(4), id)
	_, err = big.NodeID(ctx, l)
	require.ErrorIs(t, err, ringflake.ErrNodeOutOfRange, "its id does not fit the small layout")
	require.NoError(t, big.Close())
}

func TestLocalNodeClaim(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tw := ringflake.TwitterLayout()
	a := hostlocal.NewNode(dir)
	require.NoError(t, a.Claim(ctx, tw, 3))
	id, err := a.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.Equal(t, int64(3), id)
	require.NoError(t, a.Claim(ctx, tw, 3), "claiming the id it holds")
	require.ErrorIs(t, a.Claim(ctx, tw, 4), ringflake.ErrNodeUnavailable, "it holds one id at a time")

	b := hostlocal.NewNode(dir)
	err = b.Claim(ctx, tw, 3)
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	var held *hostlocal.NodeError
	require.ErrorAs(t, err, &held)
	assert.Equal(t, int64(3), held.Node)
	require.ErrorIs(t, b.Claim(ctx, tw, 1024), ringflake.ErrNodeOutOfRange)
	id, err = b.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.Equal(t, int64(0), id, "a failed claim leaves the source free to take another id")
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
}

// A LocalNode the program no longer refers to keeps its id until Close:
// the garbage collector, which closes unreachable files, must not free an
// id a generator still issues on.
func TestLocalNodeHeldWhileUnreferenced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tw := ringflake.TwitterLayout()
	id, err := hostlocal.NewNode(dir).NodeID(ctx, tw) // the source is dropped at once
	require.NoError(t, err)
	for range 5 {
		runtime.GC() // finalizers of unreachable files run after a collection
		runtime.Gosched()
	}
	other := hostlocal.NewNode(dir)
	defer other.Close()
	var held *hostlocal.NodeError
	require.ErrorAs(t, other.Claim(ctx, tw, id), &held, "node %d is still held", id)
	got, err := other.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.NotEqual(t, id, got)
}

// The kernel frees a process's ids when it dies, also on kill -9.
func TestLocalNodeFreedWhenTheHolderIsKilled(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tw := ringflake.TwitterLayout()
	h := startHolder(t, "node:"+dir)
	theirs := h.node(t)
	assert.Equal(t, int64(0), theirs)

	mine := hostlocal.NewNode(dir)
	id, err := mine.NodeID(ctx, tw)
	require.NoError(t, err)
	assert.NotEqual(t, theirs, id, "another process's id")
	var held *hostlocal.NodeError
	require.ErrorAs(t, hostlocal.NewNode(dir).Claim(ctx, tw, theirs), &held)
	assert.Equal(t, theirs, held.Node)
	if runtime.GOOS == "linux" {
		assert.Equal(t, h.pid(), held.PID, "the error names the holder's pid (from /proc/locks)")
	}

	h.kill(t)
	after := hostlocal.NewNode(dir)
	require.NoError(t, after.Claim(ctx, tw, theirs), "the id is free once its holder is dead")
	require.NoError(t, after.Close())
	require.NoError(t, mine.Close())
}

// Lock files made by another user are opened read-only: flock needs no
// more, and they are not writable.
func TestLocalNodeUsesOtherUsersLockFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node-0.lock")
	require.NoError(t, os.WriteFile(path, nil, 0o444))
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(path, 65534, 65534))
	}
	s := hostlocal.NewNode(dir)
	id, err := s.NodeID(context.Background(), ringflake.TwitterLayout())
	require.NoError(t, err)
	assert.Equal(t, int64(0), id)
	require.NoError(t, s.Close())
}

// What is not a lock file in the directory is refused, never followed,
// written or waited on; so is a directory any user could remove lock files
// from.
func TestLocalNodeRefusesWhatIsNotALockFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		place func(t *testing.T, dir, lock string)
	}{
		{"symbolic link", func(t *testing.T, dir, lock string) {
			victim := filepath.Join(t.TempDir(), "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
			require.NoError(t, os.Symlink(victim, lock))
			t.Cleanup(func() {
				b, err := os.ReadFile(victim)
				require.NoError(t, err)
				assert.Equal(t, "keep", string(b))
			})
		}},
		{"named pipe", func(t *testing.T, dir, lock string) {
			require.NoError(t, syscall.Mkfifo(lock, 0o644))
		}},
		{"directory", func(t *testing.T, dir, lock string) {
			require.NoError(t, os.Mkdir(lock, 0o755))
		}},
		{"world-writable directory without the sticky bit", func(t *testing.T, dir, lock string) {
			require.NoError(t, os.Chmod(dir, 0o777))
		}},
		{"not a directory", func(t *testing.T, dir, lock string) {
			require.NoError(t, os.Remove(dir))
			require.NoError(t, os.WriteFile(dir, nil, 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "nodes")
			require.NoError(t, os.Mkdir(dir, 0o700))
			tc.place(t, dir, filepath.Join(dir, "node-0.lock"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := hostlocal.NewNode(dir).NodeID(ctx, ringflake.TwitterLayout())
				done <- err
			}()
			select {
			case err := <-done:
				require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
				assert.NotContains(t, err.Error(), "\n", "a one-line error")
			case <-ctx.Done():
				t.Fatal("NodeID hangs")
			}
		})
	}
}

func TestLocalNodeDefaultDirectoryIsShared(t *testing.T) {
	s := hostlocal.NewNode("")
	assert.Equal(t, hostlocal.DefaultDir, s.Dir())
	_, err := s.NodeID(context.Background(), ringflake.TwitterLayout())
	require.NoError(t, err)
	defer s.Close()
	fi, err := os.Lstat(hostlocal.DefaultDir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, fs.ModeDir|fs.ModeSticky|0o777, fi.Mode(), "world-writable with the sticky bit, as /tmp")
}

func TestLocalNodeHonoursTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := hostlocal.NewNode(t.TempDir()).NodeID(ctx, ringflake.TwitterLayout())
	require.ErrorIs(t, err, context.Canceled)
	_, err = hostlocal.NewNode(t.TempDir()).NodeID(context.Background(), ringflake.Layout{})
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
}
