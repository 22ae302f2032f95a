package ringflake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// stuckClock is a simulated clock whose waits never end by themselves:
// After tells the test that a call waits and returns a channel that never
// fires, so that only the generator can end the wait (Close, a step the
// generator sees). Its wall and monotonic readings are simclock's.
type stuckClock struct {
	*simclock.Clock
	waiting chan time.Duration
}

func (c stuckClock) After(d time.Duration) <-chan time.Time {
	c.waiting <- d
	return make(chan time.Time)
}

// newStuck returns a generator of 16 IDs a tick, under "error", on a
// stuckClock, with its first tick used up: the next call waits.
func newStuck(t *testing.T) (*ringflake.Generator, stuckClock) {
	t.Helper()
	clk := stuckClock{Clock: simclock.New(start), waiting: make(chan time.Duration, 8)}
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(testLayout(t, "twitter,node=18,seq=4")),
		ringflake.WithStrategy(strategies.Error()))
	require.NoError(t, err)
	for range 16 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	return g, clk
}

// Close ends every waiting call, on any clock: it used to end only the
// short waits of the system clock's queue, and a call waiting on a
// clock's After waited on after Close.
func TestCloseEndsEveryWait(t *testing.T) {
	g, clk := newStuck(t)
	errs := make(chan error, 1)
	go func() {
		_, err := g.Next()
		errs <- err
	}()
	d := <-clk.waiting
	assert.Positive(t, d)
	require.NoError(t, g.Close(context.Background()))
	require.ErrorIs(t, <-errs, ringflake.ErrClosed)
}

// A step back during a wait goes back to the strategy at once: another
// call that sees the step wakes the waiting call, which under "error"
// fails with ErrClockRollback instead of waiting on.
func TestStepEndsAWait(t *testing.T) {
	g, clk := newStuck(t)
	errs := make(chan error, 1)
	go func() {
		_, err := g.Next()
		errs <- err
	}()
	<-clk.waiting
	clk.Step(-300 * time.Millisecond)
	clk.Add(time.Millisecond) // a tick of monotonic time: the next call re-syncs and sees the step
	_, err := g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback)
	require.ErrorIs(t, <-errs, ringflake.ErrClockRollback, "the waiting call decided again")
	assert.Equal(t, uint64(1), g.Stats().Rollbacks)
	require.NoError(t, g.Close(context.Background()))
}
