package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// table collects the metrics of a promtext table, each read from what
// read returns at a scrape: promtext defines every metric once, and both
// the collectors here and its own text writer read the same definitions.
type table[S any] struct {
	metrics []promtext.Metric[S]
	descs   []*prometheus.Desc
	read    func() (S, bool)
}

// newTable returns the table of metrics with labels added to each.
// Invalid labels show in its descriptors' errors (see checkDescs).
func newTable[S any](metrics []promtext.Metric[S], labels prometheus.Labels, read func() (S, bool)) table[S] {
	t := table[S]{metrics: metrics, read: read}
	for _, m := range metrics {
		t.descs = append(t.descs, prometheus.NewDesc(m.Name, m.Help, m.Labels, labels))
	}
	return t
}

func (t *table[S]) describe(ch chan<- *prometheus.Desc) {
	for _, d := range t.descs {
		ch <- d
	}
}

func (t *table[S]) collect(ch chan<- prometheus.Metric) {
	s, ok := t.read()
	if !ok {
		return
	}
	for i, m := range t.metrics {
		vt := prometheus.GaugeValue
		if m.Type == promtext.Counter {
			vt = prometheus.CounterValue
		}
		m.Read(s, func(v float64, labelValues ...string) {
			ch <- prometheus.MustNewConstMetric(t.descs[i], vt, v, labelValues...)
		})
	}
}
