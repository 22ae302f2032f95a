package ringflake

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSleeper records the sleeps of sleepSlices on a fake clock whose
// every sleep overruns by 50 µs, as a kernel's timer slack makes it.
type fakeSleeper struct {
	slept   []time.Duration
	elapsed time.Duration
	after   func(n int) // called after the n-th sleep
}

func (f *fakeSleeper) sleep(d time.Duration) {
	f.slept = append(f.slept, d)
	f.elapsed += d + 50*time.Microsecond
	if f.after != nil {
		f.after(len(f.slept))
	}
}

func (f *fakeSleeper) since() time.Duration { return f.elapsed }

// A precise wait sleeps in one piece when nothing can cancel it, and
// otherwise in slices of cancelSlice, each what is left of the wait (so
// that overruns do not add up), ending after the slice in which its
// context was cancelled — unless the wait was over by then.
func TestSleepSlices(t *testing.T) {
	f := &fakeSleeper{}
	require.NoError(t, sleepSlices(context.Background(), 3500*time.Microsecond, f.sleep, f.since))
	assert.Equal(t, []time.Duration{3500 * time.Microsecond}, f.slept, "context.Background: one sleep")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f = &fakeSleeper{}
	require.NoError(t, sleepSlices(ctx, 3500*time.Microsecond, f.sleep, f.since))
	assert.Equal(t, []time.Duration{cancelSlice, cancelSlice, cancelSlice, 350 * time.Microsecond}, f.slept,
		"the last slice is what is left after three overruns of 50 µs")

	f = &fakeSleeper{after: func(n int) {
		if n == 2 {
			cancel() // cancelled while the second slice sleeps
		}
	}}
	err := sleepSlices(ctx, 5*time.Millisecond, f.sleep, f.since)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []time.Duration{cancelSlice, cancelSlice}, f.slept)

	ctx, cancel = context.WithCancel(context.Background())
	f = &fakeSleeper{after: func(int) { cancel() }}
	require.NoError(t, sleepSlices(ctx, 500*time.Microsecond, f.sleep, f.since), "cancelled as the wait ended: the wait counts")
}
