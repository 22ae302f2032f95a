package leasetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

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
// and its events on a channel, and closes it when the test ends.
func hold(t *testing.T, opts lease.Options, take func(lease.Options) (Lease, error)) (*holder, error) {
	t.Helper()
	h := &holder{clk: clock.NewMock(), events: make(chan lease.Event, 64)}
	h.clk.Set(Start)
	opts.TTL, opts.Clock = ttl, h.clk
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

func testConcurrentAcquirers(t *testing.T, d Driver) {
	for _, tc := range []struct {
		name      string
		nodeBits  int
		acquirers int
	}{
		{"64 acquirers, 1024 ids", 10, 64},
		{"64 acquirers, 16 ids", 4, 64},
		{"32 acquirers, 32 ids", 5, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := withPrefix(settled(t, d.Connect(t)))
			opts.Layout = SmallLayout(t, tc.nodeBits)
			leases := make([]*holder, tc.acquirers)
			errs := make([]error, tc.acquirers)
			var g errgroup.Group
			for i := range tc.acquirers {
				c := d.Connect(t) // a client (connection) each, like separate processes
				g.Go(func() error {
					leases[i], errs[i] = acquire(t, c, opts)
					return nil
				})
			}
			require.NoError(t, g.Wait())

			var ids []int64
			for i, l := range leases {
				if errs[i] != nil {
					require.ErrorIs(t, errs[i], ringflake.ErrNodeUnavailable)
					continue
				}
				require.True(t, l.Held())
				ids = append(ids, l.Node())
			}
			slices.Sort(ids)
			n := min(tc.acquirers, 1<<tc.nodeBits)
			want := make([]int64, n)
			for i := range want {
				want[i] = int64(i)
			}
			assert.Equal(t, want, ids, "distinct ids, the lowest ones, one per acquirer while ids last")
		})
	}
}

func testExhaustedRange(t *testing.T, d Driver) {
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.Layout = SmallLayout(t, 2)
	for want := range int64(4) {
		assert.Equal(t, want, mustAcquire(t, c, opts).Node())
	}
	_, err := acquire(t, c, opts)
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	var full *lease.RangeFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, int64(4), full.Nodes)
	assert.Equal(t, opts.Prefix, full.Prefix)

	// The same prefix with a wider layout has room.
	wider := opts
	wider.Layout = SmallLayout(t, 3)
	assert.Equal(t, int64(4), mustAcquire(t, c, wider).Node())
}

// testExpiredIDIsHandedOutAgain: ids are reused after their lease
// expires, never burned.
func testExpiredIDIsHandedOutAgain(t *testing.T, d Driver) {
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	a := mustAcquire(t, c, opts)
	require.Equal(t, int64(1), mustAcquire(t, c, opts).Node())
	c.Expire(t, opts.Prefix, a.Node())
	assert.Equal(t, int64(0), mustAcquire(t, c, opts).Node(), "the expired id, not a new one")
	assert.Equal(t, int64(2), mustAcquire(t, c, opts).Node())
}

func testCloseReleasesTheID(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	a := mustAcquire(t, c, opts)
	b := mustAcquire(t, c, opts)
	require.Equal(t, []int64{0, 1}, []int64{a.Node(), b.Node()})

	g := newGenerator(t, a, simclock.New(Start), strategies.Default())
	_, err := g.Next()
	require.NoError(t, err)
	require.NoError(t, g.Close(ctx))
	require.NoError(t, a.Close(ctx))
	assert.False(t, a.Held())
	assert.ErrorIs(t, a.Err(), lease.ErrClosed)
	requireDone(t, a)
	require.NoError(t, a.Close(ctx), "closing twice")
	exists, _ := c.Key(t, opts.Prefix, 0)
	assert.False(t, exists, "the lease key is deleted at once, not left to expire")

	// A new generator on the closed lease refuses to issue. (New itself
	// need not save a mark: the exact mark Close saved covers the clock.)
	g, err = ringflake.New(0, ringflake.WithLease(a.Lease), ringflake.WithClock(simclock.New(Start)))
	if err == nil {
		_, err = g.Next()
	}
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)

	assert.Equal(t, int64(0), mustAcquire(t, c, opts).Node(), "the lowest free id is handed out again")
	assert.Equal(t, int64(2), mustAcquire(t, c, opts).Node())
}

