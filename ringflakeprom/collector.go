// Package ringflakeprom exports the counters of ringflake generators to
// Prometheus. It is a module of its own so that the core ringflake module
// does not depend on the Prometheus client.
//
//	gen, err := ringflake.New(7)
//	...
//	c, err := ringflakeprom.NewCollector(gen, prometheus.Labels{"node": "7"})
//	...
//	prometheus.MustRegister(c)
//
// The collector reads [ringflake.Generator.Stats] when Prometheus scrapes;
// it adds nothing to the cost of issuing IDs.
//
// [NewSegmentCollector] does the same for an allocator of package
// github.com/ringflake/ringflake/segment (metrics ringflake_segment_…):
//
//	orders, err := segment.New(ctx, db, "orders")
//	...
//	c, err := ringflakeprom.NewSegmentCollector(orders, prometheus.Labels{"biz_tag": "orders"})
//
// [NewLeaseCollector] exports a lease's events, as a lease.Recorder
// counts them, and the offset to the lease server's clock (metrics
// ringflake_lease_…).
//
// [RequestCollector] counts the requests of an ID server (package
// github.com/ringflake/ringflake/idserver, metrics ringflake_http_…): it
// is the server's Observer and a collector at once:
//
//	reqs, err := ringflakeprom.NewRequestCollector(nil)
//	...
//	h, err := idserver.New(gen, idserver.WithObserver(reqs))
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package ringflakeprom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake"
)

// Collector is a [prometheus.Collector] for one generator. Make one with
// [NewCollector]; the zero Collector is not usable. It is safe for
// concurrent use.
type Collector struct {
	gen *ringflake.Generator

	issued, rollbacks, freezes, ringReuses, borrowed *prometheus.Desc
	waits, waited, tickWaits, tickWaited, errors     *prometheus.Desc
	largestRollback, maxLead, lead, timeLeft         *prometheus.Desc
}

// NewCollector returns a collector of g's counters; labels, which may be
// nil, are added to every metric (for example the node id, when one
// process runs several generators). Metric names start with "ringflake_".
//
// A nil g is [ErrNilGenerator]; labels Prometheus refuses are an error
// matching [ErrInvalidLabels].
func NewCollector(g *ringflake.Generator, labels prometheus.Labels) (*Collector, error) {
	if g == nil {
		return nil, ErrNilGenerator
	}
	d := func(name, help string, varLabels ...string) *prometheus.Desc {
		return prometheus.NewDesc("ringflake_"+name, help, varLabels, labels)
	}
	c := &Collector{
		gen:             g,
		issued:          d("ids_issued_total", "IDs issued."),
		rollbacks:       d("clock_rollbacks_total", "Times the wall clock was seen to step back by at least one tick."),
		freezes:         d("clock_freezes_total", "Times the wall clock was seen to stand still while the monotonic clock ran on (not rollbacks)."),
		largestRollback: d("clock_rollback_largest_seconds", "Largest step back of the wall clock seen."),
		ringReuses:      d("ring_reuses_total", "IDs issued from spare sequence numbers of earlier ticks during a rollback."),
		borrowed:        d("borrowed_seconds_total", "Time borrowed ahead of the clock (logical strategy)."),
		maxLead:         d("max_lead_seconds", "Furthest ahead of the clock an ID was stamped."),
		waits:           d("rollback_waits_total", "Sleeps strategies asked for during rollbacks."),
		waited:          d("rollback_wait_seconds_total", "Time slept during rollbacks."),
		tickWaits:       d("tick_waits_total", "Waits for the next tick after a tick's sequence was used up."),
		tickWaited:      d("tick_wait_seconds_total", "Time spent waiting for the next tick."),
		errors:          d("errors_total", "Failed calls by kind.", "kind"),
		lead:            d("lead_seconds", "How far the newest ID is stamped ahead of the clock (negative: behind)."),
		timeLeft:        d("layout_time_left_seconds", "Time until the layout runs out (the end of its last tick); 0 once it has."),
	}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// checkDescs returns an error matching ErrInvalidLabels when one of c's
// descriptors is invalid. A Desc keeps its error to itself until it is
// registered: register with a throwaway registry to see it now.
func checkDescs(c prometheus.Collector) error {
	if err := prometheus.NewRegistry().Register(c); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidLabels, err)
	}
	return nil
}

// Describe sends the descriptors of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.issued, c.rollbacks, c.freezes, c.largestRollback, c.ringReuses, c.borrowed,
		c.maxLead, c.waits, c.waited, c.tickWaits, c.tickWaited, c.errors, c.lead, c.timeLeft} {
		ch <- d
	}
}

// Collect reads the generator's Stats and sends them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.gen.Stats()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter(c.issued, float64(s.Issued))
	counter(c.rollbacks, float64(s.Rollbacks))
	counter(c.freezes, float64(s.Freezes))
	gauge(c.largestRollback, s.LargestRollback.Seconds())
	counter(c.ringReuses, float64(s.RingReuses))
	counter(c.borrowed, s.Borrowed.Seconds())
	gauge(c.maxLead, s.MaxLead.Seconds())
	counter(c.waits, float64(s.Waits))
	counter(c.waited, s.Waited.Seconds())
	counter(c.tickWaits, float64(s.TickWaits))
	counter(c.tickWaited, s.TickWaited.Seconds())
	for kind, n := range map[string]uint64{
		"rollback": s.Errors.Rollback, "frozen": s.Errors.Frozen, "lease_lost": s.Errors.LeaseLost, "expired": s.Errors.Expired,
		"before_epoch": s.Errors.BeforeEpoch, "closed": s.Errors.Closed, "canceled": s.Errors.Canceled,
		"other": s.Errors.Other,
	} {
		counter(c.errors, float64(n), kind)
	}
	gauge(c.lead, s.Lead.Seconds())
	gauge(c.timeLeft, s.TimeLeft.Seconds())
}
