//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
)

// loadMark reads the mark in the state file at path.
func loadMark(t *testing.T, path string) ringflake.Mark {
	t.Helper()
	m, err := hostlocal.NewMarkFile(path).LoadMark(context.Background())
	require.NoError(t, err)
	return m
}

// A state file given as a symbolic link is followed: the file it leads to
// gets the mark, the link stays a link, and nothing is written next to it.
func TestGenStateThroughASymbolicLink(t *testing.T) {
	conf, vol := t.TempDir(), t.TempDir()
	target := filepath.Join(vol, "node.mark")
	link := filepath.Join(conf, "state")
	require.NoError(t, os.Symlink(target, link))
	first := genIDs(t, "-n", "5", "-node", "4", "-state", link)
	second := genIDs(t, "-n", "5", "-node", "4", "-state", link)
	assert.Greater(t, second[0], first[len(first)-1], "the second run read the first one's mark through the link")

	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, fs.ModeSymlink, fi.Mode().Type())
	last := second[len(second)-1].Time(ringflake.TwitterLayout())
	assert.Equal(t, ringflake.Mark{Limit: last, Since: last, Node: 4, Layout: "twitter"}, loadMark(t, target))
	entries, err := os.ReadDir(conf)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary or lock file next to the link")
}

// A state file keeps its mode.
func TestGenStateKeepsTheMode(t *testing.T) {
	state := filepath.Join(t.TempDir(), "node.mark")
	require.NoError(t, hostlocal.NewMarkFile(state).SaveMark(context.Background(), ringflake.Mark{Node: 4, Layout: "twitter"}))
	require.NoError(t, os.Chmod(state, 0o640))
	genIDs(t, "-n", "1", "-node", "4", "-state", state)
	fi, err := os.Stat(state)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), fi.Mode())
}