func testListShowsHolders(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.Layout = SmallLayout(t, 11) // more than 1024 ids: a List in chunks needs two
	list, err := c.List(ctx, opts)
	require.NoError(t, err)
	assert.Empty(t, list)

	var hs []*holder
	for _, name := range []string{"ids-0", "ids-1", "ids-2"} {
		o := opts
		o.Holder = name
		hs = append(hs, mustAcquire(t, c, o))
	}
	g := newGenerator(t, hs[1], simclock.New(Start), strategies.Default())
	require.NoError(t, hs[2].Close(ctx))
	// A key written by someone else: listed, without a holder.
	expires := c.Put(t, opts.Prefix, 2000, "someone")

	list, err = c.List(ctx, opts)
	require.NoError(t, err)
	require.Len(t, list, 3)
	for i, want := range []struct {
		node    int64
		holder  string
		expires bool
	}{{0, "ids-0", true}, {1, "ids-1", true}, {2000, "", expires}} {
		assert.Equal(t, want.node, list[i].Node)
		assert.Equal(t, want.holder, list[i].Holder)
		if want.expires {
			assert.Positive(t, list[i].TTL)
			assert.LessOrEqual(t, list[i].TTL, ttl)
		}
	}
	assert.True(t, list[0].Mark.IsZero(), "no generator saved a mark for node 0")
	assert.True(t, Start.Add(ttl/2).Equal(list[1].Mark), "the generator's first mark, written ahead by the lease's lead: %v", list[1].Mark)
	require.NoError(t, g.Close(ctx))
}

func testRenewalsKeepTheLease(t *testing.T, d Driver) {
	c := d.Connect(t)
	h := mustAcquire(t, c, withPrefix(settled(t, c)))
	g := newGenerator(t, h, simclock.New(Start), strategies.Default())
	for i := 1; i <= 5; i++ {
		e := h.advance(t, every, lease.Renewed)
		sent := Start.Add(time.Duration(i) * every)
		assert.Equal(t, sent.Add(ttl-margin), e.ValidUntil, "valid from the instant the renewal was sent, less the margin")
		assert.True(t, h.Held())
		_, err := g.Next()
		require.NoError(t, err)
	}
}

// testServerOutage stops the lease's server: the generator keeps issuing
// while the lease can still be valid, stops with ErrLeaseLost once it can
// not, and recovers when the server is back — unless the server lost its
// data, which makes the lease lost for good. A module that notices the
// restart ([Driver.DetectsRestart]) keeps an id it had to take again
// unused for a quiet period: the restart may have lost someone else's
// claim to it.
func testServerOutage(t *testing.T, d Driver) {
	for _, tc := range []struct {
		name string
		// restart brings the server back; it may change it first.
		restart func(t *testing.T, s Server, c Conn, prefix string)
		want    lease.EventKind
	}{
		{"the lease survived the outage", func(t *testing.T, s Server, c Conn, _ string) {
			s.Start(t)
			c.WaitConnected(t)
		}, lease.Renewed},
		{"the lease expired during the outage", func(t *testing.T, s Server, c Conn, prefix string) {
			s.Start(t)
			c.WaitConnected(t)
			c.Expire(t, prefix, 0)
		}, lease.Retaken},
		{"the server lost its data", func(t *testing.T, s Server, c Conn, _ string) {
			s.StartEmpty(t)
			c.WaitConnected(t)
		}, lease.Lost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := d.StartServer(t)
			c := s.Connect(t, false)
			opts := withPrefix(settled(t, c))
			// Requests to a stopped server may wait for their context
			// (the etcd client does): keep that short in real time.
			opts.Timeout = 500 * time.Millisecond
			h := mustAcquire(t, c, opts)
			g := newGenerator(t, h, simclock.New(Start), strategies.Default())
			_, err := g.Next()
			require.NoError(t, err)

			s.Stop(t)
			for range 2 {
				e := h.advance(t, every, lease.RenewFailed)
				require.Error(t, e.Err)
				assert.True(t, h.Held(), "the lease may still be valid on the server")
				_, err = g.Next()
				require.NoError(t, err)
			}
			e := h.advance(t, every-margin, lease.Expired)
			assert.Equal(t, Start.Add(ttl-margin), e.ValidUntil)
			assert.False(t, h.Held())
			_, err = g.Next()
			require.ErrorIs(t, err, ringflake.ErrLeaseLost)
			assert.NoError(t, h.Err(), "not lost for good: renewals go on")

			tc.restart(t, s, c, opts.Prefix)
			e = h.advance(t, margin, tc.want)
			_, err = g.Next()
			if tc.want == lease.Lost {
				assert.False(t, h.Held())
				require.ErrorIs(t, err, ringflake.ErrLeaseLost)
				require.ErrorIs(t, h.Err(), ringflake.ErrLeaseLost)
				require.ErrorIs(t, e.Err, ringflake.ErrLeaseLost)
				require.ErrorIs(t, e.Err, lease.ErrDataLost, "the epoch is gone")
				return
			}
			assert.Equal(t, Start.Add(ttl+ttl-margin), e.ValidUntil)
			assert.NoError(t, h.Err())
			if tc.want == lease.Retaken && d.DetectsRestart() {
				// The quiet period, TTL + Margin + MaxLead, started when the
				// renewal found the restart, at Start + TTL.
				assert.False(t, h.Held(), "taken again after a restart: quiet period")
				require.ErrorIs(t, err, ringflake.ErrLeaseLost)
				for range 3 {
					h.advance(t, every, lease.Renewed)
					assert.False(t, h.Held(), "quiet period")
				}
				h.clk.Set(Start.Add(ttl + ttl + margin + lease.DefaultMaxLead))
			}
			assert.True(t, h.Held())
			_, err = g.Next()
			require.NoError(t, err)
		})
	}
}

