package clockhealth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/simclock"
)

// scripted is a Source that hands out, one per Read, the readings a test
// feeds it. Each Read first announces itself on entered, so that a test
// knows the reading before it has been stored, then waits for a feed.
type scripted struct {
	entered chan struct{}
	next    chan result
}

type result struct {
	r   clockhealth.Reading
	err error
}

func newScripted() *scripted {
	return &scripted{entered: make(chan struct{}), next: make(chan result)}
}

func (s *scripted) Read(ctx context.Context) (clockhealth.Reading, error) {
	select {
	case s.entered <- struct{}{}:
	case <-ctx.Done():
		return clockhealth.Reading{Source: "scripted"}, ctx.Err()
	}
	select {
	case res := <-s.next:
		return res.r, res.err
	case <-ctx.Done():
		return clockhealth.Reading{Source: "scripted"}, ctx.Err()
	}
}

// step feeds r to the monitor's current read and waits until the monitor
// is in its next read, so that r has been stored and notified.
func (s *scripted) step(r clockhealth.Reading, err error) {
	s.next <- result{r, err}
	<-s.entered
}

func TestMonitorKeepsTheLastReadingAndNotifiesChangesOnly(t *testing.T) {
	src := newScripted()
	clk := simclock.New(t0)
	var mu sync.Mutex
	var changes []string
	var logs bytes.Buffer
	m, err := clockhealth.NewMonitor(src, clockhealth.WithClock(clk), clockhealth.WithInterval(time.Second),
		clockhealth.WithOnChange(func(prev, cur clockhealth.Reading) {
			mu.Lock()
			defer mu.Unlock()
			changes = append(changes, prev.Status.String()+"->"+cur.Status.String())
		}),
		clockhealth.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	q := clockhealth.Requirement{Synchronised: true, MaxError: 10 * time.Millisecond}
	_, ok := m.Last()
	assert.False(t, ok)
	require.ErrorIs(t, m.Ready(q), clockhealth.ErrNoReading)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	unsynced := synced(16 * time.Second)
	unsynced.Status = clockhealth.StatusUnsynchronised
	steps := []struct {
		r     clockhealth.Reading
		err   error
		ready error
	}{
		{r: unsynced, ready: clockhealth.ErrClockNotSynchronised},
		{r: unsynced, ready: clockhealth.ErrClockNotSynchronised},
		{r: synced(time.Millisecond), ready: nil},
		{r: synced(2 * time.Millisecond), ready: nil},
		{r: synced(time.Second), ready: clockhealth.ErrClockErrorTooLarge},
		{r: clockhealth.Reading{Source: "test"}, err: errors.New("chronyd went away"), ready: clockhealth.ErrClockNotSynchronised},
		{r: synced(time.Millisecond), ready: nil},
	}
	<-src.entered
	for i, s := range steps {
		src.step(s.r, s.err)
		last, ok := m.Last()
		require.True(t, ok)
		if s.err != nil {
			assert.Equal(t, clockhealth.StatusUnknown, last.Status)
			assert.Equal(t, "chronyd went away", last.Detail)
		} else {
			assert.Equal(t, s.r, last)
		}
		if s.ready == nil {
			require.NoError(t, m.Ready(q), "step %d", i)
		} else {
			require.ErrorIs(t, m.Ready(q), s.ready, "step %d", i)
		}
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"unknown->unsynchronised", "unsynchronised->synchronised",
		"synchronised->unknown", "unknown->synchronised"}, changes)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	assert.Len(t, lines, 4, logs.String())
	assert.Contains(t, lines[0], "level=WARN")
	assert.Contains(t, lines[1], "level=INFO")
	// Time passed only on the simulated clock: one interval per read.
	assert.Equal(t, time.Duration(len(steps))*time.Second, clk.Monotonic())
}

func TestMonitorPollReadsOnce(t *testing.T) {
	n := 0
	src := clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		n++
		return synced(time.Millisecond), nil
	})
	m, err := clockhealth.NewMonitor(src)
	require.NoError(t, err)
	r, err := m.Poll(context.Background())
	require.NoError(t, err)
	assert.Equal(t, synced(time.Millisecond), r)
	assert.Equal(t, 1, n)
	require.NoError(t, m.Ready(clockhealth.Requirement{Synchronised: true}))
}

func TestNewMonitorRejectsBadOptions(t *testing.T) {
	src := clockhealth.Kernel{}
	for name, opts := range map[string][]clockhealth.MonitorOption{
		"zero interval":     {clockhealth.WithInterval(0)},
		"negative interval": {clockhealth.WithInterval(-time.Second)},
		"nil clock":         {clockhealth.WithClock(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := clockhealth.NewMonitor(src, opts...)
			require.ErrorIs(t, err, clockhealth.ErrInvalidOption)
		})
	}
	_, err := clockhealth.NewMonitor(nil)
	require.ErrorIs(t, err, clockhealth.ErrInvalidOption)
}
