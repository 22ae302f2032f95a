package redislease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease"
	"github.com/ringflake/ringflake/simclock"
)

// offsetClock is this host's clock moved by a fixed amount: a host whose
// clock is that far ahead of the server's (behind, when negative), with
// the server on this host. Its readings keep Go's monotonic reading, so
// durations between them are real time.
type offsetClock struct {
	clock.Clock
	by time.Duration
}

func (c offsetClock) Now() time.Time                  { return c.Clock.Now().Add(c.by) }
func (c offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c offsetClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// requireNear fails unless the measurement o bounds the true offset want:
// |o.Offset − want| <= o.Uncertainty.
func requireNear(t *testing.T, want time.Duration, o lease.Offset) {
	t.Helper()
	require.False(t, o.IsZero(), "nothing measured")
	require.LessOrEqual(t, (o.Offset - want).Abs(), o.Uncertainty, "true offset %v, measured %v", want, o)
}

// TestMeasureOffsetOnThisHost: the server runs on this host, so its clock
// is this host's and the true offset is zero; every measurement must say
// so within its stated uncertainty (which includes TIME's microsecond),
// whichever clock times it. It logs what it saw.
func TestMeasureOffsetOnThisHost(t *testing.T) {
	c := newClient(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv))
	ctx := context.Background()
	for name, clk := range map[string]lease.WallClock{
		"nil (the system clock)":              nil,
		"clock.New()":                         clock.New(),
		"simclock.Wrap(clock.New())":          simclock.Wrap(clock.New()),
		"offsetClock{clock.New(), 0}":         offsetClock{clock.New(), 0},
		"simclock over a system clock, 0 off": simclock.Wrap(offsetClock{clock.New(), 0}),
	} {
		t.Run(name, func(t *testing.T) {
			var minRTT, maxRTT, maxAbs time.Duration = time.Hour, 0, 0
			for range 20 {
				o, err := redislease.MeasureOffset(ctx, c, clk, 0)
				require.NoError(t, err)
				requireNear(t, 0, o)
				assert.Equal(t, lease.DefaultSamples, o.Samples)
				assert.Equal(t, (o.RoundTrip+1)/2+500*time.Nanosecond, o.Uncertainty, "half the round trip and half TIME's microsecond")
				minRTT, maxRTT, maxAbs = min(minRTT, o.RoundTrip), max(maxRTT, o.RoundTrip), max(maxAbs, o.Offset.Abs())
			}
			t.Logf("20 measurements of 5 samples: round trip %v to %v, |offset| at most %v", minRTT, maxRTT, maxAbs)
		})
	}
}

// TestMeasureOffsetOfAClockOffTheServer: a clock moved by d measures an
// offset of −d (the server's clock minus this one), within its
// uncertainty.
func TestMeasureOffsetOfAClockOffTheServer(t *testing.T) {
	c := newClient(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv))
	for _, by := range []time.Duration{5 * time.Second, -5 * time.Second, 10 * time.Millisecond, -10 * time.Millisecond, time.Hour} {
		t.Run(by.String(), func(t *testing.T) {
			o, err := redislease.MeasureOffset(context.Background(), c, offsetClock{clock.New(), by}, 3)
			require.NoError(t, err)
			requireNear(t, -by, o)
			assert.Equal(t, 3, o.Samples)
		})
	}
}

func TestMeasureOffsetErrors(t *testing.T) {
	ctx := context.Background()
	_, err := redislease.MeasureOffset(ctx, nil, nil, 0)
	require.ErrorIs(t, err, ringflake.ErrInvalidOption, "nil client")

	c := newClient(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv))
	for _, n := range []int{-1, lease.MaxSamples + 1} {
		_, err = redislease.MeasureOffset(ctx, c, nil, n)
		require.ErrorIs(t, err, ringflake.ErrInvalidOption, "%d samples", n)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = redislease.MeasureOffset(cancelled, c, nil, 0)
	require.ErrorIs(t, err, context.Canceled)

	down := newClient(t, fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t)))
	_, err = redislease.MeasureOffset(ctx, down, nil, 0)
	require.Error(t, err, "nothing listens")
	assert.NotErrorIs(t, err, ringflake.ErrInvalidOption)
}

// takes are Acquire and Claim (of node 3), on a client of the shared
// server.
func takes(t *testing.T) map[string]func(opts redislease.Options) (*redislease.Lease, error) {
	c := newClient(t, leasetest.RequireEnv(t, leasetest.RedisAddrEnv))
	ctx := context.Background()
	return map[string]func(redislease.Options) (*redislease.Lease, error){
		"Acquire": func(opts redislease.Options) (*redislease.Lease, error) { return redislease.Acquire(ctx, c, opts) },
		"Claim":   func(opts redislease.Options) (*redislease.Lease, error) { return redislease.Claim(ctx, c, 3, opts) },
	}
}

