package idserver

import (
	"net/http"
	"time"
)

// The routes of a handler, as an [Outcome] names them: the patterns it
// serves, each a fixed string, so that a metric labelled by route has
// these values only.
const (
	RouteID      = "/v1/id"
	RouteIDs     = "/v1/ids"
	RouteParse   = "/v1/parse/{id}"
	RouteHealth  = "/healthz"
	RouteReady   = "/readyz"
	RouteMetrics = "/metrics"
)

// An Observer learns the outcome of every request a [Handler] answers:
// give one to [New] with [WithObserver] to count requests, errors and
// IDs in the metrics system of your choice. Package ringflakeprom's
// RequestCollector is one for Prometheus; `ringflake serve` uses it.
//
// Observe is called on the request's goroutine once its response is
// written, so a slow Observe delays the next request on that
// connection; many requests call it at once, so it must be safe for
// concurrent use. The handler keeps nothing of the Outcome.
type Observer interface {
	Observe(Outcome)
}

// Outcome is what an [Observer] learns of one request.
type Outcome struct {
	// Route is one of the Route constants: the route that answered, also
	// when it answered 400 or 405. It is "" for a path no route serves
	// (a 404, or the redirect of an unclean path).
	Route string
	// Status is the response's HTTP status.
	Status int
	// Code is the "code" of an error response (one of the Code
	// constants), "" for a response that is not an error.
	Code string
	// IDs is how many IDs the response carries: 1 for /v1/id, n for
	// /v1/ids, 0 for anything else and for every error.
	IDs int
	// Duration is how long the handler took, from the request's arrival
	// in ServeHTTP to its return, on the system's monotonic clock.
	Duration time.Duration
}

// recorder is the ResponseWriter a request is served through when the
// handler has an Observer: it collects the request's Outcome. Recorders
// are pooled, so that observing allocates nothing.
type recorder struct {
	http.ResponseWriter
	out Outcome
}

// WriteHeader records the status.
func (rec *recorder) WriteHeader(status int) {
	if rec.out.Status == 0 {
		rec.out.Status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

// Write records the implicit 200 of a response without WriteHeader.
func (rec *recorder) Write(b []byte) (int, error) {
	if rec.out.Status == 0 {
		rec.out.Status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the ResponseWriter underneath
// (for Flush, deadlines), as a handler given with WithMetricsHandler
// may use them.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// observe serves a request through a recorder and reports its outcome.
func (h *Handler) observe(w http.ResponseWriter, r *http.Request) {
	begin := time.Now()
	rec := h.recs.Get().(*recorder)
	rec.ResponseWriter, rec.out = w, Outcome{}
	h.route(rec, r)
	out := rec.out
	rec.ResponseWriter = nil
	h.recs.Put(rec)
	if out.Status == 0 {
		out.Status = http.StatusOK // a handler that wrote nothing: net/http sends 200
	}
	out.Duration = time.Since(begin)
	h.observer.Observe(out)
}

// routed notes route for the Observer, if any, before f serves the
// request.
func routed(route string, f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := w.(*recorder); ok {
			rec.out.Route = route
		}
		f(w, r)
	}
}

// gave notes, for the Observer, that the response carries n IDs.
func gave(w http.ResponseWriter, n int) {
	if rec, ok := w.(*recorder); ok {
		rec.out.IDs = n
	}
}

// failedWith notes, for the Observer, the code of an error response.
func failedWith(w http.ResponseWriter, code string) {
	if rec, ok := w.(*recorder); ok {
		rec.out.Code = code
	}
}
