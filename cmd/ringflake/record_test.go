package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/simclock"
)

// simHost is a host clock made of a simulated clock: its wall clock
// (with jitter, if any) and its monotonic clock; Sleep lets simulated time
// pass at once.
type simHost struct {
	clk    *simclock.Clock
	sleeps int
	cancel func() // called after stopAfter sleeps, if set
	stopAt int
}

func (h *simHost) Read() (time.Time, time.Duration) { return h.clk.Now(), h.clk.Monotonic() }

func (h *simHost) Sleep(ctx context.Context, d time.Duration) error {
	h.sleeps++
	if h.cancel != nil && h.sleeps == h.stopAt {
		h.cancel()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	h.clk.Add(d)
	return nil
}

var hostStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// skewedHost returns a host whose clock steps, slews and freezes.
func skewedHost(t *testing.T) *simHost {
	t.Helper()
	ms := time.Millisecond
	clk := simclock.New(hostStart)
	require.NoError(t, clk.Schedule(
		simclock.Event{At: 1500 * ms, Kind: simclock.Step, D: -3 * ms},
		simclock.Event{At: 2000 * ms, Kind: simclock.Drift, Rate: -0.005},
		simclock.Event{At: 4000 * ms, Kind: simclock.Drift, Rate: 0},
		simclock.Event{At: 5002 * ms, Kind: simclock.Freeze, D: 250 * ms},
	))
	return &simHost{clk: clk}
}

func TestRecord(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ntp-host.yaml")
	var stdout, stderr bytes.Buffer
	h := skewedHost(t)
	err := recordWith(context.Background(), h, []string{"-duration", "6s", "-out", out, "-rate", "5/ms"}, &stdout, &stderr, false)
	require.NoError(t, err)
	assert.Empty(t, stdout.String())
	assert.Equal(t, "recorded 601 samples over 6s: 1 steps, 1 freezes, 2 drift changes\n", stderr.String())
	assert.Equal(t, 600, h.sleeps, "every 10ms, on the clock it was given")

	s, err := scenario.ReadFile(out)
	require.NoError(t, err)
	ms := time.Millisecond
	assert.Equal(t, "ntp-host", s.Name)
	assert.Equal(t, hostStart, s.Start)
	assert.Equal(t, 6*time.Second, s.Duration)
	assert.Equal(t, scenario.Rate{Count: 5, Per: ms}, s.Load.Rate)
	assert.Equal(t, []scenario.Event{
		{At: 1500 * ms, Kind: scenario.Step, D: -3 * ms}, // the sample at 1.5s sees it
		{At: 2000 * ms, Kind: scenario.Drift, Rate: -0.005},
		{At: 4000 * ms, Kind: scenario.Drift, Rate: 0},
		{At: 5002 * ms, Kind: scenario.Freeze, D: 250 * ms},
	}, s.Events)
	assert.Contains(t, s.Comment, "Recorded by `ringflake record` on ")
	assert.Contains(t, s.Comment, "from 2026-11-22T12:00:00Z for 6s")

	// What was recorded replays, and shows what the step does.
	code, table, errOut := runCLI("replay", "-strategy", "error", "-strategy", "ring", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, table, "rollback=")
}

func TestRecordToStdout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.NoError(t, recordWith(context.Background(), skewedHost(t), []string{"-duration", "2s", "-out", "-", "-every", "20ms", "-name", "host-7"}, &stdout, &stderr, true))
	s, err := scenario.Parse("stdout", stdout.Bytes())
	require.NoError(t, err, stdout.String())
	assert.Equal(t, "host-7", s.Name)
	assert.Equal(t, []scenario.Event{{At: 1500 * time.Millisecond, Kind: scenario.Step, D: -3 * time.Millisecond}}, s.Events)
	assert.Contains(t, stderr.String(), "\rrecording: ", "progress when asked for")
	assert.Contains(t, stderr.String(), "recorded 101 samples")
}

