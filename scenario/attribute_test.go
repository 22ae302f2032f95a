package scenario_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// freezeAndStep freezes the clock for 3 s under a load that uses up the
// frozen tick, then, once it runs again, steps it back 80 ms.
const freezeAndStep = `
start: 2026-11-22T12:00:00Z
duration: 8s
load: {rate: 5/ms}
events:
  - {at: 6s, step: -80ms}
  - {at: 2s, freeze: 3s}
`

// The report names the scripted event each error came from: the frozen
// clock's used-up tick is "frozen", the step's errors are rollbacks, and
// the calls under neither fail nothing.
func TestReportAttributesErrorsToEvents(t *testing.T) {
	s := parse(t, freezeAndStep)
	for _, tc := range []struct {
		strategy       strategies.Strategy
		frozen, rolled bool // the freeze fails calls; the step does
	}{
		{strategies.Default(), true, false},
		{strategies.Ring(), true, false},
		{strategies.Error(), true, true},
	} {
		t.Run(tc.strategy.String(), func(t *testing.T) {
			r := replay(t, s, tc.strategy)
			require.Zero(t, r.ViolationCount, "%v", r.Violations)
			require.Len(t, r.Events, 2)
			freeze, step := r.Events[0], r.Events[1]
			assert.Equal(t, scenario.Freeze, freeze.Event.Kind, "in time order")
			assert.Equal(t, 1, freeze.Index, "its place in the file")
			assert.Equal(t, 5*time.Second, freeze.Until)
			assert.Equal(t, scenario.Step, step.Event.Kind)
			assert.Equal(t, 0, step.Index)
			assert.Greater(t, step.Until, 6*time.Second+80*time.Millisecond, "until the clock is back where it was")
			assert.Less(t, step.Until, 6*time.Second+90*time.Millisecond)

			assert.Equal(t, r.Calls, freeze.Calls+step.Calls+r.Steady.Calls, "each call counts under one event")
			assert.Equal(t, r.Errors.Total(), freeze.Errors.Total()+step.Errors.Total()+r.Steady.Errors.Total())
			assert.Zero(t, r.Steady.Errors.Total(), "no error outside the events")
			assert.Zero(t, freeze.Errors["rollback"], "a frozen clock is not a rollback")
			assert.Equal(t, r.Errors["frozen"], freeze.Errors["frozen"])
			assert.Equal(t, tc.frozen, freeze.Errors["frozen"] > 0, "%v", freeze)
			assert.Zero(t, step.Errors["frozen"])
			assert.Equal(t, r.Errors["rollback"], step.Errors["rollback"])
			assert.Equal(t, tc.rolled, step.Errors["rollback"] > 0, "%v", step)
			assert.Positive(t, freeze.Stalled)
			assert.Positive(t, freeze.MaxStall)
			assert.LessOrEqual(t, freeze.MaxStall, r.MaxStall)
			assert.Contains(t, freeze.String(), "freeze 3s at 2s (under way until 5s): ")
			assert.Contains(t, step.String(), "step -80ms at 6s (under way until 6.08")
			assert.Contains(t, r.Steady.String(), "no event under way: ")
		})
	}
}

// Borrowed time counts under the event that made the strategy borrow.
func TestReportAttributesBorrowedTime(t *testing.T) {
	r := replay(t, parse(t, freezeAndStep), strategies.Logical(time.Second))
	require.Len(t, r.Events, 2)
	assert.True(t, r.Available(), "it borrows through the freeze: %v", r.Errors)
	assert.Positive(t, r.Events[0].Borrowed, "the frozen tick used up, it takes the next ones")
	assert.Equal(t, r.Borrowed, r.Events[0].Borrowed+r.Events[1].Borrowed+r.Steady.Borrowed)
	assert.Zero(t, r.Steady.Borrowed)
}

