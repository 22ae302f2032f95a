package redislease

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/redislease/lualease"
)

// Options configure [Acquire], [Claim] and [List]; the type is
// [lease.Options], shared with etcdlease. With Redis, TTLs are whole
// milliseconds, and a prefix p owns the keys "{p}:lease:<id>",
// "{p}:node:<id>", "{p}:epoch" and "{p}:quiet" (see the package
// documentation); Options.Timeout is enforced by the lease even with a
// client without ContextTimeoutEnabled.
type Options = lease.Options

// A Lease holds a node id in Redis until it is lost or closed: the
// [lualease.Lease] of either transport, whose methods are documented
// there. It implements ringflake.Lease and ringflake.MarkStore: pass it
// to ringflake.New with ringflake.WithLease. A Lease is safe for
// concurrent use by multiple goroutines.
type Lease = lualease.Lease

// Acquire takes the lowest free node id in [0, Layout.MaxNode()] under
// opts.Prefix, through a go-redis client, and keeps it renewed in the
// background until [lualease.Lease.Close] or until it is lost: see
// [lualease.Acquire], which it calls, for the errors. The scripts run
// with go-redis's [redis.Script] (EVALSHA, then EVAL on NOSCRIPT).
func Acquire(ctx context.Context, client redis.Scripter, opts Options) (*Lease, error) {
	if client == nil {
		return nil, nilClient()
	}
	return lualease.Acquire(ctx, goRedis{client}, opts)
}

// Claim takes node id node under opts.Prefix through a go-redis client,
// and keeps it renewed like [Acquire]: see [lualease.Claim], which it
// calls, for what a claim guards and its errors.
func Claim(ctx context.Context, client redis.Scripter, node int64, opts Options) (*Lease, error) {
	if client == nil {
		return nil, nilClient()
	}
	return lualease.Claim(ctx, goRedis{client}, node, opts)
}

// List returns the ids in use under opts.Prefix, with their holders,
// remaining TTLs and marks, through a go-redis client: see
// [lualease.List], which it calls.
func List(ctx context.Context, client redis.Scripter, opts Options) ([]lease.Holding, error) {
	if client == nil {
		return nil, nilClient()
	}
	return lualease.List(ctx, goRedis{client}, opts)
}

// MeasureOffset measures how far the clock of the Redis server behind a
// go-redis client is from clk (nil: the system clock), with samples
// requests for its TIME (0: [lease.DefaultSamples]): see
// [lualease.MeasureOffset], which it calls. ctx bounds the whole
// measurement, even with a client without ContextTimeoutEnabled.
func MeasureOffset(ctx context.Context, client redis.Scripter, clk lease.WallClock, samples int) (lease.Offset, error) {
	if client == nil {
		return lease.Offset{}, nilClient()
	}
	return lualease.MeasureOffset(ctx, goRedis{client}, clk, samples)
}

// nilClient is the error for a nil go-redis client, which the adapter
// would hide from lualease's own check.
func nilClient() error { return &lease.OptionError{Package: "redislease", Reason: "nil client"} }

// goRedis runs the lease's scripts through a go-redis client.
type goRedis struct{ c redis.Scripter }

// RunScript implements [lualease.ScriptRunner] with [redis.Script.Run]:
// EVALSHA, then EVAL when the server answers NOSCRIPT. A nil reply, which
// go-redis reports as the error [redis.Nil], is nil.
func (g goRedis) RunScript(ctx context.Context, script string, keys []string, args ...string) (any, error) {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	v, err := redis.NewScript(script).Run(ctx, g.c, keys, a...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}
