package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// A backend is a lease server for the CLI's tests: the -node or -guard URL
// of a prefix on it, and what a test does to it behind the leases' backs.
type backend struct {
	name string
	// url returns the URL of prefix, with the lease options of query.
	url func(prefix string, query url.Values) string
	// settle makes prefix look like the prefix of a fleet that has been
	// running for a while: leases under it hold their ids at once.
	settle func(t *testing.T, prefix string)
	// steal writes someone else's token into node's lease key.
	steal func(t *testing.T, prefix string, node int64)
	// exists reports whether node's lease key exists.
	exists func(t *testing.T, prefix string, node int64) bool
}

// newPrefix returns a key prefix no other test or run uses.
func newPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "cli-test-" + hex.EncodeToString(b[:])
}

// sharedBackends returns the servers the tests share (scripts/test.sh
// starts them); a test without them fails.
func sharedBackends(t *testing.T) []backend {
	t.Helper()
	endpoint, _, _ := strings.Cut(leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv), ",")
	return []backend{redisBackend(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv)), etcdBackend(t, endpoint)}
}

// redisBackend returns the Redis at addr, HOST:PORT.
func redisBackend(t *testing.T, addr string) backend {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	t.Cleanup(func() { _ = client.Close() })
	return backend{
		name: "redis",
		url: func(prefix string, q url.Values) string {
			q.Set("prefix", prefix)
			return "redis://" + addr + "/0?" + q.Encode()
		},
		settle: func(t *testing.T, prefix string) { leasetest.SettleRedis(t, addr, prefix) },
		steal: func(t *testing.T, prefix string, node int64) {
			key := fmt.Sprintf("{%s}:lease:%d", prefix, node)
			require.NoError(t, client.Set(context.Background(), key, "intruder", time.Minute).Err())
		},
		exists: func(t *testing.T, prefix string, node int64) bool {
			n, err := client.Exists(context.Background(), fmt.Sprintf("{%s}:lease:%d", prefix, node)).Result()
			require.NoError(t, err)
			return n == 1
		},
	}
}

// etcdBackend returns the etcd at endpoint, http://HOST:PORT.
func etcdBackend(t *testing.T, endpoint string) backend {
	t.Helper()
	client, err := gateway.New(gateway.Config{Endpoints: []string{endpoint}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	return backend{
		name: "etcd",
		url: func(prefix string, q url.Values) string {
			q.Set("prefix", prefix)
			return "etcd://" + strings.TrimPrefix(endpoint, "http://") + "?" + q.Encode()
		},
		settle: func(t *testing.T, prefix string) { leasetest.SettleEtcd(t, endpoint, prefix) },
		steal: func(t *testing.T, prefix string, node int64) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, client.Put(ctx, fmt.Sprintf("%s/lease/%d", prefix, node), "intruder", 0))
		},
		exists: func(t *testing.T, prefix string, node int64) bool {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			kvs, err := client.Range(ctx, fmt.Sprintf("%s/lease/%d", prefix, node), "")
			require.NoError(t, err)
			return len(kvs) == 1
		},
	}
}
