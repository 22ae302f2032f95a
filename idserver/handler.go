package idserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/opaque"
)

// DefaultMaxBatch is the largest n /v1/ids accepts unless [WithMaxBatch]
// says otherwise: 1000 IDs, about 23 KB of JSON in decimal.
const DefaultMaxBatch = 1000

// MaxBatchLimit is the largest maximum [WithMaxBatch] accepts: a batch
// holds its IDs and their JSON in memory until it is written.
const MaxBatchLimit = 65536

// ProbeTimeout bounds the call [Handler.Ready] makes to learn whether a
// generator that failed a call issues again.
const ProbeTimeout = time.Second

// Handler is an [http.Handler] serving the IDs of one generator (see the
// package documentation for its endpoints). Make one with [New]; the zero
// Handler is not usable. It is safe for concurrent use.
type Handler struct {
	gen      *ringflake.Generator
	lease    ringflake.Lease // nil without WithLease
	maxBatch int
	mux      *http.ServeMux
	observer Observer      // nil without WithObserver
	opaque   *opaque.Codec // nil without WithOpaque
	notFound string        // the routes a 404 lists

	// failing is set when a call through the handler failed and cleared
	// when one succeeds; Ready probes the generator while it is set.
	failing atomic.Bool
	probe   sync.Mutex // one probe at a time
	// reserving is set until Ready finds the generator past a previous
	// run's reservation (ringflake.Stats.Reserved), which does not come
	// back.
	reserving atomic.Bool

	healthy, ready []byte // the bodies of /healthz and /readyz

	bufs sync.Pool // *[]byte, a response being written
	ids  sync.Pool // *[]ringflake.ID of maxBatch IDs
	recs sync.Pool // *recorder, with an Observer
}

// An Option configures a [Handler] in [New].
type Option interface {
	apply(*config)
}

type config struct {
	lease    ringflake.Lease
	maxBatch int
	metrics  http.Handler
	observer Observer
	opaque   *opaque.Codec
	err      error
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithLease makes readiness depend on l, the lease the generator's node id
// is held under (the one given to ringflake.WithLease): [Handler.Ready]
// fails with ringflake.ErrLeaseLost while l.Held is false. A nil l is an
// error of [New].
func WithLease(l ringflake.Lease) Option {
	return optionFunc(func(c *config) {
		if l == nil {
			c.invalid("WithLease(nil)")
			return
		}
		c.lease = l
	})
}

// WithMaxBatch sets the largest n /v1/ids accepts; the default is
// [DefaultMaxBatch]. n must be from 1 to [MaxBatchLimit], or [New] fails.
func WithMaxBatch(n int) Option {
	return optionFunc(func(c *config) {
		if n < 1 || n > MaxBatchLimit {
			c.invalid("WithMaxBatch(%d): want 1 to %d", n, MaxBatchLimit)
			return
		}
		c.maxBatch = n
	})
}

// WithMetricsHandler serves m on /metrics: the handler of whatever
// metrics system the program uses (for Prometheus, promhttp.HandlerFor a
// registry holding a ringflakeprom collector). The route's rules are the
// handler's, not m's: GET and HEAD only, and no query parameters, so m
// sees only parameter-less GET and HEAD requests. Without this option
// /metrics is 404. A nil m is an error of [New].
func WithMetricsHandler(m http.Handler) Option {
	return optionFunc(func(c *config) {
		if m == nil {
			c.invalid("WithMetricsHandler(nil)")
			return
		}
		c.metrics = m
	})
}

// WithObserver makes the handler report the outcome of every request it
// answers to o (see [Observer]). Without it, or the default, the handler
// reports nothing and reads no clock. A nil o is an error of [New].
func WithObserver(o Observer) Option {
	return optionFunc(func(c *config) {
		if o == nil {
			c.invalid("WithObserver(nil)")
			return
		}
		c.observer = o
	})
}

// WithOpaque makes format=opaque (the public text of package opaque, with
// its key version and check characters) and format=opaque-number (the
// public number) available on /v1/id, /v1/ids and /v1/parse/{id}, through
// c: the codec of the IDs' type, with its keys and tweak. Without it those
// formats are a 400. A nil c is an error of [New].
func WithOpaque(c *opaque.Codec) Option {
	return optionFunc(func(cfg *config) {
		if c == nil {
			cfg.invalid("WithOpaque(nil)")
			return
		}
		cfg.opaque = c
	})
}

func (c *config) invalid(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: idserver: "+format, append([]any{ringflake.ErrInvalidOption}, args...)...)
	}
}

