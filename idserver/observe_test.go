package idserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/idserver"
)

// outcomes is an Observer that keeps what it learns.
type outcomes struct {
	mu  sync.Mutex
	got []idserver.Outcome
}

func (o *outcomes) Observe(out idserver.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, out)
}

// take returns the outcomes so far, without their durations, and forgets
// them.
func (o *outcomes) take() []idserver.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	for i := range got {
		got[i].Duration = 0
	}
	return got
}

// The Observer learns each request's route, status, code and IDs, and
// observing changes no response: a handler with an Observer answers a
// sequence of requests byte for byte as one without does, on a twin
// generator.
func TestObserver(t *testing.T) {
	obs := &outcomes{}
	observed := newServer(t, nil, idserver.WithObserver(obs), idserver.WithMetricsHandler(metricsText(t)))
	plain := newServer(t, nil, idserver.WithMetricsHandler(metricsText(t)))
	out := func(route string, status int, code string, ids int) idserver.Outcome {
		return idserver.Outcome{Route: route, Status: status, Code: code, IDs: ids}
	}
	for _, tc := range []struct {
		method, target string
		want           idserver.Outcome
	}{
		{http.MethodGet, "/v1/id", out(idserver.RouteID, 200, "", 1)},
		{http.MethodGet, "/v1/id?format=base58", out(idserver.RouteID, 200, "", 1)},
		{http.MethodGet, "/v1/ids?n=3", out(idserver.RouteIDs, 200, "", 3)},
		{http.MethodGet, "/v1/ids?n=0", out(idserver.RouteIDs, 400, idserver.CodeBadRequest, 0)},
		{http.MethodGet, "/v1/ids?n=2&x=1", out(idserver.RouteIDs, 400, idserver.CodeBadRequest, 0)},
		{http.MethodHead, "/v1/id", out(idserver.RouteID, 405, idserver.CodeMethodNotAllowed, 0)},
		{http.MethodPost, "/v1/ids?n=2", out(idserver.RouteIDs, 405, idserver.CodeMethodNotAllowed, 0)},
		{http.MethodGet, "/v1/parse/1541815603606036480", out(idserver.RouteParse, 200, "", 0)},
		{http.MethodGet, "/v1/parse/12x", out(idserver.RouteParse, 400, idserver.CodeBadRequest, 0)},
		{http.MethodGet, "/healthz", out(idserver.RouteHealth, 200, "", 0)},
		{http.MethodHead, "/healthz", out(idserver.RouteHealth, 200, "", 0)},
		{http.MethodGet, "/healthz?x=1", out(idserver.RouteHealth, 400, idserver.CodeBadRequest, 0)},
		{http.MethodGet, "/readyz", out(idserver.RouteReady, 200, "", 0)},
		{http.MethodPatch, "/readyz", out(idserver.RouteReady, 405, idserver.CodeMethodNotAllowed, 0)},
		{http.MethodGet, "/metrics", out(idserver.RouteMetrics, 200, "", 0)},
		{http.MethodGet, "/metrics?x=1", out(idserver.RouteMetrics, 400, idserver.CodeBadRequest, 0)},
		{http.MethodGet, "/nowhere", out("", 404, idserver.CodeNotFound, 0)},
		{http.MethodGet, "/v1//id", out("", 404, idserver.CodeNotFound, 0)}, // JSON, not ServeMux's redirect to the clean path
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			want := httptest.NewRecorder()
			plain.h.ServeHTTP(want, httptest.NewRequest(tc.method, tc.target, nil))
			got := httptest.NewRecorder()
			observed.h.ServeHTTP(got, httptest.NewRequest(tc.method, tc.target, nil))
			assert.Equal(t, want.Code, got.Code)
			assert.Equal(t, want.Header(), got.Header())
			assert.Equal(t, want.Body.String(), got.Body.String())
			if tc.want.Status == 0 {
				require.GreaterOrEqual(t, got.Code, 300)
				tc.want.Status = got.Code
			}
			assert.Equal(t, []idserver.Outcome{tc.want}, obs.take())
		})
	}

	// A generator that fails: a 503 with its code, and no IDs.
	require.NoError(t, observed.gen.Close(context.Background()))
	for _, target := range []string{"/v1/id", "/v1/ids?n=5"} {
		w, r := observed.get(target)
		require.Equal(t, http.StatusServiceUnavailable, w.Code)
		require.Equal(t, idserver.CodeClosed, r.Code)
	}
	w, _ := observed.get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, []idserver.Outcome{
		out(idserver.RouteID, 503, idserver.CodeClosed, 0),
		out(idserver.RouteIDs, 503, idserver.CodeClosed, 0),
		out(idserver.RouteReady, 503, idserver.CodeClosed, 0),
	}, obs.take())
}

// Many goroutines through an observed handler: each request is observed
// once, and the IDs the Observer counts are the IDs served.
func TestObserverConcurrent(t *testing.T) {
	obs := &outcomes{}
	s := newServer(t, nil, idserver.WithObserver(obs))
	const goroutines, requests = 8, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range requests {
				target := "/v1/id"
				if (g+i)%2 == 0 {
					target = "/v1/ids?n=3"
				}
				w := httptest.NewRecorder()
				s.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				assert.Equal(t, http.StatusOK, w.Code)
			}
		}()
	}
	wg.Wait()
	got := obs.take()
	require.Len(t, got, goroutines*requests)
	ids := 0
	for _, o := range got {
		assert.Equal(t, http.StatusOK, o.Status)
		ids += o.IDs
	}
	assert.Equal(t, goroutines*requests/2*(1+3), ids)
	assert.Equal(t, uint64(ids), s.gen.Stats().Issued)
}
