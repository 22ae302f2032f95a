package clockhealth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// A generator's rollback comes to the hook with the clock health the
// monitor read last: here chrony's 300 ms correction waiting to happen,
// which the step back then carries out.
func TestRollbackEventsAreExplained(t *testing.T) {
	pending := clockhealth.Reading{Source: "chrony 127.0.0.1:323", Status: clockhealth.StatusSynchronised,
		MaxError: 310 * time.Millisecond, MaxErrorKnown: true, Pending: -300 * time.Millisecond, PendingKnown: true}
	m, err := clockhealth.NewMonitor(clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		return pending, nil
	}))
	require.NoError(t, err)

	var got []clockhealth.Reading
	hook := m.Explain(func(e ringflake.RollbackEvent, r clockhealth.Reading, ok bool) {
		if ok {
			got = append(got, r)
		}
	})
	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	clk := simclock.New(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	errStrategy, err := strategies.Parse("error")
	require.NoError(t, err)
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(errStrategy),
		ringflake.WithRollbackHook(hook), ringflake.WithRollbackHook(m.LogRollbacks(logger)))
	require.NoError(t, err)
	defer g.Close(context.Background())

	_, err = g.Next()
	require.NoError(t, err)
	clk.Step(-300 * time.Millisecond) // before the monitor's first reading: nothing to explain with
	clk.Add(time.Millisecond)         // the generator sees the step at its next tick
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback)
	assert.Empty(t, got)

	_, err = m.Poll(context.Background())
	require.NoError(t, err)
	clk.Add(time.Second)
	_, err = g.Next()
	require.NoError(t, err)
	clk.Step(-300 * time.Millisecond)
	clk.Add(time.Millisecond)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClockRollback)
	require.Len(t, got, 1)
	assert.Equal(t, pending, got[0])

	var line map[string]any
	lines := bytes.Split(bytes.TrimSpace(logged.Bytes()), []byte("\n"))
	require.NoError(t, json.Unmarshal(lines[len(lines)-1], &line))
	assert.Equal(t, "chrony 127.0.0.1:323", line["clock_source"])
	assert.Equal(t, "ERROR", line["level"], "the call failed")
	assert.EqualValues(t, -300*time.Millisecond, line["clock_pending_correction"])
}