// testServerLostItsData: A holds node 0 and issues as far ahead of its
// clock as the fleet's MaxLead allows (a logical strategy, every tick's
// sequence used up); the server loses its data; B then gets node 0 — the
// server has no record of A — and loads no mark. A does not learn of the
// loss before its lease runs out: its one renewal comes just before
// (RenewEvery = TTL − Margin − 1ms), as it would with renewals lost in a
// partition. Until then A believes it holds node 0 and issues up to
// MaxLead ahead of its clock. So B waits out a quiet period of TTL +
// Margin + MaxLead: A has stopped by then, and B's clock has passed every
// ID A issued ahead. Both generators issue as much as they can every
// second, on clocks that agree, and no ID is issued twice; with a quiet
// period of TTL + Margin alone, B's first IDs would repeat A's last ones.
func testServerLostItsData(t *testing.T, d Driver) {
	const lead = 5 * time.Second
	s := d.StartServer(t)
	c := s.Connect(t, false)
	l := leadLayout(t)
	opts := withPrefix(settled(t, c))
	opts.Layout, opts.MaxLead = l, lead
	aOpts := opts
	aOpts.RenewEvery = ttl - margin - time.Millisecond
	a := mustAcquire(t, c, aOpts)
	aClock := simclock.New(Start)
	// A's mark, far ahead, never limits it: the server forgets it anyway.
	ga, err := ringflake.New(a.Node(), ringflake.WithLease(a.Lease), ringflake.WithClock(aClock), ringflake.WithLayout(l),
		ringflake.WithStrategy(strategies.Logical(lead)), ringflake.WithMarkAhead(10*time.Minute))
	require.NoError(t, err)
	seen := map[ringflake.ID]string{}
	// burst issues until g has used up the last tick its lead allows.
	burst := func(g *ringflake.Generator, clk *simclock.Clock, who string) (n int, err error) {
		last := clk.Now().Add(lead)
		for n < 1000 {
			var id ringflake.ID
			if id, err = g.Next(); err != nil {
				return n, err
			}
			if prev, dup := seen[id]; dup {
				t.Fatalf("%s issued %v (at %v), an ID %s issued before", who, id, id.Time(l), prev)
			}
			seen[id] = who
			n++
			if id.Time(l).Equal(last) && id.Sequence(l) == l.MaxSequence() {
				return n, nil
			}
		}
		t.Fatalf("%s issued 1000 IDs without reaching its lead", who)
		return n, nil
	}
	_, err = burst(ga, aClock, "A")
	require.NoError(t, err)

	s.Stop(t)
	s.StartEmpty(t)
	c.WaitConnected(t)
	b := mustAcquire(t, c, opts)
	require.Equal(t, int64(0), b.Node(), "the server forgot A's node 0")
	bClock := simclock.New(Start)
	gb, err := ringflake.New(b.Node(), ringflake.WithLease(b.Lease), ringflake.WithClock(bClock), ringflake.WithLayout(l),
		ringflake.WithStrategy(strategies.Logical(lead)))
	require.NoError(t, err)
	assert.False(t, b.Held(), "quiet period")
	assert.True(t, a.Held(), "A does not know yet")

	var aIssued, bIssued int
	var aLost, bWaited bool
	var aLast time.Time        // A's newest ID
	for i := 1; i <= 70; i++ { // 70 s: past the quiet period, in steps of 1 s
		a.clk.Add(time.Second)
		b.clk.Add(time.Second)
		aClock.Add(time.Second)
		bClock.Add(time.Second)
		if i == 60 { // A's renewal, 1ms before its lease runs out
			e := a.next(t)
			if e.Kind == lease.Expired {
				e = a.next(t)
			}
			require.Equal(t, lease.Lost, e.Kind, "A's renewal finds the epoch gone: %+v", e)
			require.ErrorIs(t, e.Err, lease.ErrDataLost)
		}
		if i%20 == 0 {
			e := b.next(t)
			require.Equal(t, lease.Renewed, e.Kind, "B's renewal: %+v", e)
		}
		n, err := burst(ga, aClock, "A")
		aIssued += n
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrLeaseLost)
			aLost = true
		} else {
			require.False(t, aLost, "A issues again after its lease ran out")
			aLast = aClock.Now().Add(lead)
		}
		n, err = burst(gb, bClock, "B")
		bIssued += n
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrLeaseLost, "B waits out the quiet period")
			require.Zero(t, bIssued, "B stops again after it started")
			bWaited = true
		}
	}
	assert.True(t, aLost, "A stops once its lease runs out")
	assert.True(t, bWaited, "B waited out the quiet period")
	assert.True(t, aLast.After(Start.Add(ttl+margin)), "A issued IDs past TTL + Margin (%v): a quiet period without the lead would not do", aLast)
	assert.Positive(t, aIssued, "A issued until its lease ran out")
	assert.Positive(t, bIssued, "B issues after the quiet period")
	assert.True(t, b.Held())
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

