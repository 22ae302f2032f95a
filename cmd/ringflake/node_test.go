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

func TestGenNodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		code int
		want string
	}{
		{"not a number", "five", 2, `-node "five"`},
		{"out of range", "1024", 1, "out of range"},
		{"unset variable", "env:RINGFLAKE_CLI_TEST_UNSET", 1, "RINGFLAKE_CLI_TEST_UNSET is not set"},
		{"no ordinal", "ordinal:ids", 1, "does not end in -ORDINAL"},
		{"bad lease ttl", "redis://127.0.0.1:6379/0?ttl=soon", 2, `ttl="soon"`},
		{"bad redis option", "redis://127.0.0.1:6379/0?colour=red", 2, "colour"},
		{"etcd with a path", "etcd://127.0.0.1:2379/ids", 2, "want etcd://"},
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
	assert.Equal(t, second[len(second)-1].Time(ringflake.TwitterLayout()), mark, "a clean exit saves the exact mark")

	require.NoError(t, os.WriteFile(state, []byte("damaged\n"), 0o600))
	code, _, errOut := runCLI("gen", "-node", "3", "-state", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "high-water mark")
}

// With a Redis lease, gen takes the lowest free node id of the prefix,
// keeps the mark with it, and gives it back when done.
func TestGenRedisLease(t *testing.T) {
	addr := leasetest.RequireEnv(t, "RINGFLAKE_TEST_REDIS_ADDR", "Run ./scripts/test.sh, which starts a throwaway redis-server, or point it at one: RINGFLAKE_TEST_REDIS_ADDR=127.0.0.1:6379.")
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	prefix := leasetest.Prefix(t)
	opts := redislease.Options{Prefix: prefix, TTL: 5 * time.Second}
	held, err := redislease.Acquire(ctx, client, opts) // node 0 is taken
	require.NoError(t, err)
	defer held.Close(ctx)

	spec := "redis://" + addr + "/0?prefix=" + prefix + "&ttl=5s"
	ids := genIDs(t, "-n", "5", "-node", spec)
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
	code, _, errOut := runCLI("gen", "-node", spec, "-state", filepath.Join(t.TempDir(), "m"))
	assert.Equal(t, 2, code, "-state and a lease exclude each other")
	assert.Contains(t, errOut, "-state")
}

func TestGenEtcdLease(t *testing.T) {
	endpoints := leasetest.RequireEnv(t, "RINGFLAKE_TEST_ETCD_ENDPOINTS", "Run ./scripts/test.sh, which starts a throwaway etcd, or point it at one: RINGFLAKE_TEST_ETCD_ENDPOINTS=http://127.0.0.1:2379.")
	ctx := context.Background()
	client, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer client.Close()
	prefix := leasetest.Prefix(t)
	held, err := etcdlease.Acquire(ctx, client, etcdlease.Options{Prefix: prefix, TTL: 5 * time.Second})
	require.NoError(t, err)
	defer held.Close(ctx)

	hosts := strings.ReplaceAll(strings.ReplaceAll(endpoints, "http://", ""), "https://", "")
	ids := genIDs(t, "-n", "5", "-node", "etcd://"+hosts+"?prefix="+prefix+"&ttl=5s")
	for _, id := range ids {
		assert.Equal(t, int64(1), id.Node(ringflake.TwitterLayout()))
	}
}
