package leasetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

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
