package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease"
)

var start = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const (
	ttl    = time.Minute
	every  = ttl / 3
	margin = ttl/100 + 2*time.Millisecond
)

// answer is what the next renewal of a kept lease returns.
type answer struct {
	kind      lease.EventKind
	notBefore time.Time
}

// kept is a Keeper on a mock clock whose renewals answer what the test
// queues, at once.
type kept struct {
	*lease.Keeper
	Stop    func(reason error) bool
	clk     *clock.Mock
	answers chan answer
	events  chan lease.Event
}

var errTaken = errors.New("taken")

// keep starts a keeper of node 7, valid from validFrom (zero: now) until
// start + ttl − margin. Its events go to a channel with room for buffer
// of them: with none, the keeper's goroutine blocks on its first event
// until the test reads it.
func keep(t *testing.T, validFrom time.Time, buffer int) *kept {
	t.Helper()
	k := &kept{clk: clock.NewMock(), answers: make(chan answer, 8), events: make(chan lease.Event, buffer)}
	k.clk.Set(start)
	c, err := lease.Options{TTL: ttl, Clock: k.clk, OnEvent: func(e lease.Event) { k.events <- e }}.Resolve(rules)
	require.NoError(t, err)
	renew := func(ctx context.Context, at time.Time) lease.Renewal {
		select {
		case a := <-k.answers:
			r := lease.Renewal{Kind: a.kind, Sent: at, TTL: ttl, NotBefore: a.notBefore}
			if a.kind == lease.Lost {
				r.Err = errTaken
			}
			return r
		case <-ctx.Done(): // a request in flight, cancelled by Stop
			return lease.Renewal{Kind: lease.RenewFailed, Err: ctx.Err()}
		}
	}
	k.Keeper, k.Stop = lease.Keep(c, 7, validFrom, start.Add(ttl-margin), renew)
	t.Cleanup(func() {
		go func() { // unblock a keeper stuck on an event nobody reads
			for range k.events {
			}
		}()
		k.Stop(errors.New("test over"))
	})
	return k
}

// next waits for the keeper's next event. The renewal loop runs on a
// goroutine of its own: the wait is bounded, and returns as soon as the
// event arrives.
func (k *kept) next(t *testing.T, want lease.EventKind) lease.Event {
	t.Helper()
	select {
	case e := <-k.events:
		require.Equal(t, want, e.Kind, "event %+v", e)
		assert.Equal(t, int64(7), e.Node)
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("no %v event within 10s", want)
		return lease.Event{}
	}
}

// advance queues the next renewal's answer (unless none), moves the clock
// by d and returns the event that follows.
func (k *kept) advance(t *testing.T, a lease.EventKind, d time.Duration, want lease.EventKind) lease.Event {
	t.Helper()
	if a != 0 {
		k.answers <- answer{kind: a}
	}
	k.clk.Add(d)
	return k.next(t, want)
}

func TestKeeperRenews(t *testing.T) {
	k := keep(t, time.Time{}, 8)
	require.True(t, k.Held())
	for i := 1; i <= 3; i++ {
		e := k.advance(t, lease.Renewed, every, lease.Renewed)
		assert.Equal(t, start.Add(time.Duration(i)*every+ttl-margin), e.ValidUntil, "from the instant the renewal was sent")
		assert.True(t, k.Held())
	}
	assert.NoError(t, k.Err())
}

// TestKeeperOutage: failed renewals keep Held until the lease may have
// expired; a renewal that then succeeds (the id was ours all along, or
// nobody took it) holds again.
func TestKeeperOutage(t *testing.T) {
	for _, kind := range []lease.EventKind{lease.Renewed, lease.Retaken} {
		t.Run(kind.String(), func(t *testing.T) {
			k := keep(t, time.Time{}, 8)
			for range 2 {
				k.advance(t, lease.RenewFailed, every, lease.RenewFailed)
				assert.True(t, k.Held(), "the lease may still be valid on the server")
			}
			e := k.advance(t, 0, every-margin, lease.Expired)
			assert.Equal(t, start.Add(ttl-margin), e.ValidUntil)
			assert.False(t, k.Held())
			assert.NoError(t, k.Err(), "not lost for good")

			e = k.advance(t, kind, margin, kind)
			assert.Equal(t, start.Add(ttl+ttl-margin), e.ValidUntil)
			assert.True(t, k.Held())
		})
	}
}

// TestKeeperHeldWithoutItsGoroutine: Held compares the end of the lease
// with the clock itself. Here the keeper's goroutine is stuck — it hands
// an event to a reader that does not read, as a goroutine that a GC pause
// or a loaded machine keeps from running would be — and its expiry timer
// cannot fire; Held still turns false exactly when the lease may have
// expired.
func TestKeeperHeldWithoutItsGoroutine(t *testing.T) {
	k := keep(t, time.Time{}, 0)
	k.answers <- answer{kind: lease.RenewFailed}
	k.clk.Add(every) // the renewal fails; the goroutine blocks handing over its event
	k.clk.Add(2*every - margin - time.Nanosecond)
	assert.True(t, k.Held(), "one nanosecond before start + TTL − Margin")
	k.clk.Add(time.Nanosecond)
	assert.False(t, k.Held(), "at start + TTL − Margin, with the goroutine still stuck")
	k.next(t, lease.RenewFailed)
	k.next(t, lease.Expired)
	assert.False(t, k.Held())
}

