package ringflakeprom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ringflake/ringflake/idserver"
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
// usable. It is safe for concurrent use.
type RequestCollector struct {
	requests *prometheus.CounterVec
	ids      *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// requestBuckets are the upper bounds, in seconds, of the duration
// histogram: a request takes microseconds unless the generator waits
// (a strategy's wait, a full tick, a slow mark store).
var requestBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// NewRequestCollector returns a collector of an ID server's requests;
// labels, which may be nil, are added to every metric (for example the
// node id, when one process serves several generators).
//
// Labels Prometheus refuses, and the names route, status and code, which
// the metrics use themselves, are an error matching [ErrInvalidLabels].
func NewRequestCollector(labels prometheus.Labels) (*RequestCollector, error) {
	c := &RequestCollector{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ringflake_http_requests_total", Help: "Requests the ID server answered, by route, status and error code.",
			ConstLabels: labels,
		}, []string{"route", "status", "code"}),
		ids: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ringflake_http_ids_total", Help: "IDs the ID server handed out in responses, by route.",
			ConstLabels: labels,
		}, []string{"route"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ringflake_http_request_duration_seconds", Help: "Time the ID server's handler took per request, by route.",
			ConstLabels: labels, Buckets: requestBuckets,
		}, []string{"route"}),
	}
	if err := checkDescs(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Observe counts a request; the handler calls it (see [idserver.Observer]).
func (c *RequestCollector) Observe(o idserver.Outcome) {
	route := o.Route
	if route == "" {
		route = "other"
	}
	c.requests.WithLabelValues(route, statusText(o.Status), o.Code).Inc()
	if o.IDs > 0 {
		c.ids.WithLabelValues(route).Add(float64(o.IDs))
	}
	c.duration.WithLabelValues(route).Observe(o.Duration.Seconds())
}

// statusText is status as a label value, without allocating for the
// statuses the handler sends.
func statusText(status int) string {
	switch status {
	case 200:
		return "200"
	case 400:
		return "400"
	case 404:
		return "404"
	case 405:
		return "405"
	case 503:
		return "503"
	}
	return strconv.Itoa(status)
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
