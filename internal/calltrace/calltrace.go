// Package calltrace lets the replay of package scenario learn why one call
// of a generator took the time it took: a context carries a [Call] that the
// generator fills in on its slow path. The fast path never looks at it.
package calltrace

import (
	"context"
	"time"
)

// A Call is what one call of a generator waited for, by cause. Each field
// is the time the call slept on the generator's clock for that cause.
type Call struct {
	// Strategy is the sleeps the strategy asked for (a wait strategy
	// waiting out a rollback, a logical one at its lead).
	Strategy time.Duration
	// Capacity is the waits for a tick with room: the next tick when the
	// current one's sequence is used up, and callers ahead in line.
	Capacity time.Duration
	// Reservation is the wait for the ticks a previous run's mark
	// reserved, after a restart.
	Reservation time.Duration
}

type key struct{}

// With returns ctx carrying c, for the generator to fill in.
func With(ctx context.Context, c *Call) context.Context { return context.WithValue(ctx, key{}, c) }

// From returns the Call ctx carries, or nil.
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(key{}).(*Call)
	return c
}
