package promtext

import (
	"github.com/ringflake/ringflake/lease"
)

// LeaseMetrics returns the metrics of a lease's events as a
// [lease.Recorder] counts them (names starting "ringflake_lease_"), as
// package ringflakeprom's LeaseCollector exports them:
//
//	ringflake_lease_events_total{kind}               counter: renewed, renew_failed, expired,
//	                                                 retaken, lost, clock_skewed
//	ringflake_lease_clock_offset_seconds             gauge
//	ringflake_lease_clock_offset_uncertainty_seconds gauge
//	ringflake_lease_clock_round_trip_seconds         gauge
//	ringflake_lease_clock_skewed                     gauge
//
// The clock metrics are absent until a renewal has measured the offset
// to the lease server's clock (Redis, with a MaxSkew that is not
// negative). Each call returns a new slice.
func LeaseMetrics() []Metric[lease.EventStats] {
	type stats = lease.EventStats
	type emitter = func(float64, ...string)
	offset := func(name, help string, read func(s stats) float64) Metric[stats] {
		return Metric[stats]{Desc{"ringflake_lease_" + name, help, Gauge, nil}, func(s stats, emit emitter) {
			if !s.Offset.IsZero() {
				emit(read(s))
			}
		}}
	}
	return []Metric[stats]{
		{Desc{"ringflake_lease_events_total", "Lease events by kind: renewed, renew_failed, expired, retaken, lost, clock_skewed.",
			Counter, []string{"kind"}}, func(s stats, emit emitter) {
			for _, k := range []struct {
				kind string
				n    uint64
			}{
				{"renewed", s.Renewed}, {"renew_failed", s.RenewFailed}, {"expired", s.Expired},
				{"retaken", s.Retaken}, {"lost", s.Lost}, {"clock_skewed", s.ClockSkewed},
			} {
				emit(float64(k.n), k.kind)
			}
		}},
		offset("clock_offset_seconds", "Latest measured offset of the lease server's clock from this host's (positive: this host is behind).",
			func(s stats) float64 { return s.Offset.Offset.Seconds() }),
		offset("clock_offset_uncertainty_seconds", "Bound on the error of the latest measured offset: half its round trip plus the server's resolution.",
			func(s stats) float64 { return s.Offset.Uncertainty.Seconds() }),
		offset("clock_round_trip_seconds", "Round trip of the sample the latest offset was measured with.",
			func(s stats) float64 { return s.Offset.RoundTrip.Seconds() }),
		offset("clock_skewed", "1 when the latest measured offset was certainly beyond the lease's MaxSkew.",
			func(s stats) float64 { return flag(s.Skewed) }),
	}
}
