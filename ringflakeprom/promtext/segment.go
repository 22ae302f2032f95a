package promtext

import (
	"github.com/ringflake/ringflake/segment"
)

// SegmentMetrics returns the metrics of a segment allocator's
// [segment.Stats] (names starting "ringflake_segment_"), as package
// ringflakeprom's SegmentCollector exports them: the gauges numbers_left,
// step, next_ready, loading and failing, and the counters ranges_total,
// prefetches_total, round_trips_total, errors_total, waits_total and
// unavailable_total. Each call returns a new slice.
func SegmentMetrics() []Metric[segment.Stats] {
	type stats = segment.Stats
	type emitter = func(float64, ...string)
	m := func(name, help string, t Type, read func(s stats) float64) Metric[stats] {
		return Metric[stats]{Desc{"ringflake_segment_" + name, help, t, nil}, func(s stats, emit emitter) { emit(read(s)) }}
	}
	return []Metric[stats]{
		m("numbers_left", "Numbers left in the two buffers: calls the allocator can answer without the database.", Gauge,
			func(s stats) float64 { return float64(s.Left) }),
		m("step", "Size of the newest range taken.", Gauge,
			func(s stats) float64 { return float64(s.Step) }),
		m("next_ready", "1 when the second buffer holds a range.", Gauge,
			func(s stats) float64 { return flag(s.NextReady) }),
		m("loading", "1 while a range is being taken, or a failed attempt waits to be retried.", Gauge,
			func(s stats) float64 { return flag(s.Loading) }),
		m("failing", "1 when the last attempt to take a range failed.", Gauge,
			func(s stats) float64 { return flag(s.Failing) }),
		m("ranges_total", "Ranges taken from the database.", Counter,
			func(s stats) float64 { return float64(s.Ranges) }),
		m("prefetches_total", "Loads started in the background before the current range ran out.", Counter,
			func(s stats) float64 { return float64(s.Prefetches) }),
		m("round_trips_total", "Statements sent to the database.", Counter,
			func(s stats) float64 { return float64(s.RoundTrips) }),
		m("errors_total", "Failed attempts to take a range.", Counter,
			func(s stats) float64 { return float64(s.Errors) }),
		m("waits_total", "Calls that found both buffers empty and waited for a range.", Counter,
			func(s stats) float64 { return float64(s.Waits) }),
		m("unavailable_total", "Calls that failed because both buffers were empty and the database was failing.", Counter,
			func(s stats) float64 { return float64(s.Unavailable) }),
	}
}
