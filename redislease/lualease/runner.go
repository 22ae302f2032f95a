package lualease

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ringflake/ringflake/lease"
)

// A ScriptRunner runs Lua scripts on a Redis server: everything a lease
// asks of its client. Package redislease adapts a go-redis client to it;
// package github.com/ringflake/ringflake/redislease/resp's Client is one.
//
// A ScriptRunner must be safe for concurrent use by multiple goroutines:
// a lease renews in the background while its generator saves marks.
type ScriptRunner interface {
	// RunScript runs the Lua script with keys as KEYS and args as ARGV,
	// as EVALSHA with the script's SHA-1 digest does, and as EVAL when
	// the server answers NOSCRIPT (it does not have the script yet). It
	// returns the script's reply as Go values: an integer as int64, a
	// simple or bulk string as string, a nil bulk string or array as
	// nil, an array as []any of these. An error reply is an error; so is
	// ctx ending, and RunScript should then return promptly.
	RunScript(ctx context.Context, script string, keys []string, args ...string) (any, error)
}

// itoa formats an integer argument of a script.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// call runs script once through client, bounded by timeout and ctx even
// with a client that ignores its context (see [lease.Call]).
func call(ctx context.Context, client ScriptRunner, timeout time.Duration, script string, keys []string, args ...string) (any, error) {
	return lease.Call(ctx, timeout, func(ctx context.Context) (any, error) {
		return client.RunScript(ctx, script, keys, args...)
	})
}

// callSlice is call for a script whose reply is an array.
func callSlice(ctx context.Context, client ScriptRunner, timeout time.Duration, script string, keys []string, args ...string) ([]any, error) {
	v, err := call(ctx, client, timeout, script, keys, args...)
	if err != nil {
		return nil, err
	}
	s, ok := v.([]any)
	if !ok {
		return nil, unexpected(v)
	}
	return s, nil
}

// callInt is call for a script whose reply is an integer.
func callInt(ctx context.Context, client ScriptRunner, timeout time.Duration, script string, keys []string, args ...string) (int64, error) {
	v, err := call(ctx, client, timeout, script, keys, args...)
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, unexpected(v)
	}
	return n, nil
}

// unexpected is the error for a reply of a shape no script returns.
func unexpected(v any) error { return fmt.Errorf("unexpected reply %v", v) }
