package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease"
)

// genIDs runs gen with args and returns the IDs it printed.
func genIDs(t *testing.T, args ...string) []ringflake.ID {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"gen"}, args...)...)
	require.Equal(t, 0, code, errOut)
	var ids []ringflake.ID
	for _, line := range strings.Fields(out) {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

func TestGenNodeSources(t *testing.T) {
	l := ringflake.TwitterLayout()
	t.Setenv("RINGFLAKE_CLI_TEST_NODE", "42")
	for _, tc := range []struct {
		spec string
		want int64
	}{
		{"7", 7},
		{"env:RINGFLAKE_CLI_TEST_NODE", 42},
		{"ordinal:ids-12", 12},
		{"ordinal:id-gen-3.id-gen.prod.svc.cluster.local", 3},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			for _, id := range genIDs(t, "-n", "2", "-node", tc.spec) {
				assert.Equal(t, tc.want, id.Node(l))
			}
		})
	}
}

// TestGenNodeRejects: a -node value that cannot be right is a usage error
// (status 2) naming the bad part, found before anything is dialled; a
// source that cannot give an id is a failure (status 1).
func TestGenNodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		code int
		want string
	}{
		{"not a number", "five", 2, `-node "five": not a node id`},
		{"the forms it lists", "abc", 2, "redis://, etcd:// or postgres://"},
		{"an unknown scheme", "mysql://127.0.0.1/ids", 2, `-node "mysql://127.0.0.1/ids": no lease on mysql://; want redis://, rediss://, etcd://, postgres:// or postgresql://`},
		{"a plus sign", "+5", 2, `-node "+5": not a node id`},
		{"two minus signs", "--1", 2, `-node "--1": not a node id`},
		{"out of range", "1024", 1, "out of range"},
		{"negative", "-1", 1, "out of range"},
		{"unset variable", "env:RINGFLAKE_CLI_TEST_UNSET", 1, "RINGFLAKE_CLI_TEST_UNSET is not set"},
		{"no variable name", "env:", 2, "no variable name"},
		{"no ordinal", "ordinal:ids", 2, `host name "ids" does not end in -N`},
		{"ordinal after two dashes", "ordinal:ids--1", 2, `host name "ids--1" does not end in -N`},
		{"ordinal with a sign", "ordinal:ids-+1", 2, `host name "ids-+1" does not end in -N`},
		{"ordinal alone", "ordinal:-1", 2, `host name "-1" does not end in -N`},
		{"bad lease ttl", "redis://127.0.0.1:6379/0?ttl=soon", 2, `ttl="soon" is not a positive duration`},
		{"zero lease ttl", "etcd://127.0.0.1:2379?ttl=0s", 2, `ttl="0s" is not a positive duration`},
		{"bad redis option", "redis://127.0.0.1:6379/0?colour=red", 2, "colour"},
		{"redis without a host", "redis://", 2, `-node "redis://": no host`},
		{"redis with a port only", "redis://:6379/0", 2, "no host"},
		{"rediss without a host", "rediss:///0", 2, "no host"},
		{"redis fragment", "redis://127.0.0.1:6379/0#primary", 2, `fragment "#primary"`},
		{"etcd with a path", "etcd://127.0.0.1:2379/ids", 2, `path "/ids"`},
		{"etcd without endpoints", "etcd://", 2, `endpoint 1, "", is not HOST:PORT`},
		{"etcd comma only", "etcd://,", 2, `endpoint 1, "", is not HOST:PORT`},
		{"etcd empty endpoint", "etcd://a:1,,b:2", 2, `endpoint 2, "", is not HOST:PORT`},
		{"etcd endpoint without a port", "etcd://127.0.0.1:2379,10.0.0.2", 2, `endpoint 2, "10.0.0.2", is not HOST:PORT`},
		{"etcd endpoint with a bad port", "etcd://a:http", 2, `endpoint 1, "a:http", is not HOST:PORT`},
		{"etcd credentials", "etcd://user:pw@127.0.0.1:2379", 2, `credentials "user:pw@"`},
		{"etcd fragment", "etcd://127.0.0.1:2379#", 2, `fragment "#"`},
		{"etcd unknown option", "etcd://127.0.0.1:2379?prefix=p&colour=red", 2, `unknown option "colour"`},
		{"redis unreachable", "redis://127.0.0.1:1/0", 1, "leasing a node id from 127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI("gen", "-node", tc.spec)
			assert.Equal(t, tc.code, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// TestGenStateWithALease: -state and a leased node id exclude each other,
// which gen says before it dials anything (here: nothing listens).
func TestGenStateWithALease(t *testing.T) {
	for _, spec := range []string{"redis://127.0.0.1:1/0", "etcd://127.0.0.1:1"} {
		code, out, errOut := runCLI("gen", "-node", spec, "-state", filepath.Join(t.TempDir(), "m"))
		assert.Equal(t, 2, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "-state: a leased node id keeps its high-water mark with the lease")
	}
}

// TestGenStateTooLarge: a mark file is one short line; a larger file is
// not read whole but reported as corrupt, with its size.
func TestGenStateTooLarge(t *testing.T) {
	state := filepath.Join(t.TempDir(), "ids.mark")
	require.NoError(t, os.WriteFile(state, make([]byte, 1<<20), 0o600))
	_, err := hostlocal.NewMarkFile(state).LoadMark(context.Background())
	require.ErrorIs(t, err, ringflake.ErrMarkCorrupt)
	var me *ringflake.MarkError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, state, me.Path)
	assert.Contains(t, me.Reason, "1048576 bytes")

	code, out, errOut := runCLI("gen", "-node", "3", "-state", state)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "1048576 bytes")
}

// -state keeps the high-water mark between runs: a second run starts
// after everything the first one issued.
func TestGenState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "ids.mark")
	first := genIDs(t, "-n", "100", "-node", "3", "-state", state)
	second := genIDs(t, "-n", "100", "-node", "3", "-state", state)
	require.Len(t, first, 100)
	require.Len(t, second, 100)
	assert.Greater(t, second[0], first[len(first)-1])

	mark, err := hostlocal.NewMarkFile(state).LoadMark(context.Background())
	require.NoError(t, err)
	last := second[len(second)-1].Time(ringflake.TwitterLayout())
	assert.Equal(t, ringflake.Mark{Limit: last, Since: last, Node: 3, Layout: "twitter"}, mark, "a clean exit saves the exact mark")

	require.NoError(t, os.WriteFile(state, []byte("damaged\n"), 0o600))
	code, _, errOut := runCLI("gen", "-node", "3", "-state", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "high-water mark")
}

