package lualease

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ringflake/ringflake/lease"
)

// timeScript returns the server's TIME: whole seconds and microseconds.
// A script rather than the TIME command, so that a lease reads the clock
// of the server that holds its prefix's keys (KEYS[1] = "{p}" routes it
// there in a Redis Cluster) through the same [ScriptRunner] as its other
// calls.
const timeScript = `return redis.call('TIME')`

// timeResolution is TIME's: whole microseconds.
const timeResolution = time.Microsecond

// MeasureOffset measures how far the clock of the Redis server behind
// client is from clk (nil: the system clock), NTP-style: it sends
// samples requests for the server's TIME (0: [lease.DefaultSamples]),
// one after another, and keeps the one with the shortest round trip. The
// result's Offset is the server's clock minus clk's — positive when clk
// is behind — and its Uncertainty half that round trip plus half a
// microsecond (TIME's resolution): the true offset lies within
// Offset ± Uncertainty unless a clock stepped during the sample. clk's
// wall readings are the local send and receive instants; the round trip
// is timed on clk's Monotonic() when it has that method, on the system's
// monotonic clock otherwise (see [lease.MeasureOffset]).
//
// ctx bounds the whole measurement, even with a client that ignores
// context deadlines. With a Redis Cluster, the server is the node the
// client sends a script without keys to; a lease measures against the
// node of its prefix's keys instead. A lease measures with its own
// Options.Clock at acquire and at every renewal ([Options].MaxSkew,
// [Lease.ClockOffset]); MeasureOffset is for a check from the command line
// or a health probe.
//
// Errors: ringflake.ErrInvalidOption for a nil client or samples below 0
// or above [lease.MaxSamples]; otherwise the client's error or ctx's.
func MeasureOffset(ctx context.Context, client ScriptRunner, clk lease.WallClock, samples int) (lease.Offset, error) {
	if client == nil {
		return lease.Offset{}, &lease.OptionError{Package: rules.Package, Reason: "nil client"}
	}
	o, err := measure(ctx, client, nil, clk, samples, math.MaxInt64)
	if err != nil {
		return lease.Offset{}, fmt.Errorf("redislease: measuring the offset to the server's clock: %w", err)
	}
	return o, nil
}

// measure runs timeScript with keys samples times, all of them bounded
// by timeout (and ctx), even with a client that ignores deadlines.
func measure(ctx context.Context, client ScriptRunner, keys []string, clk lease.WallClock, samples int, timeout time.Duration) (lease.Offset, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return lease.MeasureOffset(ctx, clk, samples, timeResolution, func(ctx context.Context) (time.Time, error) {
		v, err := callSlice(ctx, client, timeout, timeScript, keys)
		if err != nil {
			return time.Time{}, err
		}
		return parseTime(v)
	})
}

// parseTime reads TIME's reply: seconds and microseconds, as strings.
func parseTime(v []any) (time.Time, error) {
	if len(v) == 2 {
		s, ok1 := v[0].(string)
		us, ok2 := v[1].(string)
		sec, err1 := strconv.ParseInt(s, 10, 64)
		usec, err2 := strconv.ParseInt(us, 10, 64)
		if ok1 && ok2 && err1 == nil && err2 == nil && usec >= 0 && usec < 1e6 {
			return time.Unix(sec, usec*1e3), nil
		}
	}
	return time.Time{}, fmt.Errorf("unexpected TIME reply %v", v)
}

// checkSkew measures the offset at acquire, unless the measurement is
// off (the zero Offset, nil), and refuses a clock certainly further from
// the server's than MaxSkew with a *lease.SkewError.
func (s *settings) checkSkew(ctx context.Context, client ScriptRunner) (lease.Offset, error) {
	if !s.MeasuresSkew() {
		return lease.Offset{}, nil
	}
	o, err := measure(ctx, client, []string{s.keyBase()}, s.Clock, lease.DefaultSamples, s.Timeout)
	if err != nil {
		return lease.Offset{}, fmt.Errorf("redislease: measuring the offset to the server's clock: %w", err)
	}
	if o.Beyond(s.MaxSkew) {
		return o, &lease.SkewError{Package: rules.Package, Offset: o, Max: s.MaxSkew}
	}
	return o, nil
}

// ClockOffset returns the latest offset of the server's clock from the
// lease's Options.Clock: measured when the lease was acquired and again at
// every successful renewal (a renewal whose measurement failed leaves the
// previous one). It is the zero Offset when Options.MaxSkew is negative.
func (l *Lease) ClockOffset() lease.Offset {
	if o := l.offset.Load(); o != nil {
		return *o
	}
	return lease.Offset{}
}