// New returns a handler serving g's IDs. The handler does not close g: the
// program that made g closes it once the server has stopped (see
// ringflake.Generator.Close). Errors match ringflake.ErrInvalidOption: a
// nil g, a nil or invalid option.
func New(g *ringflake.Generator, opts ...Option) (*Handler, error) {
	cfg := config{maxBatch: DefaultMaxBatch}
	for _, o := range opts {
		if o == nil {
			cfg.invalid("nil Option")
			continue
		}
		o.apply(&cfg)
	}
	if g == nil {
		cfg.invalid("nil generator")
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	h := &Handler{gen: g, lease: cfg.lease, maxBatch: cfg.maxBatch, mux: http.NewServeMux(), observer: cfg.observer, opaque: cfg.opaque,
		healthy: []byte(`{"status":"ok"}` + "\n"), ready: []byte(`{"status":"ready"}` + "\n")}
	h.reserving.Store(true)
	h.bufs.New = func() any { b := make([]byte, 0, 64); return &b }
	h.ids.New = func() any { ids := make([]ringflake.ID, h.maxBatch); return &ids }
	h.recs.New = func() any { return new(recorder) }

	routes := []string{RouteID, RouteIDs + "?n=N", RouteParse, RouteHealth, RouteReady}
	h.handle(RouteID, allowGet, getOnly(h.serveID))
	h.handle(RouteIDs, allowGet, getOnly(h.serveIDs))
	h.handle(RouteParse, allowGetHead, h.serveParse)
	h.handle(RouteHealth, allowGetHead, h.serveHealth)
	h.handle(RouteReady, allowGetHead, h.serveReady)
	if cfg.metrics != nil {
		h.handle(RouteMetrics, allowGetHead, serveMetrics(cfg.metrics))
		routes = append(routes, RouteMetrics)
	}
	h.notFound = strings.Join(routes, ", ")
	h.mux.HandleFunc("/", h.serveNotFound)
	return h, nil
}

// The Allow header of a 405: the routes that issue IDs refuse HEAD
// (getOnly), the others answer it as GET.
const (
	allowGet     = "GET"
	allowGetHead = "GET, HEAD"
)

// handle routes GET (and HEAD) requests for path to f. The same path
// without a method matches every other method (the pattern with GET is
// more specific), so that a wrong method gets a JSON 405, with allow as
// its Allow header, rather than ServeMux's text one.
// The route is noted for an Observer (see routed).
func (h *Handler) handle(path, allow string, f http.HandlerFunc) {
	h.mux.HandleFunc("GET "+path, routed(path, f))
	h.mux.HandleFunc(path, routed(path, methodNotAllowed(allow)))
}

// serveMetrics serves m on /metrics, which takes no query parameters.
func serveMetrics(m http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := readQuery(r.URL.RawQuery, RouteMetrics, 0); err != nil {
			badRequest(w, err)
			return
		}
		m.ServeHTTP(w, r)
	}
}

// ServeHTTP serves a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.observer == nil {
		h.route(w, r)
		return
	}
	h.observe(w, r)
}

// route serves r through the routes. A path that is not clean (//v1/id,
// /v1/../v1/id) is a 404 in JSON, as every other path no route serves,
// rather than the HTML redirect http.ServeMux answers it with.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p != cleanPath(p) {
		h.serveNotFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// cleanPath returns p as http.ServeMux cleans it before it routes: rooted,
