package scenario_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// The wall clock, and every reading of it with jitter, must stay within
// what the layout can represent, from the start to the end of the
// scenario; otherwise the event that takes it out is named, with its line.
// (Before, such files replayed with durations that overflowed: rollback
// amounts and stall limits came out negative.)
func TestClockMustStayWithinTheLayout(t *testing.T) {
	const head = "start: 2026-11-22T12:00:00Z\n" // line 1
	for _, tc := range []struct {
		name  string
		src   string
		line  int
		field string
		cause error
	}{
		{"duration past the layout's end", head + "duration: 2562047h\n", 2, "duration", ringflake.ErrLayoutExpired},
		{"the largest step back, twice", head + "duration: 1s\nevents:\n  - {at: 10ms, step: -2562047h}\n  - {at: 20ms, step: -2562047h}\n",
			4, "events[0].step", ringflake.ErrBeforeEpoch},
		{"a step back more than a century before the epoch", head + "duration: 1s\nevents:\n  - {at: 10ms, step: -1100000h}\n",
			4, "events[0].step", ringflake.ErrBeforeEpoch},
		{"two steps forward that add up past the end", head + "duration: 1s\nevents:\n  - {at: 10ms, step: 260000h}\n  - {at: 20ms, step: 260000h}\n",
			5, "events[1].step", ringflake.ErrLayoutExpired},
		{"steps at one instant, in file order", head + "duration: 1s\nevents:\n  - {at: 10ms, step: 500000h}\n  - {at: 10ms, step: -500000h}\n",
			4, "events[0].step", ringflake.ErrLayoutExpired},
		{"the largest jitter", head + "duration: 1s\nevents:\n  - {at: 10ms, jitter: 2562047h}\n", 4, "events[0].jitter", ringflake.ErrBeforeEpoch},
		{"jitter reaching past the end after a step forward", head + "duration: 1s\nevents:\n  - {at: 0s, step: 470000h}\n  - {at: 10ms, jitter: 2000h}\n",
			5, "events[1].jitter", ringflake.ErrLayoutExpired},
		{"a step back into the jitter's reach of the earliest reading", head + "duration: 1s\nevents:\n  - {at: 0s, jitter: 1h}\n  - {at: 10ms, step: -1016698h}\n",
			5, "events[1].step", ringflake.ErrBeforeEpoch},
		{"a fast drift that runs past the end", head + "duration: 300000h\nevents:\n  - {at: 0s, drift: 100%}\n", 4, "events[0].drift", ringflake.ErrLayoutExpired},
		{"time passing after a step forward", head + "duration: 100000h\nevents:\n  - {at: 0s, step: 400000h}\n", 4, "events[0].step", ringflake.ErrLayoutExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("far.yaml", []byte(tc.src))
			require.ErrorIs(t, err, scenario.ErrInvalid)
			require.ErrorIs(t, err, tc.cause)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "far.yaml", e.File)
			assert.Equal(t, tc.line, e.Line, "%v", err)
			assert.Equal(t, tc.field, e.Field, "%v", err)
			assert.Equal(t, 1, strings.Count(err.Error(), "scenario: "), "one prefix: %v", err)
			assert.NotContains(t, err.Error(), "ringflake: ", "%v", err)
		})
	}
}

// A clock reset to 1970 (a dead RTC battery), decades before the layout's
// epoch, replays: the error strategy fails while the clock is behind and
// nothing is issued twice.
func TestClockResetTo1970(t *testing.T) {
	s := parse(t, `start: 2026-11-22T12:00:00Z
duration: 100ms
load: {rate: 1/ms}
events:
  - {at: 50ms, step: -495000h}
`)
	for _, st := range scenario.Builtin() {
		r := replay(t, s, st)
		assert.Zero(t, r.ViolationCount, "%s: %v", st, r.Violations)
		assert.Zero(t, r.Duplicates)
		if st.String() == "error" {
			assert.Positive(t, r.Errors["rollback"], "error fails while the clock reads 1970")
		}
	}
}

// Long freezes and steps that stay within the layout are fine, and replay
// without overflowing: the rollback amounts and the stalls stay sane.
func TestLargeEventsWithinTheLayout(t *testing.T) {
	s := parse(t, `start: 2026-11-22T12:00:00Z
duration: 1s
load: {rate: 1/ms}
events:
  - {at: 10ms, freeze: 2562047h}
  - {at: 20ms, step: -100000h}
  - {at: 30ms, jitter: 1000h, seed: 1}
`)
	for _, st := range scenario.Builtin() {
		r := replay(t, s, st)
		assert.Zero(t, r.ViolationCount, "%s: %v", st, r.Violations)
		assert.True(t, r.OK(), "%s: %v", st, r.Problems())
		assert.Zero(t, r.Duplicates)
		assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
		assert.True(t, r.MaxLead >= 0 && r.MaxLead <= 100000*time.Hour+time.Second, "%s: lead %v", st, r.MaxLead)
		assert.True(t, r.MaxLag >= 0 && r.MaxLag <= 1000*time.Hour+time.Second, "%s: lag %v (the jitter)", st, r.MaxLag)
		if r.Available() {
			assert.Greater(t, r.MaxLead, 99999*time.Hour, "%s issues ahead of the clock stepped back", st)
		} else {
			assert.Positive(t, r.Errors["rollback"], "%s fails while the clock is behind", st)
		}
	}
}

// A scenario as long as a layout allows, near the largest Duration, and
// drawn: the trace's buckets are counted without overflow, so the replay
// ends (it used to loop forever).
func TestTraceOfTheLongestScenario(t *testing.T) {
	// One tick of 292 years: the layout lasts two, longer than any
	// Duration, so the scenario may last as long as a Duration can.
	src := `start: 2026-11-22T12:00:00Z
layout: epoch=1970-01-01T00:00:00Z,unit=9223372036854ms,time=1,node=0,seq=62
duration: 2562047h47m16.854775807s
load: {rate: 1/100000h}
events:
  - {at: 2000000h, step: -1000h}
`
	s := parse(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard only: the replay takes milliseconds
	defer cancel()
	for _, st := range []strategies.Strategy{strategies.Ring(), strategies.Error()} {
		r, err := scenario.Replay(ctx, s, st, scenario.WithTrace())
		require.NoError(t, err)
		require.NotNil(t, r.Trace)
		tr := r.Trace
		assert.Positive(t, tr.Bucket)
		assert.GreaterOrEqual(t, float64(tr.Bucket)*scenario.TraceBuckets, float64(s.Duration), "the buckets cover the scenario")
		assert.LessOrEqual(t, len(tr.IDs), scenario.TraceBuckets+1)
		assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
		assert.Zero(t, r.ViolationCount, "%v", r.Violations)
		for _, p := range tr.Wall {
			assert.GreaterOrEqual(t, p.At, time.Duration(0))
			assert.LessOrEqual(t, p.At, s.Duration)
		}
	}
}

// Durations up to the end of the layout are accepted; a nanosecond more
// is not.
func TestDurationUpToTheLayoutsEnd(t *testing.T) {
	l := ringflake.TwitterLayout()
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	life := l.Last().Add(l.Spec().Unit).Sub(start)
	src := func(d time.Duration) string {
		return fmt.Sprintf("start: %s\nduration: %s\n", start.Format(time.RFC3339), d)
	}
	_, err := scenario.Parse("edge.yaml", []byte(src(life)))
	require.NoError(t, err)
	_, err = scenario.Parse("edge.yaml", []byte(src(life+1)))
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
}
