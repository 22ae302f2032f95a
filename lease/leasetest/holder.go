package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// holder is a lease on a mock clock, with its events.
type holder struct {
	Lease
	clk    *clock.Mock
	events chan lease.Event
}

// acquire takes a lease with the suite's TTL on a new mock clock; opts may
// set Prefix, Layout, Holder, MaxLead and Timeout.
func acquire(t *testing.T, c Conn, opts lease.Options) (*holder, error) {
	t.Helper()
	return hold(t, opts, func(opts lease.Options) (Lease, error) { return c.Acquire(context.Background(), opts) })
}

// hold takes a lease with take, with the suite's TTL on a new mock clock
// and its events on a channel, and closes it when the test ends. The mock
// clock reads [Start], days away from a server's clock: the skew check
// (Options.MaxSkew) is off, and each module tests it on its own.
func hold(t *testing.T, opts lease.Options, take func(lease.Options) (Lease, error)) (*holder, error) {
	t.Helper()
	h := &holder{clk: clock.NewMock(), events: make(chan lease.Event, 64)}
	h.clk.Set(Start)
	opts.TTL, opts.Clock, opts.MaxSkew = ttl, h.clk, -1
	opts.OnEvent = func(e lease.Event) { h.events <- e }
	l, err := take(opts)
	if err != nil {
		return nil, err
	}
	h.Lease = l
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return h, nil
}

// claim takes node with a lease like acquire's.
func claim(t *testing.T, c Conn, node int64, opts lease.Options) (*holder, error) {
	t.Helper()
	return hold(t, opts, func(opts lease.Options) (Lease, error) { return c.Claim(context.Background(), node, opts) })
}

func mustClaim(t *testing.T, c Conn, node int64, opts lease.Options) *holder {
	t.Helper()
	h, err := claim(t, c, node, opts)
	require.NoError(t, err)
	return h
}

func mustAcquire(t *testing.T, c Conn, opts lease.Options) *holder {
	t.Helper()
	h, err := acquire(t, c, opts)
	require.NoError(t, err)
	return h
}

// settled returns a new prefix that c's server knows as the prefix of a
// fleet running for some time ([Conn.Settle]): leases under it hold their
// ids at once.
func settled(t *testing.T, c Conn) string {
	t.Helper()
	p := Prefix(t)
	c.Settle(t, p)
	return p
}

// withPrefix returns Options with only Prefix set.
func withPrefix(prefix string) lease.Options { return lease.Options{Prefix: prefix} }

// next waits for the lease's next event. A renewal is a request to a real
// server, so the event follows in real time: the wait is bounded, and
// generous for a loaded machine; it returns as soon as the event arrives.
func (h *holder) next(t *testing.T) lease.Event {
	t.Helper()
	select {
	case e := <-h.events:
		return e
	case <-time.After(30 * time.Second):
		t.Fatalf("node %d: no lease event within 30s", h.Node())
		return lease.Event{}
	}
}

// advance moves the lease's clock by d and returns the event that follows.
func (h *holder) advance(t *testing.T, d time.Duration, want lease.EventKind) lease.Event {
	t.Helper()
	h.clk.Add(d)
	e := h.next(t)
	require.Equal(t, want, e.Kind, "event %+v", e)
	return e
}

// newGenerator starts a generator on lease h, on a simulated clock.
func newGenerator(t *testing.T, h *holder, clk *simclock.Clock, s strategies.Strategy) *ringflake.Generator {
	t.Helper()
	g, err := ringflake.New(h.Node(), ringflake.WithLease(h.Lease), ringflake.WithClock(clk), ringflake.WithStrategy(s))
	require.NoError(t, err)
	return g
}

// leadLayout returns a layout of 100 ms ticks with four IDs each, so that
// a generator on a logical strategy runs its lead out in a few dozen IDs.
func leadLayout(t *testing.T) ringflake.Layout {
	t.Helper()
	l, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: Start.Add(-time.Hour), Unit: 100 * time.Millisecond,
		TimeBits: 36, WorkerBits: 10, SequenceBits: 2, Width: 48})
	require.NoError(t, err)
	return l
}

// markAt returns the exact mark of an ID at t.
func markAt(t time.Time) ringflake.Mark { return ringflake.Mark{Limit: t, Since: t} }

// requireDone fails the test unless h's lease has ended: Done is closed.
func requireDone(t *testing.T, h *holder) {
	t.Helper()
	select {
	case <-h.Done():
	default:
		t.Fatalf("node %d: Done is not closed", h.Node())
	}
}
