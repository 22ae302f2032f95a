package leasekeep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ringflake/ringflake"
)

// Config holds the settings the lease modules' Options have in common,
// named and documented there; the zero value of a field means its default.
type Config struct {
	Prefix     string
	Layout     ringflake.Layout
	TTL        time.Duration
	RenewEvery time.Duration
	Margin     time.Duration
	Timeout    time.Duration
	Holder     string
	Clock      clock.Clock

	// MaxNode is Layout.MaxNode(); Resolve sets it.
	MaxNode int64
}

// Rules are what differs between the modules' checks of a Config.
type Rules struct {
	// Package names the module's package in error messages ("redislease").
	Package string
	// DefaultPrefix and DefaultTTL replace a zero Prefix and TTL.
	DefaultPrefix string
	DefaultTTL    time.Duration
	// TTLUnit is the server's TTL granularity: a TTL must be a positive
	// whole number of it. TTLUnitName names it in errors ("milliseconds").
	TTLUnit     time.Duration
	TTLUnitName string
}

// Resolve returns c with its defaults applied: Prefix and TTL from r,
// Layout ringflake.TwitterLayout(), RenewEvery TTL/3, Margin
// TTL/100 + 2ms, Timeout RenewEvery, Holder "HOSTNAME/PID", Clock the
// system clock. A Config that cannot work is an [*OptionError] (it matches
// ringflake.ErrInvalidOption): a TTL that is not a positive whole number
// of r.TTLUnit, a negative RenewEvery, Margin or Timeout, or
// RenewEvery + Margin not shorter than TTL.
func (c Config) Resolve(r Rules) (Config, error) {
	if c.Prefix == "" {
		c.Prefix = r.DefaultPrefix
	}
	if c.Layout.IsZero() {
		c.Layout = ringflake.TwitterLayout()
	}
	c.MaxNode = c.Layout.MaxNode()
	if c.TTL == 0 {
		c.TTL = r.DefaultTTL
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = c.TTL / 3
	}
	if c.Margin == 0 {
		c.Margin = c.TTL/100 + 2*time.Millisecond
	}
	if c.Timeout == 0 {
		c.Timeout = c.RenewEvery
	}
	if c.Clock == nil {
		c.Clock = clock.New()
	}
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, &OptionError{Package: r.Package, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case c.TTL < r.TTLUnit || c.TTL%r.TTLUnit != 0:
		return bad("TTL %v: want a positive whole number of %s", c.TTL, r.TTLUnitName)
	case c.RenewEvery < 0 || c.Margin < 0 || c.Timeout < 0:
		return bad("negative RenewEvery, Margin or Timeout")
	case c.RenewEvery+c.Margin >= c.TTL:
		return bad("RenewEvery %v + Margin %v must be shorter than TTL %v", c.RenewEvery, c.Margin, c.TTL)
	}
	if c.Holder == "" {
		host, _ := os.Hostname()
		c.Holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	return c, nil
}

// Quiet is how long a lease that may have taken over an id from a holder
// the server forgot (the server lost data) must wait before it issues:
// TTL + Margin, after which every lease granted before the loss has
// certainly expired, even on a holder whose clock runs a little slow.
func (c Config) Quiet() time.Duration { return c.TTL + c.Margin }

// MarkAhead is the lead a lease suggests for the high-water mark a
// generator keeps with it: TTL/2.
func (c Config) MarkAhead() time.Duration { return c.TTL / 2 }

// An OptionError reports lease options that cannot work. It matches
// ringflake.ErrInvalidOption.
type OptionError struct {
	Package string // the lease module's package, "redislease" or "etcdlease"
	Reason  string
}

// Error names the module and the reason.
func (e *OptionError) Error() string {
	return fmt.Sprintf("%v: %s: %s", ringflake.ErrInvalidOption, e.Package, e.Reason)
}

// Is reports whether target is ringflake.ErrInvalidOption.
func (e *OptionError) Is(target error) bool { return target == ringflake.ErrInvalidOption }

// Call runs f with ctx bounded by timeout and returns what f returns, or
// ctx's error as soon as the bound (or ctx) ends, whichever comes first —
// even when f does not watch its context (go-redis ignores deadlines
// unless the client has ContextTimeoutEnabled). f then goes on in a
// goroutine of its own until it returns, and its result is dropped: a
// request abandoned this way may still reach the server later.
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