// With a Redis lease, gen takes the lowest free node id of the prefix,
// keeps the mark with it, and gives it back when done. The prefix is new,
// so the first leases under it wait out a quiet period of TTL + Margin +
// MaxLead (about 3 s here) before they issue.
func TestGenRedisLease(t *testing.T) {
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer client.Close()
	prefix := leasetest.Prefix(t)
	opts := redislease.Options{Prefix: prefix, TTL: 2 * time.Second}
	held, err := redislease.Acquire(ctx, client, opts) // node 0 is taken
	require.NoError(t, err)
	defer held.Close(ctx)

	spec := "redis://" + addr + "/0?prefix=" + prefix + "&ttl=2s"
	code, out, errOut := runCLI("gen", "-n", "5", "-node", spec) // waits out the quiet period
	require.Equal(t, 0, code, errOut)
	// The wait is told once, with how long it lasts: 2s + 1s + 22ms.
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "node 1 from "+addr+": waiting up to 3.022s before the first ID")
	var ids []ringflake.ID
	for _, line := range strings.Fields(out) {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	require.Len(t, ids, 5)
	for _, id := range ids {
		assert.Equal(t, int64(1), id.Node(ringflake.TwitterLayout()))
	}
	code, out, errOut = runCLI("gen", "-n", "5", "-node", spec)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut, "a lease that holds its id at once waits for nothing, and says nothing")
	again := make([]ringflake.ID, 0, 5)
	for _, line := range strings.Fields(out) {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		again = append(again, id)
	}
	assert.Equal(t, int64(1), again[0].Node(ringflake.TwitterLayout()), "node 1 was given back and taken again")
	assert.Greater(t, again[0], ids[len(ids)-1], "the lease carried the mark to the next run")

	holdings, err := redislease.List(ctx, client, opts)
	require.NoError(t, err)
	require.Len(t, holdings, 1, "gen gave node 1 back")
	assert.Equal(t, int64(0), holdings[0].Node)
}

