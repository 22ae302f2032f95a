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

// A generator that restarted inside its previous run's reservation (after
// a crash), saved a mark of its own and issued nothing, then closed
// cleanly, keeps the reservation a reservation: its Close saved Since =
// Limit, "IDs may have been issued up to the mark", and the next start on
// the same clock failed with ErrClockRollback ("400ms behind").
func TestCloseKeepsAReservationAReservation(t *testing.T) {
	clk := simclock.New(start)
	store := &recordingStore{}
	open := func() *ringflake.Generator {
		t.Helper()
		g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Error()), ringflake.WithMarkStore(store))
		require.NoError(t, err)
		return g
	}

	first := open()
	_, err := first.Next()
	require.NoError(t, err)
	require.NoError(t, first.SyncMark(context.Background())) // then it crashes: the mark reserves 1 s ahead
	reserved := store.mark
	require.Equal(t, start.Add(time.Second), reserved.Limit)

	clk.Add(600 * time.Millisecond) // inside the reservation
	second := open()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = second.NextContext(cancelled) // it saves its next mark, then its wait for the reservation ends at once
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, second.SyncMark(context.Background()))
	assert.Zero(t, second.Stats().Issued)
	require.NoError(t, second.Close(context.Background()))
	closed := store.mark
	assert.Equal(t, reserved.Limit, closed.Limit, "what the crashed run may have issued")
	assert.True(t, closed.Since.Before(closed.Limit), "still a reservation: since %v, limit %v", closed.Since, closed.Limit)

	third := open()
	id, err := third.Next()
	require.NoError(t, err, "a reservation is waited out, not a rollback")
	assert.True(t, id.Time(third.Layout()).After(reserved.Limit))
	assert.Zero(t, third.Stats().Rollbacks)
	require.NoError(t, third.Close(context.Background()))
}