// Interrupting a recording keeps what was recorded.
func TestRecordInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := skewedHost(t)
	h.cancel, h.stopAt = cancel, 201
	out := filepath.Join(t.TempDir(), "cut.yaml")
	var stdout, stderr bytes.Buffer
	require.NoError(t, recordWith(ctx, h, []string{"-duration", "1h", "-out", out}, &stdout, &stderr, false))
	assert.Equal(t, "recorded 201 samples over 2s (interrupted): 1 steps, 0 freezes, 0 drift changes\n", stderr.String())
	s, err := scenario.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, s.Duration)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = recordWith(ctx, skewedHost(t), []string{"-duration", "1s", "-out", out}, &stdout, &stderr, false)
	require.Error(t, err, "nothing to write before a second sample")
}

func TestRecordErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no duration", []string{"record", "-out", "x.yaml"}, "-duration"},
		{"no output", []string{"record", "-duration", "1s"}, "-out"},
		{"interval too long", []string{"record", "-duration", "1s", "-out", "x.yaml", "-every", "2s"}, "-every"},
		{"bad threshold", []string{"record", "-duration", "1s", "-out", "x.yaml", "-threshold", "0s"}, "-threshold"},
		{"window below the interval", []string{"record", "-duration", "1s", "-out", "x.yaml", "-window", "1ms"}, "-window"},
		{"bad rate", []string{"record", "-duration", "1s", "-out", "x.yaml", "-rate", "fast"}, `-rate "fast"`},
		{"stray argument", []string{"record", "-duration", "1s", "-out", "x.yaml", "now"}, "no arguments"},
		{"bad duration", []string{"record", "-duration", "soon", "-out", "x.yaml"}, "-duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
	code, _, errOut := runCLI("record", "-h")
	assert.Equal(t, 0, code)
	assert.True(t, strings.Contains(errOut, "-threshold") && strings.Contains(errOut, "monotonic"), errOut)
}

// The system clock reads both clocks at once; its monotonic reading never
// goes back. (No sleeping: Sleep with a done context returns at once.)
func TestSystemClock(t *testing.T) {
	c := systemClock{start: time.Now()}
	w1, m1 := c.Read()
	w2, m2 := c.Read()
	assert.GreaterOrEqual(t, m2, m1)
	assert.Equal(t, w1, w1.Round(0), "no monotonic reading in the wall time")
	assert.False(t, w2.IsZero())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, c.Sleep(ctx, time.Hour), context.Canceled)
}

// Without -rate a recording gets a placeholder load of 1/ms, slowed down
// for long recordings so that the file stays a valid scenario that
// replays quickly; the comment says so.
func TestRecordPlaceholderLoad(t *testing.T) {
	for _, tc := range []struct {
		duration, every string
		want            scenario.Rate
		slowed          bool
	}{
		{"6s", "1s", scenario.Rate{Count: 1, Per: time.Millisecond}, false},
		{"2h", "1m", scenario.Rate{Count: 1, Per: 8 * time.Millisecond}, true}, // 7.2 ms rounded up: 900,000 calls
		{"24h", "1m", scenario.Rate{Count: 1, Per: 87 * time.Millisecond}, true},
	} {
		t.Run(tc.duration, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "long.yaml")
			var stdout, stderr bytes.Buffer
			// Few samples: the simulated host makes a day quick.
			err := recordWith(context.Background(), skewedHost(t), []string{"-duration", tc.duration, "-every", tc.every, "-window", tc.every, "-out", out}, &stdout, &stderr, false)
			require.NoError(t, err)
			s, err := scenario.ReadFile(out)
			require.NoError(t, err, "what record writes, replay reads")
			assert.Equal(t, tc.want, s.Load.Rate)
			assert.LessOrEqual(t, s.Calls(), int64(placeholderCalls))
			assert.Contains(t, s.Comment, "("+tc.want.String()+") is a placeholder")
			assert.Contains(t, s.Comment, "set it to your service's")
			if tc.slowed {
				assert.Contains(t, s.Comment, "slowed down from 1/ms")
			} else {
				assert.NotContains(t, s.Comment, "slowed down")
			}
		})
	}
}

