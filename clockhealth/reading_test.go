package clockhealth_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/clockhealth"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func synced(maxErr time.Duration) clockhealth.Reading {
	return clockhealth.Reading{Source: "test", At: t0, Status: clockhealth.StatusSynchronised,
		MaxError: maxErr, MaxErrorKnown: true, Leap: clockhealth.LeapNone}
}

func TestReadingJSONRoundTrip(t *testing.T) {
	for _, r := range []clockhealth.Reading{
		{},
		synced(3 * time.Millisecond),
		{Source: "chrony 127.0.0.1:323", At: t0, Status: clockhealth.StatusUnsynchronised, MaxError: 2 * time.Second,
			MaxErrorKnown: true, EstError: time.Second, Pending: -300 * time.Millisecond, PendingKnown: true,
			Leap: clockhealth.LeapUnknown, Detail: "leap status: not synchronised"},
	} {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var back clockhealth.Reading
		require.NoError(t, json.Unmarshal(b, &back), "%s", b)
		assert.Equal(t, r, back, "%s", b)
	}
	b, err := json.Marshal(clockhealth.Reading{Status: clockhealth.StatusUnknown})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"max_error_seconds":null`)
	assert.Contains(t, string(b), `"status":"unknown"`)
}

func TestReadingJSONRejectsUnknownNames(t *testing.T) {
	var r clockhealth.Reading
	require.ErrorIs(t, json.Unmarshal([]byte(`{"status":"fine"}`), &r), clockhealth.ErrInvalidReading)
	require.ErrorIs(t, json.Unmarshal([]byte(`{"leap":"sideways"}`), &r), clockhealth.ErrInvalidReading)
}

func TestReadingString(t *testing.T) {
	r := clockhealth.Reading{Source: "kernel", Status: clockhealth.StatusUnsynchronised, MaxError: 16 * time.Second,
		MaxErrorKnown: true, EstError: 16 * time.Second, Leap: clockhealth.LeapUnknown, Detail: "TIME_ERROR, STA_UNSYNC"}
	assert.Equal(t, "kernel: unsynchronised (TIME_ERROR, STA_UNSYNC), max error 16s, est error 16s, leap unknown", r.String())
	assert.Equal(t, "no source: unknown, max error unknown, leap unknown", clockhealth.Reading{}.String())
}

func TestRequirementCheck(t *testing.T) {
	unsynced := synced(16 * time.Second)
	unsynced.Status = clockhealth.StatusUnsynchronised
	noBound := clockhealth.Reading{Source: "x", Status: clockhealth.StatusSynchronised}
	for _, tc := range []struct {
		name string
		q    clockhealth.Requirement
		r    clockhealth.Reading
		want error
	}{
		{"nothing asked of an unknown clock", clockhealth.Requirement{}, clockhealth.Reading{}, nil},
		{"sync asked, synced", clockhealth.Requirement{Synchronised: true}, synced(time.Second), nil},
		{"sync asked, unsynced", clockhealth.Requirement{Synchronised: true}, unsynced, clockhealth.ErrClockNotSynchronised},
		{"sync asked, unknown", clockhealth.Requirement{Synchronised: true}, clockhealth.Reading{}, clockhealth.ErrClockNotSynchronised},
		{"bound met", clockhealth.Requirement{MaxError: 100 * time.Millisecond}, synced(100 * time.Millisecond), nil},
		{"bound exceeded", clockhealth.Requirement{MaxError: 100 * time.Millisecond}, synced(101 * time.Millisecond), clockhealth.ErrClockErrorTooLarge},
		{"bound unknown", clockhealth.Requirement{MaxError: time.Second}, noBound, clockhealth.ErrClockErrorTooLarge},
		{"an unsynced clock has no bound", clockhealth.Requirement{MaxError: 20 * time.Second}, unsynced, clockhealth.ErrClockErrorTooLarge},
		{"an unknown status has no bound", clockhealth.Requirement{MaxError: 20 * time.Second}, clockhealth.Reading{Source: "x", MaxError: time.Millisecond, MaxErrorKnown: true}, clockhealth.ErrClockErrorTooLarge},
		{"both, unsynced first", clockhealth.Requirement{Synchronised: true, MaxError: time.Millisecond}, unsynced, clockhealth.ErrClockNotSynchronised},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Check(tc.r)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			var he *clockhealth.HealthError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.r, he.Reading)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	require.ErrorIs(t, clockhealth.Requirement{MaxError: -1}.Validate(), clockhealth.ErrInvalidOption)
	require.NoError(t, clockhealth.Requirement{MaxError: time.Second}.Validate())
	assert.True(t, clockhealth.Requirement{}.Zero())
	assert.False(t, clockhealth.Requirement{Synchronised: true}.Zero())
}