// testFirstStart: under a prefix the server has no epoch for — a new one,
// or one whose data it lost — leases take ids at once but do not hold them
// until a quiet period of TTL + Margin + MaxLead has passed; WaitHeld
// waits for it, and generators fail with ErrLeaseLost until then.
func testFirstStart(t *testing.T, d Driver) {
	for _, maxLead := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprintf("MaxLead %v", maxLead), func(t *testing.T) { firstStart(t, d, maxLead) })
	}
}

func firstStart(t *testing.T, d Driver, maxLead time.Duration) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(Prefix(t)) // not settled
	opts.MaxLead = maxLead
	quiet := ttl + margin + cmp.Or(maxLead, lease.DefaultMaxLead)
	a := mustAcquire(t, c, opts)
	b := mustAcquire(t, c, opts)
	require.Equal(t, []int64{0, 1}, []int64{a.Node(), b.Node()})
	assert.False(t, a.Held(), "quiet period")
	assert.False(t, b.Held(), "quiet period, also for the second acquirer")
	g := newGenerator(t, a, simclock.New(Start), strategies.Default())
	_, err := g.Next()
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)

	waited := make(chan error, 1)
	go func() { waited <- a.WaitHeld(ctx) }()
	for range 3 {
		a.advance(t, every, lease.Renewed)
		assert.False(t, a.Held(), "quiet period, though renewed")
	}
	// (B's period ends a little earlier on its mock clock: the real time
	// between the two acquisitions counts.)
	a.clk.Set(Start.Add(quiet - time.Millisecond))
	assert.False(t, a.Held(), "the quiet period lasts TTL + Margin + MaxLead")
	select {
	case err := <-waited:
		t.Fatalf("WaitHeld returned during the quiet period: %v", err)
	default:
	}
	// The period ends TTL + Margin + MaxLead after the server started it
	// (etcd: rounded up to whole seconds, plus one for TimeToLive's
	// rounding).
	a.clk.Set(Start.Add(quiet + time.Second))
	assert.True(t, a.Held())
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("WaitHeld did not return within 30s after the quiet period")
	}
	_, err = g.Next()
	require.NoError(t, err)

	require.NoError(t, g.Close(ctx))
	require.NoError(t, a.Close(ctx))
	require.ErrorIs(t, a.WaitHeld(ctx), lease.ErrClosed, "a closed lease never holds its id again")
}

// testRequestsEndAtTheTimeout pauses the server, so that requests hang
// unanswered, and uses a patient client — one that would wait a minute
// for an answer and, with go-redis, ignores context deadlines: every
// request of a lease still ends at Options.Timeout, and a renewal that
// hangs does not hold up the next one.
func testRequestsEndAtTheTimeout(t *testing.T, d Driver) {
	ctx := context.Background()
	s := d.StartServer(t)
	c := s.Connect(t, true)
	opts := withPrefix(settled(t, c))
	opts.Timeout = 200 * time.Millisecond
	h := mustAcquire(t, c, opts)

	s.Pause(t)
	// A bound far above Timeout, for a loaded machine, and far below the
	// minute the client alone would wait.
	const bound = 20 * time.Second
	returns := func(what string, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(bound):
			t.Fatalf("%s did not return within %v with Timeout %v", what, bound, opts.Timeout)
			return nil
		}
	}
	err := returns("SaveMark", func() error { return h.SaveMark(ctx, markAt(Start.Add(time.Hour))) })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	err = returns("LoadMark", func() error { _, err := h.LoadMark(ctx); return err })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	err = returns("Acquire", func() error { _, err := acquire(t, c, opts); return err })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	for range 2 {
		h.clk.Add(every)
		e := h.next(t)
		require.Equal(t, lease.RenewFailed, e.Kind, "event %+v", e)
		require.ErrorIs(t, e.Err, context.DeadlineExceeded)
	}
	s.Resume(t)
}