func TestGenEtcdLease(t *testing.T) {
	endpoints := leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv)
	ctx := context.Background()
	client, err := gateway.New(gateway.Config{Endpoints: strings.Split(endpoints, ",")})
	require.NoError(t, err)
	defer client.Close()
	prefix := leasetest.Prefix(t)
	held, err := txnlease.Acquire(ctx, client, txnlease.Options{Prefix: prefix, TTL: 2 * time.Second})
	require.NoError(t, err)
	defer held.Close(ctx)

	hosts := strings.ReplaceAll(strings.ReplaceAll(endpoints, "http://", ""), "https://", "")
	ids := genIDs(t, "-n", "5", "-node", "etcd://"+hosts+"?prefix="+prefix+"&ttl=2s") // waits out the quiet period
	for _, id := range ids {
		assert.Equal(t, int64(1), id.Node(ringflake.TwitterLayout()))
	}
}

// TestGenGuardRejects: -guard without a configured -node, with a leased
// one, with -state, with a URL that cannot be right, or with a strategy
// that leads further than maxlead is a usage error (status 2) found before
// anything is dialled; a guard server that cannot be reached is a
// one-line failure (status 1).
func TestGenGuardRejects(t *testing.T) {
	state := filepath.Join(t.TempDir(), "m")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no -node", []string{"-guard", "redis://127.0.0.1:1/0"}, 2, "-guard needs the node id it guards"},
		{"a leased -node", []string{"-node", "redis://127.0.0.1:1/0", "-guard", "redis://127.0.0.1:1/0"}, 2, "a leased id needs no guard"},
		{"a host-local -node", []string{"-node", "local", "-guard", "etcd://127.0.0.1:1"}, 2, "a leased id needs no guard"},
		{"with -state", []string{"-node", "3", "-guard", "redis://127.0.0.1:1/0", "-state", state}, 2, "-state: a guarded node id keeps its high-water mark with its claim"},
		{"not a server", []string{"-node", "3", "-guard", "http://127.0.0.1:1"}, 2, `-guard "http://127.0.0.1:1": want redis://`},
		{"bad maxlead", []string{"-node", "3", "-guard", "redis://127.0.0.1:1/0?maxlead=soon"}, 2, `maxlead="soon" is not a positive duration`},
		{"zero maxlead", []string{"-node", "3", "-guard", "etcd://127.0.0.1:1?maxlead=0s"}, 2, `maxlead="0s" is not a positive duration`},
		{"unknown etcd option", []string{"-node", "3", "-guard", "etcd://127.0.0.1:1?colour=red"}, 2, `-guard "etcd://127.0.0.1:1?colour=red": unknown option "colour"`},
		{"a bad node id", []string{"-node", "x", "-guard", "redis://127.0.0.1:1/0"}, 2, `-node "x": not a node id`},
		{"a lead past the guard's maxlead", []string{"-node", "3", "-strategy", "logical:30s", "-guard", "redis://127.0.0.1:1/0"}, 2,
			"-strategy logical:30s may issue IDs 30s ahead of the clock, more than -guard allows (maxlead 1s): add maxlead=30s to the -guard URL"},
		{"a lead past the lease's maxlead", []string{"-node", "redis://127.0.0.1:1/0?maxlead=2s", "-strategy", "ring,logical:5s"}, 2,
			"add maxlead=5s to the -node URL"},
		{"redis unreachable", []string{"-node", "3", "-guard", "redis://127.0.0.1:1/0"}, 1, "-guard: claiming node 3 from 127.0.0.1:1: "},
		{"etcd unreachable", []string{"-node", "env:RINGFLAKE_CLI_TEST_GUARDED", "-guard", "etcd://127.0.0.1:1"}, 1, "-guard: claiming node 3 from etcd 127.0.0.1:1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RINGFLAKE_CLI_TEST_GUARDED", "3")
			code, out, errOut := runCLI(append([]string{"gen"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Empty(t, out)
			first, _, _ := strings.Cut(errOut, "\n")
			assert.Contains(t, first, tc.want)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
	_, err := os.Stat(state)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written")
}

// TestGenGuard runs gen with a guarded static node id as a process of its
// own, on each server: a second gen with the same id fails at start,
// naming the node id and the first one's holder description (HOST/PID);
// another id is free; and when the first process loses its claim — another
// token is written into its key — it stops issuing and exits with an
// error, having printed only IDs of its node.
func TestGenGuard(t *testing.T) {
	for _, b := range sharedBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			first := checkGuard(t, b)
			assert.Contains(t, first.stderr.String(), "node id lease lost")
		})
	}
}

