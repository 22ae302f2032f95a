package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/ringflakeprom/promtext"
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
	t table[segment.Stats]
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
	c := &SegmentCollector{newTable(promtext.SegmentMetrics(), labels, func() (segment.Stats, bool) { return a.Stats(), true })}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric.
func (c *SegmentCollector) Describe(ch chan<- *prometheus.Desc) { c.t.describe(ch) }

// Collect reads the allocator's Stats and sends them.
func (c *SegmentCollector) Collect(ch chan<- prometheus.Metric) { c.t.collect(ch) }
