package ringflake

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A precise wait sleeps in one piece when nothing can cancel it, and in
// slices of cancelSlice otherwise, ending after the slice in which its
// context was cancelled.
func TestSleepSlices(t *testing.T) {
	var slept []time.Duration
	record := func(d time.Duration) { slept = append(slept, d) }

	require.NoError(t, sleepSlices(context.Background(), 3500*time.Microsecond, record))
	assert.Equal(t, []time.Duration{3500 * time.Microsecond}, slept, "context.Background: one sleep")

	slept = nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, sleepSlices(ctx, 3500*time.Microsecond, record))
	assert.Equal(t, []time.Duration{cancelSlice, cancelSlice, cancelSlice, 500 * time.Microsecond}, slept)

	slept = nil
	err := sleepSlices(ctx, 5*time.Millisecond, func(d time.Duration) {
		record(d)
		if len(slept) == 2 {
			cancel() // cancelled while the second slice sleeps
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []time.Duration{cancelSlice, cancelSlice}, slept)
}
