package leasekeep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/internal/leasekeep"
)

var start = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const (
	ttl    = time.Minute
	every  = ttl / 3
	margin = ttl/100 + 2*time.Millisecond
)

// kept is a Keeper on a mock clock whose renewals answer what the test
// queues, at once.
type kept struct {
	*leasekeep.Keeper
	clk     *clock.Mock
	answers chan leasekeep.EventKind
	events  chan leasekeep.Event
}

var errTaken = errors.New("taken")

func keep(t *testing.T) *kept {
	t.Helper()
	k := &kept{clk: clock.NewMock(), answers: make(chan leasekeep.EventKind, 8), events: make(chan leasekeep.Event, 8)}
	k.clk.Set(start)
	c, err := leasekeep.Config{TTL: ttl, Clock: k.clk}.Resolve(rules)
	require.NoError(t, err)
	renew := func(ctx context.Context, at time.Time) leasekeep.Renewal {
		select {
		case kind := <-k.answers:
			r := leasekeep.Renewal{Kind: kind, Sent: at, TTL: ttl}
			if kind == leasekeep.Lost {
				r.Err = errTaken
			}
			return r
		case <-ctx.Done(): // a request in flight, cancelled by Stop
			return leasekeep.Renewal{Kind: leasekeep.RenewFailed, Err: ctx.Err()}
		}
	}
	k.Keeper = leasekeep.Start(c, 7, start.Add(ttl-margin), renew, func(e leasekeep.Event) { k.events <- e })
	t.Cleanup(func() { k.Stop(errors.New("test over")) })
	return k
}

// advance queues the next renewal's answer (unless none), moves the clock
// by d and returns the event that follows. The renewal loop runs on a
// goroutine of its own: the wait for its event is bounded, and returns as
// soon as the event arrives.
func (k *kept) advance(t *testing.T, answer leasekeep.EventKind, d time.Duration, want leasekeep.EventKind) leasekeep.Event {
	t.Helper()
	if answer != 0 {
		k.answers <- answer
	}
	k.clk.Add(d)
	select {
	case e := <-k.events:
		require.Equal(t, want, e.Kind, "event %+v", e)
		assert.Equal(t, int64(7), e.Node)
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("no %v event within 10s", want)
		return leasekeep.Event{}
	}
}

func TestKeeperRenews(t *testing.T) {
	k := keep(t)
	require.True(t, k.Held())
	for i := 1; i <= 3; i++ {
		e := k.advance(t, leasekeep.Renewed, every, leasekeep.Renewed)
		assert.Equal(t, start.Add(time.Duration(i)*every+ttl-margin), e.ValidUntil, "from the instant the renewal was sent")
		assert.True(t, k.Held())
	}
	assert.NoError(t, k.Err())
}

// TestKeeperOutage: failed renewals keep Held until the lease may have
// expired; a renewal that then succeeds (the id was ours all along, or
// nobody took it) holds again.
func TestKeeperOutage(t *testing.T) {
	for _, kind := range []leasekeep.EventKind{leasekeep.Renewed, leasekeep.Retaken} {
		t.Run(kind.String(), func(t *testing.T) {
			k := keep(t)
			for range 2 {
				k.advance(t, leasekeep.RenewFailed, every, leasekeep.RenewFailed)
				assert.True(t, k.Held(), "the lease may still be valid on the server")
			}
			e := k.advance(t, 0, every-margin, leasekeep.Expired)
			assert.Equal(t, start.Add(ttl-margin), e.ValidUntil)
			assert.False(t, k.Held())
			assert.NoError(t, k.Err(), "not lost for good")

			e = k.advance(t, kind, margin, kind)
			assert.Equal(t, start.Add(ttl+ttl-margin), e.ValidUntil)
			assert.True(t, k.Held())
		})
	}
}

func TestKeeperLost(t *testing.T) {
	k := keep(t)
	e := k.advance(t, leasekeep.Lost, every, leasekeep.Lost)
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
	k := keep(t)
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

func TestEventKindString(t *testing.T) {
	for kind, want := range map[leasekeep.EventKind]string{
		leasekeep.Renewed: "renewed", leasekeep.RenewFailed: "renew failed", leasekeep.Expired: "expired",
		leasekeep.Retaken: "retaken", leasekeep.Lost: "lost", 0: "EventKind(0)",
	} {
		assert.Equal(t, want, kind.String())
	}
}
