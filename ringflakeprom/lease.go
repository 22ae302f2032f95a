package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// A LeaseRecorder is what a [LeaseCollector] reads: *lease.Recorder
// satisfies it.
type LeaseRecorder interface {
	Stats() lease.EventStats
}

// LeaseCollector is a [prometheus.Collector] for the events of one lease
// of redislease, etcdlease or pglease, as a [lease.Recorder] counts them (metrics
// ringflake_lease_…), with the offset to the lease server's clock that its
// renewals measure (Redis only). Make one with [NewLeaseCollector]; the
// zero LeaseCollector is not usable. It is safe for concurrent use.
//
//	var rec lease.Recorder
//	l, err := redislease.Acquire(ctx, client, redislease.Options{OnEvent: rec.Record})
//	...
//	c, err := ringflakeprom.NewLeaseCollector(&rec, prometheus.Labels{"prefix": "orders"})
type LeaseCollector struct {
	t table[lease.EventStats]
}

// NewLeaseCollector returns a collector of r's counts; labels, which may
// be nil, are added to every metric. The clock metrics
// (ringflake_lease_clock_…) appear once a renewal has measured the
// offset: with Redis and a MaxSkew that is not negative.
//
// A nil r is [ErrNilRecorder]; labels Prometheus refuses are an error
// matching [ErrInvalidLabels] (the name "kind" included, which
// ringflake_lease_events_total uses itself).
func NewLeaseCollector(r LeaseRecorder, labels prometheus.Labels) (*LeaseCollector, error) {
	if p, ok := r.(*lease.Recorder); r == nil || ok && p == nil {
		return nil, ErrNilRecorder
	}
	c := &LeaseCollector{newTable(promtext.LeaseMetrics(), labels, func() (lease.EventStats, bool) { return r.Stats(), true })}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric.
func (c *LeaseCollector) Describe(ch chan<- *prometheus.Desc) { c.t.describe(ch) }

// Collect reads the recorder's Stats and sends them.
func (c *LeaseCollector) Collect(ch chan<- prometheus.Metric) { c.t.collect(ch) }
