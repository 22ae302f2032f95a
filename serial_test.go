package ringflake

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake/simclock"
)

var serialStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// Once calls collide, the fast path runs under the mutex; a tick in which
// no call had to wait for it ends serial mode, and a step back of the
// clock does not keep it on. This is a unit test of the mode's state
// machine, so it sets the state a collision and a wait for the mutex
// leave (neither can be made to happen deterministically from outside).
func TestSerialModeEndsAfterACalmTick(t *testing.T) {
	clk := simclock.New(serialStart)
	g, err := New(1, WithClock(clk))
	require.NoError(t, err)
	next := func() ID {
		t.Helper()
		id, err := g.Next()
		require.NoError(t, err)
		return id
	}
	first := next()

	// A call that had to wait for the mutex at this tick.
	g.ring.contended.Store(true)
	g.serial.mu.Lock()
	g.serial.collided = true
	g.serial.mu.Unlock()
	assert.Greater(t, next(), first)
	assert.True(t, g.ring.contended.Load(), "serial for the rest of this tick")

	clk.Add(time.Millisecond)
	next()
	assert.True(t, g.ring.contended.Load(), "and the next")

	clk.Add(time.Millisecond)
	next()
	assert.False(t, g.ring.contended.Load(), "a tick without waiting ends it")

	// A collision just before the clock steps back 10 s: serial mode ends
	// a tick after the step, not 10 s later.
	g.ring.contended.Store(true)
	g.serial.mu.Lock()
	g.serial.collided = true
	g.serial.mu.Unlock()
	next()
	clk.Step(-10 * time.Second)
	clk.Add(time.Millisecond) // the generator sees the step at the next tick
	next()                    // the ring reuses spare room; the step starts the count again
	assert.True(t, g.ring.contended.Load())
	clk.Add(2 * time.Millisecond)
	next()
	assert.False(t, g.ring.contended.Load())
}

// Goroutines that collide switch the generator to serial mode and back,
// and every ID stays unique and, per goroutine, increasing.
func TestCollidingCallsStayUnique(t *testing.T) {
	wide, err := ParseLayout("twitter,node=0,seq=22")
	require.NoError(t, err)
	g, err := New(0, WithLayout(wide))
	require.NoError(t, err)
	const goroutines, each = 8, 20000
	ids := make([][]ID, goroutines)
	var eg errgroup.Group
	var ready sync.WaitGroup
	ready.Add(goroutines)
	for i := range goroutines {
		eg.Go(func() error {
			ready.Done()
			ready.Wait() // all at once, so that they collide
			out := make([]ID, 0, each)
			for range each {
				id, err := g.Next()
				if err != nil {
					return err
				}
				out = append(out, id)
			}
			ids[i] = out
			return nil
		})
	}
	require.NoError(t, eg.Wait())
	seen := make(map[ID]bool, goroutines*each)
	for _, list := range ids {
		for j, id := range list {
			require.False(t, seen[id], "duplicate %v", id)
			seen[id] = true
			if j > 0 {
				require.Greater(t, id, list[j-1])
			}
		}
	}
}

// A call that waits for the next tick ends serial mode, and collisions in
// the tick after a used-up one do not start it again: while the layout's
// cap bounds the rate, serialising only costs CPU.
func TestSerialModeStaysOffAtTheCap(t *testing.T) {
	clk := simclock.New(serialStart)
	l, err := ParseLayout("twitter,seq=2,width=53") // 4 IDs per tick
	require.NoError(t, err)
	g, err := New(1, WithClock(clk), WithLayout(l))
	require.NoError(t, err)
	tick := l.Tick(serialStart)
	g.ring.collide(tick)
	require.True(t, g.ring.contended.Load(), "a collision starts serial mode")

	for range 5 { // the fifth call waits for the next tick
		_, err := g.Next()
		require.NoError(t, err)
	}
	assert.False(t, g.ring.contended.Load(), "waiting for the next tick ends it")
	g.ring.collide(tick + 1)
	assert.False(t, g.ring.contended.Load(), "the tick after a used-up one does not start it")
	g.ring.collide(tick + 2)
	assert.True(t, g.ring.contended.Load(), "a tick later, a collision does")
}

// panicLease is a lease whose Held panics once when armed, as a buggy
// lease backend might.
type panicLease struct{ armed atomic.Bool }

func (l *panicLease) Node() int64 { return 1 }
func (l *panicLease) Held() bool {
	if l.armed.Swap(false) {
		panic("lease backend bug")
	}
	return true
}

// A panic in the lease (or the clock) under the mutex of serial mode,
// recovered by the caller, leaves the mutex unlocked.
func TestPanicInSerialModeReleasesTheMutex(t *testing.T) {
	clk := simclock.New(serialStart)
	lease := &panicLease{}
	g, err := New(1, WithClock(clk), WithLease(lease))
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)

	g.ring.collide(g.layout.Tick(serialStart)) // as a failed swap would
	lease.armed.Store(true)
	require.Panics(t, func() { _, _ = g.Next() })
	require.True(t, g.serial.mu.TryLock(), "the mutex was released")
	g.serial.mu.Unlock()
	_, err = g.Next()
	require.NoError(t, err)
}