// A pause stops the callers with the clock: the calls due during it start
// when it ends, and count under it; the wall clock stands still meanwhile.
func TestPause(t *testing.T) {
	s := parse(t, `
start: 2026-11-22T12:00:00Z
duration: 40ms
load: {rate: 1/ms}
events:
  - {at: 10ms, pause: 20ms}
expect:
  all: {duplicates: 0, available: true}
`)
	require.Equal(t, []scenario.Event{{At: 10 * time.Millisecond, Kind: scenario.Pause, D: 20 * time.Millisecond}}, s.Events)
	for _, st := range scenario.Builtin() {
		t.Run(st.String(), func(t *testing.T) {
			r := replay(t, s, st, scenario.WithTrace())
			require.True(t, r.OK(), "%v", r.Problems())
			require.Len(t, r.Events, 1)
			pause := r.Events[0]
			assert.Equal(t, int64(21), pause.Calls, "the calls due from 10ms to 30ms")
			assert.Equal(t, 30*time.Millisecond, pause.Until)
			assert.Equal(t, int64(19), r.Steady.Calls)
			for _, b := range r.Trace.IDs {
				assert.False(t, b.At >= 10*time.Millisecond && b.At < 30*time.Millisecond, "no ID issued during the pause: %v", b)
			}
			assert.Equal(t, int64(21), idsAt(r.Trace, 30*time.Millisecond), "all issued at its end")
			for _, b := range r.Trace.IDs {
				if b.At == 30*time.Millisecond {
					assert.Equal(t, -20*time.Millisecond, b.MinOffset, "the wall clock stood still: its IDs 20 ms behind true time")
				}
			}
		})
	}
}

func idsAt(tr *scenario.Trace, at time.Duration) int64 {
	for _, b := range tr.IDs {
		if b.At == at {
			return b.Count
		}
	}
	return 0
}

func TestPauseErrors(t *testing.T) {
	const head = "start: 2026-11-22T12:00:00Z\nduration: 100ms\n"
	for _, tc := range []struct{ name, src, field string }{
		{"past the end", head + "events:\n  - {at: 90ms, pause: 20ms}\n", "events[0].pause"},
		{"negative", head + "events:\n  - {at: 10ms, pause: -1ms}\n", "events[0].pause"},
		{"with a seed", head + "events:\n  - {at: 10ms, pause: 1ms, seed: 2}\n", "events[0].seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("bad.yaml", []byte(tc.src))
			require.ErrorIs(t, err, scenario.ErrInvalid)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.field, e.Field, "%v", err)
			assert.Equal(t, 4, e.Line)
		})
	}
}

// Expectations can bound the frozen clock's errors apart from rollbacks.
func TestExpectFrozen(t *testing.T) {
	s := parse(t, freezeAndStep+"expect:\n  all: {errors: {rollback: 0, frozen: \">0\"}}\n  error: {errors.rollback: \">0\"}\n")
	r := replay(t, s, strategies.Default())
	assert.True(t, r.OK(), "%v", r.Problems())
	r = replay(t, s, strategies.Error())
	require.Len(t, r.Unmet, 1, "all's rollback: 0 does not hold for error")
	assert.Equal(t, "errors.rollback", r.Unmet[0].Bound.Field)
	assert.Equal(t, "", r.Unmet[0].Strategy)
}

// A restart is under way until its new run is past the old run's mark:
// the calls that fail while its process cannot start count under it, the
// step back's rollbacks under the step.
func TestReportAttributesRestarts(t *testing.T) {
	s, err := scenario.ReadFile("../scenarios/restart-while-before-epoch.yaml")
	require.NoError(t, err)
	r := replay(t, s, strategies.Error())
	require.Len(t, r.Restarts, 1)
	var restart, step *scenario.EventReport
	for i := range r.Events {
		switch e := &r.Events[i]; {
		case e.Event.Kind == scenario.Restart:
			restart = e
		case e.Event.Kind == scenario.Step && e.Event.D < 0:
			step = e
		}
	}
	require.NotNil(t, restart)
	require.NotNil(t, step)
	assert.Equal(t, r.Errors["before_epoch"], restart.Errors["before_epoch"], "the calls made while the process was down")
	assert.Equal(t, r.Restarts[0].Failed, restart.Errors.Total())
	assert.Equal(t, r.Errors["rollback"], step.Errors["rollback"])
	assert.GreaterOrEqual(t, restart.Until, r.Restarts[0].Resumed)
	assert.Contains(t, restart.String(), "crash restart at 700ms (under way until ")
}