// TestKeeperQuietPeriod: a lease that must wait out a quiet period does
// not hold its id before the period ends, even though its renewals
// succeed, and holds it from then on — without help from its goroutine.
func TestKeeperQuietPeriod(t *testing.T) {
	quietEnd := start.Add(ttl + margin)
	k := keep(t, quietEnd, 8)
	assert.False(t, k.Held(), "in the quiet period")
	for range 3 {
		k.advance(t, lease.Renewed, every, lease.Renewed)
		assert.False(t, k.Held(), "in the quiet period, though renewed")
	}
	k.clk.Set(quietEnd.Add(-time.Nanosecond))
	assert.False(t, k.Held())
	k.clk.Set(quietEnd)
	assert.True(t, k.Held(), "the quiet period is over, and the lease renewed")
}

// TestKeeperRetakenAfterQuiet: an id taken again while the server holds a
// quiet period (it restarted and may have lost data) is not held before
// the period ends.
func TestKeeperRetakenAfterQuiet(t *testing.T) {
	k := keep(t, time.Time{}, 8)
	quietEnd := start.Add(every + ttl + margin)
	k.answers <- answer{kind: lease.Retaken, notBefore: quietEnd}
	k.clk.Add(every)
	e := k.next(t, lease.Retaken)
	assert.Equal(t, start.Add(every+ttl-margin), e.ValidUntil)
	assert.False(t, k.Held(), "a retake during a quiet period waits for its end")
	k.advance(t, lease.Renewed, every, lease.Renewed)
	k.advance(t, lease.Renewed, every, lease.Renewed)
	k.advance(t, lease.Renewed, every, lease.Renewed)
	k.clk.Set(quietEnd)
	assert.True(t, k.Held())
}

// TestKeeperWait: WaitHeld returns once the lease holds its id (the quiet
// period is over), with the reason when the lease ends first, and with
// ctx's error when ctx ends first.
func TestKeeperWait(t *testing.T) {
	t.Run("quiet period ends", func(t *testing.T) {
		quietEnd := start.Add(every / 2)
		k := keep(t, quietEnd, 8)
		done := make(chan error, 1)
		go func() { done <- k.WaitHeld(context.Background()) }()
		k.clk.Set(quietEnd)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Wait did not return within 10s of the quiet period's end")
		}
		assert.True(t, k.Held())
	})
	t.Run("already held", func(t *testing.T) {
		require.NoError(t, keep(t, time.Time{}, 8).WaitHeld(context.Background()))
	})
	t.Run("lease ends", func(t *testing.T) {
		k := keep(t, start.Add(time.Hour), 8)
		closed := errors.New("closed")
		done := make(chan error, 1)
		go func() { done <- k.WaitHeld(context.Background()) }()
		k.Stop(closed)
		require.ErrorIs(t, <-done, closed)
	})
	t.Run("context ends", func(t *testing.T) {
		k := keep(t, start.Add(time.Hour), 8)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, k.WaitHeld(ctx), context.Canceled)
	})
}

func TestKeeperLost(t *testing.T) {
	k := keep(t, time.Time{}, 8)
	e := k.advance(t, lease.Lost, every, lease.Lost)
	require.ErrorIs(t, e.Err, errTaken)
	assert.False(t, k.Held())
	require.ErrorIs(t, k.Err(), errTaken)
	select {
	case <-k.Done():
	default:
		t.Fatal("Done is not closed")
	}
	k.clk.Add(every)
	select {
	case e := <-k.events:
		t.Fatalf("event after the loss: %+v", e)
	default:
	}
	assert.True(t, k.Stop(errors.New("closed")), "the first Stop")
	require.ErrorIs(t, k.Err(), errTaken, "what ended the lease first")
}

// TestKeeperStop stops a keeper while a renewal request hangs: Stop
// cancels it and returns, Held is false, and no event follows.
func TestKeeperStop(t *testing.T) {
	k := keep(t, time.Time{}, 8)
	k.clk.Add(every) // a renewal is sent, and waits for an answer
	closed := errors.New("closed")
	require.True(t, k.Stop(closed))
	assert.False(t, k.Held())
	require.ErrorIs(t, k.Err(), closed)
	select {
	case <-k.Done():
	default:
		t.Fatal("Done is not closed")
	}
	select {
	case e := <-k.events:
		t.Fatalf("event after Stop: %+v", e)
	default:
	}
	assert.False(t, k.Stop(errors.New("again")), "a second Stop does nothing")
	require.ErrorIs(t, k.Err(), closed)
}

// TestKeeperReportsItsLease: a lease module's Lease gets Node, MarkAhead
// and MaxLead from the keeper it embeds.
func TestKeeperReportsItsLease(t *testing.T) {
	k := keep(t, time.Time{}, 8)
	assert.Equal(t, int64(7), k.Node())
	assert.Equal(t, ttl/2, k.MarkAhead())
	assert.Equal(t, lease.DefaultMaxLead, k.MaxLead())
}

func TestEventKindString(t *testing.T) {
	for kind, want := range map[lease.EventKind]string{
		lease.Renewed: "renewed", lease.RenewFailed: "renew failed", lease.Expired: "expired",
		lease.Retaken: "retaken", lease.Lost: "lost", lease.ClockSkewed: "clock skewed", 0: "EventKind(0)",
	} {
		assert.Equal(t, want, kind.String())
	}
}

// BenchmarkHeld measures what a generator pays per ID for its lease, on
// the system clock.
func BenchmarkHeld(b *testing.B) {
	c, err := lease.Options{TTL: time.Hour}.Resolve(rules)
	require.NoError(b, err)
	never := func(ctx context.Context, _ time.Time) lease.Renewal {
		<-ctx.Done()
		return lease.Renewal{Kind: lease.RenewFailed, Err: ctx.Err()}
	}
	k, stop := lease.Keep(c, 1, time.Time{}, c.Clock.Now().Add(time.Hour), never)
	defer stop(errors.New("done"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !k.Held() {
				b.Fatal("not held")
			}
		}
	})
}
