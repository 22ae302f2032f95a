package scenario_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

var recStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// sampleClock samples clk every `every` for d, as `ringflake record` does.
func sampleClock(clk *simclock.Clock, r *scenario.Recorder, d, every time.Duration) {
	for at := time.Duration(0); at <= d; at += every {
		clk.Add(at - clk.Monotonic())
		r.Observe(clk.Now(), clk.Monotonic())
	}
}

func TestRecorderFindsStepsFreezesAndSlews(t *testing.T) {
	ms := time.Millisecond
	script := []simclock.Event{
		{At: 2005 * ms, Kind: simclock.Step, D: -3 * ms},
		{At: 3000 * ms, Kind: simclock.Step, D: 30 * time.Second},
		{At: 3500 * ms, Kind: simclock.Step, D: -30 * time.Second},
		{At: 4003 * ms, Kind: simclock.Freeze, D: 500 * ms},
		{At: 6000 * ms, Kind: simclock.Drift, Rate: -0.005},
		{At: 8000 * ms, Kind: simclock.Drift, Rate: 0},
	}
	clk := simclock.New(recStart)
	require.NoError(t, clk.Schedule(script...))
	var r scenario.Recorder
	sampleClock(clk, &r, 10*time.Second, 10*ms)
	assert.Equal(t, 1001, r.Samples())

	assert.Equal(t, []scenario.Event{
		{At: 2010 * ms, Kind: scenario.Step, D: -3 * ms}, // seen at the next sample
		{At: 3000 * ms, Kind: scenario.Step, D: 30 * time.Second},
		{At: 3500 * ms, Kind: scenario.Step, D: -30 * time.Second},
		{At: 4003 * ms, Kind: scenario.Freeze, D: 500 * ms}, // placed where the wall stopped and resumed
		{At: 6000 * ms, Kind: scenario.Drift, Rate: -0.005},
		{At: 8000 * ms, Kind: scenario.Drift, Rate: 0},
	}, r.Events())

	s := r.Scenario()
	require.NotNil(t, s)
	assert.Equal(t, recStart, s.Start)
	assert.Equal(t, 10*time.Second, s.Duration)
	s.Load = scenario.Load{Rate: scenario.Rate{Count: 1, Per: ms}}
	require.NoError(t, s.Validate(), "what the recorder writes can be replayed")
}

// Replaying what was recorded reproduces the wall clock of the host: at the
// end of every drift window within the step threshold, and in between
// within what a drift change inside a window can make up (here 1.2 % of
// the 1 s window).
func TestRecordedScenarioReproducesTheClock(t *testing.T) {
	ms := time.Millisecond
	script := []simclock.Event{
		{At: 0, Kind: simclock.Drift, Rate: 0.002},
		{At: 700 * ms, Kind: simclock.Step, D: -40 * ms},
		{At: 1234 * ms, Kind: simclock.Freeze, D: 77 * ms},
		{At: 2500 * ms, Kind: simclock.Drift, Rate: -0.01},
		{At: 2600 * ms, Kind: simclock.Step, D: 5 * ms},
	}
	host := simclock.New(recStart)
	require.NoError(t, host.Schedule(script...))
	var r scenario.Recorder
	sampleClock(host, &r, 4*time.Second, 10*ms)

	s := r.Scenario()
	replayed := simclock.New(s.Start)
	for _, ev := range s.Events {
		var k simclock.Kind
		switch ev.Kind {
		case scenario.Step:
			k = simclock.Step
		case scenario.Freeze:
			k = simclock.Freeze
		case scenario.Drift:
			k = simclock.Drift
		default:
			t.Fatalf("unexpected event %v", ev)
		}
		require.NoError(t, replayed.Schedule(simclock.Event{At: ev.At, Kind: k, D: ev.D, Rate: ev.Rate}))
	}
	again := simclock.New(recStart)
	require.NoError(t, again.Schedule(script...))
	for at := time.Duration(0); at <= 4*time.Second; at += 10 * ms {
		again.Add(at - again.Monotonic())
		replayed.Add(at - replayed.Monotonic())
		diff := replayed.Now().Sub(again.Now()).Abs()
		if at%time.Second == 0 {
			assert.Less(t, diff, scenario.DefaultThreshold, "at %v", at)
		}
		assert.Less(t, diff, 12*ms, "at %v", at)
	}
}

func TestRecorderQuietHost(t *testing.T) {
	var r scenario.Recorder
	assert.Nil(t, r.Scenario(), "nothing recorded")
	assert.Empty(t, r.Events())

	clk := simclock.New(recStart)
	// A step below the threshold and a drift below the minimum are noise
	// (together -3 ppm over their window).
	require.NoError(t, clk.Schedule(simclock.Event{At: 500 * time.Millisecond, Kind: simclock.Step, D: -5 * time.Microsecond},
		simclock.Event{At: 0, Kind: simclock.Drift, Rate: 2e-6}))
	sampleClock(clk, &r, 3*time.Second, 10*time.Millisecond)
	r.Observe(clk.Now(), clk.Monotonic()) // a sample out of order is ignored
	assert.Equal(t, 301, r.Samples())
	assert.Empty(t, r.Events())
}

func TestRecorderSettings(t *testing.T) {
	clk := simclock.New(recStart)
	require.NoError(t, clk.Schedule(simclock.Event{At: 500 * time.Millisecond, Kind: simclock.Step, D: -50 * time.Microsecond},
		simclock.Event{At: 0, Kind: simclock.Drift, Rate: 20e-6}))
	r := scenario.Recorder{Threshold: 10 * time.Microsecond, Window: 500 * time.Millisecond, MinDrift: 1e-6}
	sampleClock(clk, &r, time.Second, 10*time.Millisecond)
	assert.Equal(t, []scenario.Event{
		{At: 0, Kind: scenario.Drift, Rate: 20e-6},
		{At: 500 * time.Millisecond, Kind: scenario.Step, D: -50 * time.Microsecond},
	}, r.Events())
}

// What the recorder saw, written and read back, replays.
func TestRecordedScenarioReplays(t *testing.T) {
	clk := simclock.New(recStart)
	require.NoError(t, clk.Schedule(simclock.Event{At: 300 * time.Millisecond, Kind: simclock.Step, D: -3 * time.Millisecond}))
	var r scenario.Recorder
	sampleClock(clk, &r, 600*time.Millisecond, 10*time.Millisecond)
	s := r.Scenario()
	s.Name, s.Comment = "recorded", "Recorded in a test."
	s.Load.Rate = scenario.Rate{Count: 5, Per: time.Millisecond}

	var text writer
	_, err := s.WriteTo(&text)
	require.NoError(t, err)
	back, err := scenario.Parse("recorded.yaml", text.b)
	require.NoError(t, err, string(text.b))
	assert.Equal(t, s.Events, back.Events)
	rep := replay(t, back, strategies.Error())
	assert.False(t, rep.Available(), "the recorded step is replayed")
}

type writer struct{ b []byte }

func (w *writer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