// testMarkAhead: a lease suggests TTL/2 as the lead of the marks kept
// with it, and a generator uses it unless told otherwise.
func testMarkAhead(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	prefix := settled(t, c)
	h := mustAcquire(t, c, withPrefix(prefix))
	assert.Equal(t, ttl/2, h.MarkAhead())
	g := newGenerator(t, h, simclock.New(Start), strategies.Default())
	mark, err := h.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, Start.Add(ttl/2).Equal(mark.Limit), "the first mark, TTL/2 ahead: %v", mark)
	require.NoError(t, g.Close(ctx))

	g, err = ringflake.New(0, ringflake.WithLease(h.Lease), ringflake.WithClock(simclock.New(Start.Add(time.Hour))),
		ringflake.WithMarkAhead(time.Second))
	require.NoError(t, err)
	mark, err = h.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, Start.Add(time.Hour+time.Second).Equal(mark.Limit), "WithMarkAhead wins: %v", mark)
	require.NoError(t, g.Close(ctx))
}

// testUnansweredRenewal pauses the server, so that a renewal request hangs
// unanswered (a partition that drops packets): the lease still stops
// holding once it may have expired, without waiting for the request, and
// holds again when the late answer shows the key was ours all along.
func testUnansweredRenewal(t *testing.T, d Driver) {
	s := d.StartServer(t)
	c := s.Connect(t, true)
	opts := withPrefix(settled(t, c))
	opts.Timeout = time.Minute
	h := mustAcquire(t, c, opts)
	g := newGenerator(t, h, simclock.New(Start), strategies.Default())

	s.Pause(t)
	h.clk.Add(every) // the renewal is sent and hangs
	e := h.advance(t, 2*every-margin, lease.Expired)
	assert.Equal(t, Start.Add(ttl-margin), e.ValidUntil)
	_, err := g.Next()
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)

	s.Resume(t)
	e = h.next(t)
	require.Equal(t, lease.Renewed, e.Kind, "the hung renewal is answered: %+v", e)
	assert.Equal(t, Start.Add(every+ttl-margin), e.ValidUntil, "valid from when it was sent")
	assert.True(t, h.Held())
	_, err = g.Next()
	require.NoError(t, err)
}

// testStolenLease takes the id away from a holder in every way it can go;
// the holder finds out at its next renewal.
func testStolenLease(t *testing.T, d Driver) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		steal func(t *testing.T, c Conn, prefix string)
		want  lease.EventKind
	}{
		{"key deleted, then taken by another holder", func(t *testing.T, c Conn, prefix string) {
			c.Delete(t, prefix, 0)
			require.Equal(t, int64(0), mustAcquire(t, c, withPrefix(prefix)).Node())
		}, lease.Lost},
		{"lease expired, then taken by another holder", func(t *testing.T, c Conn, prefix string) {
			c.Expire(t, prefix, 0)
			require.Equal(t, int64(0), mustAcquire(t, c, withPrefix(prefix)).Node())
		}, lease.Lost},
		{"lease expired, taken and released by another holder", func(t *testing.T, c Conn, prefix string) {
			c.Expire(t, prefix, 0)
			other := mustAcquire(t, c, withPrefix(prefix))
			require.NoError(t, other.Close(ctx))
		}, lease.Lost},
		{"key overwritten by someone else", func(t *testing.T, c Conn, prefix string) {
			c.Put(t, prefix, 0, "intruder")
		}, lease.Lost},
		{"key deleted, nobody took the id", func(t *testing.T, c Conn, prefix string) {
			c.Delete(t, prefix, 0)
		}, lease.Retaken},
		{"lease expired, nobody took the id", func(t *testing.T, c Conn, prefix string) {
			c.Expire(t, prefix, 0)
		}, lease.Retaken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := d.Connect(t)
			prefix := settled(t, c)
			h := mustAcquire(t, c, withPrefix(prefix))
			g := newGenerator(t, h, simclock.New(Start), strategies.Default())
			_, err := g.Next()
			require.NoError(t, err)

			tc.steal(t, c, prefix)
			e := h.advance(t, every, tc.want)
			_, err = g.Next()
			if tc.want == lease.Retaken {
				require.NoError(t, err)
				assert.True(t, h.Held())
				exists, expires := c.Key(t, prefix, 0)
				require.True(t, exists, "the key is set again")
				assert.True(t, expires, "the key is set again, expiring with the lease")
				require.NoError(t, g.Close(ctx))
				return
			}
			require.ErrorIs(t, err, ringflake.ErrLeaseLost)
			require.ErrorIs(t, e.Err, ringflake.ErrLeaseLost)
			require.ErrorIs(t, h.Err(), ringflake.ErrLeaseLost)
			assert.False(t, h.Held())
			requireDone(t, h)
			// Lost for good: no more renewals, so no more events.
			h.clk.Add(every)
			select {
			case e := <-h.events:
				t.Fatalf("event after the loss: %+v", e)
			default:
			}
			require.ErrorIs(t, g.Close(ctx), ringflake.ErrLeaseLost, "the exact mark cannot be saved either")
		})
	}
}

