package segment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/simclock"
)

// A stepper runs an allocator whose background loads stop at every step:
// a load that takes a range waits until the test answers it, and a load
// waiting to retry waits until the test wakes it. Each step reports
// itself as an event, so the test always knows where the load is, and an
// allocator driven from one goroutine behaves deterministically.
type stepper struct {
	t       testing.TB
	a       *Allocator
	clk     *simclock.Clock
	events  chan loadEvent
	answers chan loadAnswer
	wakes   chan struct{}
	takes   int
}

type eventKind int

const (
	atTake   eventKind = iota // the load waits in take for an answer
	atSleep                   // the load waits to retry
	finished                  // the load returned
)

type loadEvent struct {
	kind  eventKind
	step  int64         // atTake: the step asked for
	sleep time.Duration // atSleep: the backoff
}

type loadAnswer struct {
	r   rng
	err error
}

// stepperStart is the mock clock's start.
var stepperStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// newStepper returns a stepper whose allocator starts with the range
// first, as New's first take leaves it.
func newStepper(t testing.TB, cfg config, first rng) *stepper {
	t.Helper()
	clk := simclock.New(stepperStart)
	cfg.clock = clk
	h := &stepper{t: t, clk: clk, events: make(chan loadEvent, 4), answers: make(chan loadAnswer), wakes: make(chan struct{})}
	spawn := func(f func()) {
		go func() {
			f()
			h.events <- loadEvent{kind: finished}
		}()
	}
	sleep := func(ctx context.Context, d time.Duration) bool {
		h.events <- loadEvent{kind: atSleep, sleep: d}
		select {
		case <-h.wakes:
			return true
		case <-ctx.Done():
			return false
		}
	}
	h.a = newAllocator("test", h, cfg, first, spawn, sleep)
	t.Cleanup(func() { _ = h.a.Close() })
	return h
}

// take is the allocator's source: it reports the step and waits for the
// test's answer.
func (h *stepper) take(ctx context.Context, step int64) (rng, error) {
	h.events <- loadEvent{kind: atTake, step: step}
	select {
	case ans := <-h.answers:
		return ans.r, ans.err
	case <-ctx.Done():
		return rng{}, ctx.Err()
	}
}

// roundTrips counts the takes that were answered.
func (h *stepper) roundTrips() uint64 { return uint64(h.takes) }

// await returns the next event of the load, which must be of kind k.
func (h *stepper) await(k eventKind) loadEvent {
	h.t.Helper()
	select {
	case e := <-h.events:
		require.Equal(h.t, k, e.kind, "load event %+v", e)
		return e
	case <-time.After(10 * time.Second): // a hang guard, never a timing
		h.t.Fatalf("no load event %d within 10s", k)
		return loadEvent{}
	}
}

// answer answers the load waiting in take and waits for what the load
// does next: return after a success, go to sleep after a failure.
func (h *stepper) answer(r rng, err error) loadEvent {
	h.t.Helper()
	if err != nil {
		return h.answerThen(r, err, atSleep)
	}
	return h.answerThen(r, nil, finished)
}

// answerThen answers the load waiting in take and waits for its next
// event, which must be of kind k.
func (h *stepper) answerThen(r rng, err error, k eventKind) loadEvent {
	h.t.Helper()
	h.takes++
	send(h, h.answers, loadAnswer{r, err})
	return h.await(k)
}

// wake ends the backoff of a sleeping load and returns its next take.
func (h *stepper) wake() loadEvent {
	h.t.Helper()
	send(h, h.wakes, struct{}{})
	return h.await(atTake)
}

// send sends v to the load, which must be waiting for it.
func send[T any](h *stepper, ch chan<- T, v T) {
	h.t.Helper()
	select {
	case ch <- v:
	case <-time.After(10 * time.Second): // a hang guard, never a timing
		h.t.Fatalf("the load did not take %T within 10s", v)
	}
}

// canceled is a context that has ended: calls given it never wait.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
