package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Call runs f with ctx bounded by timeout and returns what f returns, or
// ctx's error as soon as the bound (or ctx) ends, whichever comes first —
// even when f does not watch its context (go-redis ignores deadlines
// unless the client has ContextTimeoutEnabled). f then goes on in a
// goroutine of its own until it returns, and its result is dropped: a
// request abandoned this way may still reach the server later (a lease
// module's mark saves are numbered, so that a late one changes nothing:
// see [ErrStaleSave]).
func Call[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1) // f's goroutine never blocks on it
	go func() {
		defer cancel()
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done: // f returned at the same time: its answer wins
			return r.v, r.err
		default:
		}
		var zero T
		return zero, ctx.Err()
	}
}

// NewToken returns a new random 128-bit token, in hex: what a lease
// writes into its id's key, and the fencing token of its marks.
func NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: it crashes the program instead (Go 1.24)
	return hex.EncodeToString(b[:])
}
