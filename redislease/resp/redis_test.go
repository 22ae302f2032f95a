package resp_test

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease/resp"
)

// These tests run against the shared Redis of leasetest.RedisAddrEnv,
// under keys and users of their own.

// redisURL returns the shared server's redis:// URL, with userinfo and
// path (like "u:pw@", "/3") when given.
func redisURL(t *testing.T, userinfo, path string) string {
	return "redis://" + userinfo + leasetest.RequireEnv(t, leasetest.RedisAddrEnv) + path
}

// dial returns a client of url, closed when the test ends.
func dial(t *testing.T, url string) *resp.Client {
	t.Helper()
	o, err := resp.ParseURL(url)
	require.NoError(t, err)
	c, err := resp.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// unique returns a name no other test or run uses.
func unique(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test/" + t.Name() + "/" + hex.EncodeToString(b[:])
}

// do runs a command that must succeed.
func do(t *testing.T, c *resp.Client, args ...string) any {
	t.Helper()
	v, err := c.Do(context.Background(), args...)
	require.NoError(t, err, "%v", args)
	return v
}

// Every kind of RESP2 reply, as Redis sends it.
func TestRedisReplies(t *testing.T) {
	c := dial(t, redisURL(t, "", ""))
	key := unique(t)
	t.Cleanup(func() { do(t, c, "DEL", key) })
	assert.Equal(t, "PONG", do(t, c, "PING"))
	assert.Equal(t, "OK", do(t, c, "SET", key, "va\r\nlue"))
	assert.Equal(t, "va\r\nlue", do(t, c, "GET", key))
	assert.Nil(t, do(t, c, "GET", key+"/none"))
	assert.Equal(t, int64(1), do(t, c, "EXISTS", key))
	assert.Equal(t, []any{"va\r\nlue", nil}, do(t, c, "MGET", key, key+"/none"))

	_, err := c.Do(context.Background(), "HGET", key, "f")
	var e *resp.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "WRONGTYPE", e.Code())

	ctx := context.Background()
	v, err := c.RunScript(ctx, "return {1, ARGV[1], false, {KEYS[1], redis.error_reply('MY nested')}}", []string{key}, "a")
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1), "a", nil, []any{key, &resp.Error{Message: "MY nested"}}}, v)
	_, err = c.RunScript(ctx, "return redis.error_reply('MY own error')", nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "MY", e.Code())
}

// A script the server has not seen runs by EVAL, and after that by its
// digest.
func TestRedisScriptCache(t *testing.T) {
	c := dial(t, redisURL(t, "", ""))
	name := unique(t)
	script := fmt.Sprintf("return '%s'", name)
	sum := sha1.Sum([]byte(script))
	digest := hex.EncodeToString(sum[:])
	assert.Equal(t, []any{int64(0)}, do(t, c, "SCRIPT", "EXISTS", digest), "not cached yet")
	for range 2 {
		v, err := c.RunScript(context.Background(), script, nil)
		require.NoError(t, err)
		assert.Equal(t, name, v)
		assert.Equal(t, []any{int64(1)}, do(t, c, "SCRIPT", "EXISTS", digest), "cached by EVAL")
	}
}

// AUTH with a user and a password (Redis 6 ACLs), and SELECT.
func TestRedisAuthAndSelect(t *testing.T) {
	admin := dial(t, redisURL(t, "", ""))
	var b [6]byte
	_, _ = rand.Read(b[:])
	user := "resp-test-" + hex.EncodeToString(b[:])
	do(t, admin, "ACL", "SETUSER", user, "on", ">s3cret", "~*", "+@all")
	t.Cleanup(func() { do(t, admin, "ACL", "DELUSER", user) })

	c := dial(t, redisURL(t, user+":s3cret@", "/5"))
	key := unique(t)
	do(t, c, "SET", key, "in db 5")
	t.Cleanup(func() { do(t, c, "DEL", key) })
	assert.Equal(t, user, do(t, c, "ACL", "WHOAMI"))
	assert.Nil(t, do(t, admin, "GET", key), "db 0 does not have it")
	assert.Equal(t, "in db 5", do(t, dial(t, redisURL(t, "", "/5")), "GET", key))

	_, err := dial(t, redisURL(t, user+":wrong@", "")).Do(context.Background(), "PING")
	var e *resp.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "WRONGPASS", e.Code())
}

// Goroutines share a client; each gets the reply to its own command,
// also while others give up on theirs midway (their connections are
// dropped, never reused with a reply on its way).
func TestRedisConcurrentCalls(t *testing.T) {
	c := dial(t, redisURL(t, "", ""))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				ctx, cancel := context.WithCancel(context.Background())
				msg := strconv.Itoa(g) + "/" + strconv.Itoa(i)
				if i%5 == 4 {
					go cancel() // at any point of the call
				}
				v, err := c.Do(ctx, "ECHO", msg)
				cancel()
				if err != nil {
					assert.ErrorIs(t, err, context.Canceled)
					continue
				}
				assert.Equal(t, msg, v)
			}
		}()
	}
	wg.Wait()
}
