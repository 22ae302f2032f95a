package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/clockhealth"
)

// ClockCollector is a [prometheus.Collector] of the clock's health as a
// [clockhealth.Monitor] last read it. Make one with [NewClockCollector];
// the zero ClockCollector is not usable. It is safe for concurrent use.
//
// Metrics, each with the label source (the reading's source, e.g.
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
	mon                                   *clockhealth.Monitor
	synced, info, maxErr, estErr, pending *prometheus.Desc
	readAt                                *prometheus.Desc
}

// NewClockCollector returns a collector of m's last reading; labels, which
// may be nil, are added to every metric. A nil m is [ErrNilMonitor];
// labels Prometheus refuses, or the names source, status and leap, are an
// error matching [ErrInvalidLabels].
func NewClockCollector(m *clockhealth.Monitor, labels prometheus.Labels) (*ClockCollector, error) {
	if m == nil {
		return nil, ErrNilMonitor
	}
	d := func(name, help string, varLabels ...string) *prometheus.Desc {
		return prometheus.NewDesc("ringflake_clock_"+name, help, append([]string{"source"}, varLabels...), labels)
	}
	c := &ClockCollector{
		mon:     m,
		synced:  d("synchronised", "1 while the clock source reports the clock synchronised, 0 otherwise."),
		info:    d("info", "The clock source's status and leap state, as labels.", "status", "leap"),
		maxErr:  d("max_error_seconds", "Maximum error of the wall clock, as the source bounds it."),
		estErr:  d("est_error_seconds", "Estimated error of the wall clock, as the source gives it."),
		pending: d("pending_correction_seconds", "Correction the source is about to apply (negative: the clock will be moved back)."),
		readAt:  d("read_timestamp_seconds", "When the last clock health reading was taken (Unix time)."),
	}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe sends the descriptors of every metric.
func (c *ClockCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.synced, c.info, c.maxErr, c.estErr, c.pending, c.readAt} {
		ch <- d
	}
}

// Collect sends the metrics of the monitor's last reading, if any.
func (c *ClockCollector) Collect(ch chan<- prometheus.Metric) {
	r, ok := c.mon.Last()
	if !ok {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{r.Source}, labels...)...)
	}
	synced := 0.0
	if r.Synchronised() {
		synced = 1
	}
	gauge(c.synced, synced)
	gauge(c.info, 1, r.Status.String(), r.Leap.String())
	if r.MaxErrorKnown {
		gauge(c.maxErr, r.MaxError.Seconds())
	}
	gauge(c.estErr, r.EstError.Seconds())
	if r.PendingKnown {
		gauge(c.pending, r.Pending.Seconds())
	}
	gauge(c.readAt, float64(r.At.UnixNano())/1e9)
}
