package promtext

import (
	"github.com/ringflake/ringflake"
)

// GeneratorMetrics returns the metrics of a generator's
// [ringflake.Stats] (names starting "ringflake_"), as package
// ringflakeprom's Collector exports them:
//
//	ringflake_ids_issued_total                 counter
//	ringflake_clock_rollbacks_total            counter
//	ringflake_clock_freezes_total              counter
//	ringflake_clock_rollback_largest_seconds   gauge
//	ringflake_ring_reuses_total                counter
//	ringflake_borrowed_seconds_total           counter
//	ringflake_max_lead_seconds                 gauge
//	ringflake_rollback_waits_total             counter
//	ringflake_rollback_wait_seconds_total      counter
//	ringflake_tick_waits_total                 counter
//	ringflake_tick_wait_seconds_total          counter
//	ringflake_errors_total{kind}               counter: rollback, frozen, lease_lost, expired,
//	                                           before_epoch, closed, canceled, other
//	ringflake_lead_seconds                     gauge
//	ringflake_layout_time_left_seconds         gauge
//
// Each call returns a new slice.
func GeneratorMetrics() []Metric[ringflake.Stats] {
	type stats = ringflake.Stats
	type emitter = func(float64, ...string)
	m := func(name, help string, t Type, read func(s stats) float64) Metric[stats] {
		return Metric[stats]{Desc{"ringflake_" + name, help, t, nil}, func(s stats, emit emitter) { emit(read(s)) }}
	}
	return []Metric[stats]{
		m("ids_issued_total", "IDs issued.", Counter,
			func(s stats) float64 { return float64(s.Issued) }),
		m("clock_rollbacks_total", "Times the wall clock was seen to step back by at least one tick.", Counter,
			func(s stats) float64 { return float64(s.Rollbacks) }),
		m("clock_freezes_total", "Times the wall clock was seen to stand still while the monotonic clock ran on (not rollbacks).", Counter,
			func(s stats) float64 { return float64(s.Freezes) }),
		m("clock_rollback_largest_seconds", "Largest step back of the wall clock seen.", Gauge,
			func(s stats) float64 { return s.LargestRollback.Seconds() }),
		m("ring_reuses_total", "IDs issued from spare sequence numbers of earlier ticks during a rollback.", Counter,
			func(s stats) float64 { return float64(s.RingReuses) }),
		m("borrowed_seconds_total", "Time borrowed ahead of the clock (logical strategy).", Counter,
			func(s stats) float64 { return s.Borrowed.Seconds() }),
		m("max_lead_seconds", "Furthest ahead of the clock an ID was stamped.", Gauge,
			func(s stats) float64 { return s.MaxLead.Seconds() }),
		m("rollback_waits_total", "Sleeps strategies asked for during rollbacks.", Counter,
			func(s stats) float64 { return float64(s.Waits) }),
		m("rollback_wait_seconds_total", "Time slept during rollbacks.", Counter,
			func(s stats) float64 { return s.Waited.Seconds() }),
		m("tick_waits_total", "Waits for the next tick after a tick's sequence was used up.", Counter,
			func(s stats) float64 { return float64(s.TickWaits) }),
		m("tick_wait_seconds_total", "Time spent waiting for the next tick.", Counter,
			func(s stats) float64 { return s.TickWaited.Seconds() }),
		{Desc{"ringflake_errors_total", "Failed calls by kind.", Counter, []string{"kind"}}, func(s stats, emit emitter) {
			e := s.Errors
			for _, k := range []struct {
				kind string
				n    uint64
			}{
				{"rollback", e.Rollback}, {"frozen", e.Frozen}, {"lease_lost", e.LeaseLost}, {"expired", e.Expired},
				{"before_epoch", e.BeforeEpoch}, {"closed", e.Closed}, {"canceled", e.Canceled}, {"other", e.Other},
			} {
				emit(float64(k.n), k.kind)
			}
		}},
		m("lead_seconds", "How far the newest ID is stamped ahead of the clock (negative: behind).", Gauge,
			func(s stats) float64 { return s.Lead.Seconds() }),
		m("layout_time_left_seconds", "Time until the layout runs out (the end of its last tick); 0 once it has.", Gauge,
			func(s stats) float64 { return s.TimeLeft.Seconds() }),
	}
}
