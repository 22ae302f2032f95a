package ringflakeprom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/ringflakeprom"
)

func TestClockCollector(t *testing.T) {
	reading := clockhealth.Reading{Source: "chrony 127.0.0.1:323", At: time.Unix(1795716979, 500_000_000),
		Status: clockhealth.StatusSynchronised, MaxError: 3 * time.Millisecond, MaxErrorKnown: true,
		EstError: time.Millisecond, Pending: -300 * time.Millisecond, PendingKnown: true, Leap: clockhealth.LeapNone}
	m, err := clockhealth.NewMonitor(clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		return reading, nil
	}))
	require.NoError(t, err)
	c, err := ringflakeprom.NewClockCollector(m, prometheus.Labels{"service": "ids"})
	require.NoError(t, err)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader("")), "nothing before the first reading")

	_, err = m.Poll(context.Background())
	require.NoError(t, err)
	want := `
# HELP ringflake_clock_est_error_seconds Estimated error of the wall clock, as the source gives it.
# TYPE ringflake_clock_est_error_seconds gauge
ringflake_clock_est_error_seconds{service="ids",source="chrony 127.0.0.1:323"} 0.001
# HELP ringflake_clock_info The clock source's status and leap state, as labels.
# TYPE ringflake_clock_info gauge
ringflake_clock_info{leap="none",service="ids",source="chrony 127.0.0.1:323",status="synchronised"} 1
# HELP ringflake_clock_max_error_seconds Maximum error of the wall clock, as the source bounds it.
# TYPE ringflake_clock_max_error_seconds gauge
ringflake_clock_max_error_seconds{service="ids",source="chrony 127.0.0.1:323"} 0.003
# HELP ringflake_clock_pending_correction_seconds Correction the source is about to apply (negative: the clock will be moved back).
# TYPE ringflake_clock_pending_correction_seconds gauge
ringflake_clock_pending_correction_seconds{service="ids",source="chrony 127.0.0.1:323"} -0.3
# HELP ringflake_clock_read_timestamp_seconds When the last clock health reading was taken (Unix time).
# TYPE ringflake_clock_read_timestamp_seconds gauge
ringflake_clock_read_timestamp_seconds{service="ids",source="chrony 127.0.0.1:323"} 1.7957169795e+09
# HELP ringflake_clock_synchronised 1 while the clock source reports the clock synchronised, 0 otherwise.
# TYPE ringflake_clock_synchronised gauge
ringflake_clock_synchronised{service="ids",source="chrony 127.0.0.1:323"} 1
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))

	// An unsynchronised kernel: no pending correction is exported.
	reading = clockhealth.Reading{Source: "kernel", At: time.Unix(1795716980, 0), Status: clockhealth.StatusUnsynchronised,
		MaxError: 16 * time.Second, MaxErrorKnown: true, EstError: 16 * time.Second, Leap: clockhealth.LeapUnknown}
	_, err = m.Poll(context.Background())
	require.NoError(t, err)
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP ringflake_clock_synchronised 1 while the clock source reports the clock synchronised, 0 otherwise.
# TYPE ringflake_clock_synchronised gauge
ringflake_clock_synchronised{service="ids",source="kernel"} 0
`), "ringflake_clock_synchronised"))
	require.Equal(t, 5, testutil.CollectAndCount(c))
}

func TestNewClockCollectorErrors(t *testing.T) {
	_, err := ringflakeprom.NewClockCollector(nil, nil)
	require.ErrorIs(t, err, ringflakeprom.ErrNilMonitor)
	m, err := clockhealth.NewMonitor(clockhealth.Kernel{})
	require.NoError(t, err)
	_, err = ringflakeprom.NewClockCollector(m, prometheus.Labels{"source": "x"})
	require.ErrorIs(t, err, ringflakeprom.ErrInvalidLabels)
}
