// Package causal carries the newest ringflake ID a request has seen from
// service to service in an HTTP header, so that a chain of services issues
// increasing IDs — each greater than every ID that caused it — across
// hosts whose clocks disagree, with wiring only:
//
//	mux := causal.Middleware(g, myHandler)           // incoming: Observe the header
//	client := &http.Client{Transport: causal.Transport(nil)} // outgoing: send it on
//
// and in the handler, IDs issued with [Next] (or recorded with [Saw]):
//
//	id, err := causal.Next(r.Context(), g)
//
// The middleware reads the [Header] of a request, makes the generator
// observe it ([ringflake.Generator.Observe]) and keeps the newest ID the
// request has seen in its context; the transport puts that ID on every
// outgoing request made with the context, and raises it with the header
// of the response; the middleware sets the header of its response to it,
// so the caller's transport learns the IDs issued on its behalf.
//
// It uses only the standard library. See docs/causal.md for gRPC metadata
// and message queues.
package causal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/ringflake/ringflake"
)

// Header is the HTTP header that carries the newest ID a request has
// seen, in decimal.
const Header = "Ringflake-After"

// seen is the newest ID a request has seen: -1 for none.
type seen struct{ v atomic.Int64 }

func (s *seen) raise(id ringflake.ID) {
	for {
		old := s.v.Load()
		if int64(id) <= old || s.v.CompareAndSwap(old, int64(id)) {
			return
		}
	}
}

type seenKey struct{}

// WithTracking returns a context that keeps the newest ID seen by the
// work it is passed to, starting from ctx's if ctx tracks already. The
// middleware calls it for every request; call it yourself where work
// starts without a request (a consumer of a queue, a job).
func WithTracking(ctx context.Context) context.Context {
	s := &seen{}
	s.v.Store(-1)
	if id, ok := Newest(ctx); ok {
		s.v.Store(int64(id))
	}
	return context.WithValue(ctx, seenKey{}, s)
}

// Saw records that the work of ctx has seen id (issued or received it).
// It does nothing when ctx does not track (see [WithTracking]).
func Saw(ctx context.Context, id ringflake.ID) {
	if s, ok := ctx.Value(seenKey{}).(*seen); ok && id >= 0 {
		s.raise(id)
	}
}

// Newest returns the newest ID the work of ctx has seen, if any.
func Newest(ctx context.Context) (ringflake.ID, bool) {
	s, ok := ctx.Value(seenKey{}).(*seen)
	if !ok {
		return 0, false
	}
	v := s.v.Load()
	return ringflake.ID(v), v >= 0
}

// Next issues an ID with g, greater than the newest ID the work of ctx
// has seen, and records it. It returns the errors of
// [ringflake.Generator.Observe] and [ringflake.Generator.NextContext].
func Next(ctx context.Context, g *ringflake.Generator) (ringflake.ID, error) {
	if id, ok := Newest(ctx); ok {
		if err := g.Observe(id); err != nil {
			return 0, err
		}
	}
	id, err := g.NextContext(ctx)
	if err != nil {
		return 0, err
	}
	Saw(ctx, id)
	return id, nil
}

// Middleware returns a handler that makes g observe the [Header] of each
// request before next runs, with a context that tracks the newest ID the
// request has seen (see [Next], [Saw], [Transport]), and sets the header
// of the response to that ID when next writes its header. A header that
// is not an ID, or an ID g refuses (further ahead of its clock than
// ringflake.WithMaxForward: [ringflake.ErrObservedTooFar]), is answered
// with 400 Bad Request and next does not run: IDs that would not follow
// their cause are not issued quietly.
func Middleware(g *ringflake.Generator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := WithTracking(r.Context())
		if h := r.Header.Get(Header); h != "" {
			id, err := ringflake.Parse(h)
			if err == nil {
				err = g.Observe(id)
			}
			if err != nil {
				status := http.StatusBadRequest
				if errors.Is(err, ringflake.ErrClosed) {
					status = http.StatusServiceUnavailable
				}
				http.Error(w, Header+": "+err.Error(), status)
				return
			}
			Saw(ctx, id)
		}
		cw := &writer{ResponseWriter: w, ctx: ctx}
		next.ServeHTTP(cw, r.WithContext(ctx))
		if !cw.wrote {
			cw.setHeader() // the server writes the header after next returns
		}
	})
}

// writer sets the header of the response when the handler writes it.
type writer struct {
	http.ResponseWriter
	ctx   context.Context
	wrote bool
}

func (w *writer) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.setHeader()
	}
	w.ResponseWriter.WriteHeader(status)
}

// setHeader sets the response's Header to the newest ID seen.
func (w *writer) setHeader() {
	if id, ok := Newest(w.ctx); ok {
		w.Header().Set(Header, strconv.FormatInt(int64(id), 10))
	}
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Transport returns a RoundTripper that sets the [Header] of each request
// whose context tracks an ID (see [WithTracking]) to the newest ID seen,
// and records the header of the response with [Saw]. A nil base is
// http.DefaultTransport.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{base}
}

type roundTripper struct{ base http.RoundTripper }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if id, ok := Newest(ctx); ok {
		r = r.Clone(ctx) // a RoundTripper must not change the caller's request
		r.Header.Set(Header, strconv.FormatInt(int64(id), 10))
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if h := resp.Header.Get(Header); h != "" {
		if id, err := ringflake.Parse(h); err == nil {
			Saw(ctx, id)
		}
	}
	return resp, nil
}