// without . and .. elements or repeated slashes, with its trailing slash
// kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// Ready reports whether the handler should get traffic: nil when it
// should, otherwise the reason, an error whose [ErrorCode] /readyz
// returns. It is not ready
//   - while the lease of [WithLease] does not hold the node id
//     (ringflake.ErrLeaseLost), and
//   - while the generator's clock has not passed the time a previous run
//     reserved ahead before it crashed ([ErrReserving]): a request would
//     wait for it, and
//   - after a call through the handler failed (a rollback the strategy
//     fails on, a lost lease, the generator closed, …), until a call
//     succeeds again.
//
// A call that failed only because its request ended (the caller went
// away) does not count. After a failed call Ready asks the generator for
// one ID itself (within [ProbeTimeout]) and is ready if it gets one, so
// that one transient failure never makes the handler unready by itself,
// and a handler that gets no traffic, being unready, still learns when the
// generator issues again. Without a failed call Ready issues nothing and
// costs two atomic loads and the lease's Held.
func (h *Handler) Ready(ctx context.Context) error {
	if h.lease != nil && !h.lease.Held() {
		return ringflake.ErrLeaseLost
	}
	if h.reserving.Load() {
		if r := h.gen.Stats().Reserved; r > 0 {
			return fmt.Errorf("%w: %v to go", ErrReserving, r)
		}
		h.reserving.Store(false) // a reservation ends for good
	}
	if !h.failing.Load() {
		return nil
	}
	h.probe.Lock()
	defer h.probe.Unlock()
	if !h.failing.Load() {
		return nil // a call succeeded while this one waited for the probe
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	if _, err := h.gen.NextContext(ctx); err != nil {
		return err
	}
	h.failing.Store(false)
	return nil
}

// succeeded records a call that returned IDs.
func (h *Handler) succeeded() {
	if h.failing.Load() {
		h.failing.Store(false)
	}
}

// failed records a failed call and writes its 503.
func (h *Handler) failed(w http.ResponseWriter, err error) {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !h.failing.Load() {
		h.failing.Store(true)
	}
	unavailable(w, err)
}

// request is what an endpoint's query asked for.
type request struct {
	n      int // /v1/ids
	enc    encodings.Encoding
	opaque textOpaque // format=opaque or opaque-number: enc is not used

	// after is the ID of after=, which the answer's IDs must follow
	// (Generator.Observe); hasAfter says it was given.
	after    ringflake.ID
	hasAfter bool
	layout   ringflake.Layout
}

// textOpaque is a public ID form of a request: none, the text, or the
// number.
type textOpaque uint8

const (
	notOpaque textOpaque = iota
	opaqueText
	opaqueNumber
)

// appendID appends id in the request's format.
func (h *Handler) appendID(b []byte, req request, id ringflake.ID) []byte {
	switch req.opaque {
	case opaqueText:
		b, _ = h.opaque.AppendText(b, id) // only a negative ID fails, and a generator issues none
		return b
	case opaqueNumber:
		n, _ := h.opaque.Encode(id)
		return strconv.AppendInt(b, n, 10)
	}
	return req.enc.Append(b, id)
}

// parseID reads an ID in the request's format.
func (h *Handler) parseID(s string, req request) (ringflake.ID, error) {
	switch req.opaque {
	case opaqueText:
		return h.opaque.Parse(s)
	case opaqueNumber:
		n, err := ringflake.Parse(s)
		if err != nil {
			return 0, err
		}
		return h.opaque.Decode(int64(n))
	}
	return ParseID(s, req.enc)
}

// read reads the query of a request for route, which takes the parameters
// allow. It writes the 400 of a bad query itself, and then returns false.
func (h *Handler) read(w http.ResponseWriter, r *http.Request, route string, allow param) (request, bool) {
	req := request{layout: h.gen.Layout()}
	q, err := readQuery(r.URL.RawQuery, route, allow)
	if err == nil && allow&paramN != 0 {
		req.n, err = q.count(h.maxBatch)
	}
	if err == nil {
		switch q.format {
		case "opaque", "opaque-number":
			if h.opaque == nil {
				err = fmt.Errorf("format=%s: this server has no opaque keys", q.format)
			} else if req.opaque = opaqueText; q.format == "opaque-number" {
				req.opaque = opaqueNumber
			}
		default:
			req.enc, err = q.encoding()
		}
	}
	if err == nil && q.set&paramLayout != 0 {
		req.layout, err = q.parseLayout()
	}
	if err == nil && q.set&paramAfter != 0 {
		if req.opaque != notOpaque {
			// A client of public IDs passes on the public ID it saw.
			if req.after, err = h.parseID(q.after, req); err != nil {
				err = fmt.Errorf("after=%q: %w", q.after, err)
			}
		} else {
			req.after, err = q.afterID(req.enc)
		}
		req.hasAfter = true
	}
	if err != nil {
		badRequest(w, err)
		return req, false
	}
	return req, true
}

// buffer returns a buffer for a response from the pool; send gives it
// back.
func (h *Handler) buffer() *[]byte { return h.bufs.Get().(*[]byte) }

// send writes b, a response built on the buffer bp, and puts bp back.
func (h *Handler) send(w http.ResponseWriter, bp *[]byte, b []byte) {
	writeJSON(w, http.StatusOK, b)
	*bp = b
	h.bufs.Put(bp)
}

func (h *Handler) serveID(w http.ResponseWriter, r *http.Request) {
	req, ok := h.read(w, r, RouteID, paramFormat|paramAfter)
	if !ok || !h.follow(w, req) {
		return
	}
	id, err := h.gen.NextContext(r.Context())
	if err != nil {
		h.failed(w, err)
		return
	}
	h.succeeded()
	gave(w, 1)
	bp := h.buffer()
	b := append((*bp)[:0], `{"id":"`...)
	b = h.appendID(b, req, id)
	h.send(w, bp, append(b, "\"}\n"...))
}

func (h *Handler) serveIDs(w http.ResponseWriter, r *http.Request) {
	req, ok := h.read(w, r, RouteIDs, paramN|paramFormat|paramAfter)
	if !ok || !h.follow(w, req) {
		return
	}
	ip := h.ids.Get().(*[]ringflake.ID)
	defer h.ids.Put(ip)
	ids := (*ip)[:req.n]
	if _, err := h.gen.NextN(r.Context(), ids); err != nil {
		h.failed(w, err)
		return
	}
	h.succeeded()
	gave(w, len(ids))
	bp := h.buffer()
	b := append((*bp)[:0], `{"ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = h.appendID(b, req, id)
		b = append(b, '"')
	}
	h.send(w, bp, append(b, "]}\n"...))
}

func (h *Handler) serveParse(w http.ResponseWriter, r *http.Request) {
	req, ok := h.read(w, r, RouteParse, paramFormat|paramLayout)
	if !ok {
		return
	}
	id, err := h.parseID(r.PathValue("id"), req)
	if err != nil {
		badRequest(w, err)
		return
	}
	p, err := Decompose(req.layout, id)
	if err != nil {
		badRequest(w, err)
		return
	}
	b, err := json.Marshal(p)
	if err != nil { // cannot happen: Parts holds numbers, a time and an ID
		unavailable(w, err)
		return
	}
	writeJSON(w, http.StatusOK, append(b, '\n'))
}

func (h *Handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.read(w, r, RouteHealth, 0); !ok {
		return
	}
	writeJSON(w, http.StatusOK, h.healthy)
}

func (h *Handler) serveReady(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.read(w, r, RouteReady, 0); !ok {
		return
	}
	if err := h.Ready(r.Context()); err != nil {
		unavailable(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.ready)
}

// methodNotAllowed answers a method the route does not take: 405 with
// allow as the Allow header.
func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s: use GET", r.Method, r.URL.Path), CodeMethodNotAllowed)
	}
}

// getOnly refuses HEAD on the endpoints that issue IDs: a HEAD request
// would issue IDs nobody sees (a monitor's probe, a proxy's check).
func getOnly(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Allow", allowGet)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("HEAD is not allowed on %s: it would issue IDs nobody sees; use GET", r.URL.Path), CodeMethodNotAllowed)
			return
		}
		f(w, r)
	}
}

func (h *Handler) serveNotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("no such path %q: see %s", r.URL.Path, h.notFound), CodeNotFound)
}

// follow makes the answer's IDs follow after=, when given: an ID the
// generator refuses (too far ahead of its clock, or not of its layout) is
// a 400 that issues nothing. It writes the error itself and then returns
// false.
func (h *Handler) follow(w http.ResponseWriter, req request) bool {
	if !req.hasAfter {
		return true
	}
	err := h.gen.Observe(req.after)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ringflake.ErrObservedTooFar):
		writeError(w, http.StatusBadRequest, "after: "+message(err), CodeTooFarAhead)
	case errors.Is(err, ringflake.ErrClosed):
		h.failed(w, err)
	default:
		badRequest(w, fmt.Errorf("after: %s", message(err)))
	}
	return false
}
