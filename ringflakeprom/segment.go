package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/segment"
)

// A SegmentAllocator is what a [SegmentCollector] reads:
// *segment.Allocator satisfies it, and so does anything else with its
// Stats method (a wrapper, a fake in tests).
//
// The segment package imports only database/sql and the standard library
// (the application chooses the PostgreSQL driver), so depending on it for
// the Stats type brings no database driver into this module.
type SegmentAllocator interface {
	Stats() segment.Stats
}

// SegmentCollector is a [prometheus.Collector] for one segment allocator
// (package github.com/ringflake/ringflake/segment). Make one with
// [NewSegmentCollector]; the zero SegmentCollector is not usable. It is
// safe for concurrent use.
type SegmentCollector struct {
	a SegmentAllocator

	left, step, nextReady, loading, failing       *prometheus.Desc
	ranges, prefetches, roundTrips, errors, waits *prometheus.Desc
	unavailable                                   *prometheus.Desc
}

// NewSegmentCollector returns a collector of a's counters; labels, which
// may be nil, are added to every metric (for example {"biz_tag":
// "orders"} when a process runs allocators of several tags). Metric names
// start with "ringflake_segment_". The collector reads a.Stats when
// Prometheus scrapes; it adds nothing to the cost of a number.
//
// A nil a is [ErrNilAllocator]; labels Prometheus refuses are an error
// matching [ErrInvalidLabels].
func NewSegmentCollector(a SegmentAllocator, labels prometheus.Labels) (*SegmentCollector, error) {
	if p, ok := a.(*segment.Allocator); a == nil || ok && p == nil {
		return nil, ErrNilAllocator
	}
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("ringflake_segment_"+name, help, nil, labels)
	}
	c := &SegmentCollector{
		a:           a,
		left:        d("numbers_left", "Numbers left in the two buffers: calls the allocator can answer without the database."),
		step:        d("step", "Size of the newest range taken."),
		nextReady:   d("next_ready", "1 when the second buffer holds a range."),
		loading:     d("loading", "1 while a range is being taken, or a failed attempt waits to be retried."),
		failing:     d("failing", "1 when the last attempt to take a range failed."),
		ranges:      d("ranges_total", "Ranges taken from the database."),
		prefetches:  d("prefetches_total", "Loads started in the background before the current range ran out."),
		roundTrips:  d("round_trips_total", "Statements sent to the database."),
		errors:      d("errors_total", "Failed attempts to take a range."),
		waits:       d("waits_total", "Calls that found both buffers empty and waited for a range."),
		unavailable: d("unavailable_total", "Calls that failed because both buffers were empty and the database was failing."),
	}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric.
func (c *SegmentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.left, c.step, c.nextReady, c.loading, c.failing,
		c.ranges, c.prefetches, c.roundTrips, c.errors, c.waits, c.unavailable} {
		ch <- d
	}
}

// Collect reads the allocator's Stats and sends them.
func (c *SegmentCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.a.Stats()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	flag := func(d *prometheus.Desc, b bool) {
		if b {
			gauge(d, 1)
		} else {
			gauge(d, 0)
		}
	}
	gauge(c.left, float64(s.Left))
	gauge(c.step, float64(s.Step))
	flag(c.nextReady, s.NextReady)
	flag(c.loading, s.Loading)
	flag(c.failing, s.Failing)
	counter(c.ranges, s.Ranges)
	counter(c.prefetches, s.Prefetches)
	counter(c.roundTrips, s.RoundTrips)
	counter(c.errors, s.Errors)
	counter(c.waits, s.Waits)
	counter(c.unavailable, s.Unavailable)
}
