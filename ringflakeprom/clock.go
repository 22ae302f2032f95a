package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// ClockCollector is a [prometheus.Collector] of the clock's health as a
// [clockhealth.Monitor] last read it. Make one with [NewClockCollector];
// the zero ClockCollector is not usable. It is safe for concurrent use.
//
// Metrics ([promtext.ClockMetrics]), each with the label source (the reading's source, e.g.
// "kernel" or "chrony 127.0.0.1:323"):
//
//	ringflake_clock_synchronised                1 while synchronised, 0 otherwise (unsynchronised or unknown)
//	ringflake_clock_info{status,leap}           1, with the status and leap state as labels
//	ringflake_clock_max_error_seconds           the maximum error (absent when the source gives none)
//	ringflake_clock_est_error_seconds           the estimated error
//	ringflake_clock_pending_correction_seconds  the correction about to be applied (absent when unknown;
//	                                            negative: the clock will be moved back)
//	ringflake_clock_read_timestamp_seconds      when the reading was taken (Unix time)
//
// Before the monitor's first reading nothing is exported. A scrape reads
// the monitor's last reading only, never the clock source.
type ClockCollector struct {
	t table[clockhealth.Reading]
}

// NewClockCollector returns a collector of m's last reading; labels, which
// may be nil, are added to every metric. A nil m is [ErrNilMonitor];
// labels Prometheus refuses, or the names source, status and leap, are an
// error matching [ErrInvalidLabels].
func NewClockCollector(m *clockhealth.Monitor, labels prometheus.Labels) (*ClockCollector, error) {
	if m == nil {
		return nil, ErrNilMonitor
	}
	c := &ClockCollector{newTable(promtext.ClockMetrics(), labels, m.Last)}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric.
func (c *ClockCollector) Describe(ch chan<- *prometheus.Desc) { c.t.describe(ch) }

// Collect sends the metrics of the monitor's last reading, if any.
func (c *ClockCollector) Collect(ch chan<- prometheus.Metric) { c.t.collect(ch) }