// testMarkCarriedToTheNextHolder hands an id from holder A to holder B
// whose clock reads 5 s behind A's. B starts after every ID A issued:
// after A's mark written ahead (the lease's lead, TTL/2, past A's last ID)
// when A crashed, before that lead when A closed cleanly — or, with the
// default strategy, refuses.
func testMarkCarriedToTheNextHolder(t *testing.T, d Driver) {
	ctx := context.Background()
	lead := ttl / 2
	for _, tc := range []struct {
		name     string
		clean    bool // A closes its generator and lease; else A crashes
		strategy strategies.Strategy
		refuses  bool
	}{
		{"crash, logical", false, strategies.Logical(time.Minute), false},
		{"crash, wait", false, strategies.Wait(time.Minute), false},
		{"crash, default refuses", false, strategies.Default(), true},
		{"clean close, logical", true, strategies.Logical(10 * time.Second), false},
		{"clean close, wait", true, strategies.Wait(10 * time.Second), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := d.Connect(t)
			opts := withPrefix(settled(t, c))
			opts.MaxLead = time.Minute // the fleet's strategies lead by up to a minute
			a := mustAcquire(t, c, opts)
			ga := newGenerator(t, a, simclock.New(Start), strategies.Default())
			var newestA ringflake.ID
			for range 100 {
				id, err := ga.Next()
				require.NoError(t, err)
				newestA = id
			}
			if tc.clean {
				require.NoError(t, ga.Close(ctx))
				require.NoError(t, a.Close(ctx))
			} else {
				c.Expire(t, opts.Prefix, 0) // A crashed: its lease ran out
			}

			b := mustAcquire(t, c, opts)
			require.Equal(t, int64(0), b.Node(), "the same id")
			gb := newGenerator(t, b, simclock.New(Start.Add(-5*time.Second)), tc.strategy)
			id, err := gb.Next()
			if tc.refuses {
				require.ErrorIs(t, err, ringflake.ErrClockRollback)
				return
			}
			require.NoError(t, err)
			l := gb.Layout()
			assert.Greater(t, id, newestA)
			aLast, bFirst := newestA.Time(l), id.Time(l)
			if tc.clean {
				assert.True(t, bFirst.Before(aLast.Add(lead)), "B starts at %v, within the lead after A's last ID %v", bFirst, aLast)
			} else {
				assert.True(t, bFirst.After(aLast.Add(lead)), "B starts at %v, after A's mark %v", bFirst, aLast.Add(lead))
			}
		})
	}
}

// testPausedHolderCannotCollide plays a holder paused past its TTL: its
// lease timer has not fired, so it still believes it holds the id while a
// new holder issues under it. The marks are fenced by the lease token:
// the paused holder issues nothing past its last saved mark, and the new
// holder starts after that mark, so no ID is issued twice.
func testPausedHolderCannotCollide(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.MaxLead = time.Minute // B's strategy leads by up to a minute
	a := mustAcquire(t, c, opts)
	aClock := simclock.New(Start)
	ga := newGenerator(t, a, aClock, strategies.Default())
	seen := map[ringflake.ID]string{}
	issue := func(g *ringflake.Generator, who string) error {
		id, err := g.Next()
		if err == nil {
			if prev, dup := seen[id]; dup {
				t.Fatalf("%s issued %v, an ID %s issued before", who, id, prev)
			}
			seen[id] = who
		}
		return err
	}
	require.NoError(t, issue(ga, "A"))

	c.Expire(t, opts.Prefix, 0) // A is paused; its lease runs out
	b := mustAcquire(t, c, opts)
	require.Equal(t, int64(0), b.Node())
	// B starts after A's mark, TTL/2 ahead of its clock: it borrows ahead.
	gb := newGenerator(t, b, simclock.New(Start), strategies.Logical(time.Minute))

	// A resumes with Held still true and goes on, side by side with B.
	require.True(t, a.Held())
	var errA error
	for range 4000 { // 40 s of A's clock, well past its saved mark (TTL/2 ahead)
		aClock.Add(10 * time.Millisecond)
		if errA == nil {
			errA = issue(ga, "A")
		}
		require.NoError(t, issue(gb, "B"))
	}
	require.ErrorIs(t, errA, ringflake.ErrLeaseLost, "A cannot save a mark past the one B started after")
	_, err := a.LoadMark(ctx)
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)
	require.ErrorIs(t, a.SaveMark(ctx, markAt(Start.Add(time.Hour))), ringflake.ErrLeaseLost)
}

