package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease"
	"github.com/ringflake/ringflake/internal/leasetest"
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
		{"not a number", "five", 2, `-node "five": not a decimal node id`},
		{"a plus sign", "+5", 2, `-node "+5": not a decimal node id`},
		{"two minus signs", "--1", 2, `-node "--1": not a decimal node id`},
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
	_, err := ringflake.NewFileMarkStore(state).LoadMark(context.Background())
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

	mark, err := ringflake.NewFileMarkStore(state).LoadMark(context.Background())
	require.NoError(t, err)
	last := second[len(second)-1].Time(ringflake.TwitterLayout())
	assert.Equal(t, ringflake.Mark{Limit: last, Since: last, Node: 3, Layout: ringflake.TwitterLayout().String()}, mark,
		"a clean exit saves the exact mark")

	require.NoError(t, os.WriteFile(state, []byte("damaged\n"), 0o600))
	code, _, errOut := runCLI("gen", "-node", "3", "-state", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "high-water mark")
}

// With a Redis lease, gen takes the lowest free node id of the prefix,
// keeps the mark with it, and gives it back when done. The prefix is new,
// so the first leases under it wait out a quiet period of one TTL (2 s
// here) before they issue.
func TestGenRedisLease(t *testing.T) {
	addr := leasetest.RequireEnv(t, "RINGFLAKE_TEST_REDIS_ADDR", "Run ./scripts/test.sh, which starts a throwaway redis-server, or point it at one: RINGFLAKE_TEST_REDIS_ADDR=127.0.0.1:6379.")
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer client.Close()
	prefix := leasetest.Prefix(t)
	opts := redislease.Options{Prefix: prefix, TTL: 2 * time.Second}
	held, err := redislease.Acquire(ctx, client, opts) // node 0 is taken
	require.NoError(t, err)
	defer held.Close(ctx)

	spec := "redis://" + addr + "/0?prefix=" + prefix + "&ttl=2s"
	ids := genIDs(t, "-n", "5", "-node", spec) // waits out the quiet period
	for _, id := range ids {
		assert.Equal(t, int64(1), id.Node(ringflake.TwitterLayout()))
	}
	again := genIDs(t, "-n", "5", "-node", spec)
	assert.Equal(t, int64(1), again[0].Node(ringflake.TwitterLayout()), "node 1 was given back and taken again")
	assert.Greater(t, again[0], ids[len(ids)-1], "the lease carried the mark to the next run")

	holdings, err := redislease.List(ctx, client, opts)
	require.NoError(t, err)
	require.Len(t, holdings, 1, "gen gave node 1 back")
	assert.Equal(t, int64(0), holdings[0].Node)
}

func TestGenEtcdLease(t *testing.T) {
	endpoints := leasetest.RequireEnv(t, "RINGFLAKE_TEST_ETCD_ENDPOINTS", "Run ./scripts/test.sh, which starts a throwaway etcd, or point it at one: RINGFLAKE_TEST_ETCD_ENDPOINTS=http://127.0.0.1:2379.")
	ctx := context.Background()
	client, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer client.Close()
	prefix := leasetest.Prefix(t)
	held, err := etcdlease.Acquire(ctx, client, etcdlease.Options{Prefix: prefix, TTL: 2 * time.Second})
	require.NoError(t, err)
	defer held.Close(ctx)

	hosts := strings.ReplaceAll(strings.ReplaceAll(endpoints, "http://", ""), "https://", "")
	ids := genIDs(t, "-n", "5", "-node", "etcd://"+hosts+"?prefix="+prefix+"&ttl=2s") // waits out the quiet period
	for _, id := range ids {
		assert.Equal(t, int64(1), id.Node(ringflake.TwitterLayout()))
	}
}
