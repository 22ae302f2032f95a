package ringflakeprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// RequestCollector counts the requests an ID server answers (package
// github.com/ringflake/ringflake/idserver) for Prometheus. It is an
// [idserver.Observer] — give it to the handler with idserver.WithObserver
// — and a [prometheus.Collector] — register it where the handler's
// /metrics (idserver.WithMetricsHandler) or your own server serves
// metrics from. `ringflake serve` exports these series. Metric names
// start with "ringflake_http_":
//
//	ringflake_http_requests_total{route,status,code}    requests answered
//	ringflake_http_ids_total{route}                     IDs served in responses
//	ringflake_http_request_duration_seconds{route}      time in the handler (a histogram)
//
// route is one of the idserver.Route constants, or "other" for a path no
// route serves; status is the HTTP status; code the error body's code
// ("" for a response that is not an error). Every label value comes from
// a small fixed set, so the series stay few whatever clients send.
//
// The idserver package imports no metrics system; this adapter lives here,
// beside [Collector], so that a program that uses Prometheus gets the
// series without writing them, and one that does not never links the
// Prometheus client.
//
// Make one with [NewRequestCollector]; the zero RequestCollector is not
// usable. It is safe for concurrent use. Its families are
// [promtext.RequestDescs]; promtext.Requests counts the same without the
// Prometheus client.
type RequestCollector struct {
	requests *prometheus.CounterVec
	ids      *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewRequestCollector returns a collector of an ID server's requests;
// labels, which may be nil, are added to every metric (for example the
// node id, when one process serves several generators).
//
// Labels Prometheus refuses, and the names route, status and code, which
// the metrics use themselves, are an error matching [ErrInvalidLabels].
func NewRequestCollector(labels prometheus.Labels) (*RequestCollector, error) {
	requests, ids, duration := promtext.RequestDescs()
	c := &RequestCollector{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: requests.Name, Help: requests.Help, ConstLabels: labels,
		}, requests.Labels),
		ids: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ids.Name, Help: ids.Help, ConstLabels: labels,
		}, ids.Labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: duration.Name, Help: duration.Help, ConstLabels: labels, Buckets: promtext.RequestBuckets(),
		}, duration.Labels),
	}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Observe counts a request; the handler calls it (see [idserver.Observer]).
func (c *RequestCollector) Observe(o idserver.Outcome) {
	route, status, code := promtext.RequestLabels(o)
	c.requests.WithLabelValues(route, status, code).Inc()
	if o.IDs > 0 {
		c.ids.WithLabelValues(route).Add(float64(o.IDs))
	}
	c.duration.WithLabelValues(route).Observe(o.Duration.Seconds())
}

// Describe sends the descriptors of every metric.
func (c *RequestCollector) Describe(ch chan<- *prometheus.Desc) {
	c.requests.Describe(ch)
	c.ids.Describe(ch)
	c.duration.Describe(ch)
}

// Collect sends the counts so far.
func (c *RequestCollector) Collect(ch chan<- prometheus.Metric) {
	c.requests.Collect(ch)
	c.ids.Collect(ch)
	c.duration.Collect(ch)
}
