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
// Each metric is defined once, in package
// github.com/ringflake/ringflake/ringflakeprom/promtext (its name, help,
// type, labels and how its value is read); the collectors here are built
// from those tables. promtext also writes the same families in the
// Prometheus text format without the Prometheus client, for a program
// that would rather not compile it: `ringflake serve` is one.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package ringflakeprom

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// Collector is a [prometheus.Collector] for one generator: the metrics
// of [promtext.GeneratorMetrics]. Make one with [NewCollector]; the zero
// Collector is not usable. It is safe for concurrent use.
type Collector struct {
	t table[ringflake.Stats]
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
	c := &Collector{newTable(promtext.GeneratorMetrics(), labels, func() (ringflake.Stats, bool) { return g.Stats(), true })}
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
func (c *Collector) Describe(ch chan<- *prometheus.Desc) { c.t.describe(ch) }

// Collect reads the generator's Stats and sends them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) { c.t.collect(ch) }
