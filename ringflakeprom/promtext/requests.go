package promtext

import (
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/ringflake/ringflake/idserver"
)

// RequestDescs returns the families of an ID server's requests (package
// idserver), as package ringflakeprom's RequestCollector and [Requests]
// count them:
//
//	ringflake_http_requests_total{route,status,code}    counter: requests answered
//	ringflake_http_ids_total{route}                     counter: IDs served in responses
//	ringflake_http_request_duration_seconds{route}      histogram: time in the handler
//
// The label values of a request are [RequestLabels]', its duration
// histogram's buckets [RequestBuckets].
func RequestDescs() (requests, ids, duration Desc) {
	return Desc{"ringflake_http_requests_total", "Requests the ID server answered, by route, status and error code.",
			Counter, []string{"route", "status", "code"}},
		Desc{"ringflake_http_ids_total", "IDs the ID server handed out in responses, by route.", Counter, []string{"route"}},
		Desc{"ringflake_http_request_duration_seconds", "Time the ID server's handler took per request, by route.",
			Histogram, []string{"route"}}
}

// RequestBuckets returns the upper bounds, in seconds, of the buckets of
// ringflake_http_request_duration_seconds: a request takes microseconds
// unless the generator waits (a strategy's wait, a full tick, a slow mark
// store). Each call returns a new slice.
func RequestBuckets() []float64 {
	return []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

// RequestLabels returns the label values of a request's outcome: route is
// one of the idserver.Route constants, or "other" for a path no route
// serves; status the HTTP status; code the error body's code ("" for a
// response that is not an error). Each comes from a small fixed set, so
// the series stay few whatever clients send. It allocates nothing for the
// statuses an idserver.Handler sends.
func RequestLabels(o idserver.Outcome) (route, status, code string) {
	route = o.Route
	if route == "" {
		route = "other"
	}
	return route, statusText(o.Status), o.Code
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

// Requests counts the requests an ID server answers: it is an
// [idserver.Observer] — give it to the handler with idserver.WithObserver
// — and a [Source] of the families [RequestDescs] lists. It is what
// package ringflakeprom's RequestCollector is, without the Prometheus
// client. Make one with [NewRequests]; the zero Requests is not usable. It
// is safe for concurrent use.
type Requests struct {
	labels []Label // constant, sorted by name
	bounds []float64

	mu       sync.Mutex
	requests map[[3]string]uint64 // by route, status, code
	ids      map[string]uint64    // by route
	duration map[string]*histogram
}

// histogram is one route's durations: counts[i] observations at most
// bounds[i] and above bounds[i-1]; the rest are only in count.
type histogram struct {
	counts []uint64
	count  uint64
	sum    float64
}

// NewRequests returns an empty count of requests; labels, which may be
// nil, are added to every series. Labels as [ErrInvalidLabels] says
// (route, status, code and le among them) are an error matching it.
func NewRequests(labels map[string]string) (*Requests, error) {
	r := &Requests{bounds: RequestBuckets(), requests: map[[3]string]uint64{}, ids: map[string]uint64{},
		duration: map[string]*histogram{}}
	var err error
	if r.labels, err = constLabels(labels, r.Descs()); err != nil {
		return nil, err
	}
	return r, nil
}

// Observe counts a request; the handler calls it (see [idserver.Observer]).
func (r *Requests) Observe(o idserver.Outcome) {
	route, status, code := RequestLabels(o)
	d := o.Duration.Seconds()
	i := sort.SearchFloat64s(r.bounds, d) // the first bound ≥ d
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[[3]string{route, status, code}]++
	if o.IDs > 0 {
		r.ids[route] += uint64(o.IDs)
	}
	h := r.duration[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(r.bounds))}
		r.duration[route] = h
	}
	if i < len(h.counts) {
		h.counts[i]++
	}
	h.count++
	h.sum += d
}

// Descs returns the descriptors of [RequestDescs].
func (r *Requests) Descs() []Desc {
	requests, ids, duration := RequestDescs()
	return []Desc{requests, ids, duration}
}

// Families returns the counts so far; a family with no request yet is
// left out.
func (r *Requests) Families() []Family {
	requests, ids, duration := RequestDescs()
	fr, fi, fd := Family{Desc: requests}, Family{Desc: ids}, Family{Desc: duration}
	r.mu.Lock()
	for k, n := range r.requests {
		fr.Series = append(fr.Series, Series{Labels: seriesLabels(r.labels, requests.Labels, k[:]), Value: float64(n)})
	}
	for route, n := range r.ids {
		fi.Series = append(fi.Series, Series{Labels: seriesLabels(r.labels, ids.Labels, []string{route}), Value: float64(n)})
	}
	for route, h := range r.duration {
		s := Series{Labels: seriesLabels(r.labels, duration.Labels, []string{route}), Count: h.count, Sum: h.sum,
			Buckets: make([]Bucket, len(r.bounds))}
		var below uint64
		for i, b := range r.bounds {
			below += h.counts[i]
			s.Buckets[i] = Bucket{UpperBound: b, Count: below}
		}
		fd.Series = append(fd.Series, s)
	}
	r.mu.Unlock()
	var families []Family
	for _, f := range []Family{fr, fi, fd} {
		if len(f.Series) > 0 {
			sortSeries(f.Series)
			families = append(families, f)
		}
	}
	return slices.Clip(families)
}