// A state file that cannot be one is refused: a one-line error naming it,
// exit status 1, nothing overwritten — and a named pipe does not hang the
// run.
func TestGenStateRefusesUnusableFiles(t *testing.T) {
	mark := ringflake.Mark{Limit: time.Now().Add(-time.Hour), Since: time.Now().Add(-time.Hour), Node: 4, Layout: "twitter"}
	for _, tc := range []struct {
		name  string
		place func(t *testing.T, path string)
	}{
		{"read-only", func(t *testing.T, path string) {
			require.NoError(t, hostlocal.NewMarkFile(path).SaveMark(context.Background(), mark))
			require.NoError(t, os.Chmod(path, 0o444))
		}},
		{"directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o755)) }},
		{"named pipe", func(t *testing.T, path string) { require.NoError(t, syscall.Mkfifo(path, 0o600)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "node.mark")
			tc.place(t, state)
			before, err := os.Stat(state)
			require.NoError(t, err)
			var content []byte
			if before.Mode().IsRegular() {
				content, err = os.ReadFile(state)
				require.NoError(t, err)
			}

			p := startCLI(t, "gen", "-node", "4", "-state", state) // bounded by processTimeout
			assert.Equal(t, 1, p.wait(t))
			assert.Empty(t, p.out.String())
			errOut := p.errOut.String()
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
			assert.Contains(t, errOut, state)

			after, err := os.Stat(state)
			require.NoError(t, err)
			assert.True(t, os.SameFile(before, after), "not replaced")
			assert.Equal(t, before.Mode(), after.Mode(), "mode kept")
			if content != nil {
				b, err := os.ReadFile(state)
				require.NoError(t, err)
				assert.Equal(t, content, b, "not overwritten")
			}
		})
	}
}

// Two runs on one state file: the second fails at once, naming the first
// run's pid — not a rollback: on the same node id at the host-local lock
// of the id, on another at the state file, which it names.
func TestGenStateInUse(t *testing.T) {
	state := filepath.Join(t.TempDir(), "node.mark")
	first, _ := startIssuing(t, "-node", "4", "-state", state)
	for _, node := range []string{"4", "5"} {
		code, out, errOut := runCLI("gen", "-node", node, "-state", state)
		assert.Equal(t, 1, code)
		assert.Empty(t, out)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
		if node == "5" {
			assert.Contains(t, errOut, state)
		}
		assert.Contains(t, errOut, "process "+strconv.Itoa(first.cmd.Process.Pid))
		assert.NotContains(t, errOut, "backwards")
	}
	// A local node id takes the state file's node, 4, which is in use:
	// the run says so, not that the mark belongs to another node.
	code, out, errOut := runCLI("gen", "-state", state)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	assert.Contains(t, errOut, "-state "+state+" keeps the mark of node 4, which is in use")
	assert.Contains(t, errOut, "process "+strconv.Itoa(first.cmd.Process.Pid))
	assert.NotContains(t, errOut, "this generator is node")
	first.kill(t)
	genIDs(t, "-n", "1", "-node", "4", "-state", state) // free once it is dead
}

// A run that issues nothing leaves the mark of nothing issued: the next
// run does not wait for a reservation.
func TestGenStateAfterARunThatIssuedNothing(t *testing.T) {
	state := filepath.Join(t.TempDir(), "node.mark")
	genIDs(t, "-n", "0", "-node", "4", "-state", state)
	assert.Equal(t, ringflake.Mark{Node: 4, Layout: "twitter"}, loadMark(t, state), "nothing issued, nothing reserved")
	code, out, errOut := runCLI("gen", "-n", "1", "-node", "4", "-state", state)
	assert.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Len(t, strings.Fields(out), 1)
}

// A run killed with kill -9 leaves its reservation (the mark written
// ahead). A restart with a correct clock, under the default strategy,
// waits it out — at most the lead — and issues after it: no rollback
// error, nothing on stderr.
func TestGenStateRestartAfterKill(t *testing.T) {
	state := filepath.Join(t.TempDir(), "node.mark")
	p, first := startIssuing(t, "-node", "4", "-state", state)
	p.kill(t)
	killed := time.Now()
	m := loadMark(t, state)
	require.False(t, m.Limit.IsZero())
	assert.LessOrEqual(t, m.Limit, killed.Add(ringflake.DefaultMarkAhead), "a reservation of at most the lead")

	restart := startCLI(t, "gen", "-n", "1", "-node", "4", "-state", state)
	require.Equal(t, 0, restart.wait(t), restart.errOut.String())
	assert.Empty(t, restart.errOut.String(), "no rollback error, no log line")
	ids := restart.ids(t)
	require.Len(t, ids, 1)
	l := ringflake.TwitterLayout()
	assert.Greater(t, ids[0], first)
	assert.True(t, ids[0].Time(l).After(m.Limit), "after everything the killed run may have issued")
}

// A crash loop — a run killed with kill -9 soon after each start, many
// times, on one state file — never pushes the mark further than the lead
// ahead of the clock, never issues at or below the mark the run before
// left, and the next start with the default strategy issues without an
// error. Each run is killed once its generator has loaded the mark (a
// kill before that would not notice a run that loads it wrongly).
func TestGenStateCrashLoop(t *testing.T) {
	const starts = 12
	l := ringflake.TwitterLayout()
	state := filepath.Join(t.TempDir(), "node.mark")
	p, _ := startIssuing(t, "-node", "4", "-state", state) // a reservation ahead of the clock
	p.kill(t)
	for i := range starts {
		before := loadMark(t, state)
		if i%4 == 3 {
			// Some runs get as far as issuing, past the reservation...
			g, first := startIssuing(t, "-node", "4", "-state", state)
			assert.True(t, first.Time(l).After(before.Limit), "start %d: the first ID, at %v, is after the mark, %v", i, first.Time(l), before.Limit)
			g.kill(t)
			assert.Empty(t, g.errOut.String(), "start %d", i)
		} else {
			// ...most die before they issue: a server's generator is
			// built (the mark loaded, and saved when the clock is past
			// it) once it listens, and would wait behind the mark for
			// its first ID.
			s := startServe(t, "-node", "4", "-state", state)
			s.kill()
			_, rest, _ := strings.Cut(s.stderr(), "\n")
			assert.Empty(t, rest, "start %d: nothing but where it listens", i)
		}
		killed := time.Now()
		m := loadMark(t, state)
		assert.LessOrEqual(t, m.Limit, killed.Add(ringflake.DefaultMarkAhead), "start %d: the mark stays within the lead of the clock", i)
	}
	code, out, errOut := runCLI("gen", "-n", "1", "-node", "4", "-state", state)
	assert.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
	assert.Len(t, strings.Fields(out), 1)
}

// A state file this process may not write — another user's, mode 0644 —
// is refused before anything is written. Root may write anything, so as
// root the CLI runs as nobody; otherwise the file is made read-only.
func TestGenStateNotWritable(t *testing.T) {
	base, err := os.MkdirTemp("", "ringflake-state-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o777|os.ModeSticky)) // nobody could write here, but not the file
	state := filepath.Join(base, "node.mark")
	require.NoError(t, hostlocal.NewMarkFile(state).SaveMark(context.Background(), ringflake.Mark{Node: 4, Layout: "twitter"}))
	require.NoError(t, os.Chmod(state, 0o644))
	cmd := command(t, "gen", "-node", "4", "-state", state)
	cmd.Dir = "/"
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		require.NoError(t, os.Chmod(state, 0o444))
	}
	before, err := os.Stat(state)
	require.NoError(t, err)
	content, err := os.ReadFile(state)
	require.NoError(t, err)

	assert.Contains(t, runFailsOneLine(t, cmd), state)

	after, err := os.Stat(state)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "not replaced")
	assert.Equal(t, before.Mode(), after.Mode())
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	assert.Equal(t, content, b)
	entries, err := os.ReadDir(base)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no lock or temporary file")
}

// A start that is refused leaves the state file byte for byte: a mark far
// ahead (a v1 mark dated 2070) fails the first ID with one line, and the
// file is not rewritten as this node's v2 mark; nor is a mark of another
// node or layout, or one past the layout's end.
func TestGenRefusedStartLeavesTheState(t *testing.T) {
	for name, text := range map[string]string{
		"v1 mark far ahead":          "ringflake-mark v1 2070-01-01T00:00:00Z",
		"mark of another node":       "ringflake-mark v2 limit=2026-01-01T00:00:00Z since=2026-01-01T00:00:00Z node=4 layout=twitter",
		"mark of another layout":     "ringflake-mark v2 limit=2026-01-01T00:00:00Z since=2026-01-01T00:00:00Z node=3 layout=sonyflake",
		"mark past the layout's end": "ringflake-mark v2 limit=2090-01-01T00:00:00Z since=2090-01-01T00:00:00Z node=3 layout=twitter",
	} {
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "future.mark")
			content := fmt.Sprintf("%s crc32=%08x\n", text, crc32.ChecksumIEEE([]byte(text)))
			require.NoError(t, os.WriteFile(state, []byte(content), 0o600))
			code, out, errOut := runCLI("gen", "-node", "3", "-state", state, "-strategy", "error", "-n", "2")
			assert.Equal(t, 1, code)
			assert.Empty(t, out, "no ID issued")
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
			after, err := os.ReadFile(state)
			require.NoError(t, err)
			assert.Equal(t, content, string(after), "the state file is left byte for byte")
		})
	}
}