func testCorruptMark(t *testing.T, d Driver) {
	c := d.Connect(t)
	prefix := settled(t, c)
	h := mustAcquire(t, c, withPrefix(prefix))
	where := c.CorruptMark(t, prefix, 0)
	_, err := ringflake.New(0, ringflake.WithLease(h.Lease), ringflake.WithClock(simclock.New(Start)))
	require.ErrorIs(t, err, ringflake.ErrMarkCorrupt)
	var me *ringflake.MarkError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, me.Path, where)
}

func testMarkRoundTrip(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	h := mustAcquire(t, c, withPrefix(settled(t, c)))
	mark, err := h.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "a first start")
	at := time.Date(2026, 11, 22, 12, 0, 1, 123456789, time.UTC)
	want := ringflake.Mark{Limit: at, Since: at.Add(-time.Second), Node: h.Node(), Layout: "twitter"}
	require.NoError(t, h.SaveMark(ctx, want))
	mark, err = h.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, mark)
}

// markAt returns the exact mark of an ID at t.
func markAt(t time.Time) ringflake.Mark { return ringflake.Mark{Limit: t, Since: t} }

func testInvalidOptions(t *testing.T, d Driver) {
	c := d.Unreachable(t) // never reached: the options are checked first
	unit := d.TTLUnit()
	for _, tc := range []struct {
		name string
		opts lease.Options
	}{
		{"negative TTL", lease.Options{TTL: -time.Second}},
		{"TTL below the unit", lease.Options{TTL: unit / 2}},
		{"TTL not a whole number of units", lease.Options{TTL: unit * 3 / 2}},
		{"renewal not shorter than TTL", lease.Options{TTL: time.Second, RenewEvery: time.Second}},
		{"renewal plus margin not shorter than TTL", lease.Options{TTL: time.Second, RenewEvery: 900 * time.Millisecond, Margin: 100 * time.Millisecond}},
		{"negative margin", lease.Options{Margin: -1}},
		{"negative timeout", lease.Options{Timeout: -1}},
		{"negative max lead", lease.Options{MaxLead: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Acquire(context.Background(), tc.opts)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			_, err = c.Claim(context.Background(), 0, tc.opts)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			_, err = c.List(context.Background(), tc.opts)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
		})
	}
}

func testAcquireServerDown(t *testing.T, d Driver) {
	c := d.Unreachable(t)
	// A client may wait for an unreachable server until its context ends
	// (the etcd client does).
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := c.Acquire(ctx, lease.Options{})
	require.Error(t, err)
	assert.False(t, errors.Is(err, ringflake.ErrNodeUnavailable), "an unreachable server is not an exhausted range")
}

// requireDone fails the test unless h's lease has ended: Done is closed.
func requireDone(t *testing.T, h *holder) {
	t.Helper()
	select {
	case <-h.Done():
	default:
		t.Fatalf("node %d: Done is not closed", h.Node())
	}
}

