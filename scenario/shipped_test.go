package scenario_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// Every shipped scenario, replayed against every built-in strategy, keeps
// the strategy's promises and meets the file's expectations, and each
// strategy keeps issuing IDs or fails calls as docs/replay.md's table says:
// the table is the one account of that, independent of the expectations
// written in the files, and cannot drift from the replays.
func TestShippedScenarios(t *testing.T) {
	strats, rows := readmeTable(t)
	for _, row := range rows {
		path := filepath.Join("..", "scenarios", row.file)
		s, err := scenario.ReadFile(path)
		require.NoError(t, err)
		assert.NotEmpty(t, s.Comment, "%s: the comment at the top names the real event", row.file)
		assert.NotEmpty(t, s.Expect, "%s: has expectations", row.file)

		for _, st := range scenario.Builtin() {
			t.Run(row.file+"/"+st.String(), func(t *testing.T) {
				require.Contains(t, strats, st.String(), "docs/replay.md has a column for it")
				r := scenario.Run(t, path, st) // fails on broken promises and unmet expectations
				require.NotNil(t, r)
				assert.True(t, r.OK(), "RESULT ok, as docs/replay.md says of every row")
				assert.Zero(t, r.Duplicates)
				assert.Zero(t, r.ViolationCount, "%v", r.Violations)
				assert.Positive(t, r.Issued)
				assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
				if row.keeps[st.String()] {
					assert.True(t, r.Available(), "docs/replay.md says it keeps issuing here: %v", r.Errors)
				} else {
					assert.False(t, r.Available(), "docs/replay.md says it fails calls here")
				}
				if r.Promise.Monotonic {
					assert.Zero(t, r.OutOfOrder)
				}
				for _, re := range r.Restarts {
					assert.Zero(t, re.Duplicates, "no ID of a run before the restart is issued again")
					assert.Equal(t, re.Behind, re.Rollback+re.Reservation, "the lead of the mark is a rollback and a reservation")
					if re.Clean {
						assert.Zero(t, re.Reservation, "a clean restart leaves the exact mark")
					}
					if re.FailedStarts > 0 {
						assert.Positive(t, re.Failed, "calls fail while the process is down")
						continue
					}
					if st.String() == "logical:1s" {
						assert.Zero(t, re.Failed, "it borrows within its lead")
						assert.Zero(t, re.ReservationWait, "and across the reservation")
						continue
					}
					if re.Rollback > strategies.DefaultWait {
						assert.Positive(t, re.Failed, "it fails while the clock is behind the mark's Since")
					}
					// It waits at most to the tick after the mark (less when
					// it crashes again before).
					unit := time.Millisecond // Twitter's, the default layout
					if !s.Layout.IsZero() {
						unit = s.Layout.Spec().Unit
					}
					assert.LessOrEqual(t, re.ReservationWait, re.Reservation+unit)
				}
			})
		}
	}
}

// The report's headline cases, spelled out.
func TestSmallStepBack(t *testing.T) {
	path := "../scenarios/small-step-back.yaml"
	errStrategy := scenario.Run(t, path, strategies.Error())
	assert.Positive(t, errStrategy.Errors["rollback"], "error fails on a -3ms step")
	assert.Zero(t, errStrategy.OutOfOrder)

	ring := scenario.Run(t, path, strategies.Ring())
	assert.Zero(t, ring.Errors.Total(), "ring does not")
	assert.Positive(t, ring.OutOfOrder, "it reuses spare room of earlier ticks")
	assert.Zero(t, ring.Borrowed)

	wait := scenario.Run(t, path, strategies.Wait(strategies.DefaultWait))
	assert.Zero(t, wait.Errors.Total())
	assert.Positive(t, wait.MaxStall, "wait sits the step out")
	assert.LessOrEqual(t, wait.MaxStall, strategies.DefaultWait)
}

func TestReplayIsDeterministic(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		s, err := scenario.ReadFile(f)
		require.NoError(t, err)
		for _, st := range scenario.Builtin() {
			t.Run(filepath.Base(f)+"/"+st.String(), func(t *testing.T) {
				a, err := scenario.Replay(context.Background(), s, st, scenario.WithTrace())
				require.NoError(t, err)
				b, err := scenario.Replay(context.Background(), s, st, scenario.WithTrace())
				require.NoError(t, err)
				assert.Equal(t, a, b)
			})
		}
	}
}

func TestShippedFilesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := scenario.ReadFile(f)
			require.NoError(t, err)
			var first strings.Builder
			_, err = s.WriteTo(&first)
			require.NoError(t, err)

			again, err := scenario.Parse(f, []byte(first.String()))
			require.NoError(t, err, first.String())
			var second strings.Builder
			_, err = again.WriteTo(&second)
			require.NoError(t, err)
			assert.Equal(t, first.String(), second.String())
			assert.Equal(t, s.Name, again.Name)
			assert.Equal(t, s.Comment, again.Comment)
			assert.True(t, s.Start.Equal(again.Start))
			assert.Equal(t, s.Events, again.Events)
			assert.Equal(t, s.Load, again.Load)
			assert.Equal(t, s.MarkAhead, again.MarkAhead)
			assert.Equal(t, withoutLines(s.Expect), withoutLines(again.Expect))
		})
	}
}

// withoutLines returns the expectations with their line numbers cleared.
func withoutLines(xs []scenario.Expectation) []scenario.Expectation {
	out := make([]scenario.Expectation, len(xs))
	for i, x := range xs {
		out[i] = scenario.Expectation{Strategy: x.Strategy}
		for _, b := range x.Bounds {
			b.Line = 0
			out[i].Bounds = append(out[i].Bounds, b)
		}
	}
	return out
}