// TestAcquireRefusesAClockFarFromTheServer: with the default MaxSkew of
// 1 s, Acquire and Claim refuse a host whose clock is 5 s off the
// server's, either way, with a SkewError naming the offset and its
// uncertainty, and take nothing; they accept one 10 ms off, and the lease
// reports the offset it measured.
func TestAcquireRefusesAClockFarFromTheServer(t *testing.T) {
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	c := newClient(t, addr)
	ctx := context.Background()
	for name, take := range takes(t) {
		for _, tc := range []struct {
			by      time.Duration
			refused bool
		}{
			{5 * time.Second, true},
			{-5 * time.Second, true},
			{10 * time.Millisecond, false},
			{-10 * time.Millisecond, false},
		} {
			t.Run(fmt.Sprintf("%s/%v", name, tc.by), func(t *testing.T) {
				prefix := leasetest.Prefix(t)
				leasetest.SettleRedis(t, addr, prefix)
				opts := redislease.Options{Prefix: prefix, Layout: leasetest.SmallLayout(t, 2), TTL: time.Minute,
					Clock: offsetClock{clock.New(), tc.by}}
				l, err := take(opts)
				if !tc.refused {
					require.NoError(t, err)
					t.Cleanup(func() { _ = l.Close(ctx) })
					assert.True(t, l.Held())
					requireNear(t, -tc.by, l.ClockOffset())
					return
				}
				require.ErrorIs(t, err, lease.ErrClockSkew)
				var se *lease.SkewError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, "redislease", se.Package)
				assert.Equal(t, lease.DefaultMaxSkew, se.Max)
				requireNear(t, -tc.by, se.Offset)
				assert.NotContains(t, err.Error(), "\n", "one line")
				assert.NotErrorIs(t, err, ringflake.ErrNodeUnavailable)
				held, err := redislease.List(ctx, c, opts)
				require.NoError(t, err)
				assert.Empty(t, held, "a refused host takes no id")
				t.Log(se)
			})
		}
	}
}

// TestMaxSkew: a larger MaxSkew accepts the host 5 s off; a negative one
// measures nothing.
func TestMaxSkew(t *testing.T) {
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	ctx := context.Background()
	for name, take := range takes(t) {
		t.Run(name, func(t *testing.T) {
			prefix := leasetest.Prefix(t)
			leasetest.SettleRedis(t, addr, prefix)
			opts := redislease.Options{Prefix: prefix, Layout: leasetest.SmallLayout(t, 2), TTL: time.Minute,
				Clock: offsetClock{clock.New(), 5 * time.Second}, MaxSkew: 10 * time.Second}
			l, err := take(opts)
			require.NoError(t, err)
			requireNear(t, -5*time.Second, l.ClockOffset())
			require.NoError(t, l.Close(ctx))

			opts.MaxSkew = -1
			l, err = take(opts)
			require.NoError(t, err)
			assert.True(t, l.ClockOffset().IsZero(), "the check is off")
			require.NoError(t, l.Close(ctx))
		})
	}
}

// TestDriftWhileHolding: a holder accepted with its clock in step drifts
// 20 s ahead of the server's clock while it holds its id (its mock clock
// moves a renewal interval ahead while real time does not). The renewal
// reports a ClockSkewed event with the measurement before its Renewed
// event; the lease stays held and its generator keeps issuing; a Recorder
// sees the skew.
func TestDriftWhileHolding(t *testing.T) {
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	c := newClient(t, addr)
	ctx := context.Background()
	prefix := leasetest.Prefix(t)
	leasetest.SettleRedis(t, addr, prefix)

	mock := clock.NewMock()
	mock.Set(time.Now()) // in step with the server, to within the time until Acquire measures
	var rec lease.Recorder
	events := make(chan lease.Event, 16)
	const ttl = time.Minute
	l, err := redislease.Acquire(ctx, c, redislease.Options{Prefix: prefix, TTL: ttl, Clock: mock,
		OnEvent: func(e lease.Event) { rec.Record(e); events <- e }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(ctx) })
	at := l.ClockOffset()
	assert.False(t, at.Beyond(lease.DefaultMaxSkew), "accepted: %v", at)
	gen, err := ringflake.New(l.Node(), ringflake.WithLease(l), ringflake.WithClock(simclock.New(leasetest.Start)))
	require.NoError(t, err)
	_, err = gen.Next()
	require.NoError(t, err)

	next := func() lease.Event {
		select {
		case e := <-events:
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no lease event within 30s")
			return lease.Event{}
		}
	}
	mock.Add(ttl / 3) // the renewal interval: the clock is now ~20 s ahead of the server's
	skewed := next()
	require.Equal(t, lease.ClockSkewed, skewed.Kind, "event %+v", skewed)
	require.ErrorIs(t, skewed.Err, lease.ErrClockSkew)
	var se *lease.SkewError
	require.ErrorAs(t, skewed.Err, &se)
	assert.Equal(t, skewed.Offset, se.Offset)
	assert.True(t, se.Offset.Beyond(lease.DefaultMaxSkew))
	assert.Less(t, se.Offset.Offset, -ttl/3+time.Second, "the clock is ahead by the interval, less the real time since Acquire")
	t.Log(se)

	renewed := next()
	require.Equal(t, lease.Renewed, renewed.Kind, "event %+v", renewed)
	assert.Equal(t, skewed.Offset, renewed.Offset)
	assert.Equal(t, skewed.Offset, l.ClockOffset())
	assert.True(t, l.Held(), "a drifting holder keeps its lease")
	_, err = gen.Next()
	require.NoError(t, err, "and its generator keeps issuing")

	s := rec.Stats()
	assert.Equal(t, uint64(1), s.ClockSkewed)
	assert.Equal(t, uint64(1), s.Renewed)
	assert.True(t, s.Skewed)
	assert.Equal(t, skewed.Offset, s.Offset)
}