// testClaim: Claim holds the id it is given, with the same keys as
// Acquire: a second claim of a held id fails, naming the holder; Acquire
// skips claimed ids; an id out of the layout's range is refused.
func testClaim(t *testing.T, d Driver) {
	ctx := context.Background()
	c := d.Connect(t)
	opts := withPrefix(settled(t, c))
	opts.Layout = SmallLayout(t, 3) // ids 0 to 7
	named := func(holder string) lease.Options {
		o := opts
		o.Holder = holder
		return o
	}
	a := mustClaim(t, c, 2, named("host-a/101"))
	assert.Equal(t, int64(2), a.Node())
	assert.True(t, a.Held(), "a settled prefix: held at once")
	require.NoError(t, a.WaitHeld(ctx))
	require.Equal(t, int64(0), mustAcquire(t, c, named("host-acquirer/7")).Node())

	for _, tc := range []struct {
		name string
		node int64
		want string // the holder the error names
	}{{"a claimed id", 2, "host-a/101"}, {"an acquired id", 0, "host-acquirer/7"}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := claim(t, c, tc.node, named("host-b/202"))
			require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
			var held *lease.HeldError
			require.ErrorAs(t, err, &held)
			assert.Equal(t, tc.node, held.Node)
			assert.Equal(t, tc.want, held.Holder, "the error names the holder")
			assert.Equal(t, opts.Prefix, held.Prefix)
		})
	}
	assert.Equal(t, int64(1), mustAcquire(t, c, opts).Node())
	assert.Equal(t, int64(3), mustAcquire(t, c, opts).Node(), "Acquire skips the claimed id")

	c.Put(t, opts.Prefix, 5, "someone")
	_, err := claim(t, c, 5, opts)
	var held *lease.HeldError
	require.ErrorAs(t, err, &held, "a key written by someone else")
	assert.Empty(t, held.Holder, "its holder is not known")

	for _, node := range []int64{8, -1} {
		_, err := claim(t, c, node, opts)
		require.ErrorIs(t, err, ringflake.ErrNodeOutOfRange, "node %d of ids 0 to 7", node)
	}

	// A claim under a prefix the server has no epoch for waits out the
	// quiet period, as an acquisition does.
	fresh := withPrefix(Prefix(t))
	f := mustClaim(t, c, 4, fresh)
	assert.False(t, f.Held(), "quiet period")
	for range 3 {
		f.advance(t, every, lease.Renewed)
		assert.False(t, f.Held(), "quiet period, though renewed")
	}
	f.clk.Set(Start.Add(ttl + margin + lease.DefaultMaxLead + time.Second))
	assert.True(t, f.Held())
}

// testClaimCarriesTheMark: a claim keeps the generator's mark, as an
// acquired lease does: after a clean close and after a crash, the next
// claim of the id starts after every ID the previous holder issued, even
// with a clock five seconds behind.
func testClaimCarriesTheMark(t *testing.T, d Driver) {
	ctx := context.Background()
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean %v", clean), func(t *testing.T) {
			c := d.Connect(t)
			opts := withPrefix(settled(t, c))
			opts.MaxLead = time.Minute
			a := mustClaim(t, c, 9, opts)
			ga := newGenerator(t, a, simclock.New(Start), strategies.Default())
			var newest ringflake.ID
			for range 50 {
				id, err := ga.Next()
				require.NoError(t, err)
				newest = id
			}
			if clean {
				require.NoError(t, ga.Close(ctx))
				require.NoError(t, a.Close(ctx))
			} else {
				c.Expire(t, opts.Prefix, 9)
			}
			b := mustClaim(t, c, 9, opts)
			gb := newGenerator(t, b, simclock.New(Start.Add(-5*time.Second)), strategies.Logical(time.Minute))
			id, err := gb.Next()
			require.NoError(t, err)
			assert.Greater(t, id, newest, "the next holder starts after the previous one's IDs")
			assert.Equal(t, int64(9), id.Node(gb.Layout()))
		})
	}
}

// testClaimLost: a holder whose claim is taken from it stops issuing at
// its next renewal, and the new holder starts after its mark.
func testClaimLost(t *testing.T, d Driver) {
	for _, tc := range []struct {
		name  string
		steal func(t *testing.T, c Conn, opts lease.Options) *holder
	}{
		{"expired and claimed by another process", func(t *testing.T, c Conn, opts lease.Options) *holder {
			c.Expire(t, opts.Prefix, 6)
			return mustClaim(t, c, 6, opts)
		}},
		{"overwritten", func(t *testing.T, c Conn, opts lease.Options) *holder {
			c.Put(t, opts.Prefix, 6, "intruder")
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := d.Connect(t)
			opts := withPrefix(settled(t, c))
			a := mustClaim(t, c, 6, opts)
			aClock := simclock.New(Start)
			ga := newGenerator(t, a, aClock, strategies.Default())
			first, err := ga.Next()
			require.NoError(t, err)

			b := tc.steal(t, c, opts)
			e := a.advance(t, every, lease.Lost)
			require.ErrorIs(t, e.Err, ringflake.ErrLeaseLost)
			assert.False(t, a.Held())
			aClock.Add(every)
			_, err = ga.Next()
			require.ErrorIs(t, err, ringflake.ErrLeaseLost, "the generator stops issuing")
			require.ErrorIs(t, a.Err(), ringflake.ErrLeaseLost)
			requireDone(t, a)
			if b == nil {
				return
			}
			// B holds the id now, and issues after A's IDs.
			gb := newGenerator(t, b, simclock.New(Start.Add(ttl)), strategies.Default())
			id, err := gb.Next()
			require.NoError(t, err)
			assert.Greater(t, id, first)
		})
	}
}