// A -rate that would make the file more than a replay accepts is refused
// before sampling starts.
func TestRecordRefusesTooMuchLoad(t *testing.T) {
	out := filepath.Join(t.TempDir(), "busy.yaml")
	h := skewedHost(t)
	var stdout, stderr bytes.Buffer
	err := recordWith(context.Background(), h, []string{"-duration", "2h", "-out", out, "-rate", "1/ms"}, &stdout, &stderr, false)
	var ue *usageError
	require.ErrorAs(t, err, &ue)
	assert.Zero(t, h.sleeps, "nothing sampled")
	assert.NoFileExists(t, out)

	code, _, errOut := runCLI("record", "-duration", "2h", "-out", out, "-rate", "1/ms")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-rate 1/ms for -duration 2h0m0s: ")
	assert.Contains(t, errOut, "more than 5000000; give a lower rate")
}

// Where record writes is checked before it samples: a directory that does
// not exist, or an -out that is a directory, is refused at once, and
// nothing is left behind.
func TestRecordChecksTheOutputFirst(t *testing.T) {
	dir := t.TempDir()
	for _, out := range []string{filepath.Join(dir, "nonexistent", "x.yaml"), dir} {
		h := skewedHost(t)
		var stdout, stderr bytes.Buffer
		err := recordWith(context.Background(), h, []string{"-duration", "1h", "-out", out}, &stdout, &stderr, false)
		var ue *usageError
		require.ErrorAs(t, err, &ue, out)
		assert.Contains(t, err.Error(), "-out "+out)
		assert.Zero(t, h.sleeps, "nothing sampled")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the probe is removed")
}

// A recording that replay would reject is not written: here the host's
// clock steps back more than a century before the layout's epoch.
func TestRecordValidatesBeforeWriting(t *testing.T) {
	clk := simclock.New(hostStart)
	require.NoError(t, clk.Schedule(simclock.Event{At: time.Second, Kind: simclock.Step, D: -130 * 365 * 24 * time.Hour}))
	out := filepath.Join(t.TempDir(), "broken.yaml")
	var stdout, stderr bytes.Buffer
	err := recordWith(context.Background(), &simHost{clk: clk}, []string{"-duration", "2s", "-out", out}, &stdout, &stderr, false)
	require.ErrorIs(t, err, scenario.ErrInvalid)
	require.ErrorIs(t, err, ringflake.ErrBeforeEpoch)
	var e *scenario.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "events[0].step", e.Field)
	assert.Equal(t, out, e.File)
	assert.NoFileExists(t, out)
	assert.Empty(t, stdout.String())
}

func TestPlaceholderRate(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		d   time.Duration
		per time.Duration
	}{
		{time.Second, ms},
		{1_000_000 * ms, ms}, // 16m40s: exactly placeholderCalls
		{1_000_001 * ms, 2 * ms},
		{time.Hour, 4 * ms},
	} {
		r := placeholderRate(tc.d)
		assert.Equal(t, scenario.Rate{Count: 1, Per: tc.per}, r, "%v", tc.d)
		s := scenario.Scenario{Start: hostStart, Duration: tc.d, Load: scenario.Load{Rate: r}}
		assert.LessOrEqual(t, s.Calls(), int64(placeholderCalls), "%v", tc.d)
	}
}

// A recording of more events than a scenario may hold is not written
// either: here a host whose clock jitters by ±5 ms shows a step at almost
// every sample.
func TestRecordRefusesTooManyEvents(t *testing.T) {
	clk := simclock.New(hostStart)
	require.NoError(t, clk.Schedule(simclock.Event{Kind: simclock.Jitter, D: 5 * time.Millisecond, Seed: 1}))
	out := filepath.Join(t.TempDir(), "jittery.yaml")
	var stdout, stderr bytes.Buffer
	err := recordWith(context.Background(), &simHost{clk: clk}, []string{"-duration", "150s", "-out", out}, &stdout, &stderr, false)
	require.ErrorIs(t, err, scenario.ErrInvalid)
	var e *scenario.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "events", e.Field)
	assert.Contains(t, e.Reason, "10000")
	assert.NoFileExists(t, out)
}
