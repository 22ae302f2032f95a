package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/lease"
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
	r LeaseRecorder

	events, offset, uncertainty, roundTrip, skewed *prometheus.Desc
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
	d := func(name, help string, varLabels ...string) *prometheus.Desc {
		return prometheus.NewDesc("ringflake_lease_"+name, help, varLabels, labels)
	}
	c := &LeaseCollector{
		r:           r,
		events:      d("events_total", "Lease events by kind: renewed, renew_failed, expired, retaken, lost, clock_skewed.", "kind"),
		offset:      d("clock_offset_seconds", "Latest measured offset of the lease server's clock from this host's (positive: this host is behind)."),
		uncertainty: d("clock_offset_uncertainty_seconds", "Bound on the error of the latest measured offset: half its round trip plus the server's resolution."),
		roundTrip:   d("clock_round_trip_seconds", "Round trip of the sample the latest offset was measured with."),
		skewed:      d("clock_skewed", "1 when the latest measured offset was certainly beyond the lease's MaxSkew."),
	}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric.
func (c *LeaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.events, c.offset, c.uncertainty, c.roundTrip, c.skewed} {
		ch <- d
	}
}

// Collect reads the recorder's Stats and sends them.
func (c *LeaseCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.r.Stats()
	for kind, n := range map[string]uint64{
		"renewed": s.Renewed, "renew_failed": s.RenewFailed, "expired": s.Expired,
		"retaken": s.Retaken, "lost": s.Lost, "clock_skewed": s.ClockSkewed,
	} {
		ch <- prometheus.MustNewConstMetric(c.events, prometheus.CounterValue, float64(n), kind)
	}
	if s.Offset.IsZero() {
		return
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(c.offset, s.Offset.Offset.Seconds())
	gauge(c.uncertainty, s.Offset.Uncertainty.Seconds())
	gauge(c.roundTrip, s.Offset.RoundTrip.Seconds())
	skewed := 0.0
	if s.Skewed {
		skewed = 1
	}
	gauge(c.skewed, skewed)
}
