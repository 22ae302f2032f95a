package ringflake_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
)

// gatedLease is a lease whose Held blocks, once armed, until the test
// opens the gate: it holds a call in flight right after the fast path
// checked the horizon, where a Close used to slip in.
type gatedLease struct {
	node    int64
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	gate    chan struct{}
}

func (l *gatedLease) Node() int64 { return l.node }

func (l *gatedLease) Held() bool {
	l.mu.Lock()
	armed := l.armed
	l.armed = false
	l.mu.Unlock()
	if armed {
		close(l.entered)
		<-l.gate
	}
	return true
}

func (l *gatedLease) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed, l.entered, l.gate = true, make(chan struct{}), make(chan struct{})
}

// A graceful shutdown closes the generator while calls are in flight.
// Close seals the ring, so the call it overtook cannot issue an ID above
// the exact mark Close saves — and the next run on the same store cannot
// issue that ID again. (Before, the call issued at the next tick, above the
// saved mark, and the restarted generator repeated it.)
func TestCloseDuringNext(t *testing.T) {
	clk := simclock.New(start)
	store := &recordingStore{}
	lease := &gatedLease{node: 9}
	first, err := ringflake.New(9, ringflake.WithClock(clk), ringflake.WithLease(lease), ringflake.WithMarkStore(store))
	require.NoError(t, err)
	issued := map[ringflake.ID]bool{}
	for range 5 {
		id, err := first.Next()
		require.NoError(t, err)
		issued[id] = true
	}

	clk.Add(time.Millisecond) // the call in flight reads the next tick
	lease.arm()
	type result struct {
		id  ringflake.ID
		err error
	}
	inFlight := make(chan result)
	go func() {
		id, err := first.Next()
		inFlight <- result{id, err}
	}()
	<-lease.entered // past the horizon check, about to take from the ring
	require.NoError(t, first.Close(context.Background()))
	close(lease.gate)
	r := <-inFlight
	if r.err == nil {
		issued[r.id] = true
	} else {
		require.ErrorIs(t, r.err, ringflake.ErrClosed)
	}

	second, err := ringflake.New(9, ringflake.WithClock(clk), ringflake.WithLease(&gatedLease{node: 9}), ringflake.WithMarkStore(store))
	require.NoError(t, err)
	for range 5 {
		id, err := second.Next()
		require.NoError(t, err)
		assert.False(t, issued[id], "ID %d issued by both runs", id)
		issued[id] = true
	}
}