// checkGuard runs the guard's story on b: a gen with a guarded static
// node id (5) issues; a second gen with the same id, standing for a
// process on another host, fails at start in one line naming the node id
// and the first one's holder description (HOST/PID); another id (6) is
// free; and when the first process loses its claim — another token is
// written into its key — it stops issuing and exits with an error, having
// printed only IDs of its node. It returns the first process, for the
// caller's checks of its last words.
func checkGuard(t *testing.T, b backend) *child {
	t.Helper()
	l := ringflake.SonyflakeLayout()
	prefix := newPrefix()
	b.settle(t, prefix)
	guard := b.url(prefix, url.Values{"ttl": {"2s"}})
	first := startGen(t, "first", "-n", "1000000000", "-node", "5", "-guard", guard, "-layout", "sonyflake")
	require.Eventually(t, func() bool {
		n, _ := first.progress()
		return n > 0
	}, 30*time.Second, 10*time.Millisecond, "the first process issues")

	// The second process stands for one on another host: its host-local
	// locks are elsewhere, so the guard is what stops it.
	t.Setenv(nodeDirEnv, t.TempDir())
	code, out, errOut := runCLI("gen", "-n", "5", "-node", "5", "-guard", guard, "-layout", "sonyflake")
	assert.Equal(t, 1, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "node 5 under prefix")
	assert.Contains(t, errOut, fmt.Sprintf("/%d\"", first.cmd.Process.Pid), "the holder's description, HOST/PID of the first process")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)

	for _, id := range genIDs(t, "-n", "5", "-node", "6", "-guard", guard, "-layout", "sonyflake") {
		assert.Equal(t, int64(6), id.Node(l))
	}

	b.steal(t, prefix, 5)
	assert.Equal(t, 1, first.wait(t, 30*time.Second), "the first process stops with an error")
	n, dups := duplicates(first)
	assert.Positive(t, n)
	assert.Zero(t, dups)
	for _, id := range first.ids {
		require.Equal(t, int64(5), id.Node(l))
	}
	return first
}

// A configured node id is locked on the host as -node local's are: with
// one process issuing on node 3, a second one with -node 3 fails at start
// with one line naming the first one's pid; another id, or the first one
// gone, starts.
func TestGenConfiguredIDIsHeldOnTheHost(t *testing.T) {
	first, _ := startIssuing(t, "-node", "3")
	code, out, errOut := runCLI("gen", "-node", "3", "-n", "2")
	assert.Equal(t, 1, code)
	assert.Empty(t, out, "no ID issued")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	assert.Contains(t, errOut, "process "+strconv.Itoa(first.cmd.Process.Pid))
	t.Setenv("RINGFLAKE_CLI_TEST_NODE", "3")
	code, _, _ = runCLI("gen", "-node", "env:RINGFLAKE_CLI_TEST_NODE", "-n", "1")
	assert.Equal(t, 1, code, "an id from the environment is held the same way")
	genIDs(t, "-n", "1", "-node", "4")
	first.kill(t)
	genIDs(t, "-n", "1", "-node", "3") // free once it is dead
}

// The case: `serve -node 3` runs, and `gen -node 3` on the same
// host fails at start with one line naming the server's pid.
func TestGenBesideAServerOnTheSameID(t *testing.T) {
	srv := startServe(t, "-node", "3")
	code, out, errOut := runCLI("gen", "-node", "3", "-n", "2")
	assert.Equal(t, 1, code)
	assert.Empty(t, out, "no ID issued")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
	assert.Contains(t, errOut, "process "+strconv.Itoa(srv.cmd.Process.Pid))
	srv.terminate()
}
