package ringflakeexpvar_test

import (
	"context"
	"encoding/json"
	"expvar"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/ringflakeexpvar"
)

func TestPublishClock(t *testing.T) {
	want := clockhealth.Reading{Source: "test", At: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC),
		Status: clockhealth.StatusSynchronised, MaxError: 3 * time.Millisecond, MaxErrorKnown: true,
		Pending: -time.Millisecond, PendingKnown: true, Leap: clockhealth.LeapNone}
	m, err := clockhealth.NewMonitor(clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		return want, nil
	}))
	require.NoError(t, err)
	name := fmt.Sprintf("ringflake_clock_test_%p", m)
	require.NoError(t, ringflakeexpvar.PublishClock(name, m))
	assert.Equal(t, "null", expvar.Get(name).String(), "before the first reading")

	_, err = m.Poll(context.Background())
	require.NoError(t, err)
	var got clockhealth.Reading
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &got))
	assert.Equal(t, want, got)

	require.ErrorIs(t, ringflakeexpvar.PublishClock(name, m), ringflake.ErrInvalidOption)
	require.ErrorIs(t, ringflakeexpvar.PublishClock("", m), ringflake.ErrInvalidOption)
	require.ErrorIs(t, ringflakeexpvar.PublishClock(name+"_nil", nil), ringflake.ErrInvalidOption)
}
