package ringflakeprom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/ringflakeprom"
)

// TestLeaseCollector: the events a Recorder counted, and once a renewal
// measured it, the offset to the server's clock and whether it was
// beyond MaxSkew.
func TestLeaseCollector(t *testing.T) {
	var rec lease.Recorder
	c, err := ringflakeprom.NewLeaseCollector(&rec, prometheus.Labels{"prefix": "orders"})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	rec.Record(lease.Event{Kind: lease.RenewFailed})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ringflake_lease_events_total Lease events by kind: renewed, renew_failed, expired, retaken, lost, clock_skewed.
# TYPE ringflake_lease_events_total counter
ringflake_lease_events_total{kind="clock_skewed",prefix="orders"} 0
ringflake_lease_events_total{kind="expired",prefix="orders"} 0
ringflake_lease_events_total{kind="lost",prefix="orders"} 0
ringflake_lease_events_total{kind="renew_failed",prefix="orders"} 1
ringflake_lease_events_total{kind="renewed",prefix="orders"} 0
ringflake_lease_events_total{kind="retaken",prefix="orders"} 0
`)), "no clock metrics before a measurement")

	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	beyond := lease.Offset{Offset: -2500 * time.Millisecond, Uncertainty: 250 * time.Microsecond, RoundTrip: 500 * time.Microsecond, At: at}
	rec.Record(lease.Event{Kind: lease.ClockSkewed, Offset: beyond})
	rec.Record(lease.Event{Kind: lease.Renewed, Offset: beyond})
	clockMetrics := func(offset, skewed string) string {
		return `
# HELP ringflake_lease_clock_offset_seconds Latest measured offset of the lease server's clock from this host's (positive: this host is behind).
# TYPE ringflake_lease_clock_offset_seconds gauge
ringflake_lease_clock_offset_seconds{prefix="orders"} ` + offset + `
# HELP ringflake_lease_clock_offset_uncertainty_seconds Bound on the error of the latest measured offset: half its round trip plus the server's resolution.
# TYPE ringflake_lease_clock_offset_uncertainty_seconds gauge
ringflake_lease_clock_offset_uncertainty_seconds{prefix="orders"} 0.00025
# HELP ringflake_lease_clock_round_trip_seconds Round trip of the sample the latest offset was measured with.
# TYPE ringflake_lease_clock_round_trip_seconds gauge
ringflake_lease_clock_round_trip_seconds{prefix="orders"} 0.0005
# HELP ringflake_lease_clock_skewed 1 when the latest measured offset was certainly beyond the lease's MaxSkew.
# TYPE ringflake_lease_clock_skewed gauge
ringflake_lease_clock_skewed{prefix="orders"} ` + skewed + `
`
	}
	names := []string{"ringflake_lease_clock_offset_seconds", "ringflake_lease_clock_offset_uncertainty_seconds",
		"ringflake_lease_clock_round_trip_seconds", "ringflake_lease_clock_skewed"}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(clockMetrics("-2.5", "1")), names...))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ringflake_lease_events_total Lease events by kind: renewed, renew_failed, expired, retaken, lost, clock_skewed.
# TYPE ringflake_lease_events_total counter
ringflake_lease_events_total{kind="clock_skewed",prefix="orders"} 1
ringflake_lease_events_total{kind="expired",prefix="orders"} 0
ringflake_lease_events_total{kind="lost",prefix="orders"} 0
ringflake_lease_events_total{kind="renew_failed",prefix="orders"} 1
ringflake_lease_events_total{kind="renewed",prefix="orders"} 1
ringflake_lease_events_total{kind="retaken",prefix="orders"} 0
`), "ringflake_lease_events_total"))

	within := beyond
	within.Offset, within.At = 3*time.Millisecond, at.Add(time.Minute)
	rec.Record(lease.Event{Kind: lease.Renewed, Offset: within})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(clockMetrics("0.003", "0")), names...))
}

func TestNewLeaseCollectorRejects(t *testing.T) {
	var nilRecorder *lease.Recorder
	for _, r := range []ringflakeprom.LeaseRecorder{nil, nilRecorder} {
		c, err := ringflakeprom.NewLeaseCollector(r, nil)
		require.ErrorIs(t, err, ringflakeprom.ErrNilRecorder)
		require.Nil(t, c)
	}
	for _, labels := range []prometheus.Labels{{"": "x"}, {"__name__": "x"}, {"kind": "x"}, {"prefix": "\xff"}} {
		_, err := ringflakeprom.NewLeaseCollector(&lease.Recorder{}, labels)
		require.ErrorIs(t, err, ringflakeprom.ErrInvalidLabels, "labels %v", labels)
	}
}
