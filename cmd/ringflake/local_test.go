//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
)

// Four gen runs started together with the default flags take four node
// ids of this host and print 800,000 unique IDs.
func TestGenRunsSideBySideByDefault(t *testing.T) {
	const runs, n = 4, 200_000
	var ps []*cliProcess
	for range runs {
		ps = append(ps, startCLI(t, "gen", "-n", "200000"))
	}
	l := ringflake.TwitterLayout()
	seen := make(map[ringflake.ID]bool, runs*n)
	nodes := map[int64]bool{}
	for _, p := range ps {
		require.Equal(t, 0, p.wait(t), p.errOut.String())
		ids := p.ids(t)
		require.Len(t, ids, n)
		for _, id := range ids {
			require.False(t, seen[id], "ID %d printed twice", id)
			seen[id] = true
			nodes[id.Node(l)] = true
		}
	}
	assert.Len(t, seen, runs*n)
	assert.Len(t, nodes, runs, "one node id per run")
}

// A local node id is free again once its holder is killed with kill -9.
func TestGenLocalNodeFreedByKill(t *testing.T) {
	dir := t.TempDir()
	l := ringflake.TwitterLayout()
	p, first := startIssuing(t, "-node", "local:"+dir)
	held := first.Node(l)
	assert.Equal(t, int64(0), held, "the lowest free id")

	ids := genIDs(t, "-n", "1", "-node", "local:"+dir)
	require.Len(t, ids, 1)
	assert.NotEqual(t, held, ids[0].Node(l), "another run, another id")

	p.kill(t)
	ids = genIDs(t, "-n", "1", "-node", "local:"+dir)
	require.Len(t, ids, 1)
	assert.Equal(t, held, ids[0].Node(l), "the killed run's id is free again")
}

// Every id of the layout held: a one-line error that says how many and
// where.
func TestGenLocalNodesAllHeld(t *testing.T) {
	dir := t.TempDir()
	l, err := ringflake.ParseLayout("twitter,node=1,seq=21")
	require.NoError(t, err)
	for range 2 {
		src := hostlocal.NewNode(dir)
		_, err := src.NodeID(context.Background(), l)
		require.NoError(t, err)
		t.Cleanup(func() { src.Close() })
	}
	code, out, errOut := runCLI("gen", "-layout", "twitter,node=1,seq=21", "-node", "local:"+dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	assert.Contains(t, errOut, "all 2 node ids")
	assert.Contains(t, errOut, dir)
}

func TestGenLocalNodeBadDirectory(t *testing.T) {
	code, _, errOut := runCLI("gen", "-node", "local:")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `-node "local:": no directory after local:`)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	code, out, errOut := runCLI("gen", "-node", "local:"+file)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	assert.Contains(t, errOut, file)
}

// A lock directory the process may not write to is a one-line error
// naming it. Root may write anywhere, so as root the CLI runs as nobody.
func TestGenLocalNodeUnwritableDirectory(t *testing.T) {
	base, err := os.MkdirTemp("", "ringflake-lockdir-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	dir := filepath.Join(base, "nodes")
	require.NoError(t, os.Mkdir(dir, 0o555))
	require.NoError(t, os.Chmod(dir, 0o555))

	cmd := command(t, "gen", "-node", "local:"+dir)
	cmd.Dir = "/"
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	errOut := runFailsOneLine(t, cmd)
	assert.Contains(t, errOut, dir)
	assert.Contains(t, errOut, "permission denied")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}

// With -state, a local node id is the one the state file was written for,
// when it is free, rather than the lowest free id.
func TestGenLocalNodeTakesTheStateFilesNode(t *testing.T) {
	dir, state := t.TempDir(), filepath.Join(t.TempDir(), "ids.mark")
	l := ringflake.TwitterLayout()
	zero := hostlocal.NewNode(dir)
	_, err := zero.NodeID(context.Background(), l)
	require.NoError(t, err)
	ids := genIDs(t, "-n", "1", "-node", "local:"+dir, "-state", state)
	assert.Equal(t, int64(1), ids[0].Node(l))
	require.NoError(t, zero.Close())

	ids = genIDs(t, "-n", "1", "-node", "local:"+dir, "-state", state)
	assert.Equal(t, int64(1), ids[0].Node(l), "the state file's node, though 0 is free")
}

// A node lock directory that does not exist — a typo in
// RINGFLAKE_NODE_DIR or in local:DIR — is refused, not created: a second
// directory would split the host's locks, and two processes could hold
// one id.
func TestGenNodeDirMustExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "ringflake-nodse")
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"a configured id", missing, []string{"-node", "3"}, nodeDirEnv + "=" + missing + ": no such directory"},
		{"a local id", missing, []string{"-node", "local"}, nodeDirEnv + "=" + missing + ": no such directory"},
		{"local:DIR", "", []string{"-node", "local:" + missing}, "-node local:" + missing + ": no such directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(nodeDirEnv, tc.env)
			}
			code, out, errOut := runCLI(append([]string{"gen", "-n", "1"}, tc.args...)...)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
			assert.Contains(t, errOut, tc.want)
			assert.NoDirExists(t, missing)
		})
	}
}
