package idserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// server is a handler on a generator of node 5 on a simulated clock.
type server struct {
	t   testing.TB
	clk *simclock.Clock
	gen *ringflake.Generator
	h   *idserver.Handler
}

// newServer builds a generator on a simulated clock with the options
// gopts (after WithClock) and a handler on it with hopts.
func newServer(t testing.TB, gopts []ringflake.Option, hopts ...idserver.Option) *server {
	t.Helper()
	clk := simclock.New(start)
	return newServerOn(t, clk, clk, gopts, hopts...)
}

func newServerOn(t testing.TB, clk *simclock.Clock, c ringflake.Clock, gopts []ringflake.Option, hopts ...idserver.Option) *server {
	t.Helper()
	g, err := ringflake.New(5, append([]ringflake.Option{ringflake.WithClock(c)}, gopts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	h, err := idserver.New(g, hopts...)
	require.NoError(t, err)
	return &server{t: t, clk: clk, gen: g, h: h}
}

// reply is any response body of the handler.
type reply struct {
	ID     string   `json:"id"`
	IDs    []string `json:"ids"`
	Status string   `json:"status"`
	Error  string   `json:"error"`
	Code   string   `json:"code"`
}

// get sends a GET for target and returns the recorded response and its
// decoded body; it checks what every JSON response has.
func (s *server) get(target string) (*httptest.ResponseRecorder, reply) {
	s.t.Helper()
	return s.do(http.MethodGet, target)
}

func (s *server) do(method, target string) (*httptest.ResponseRecorder, reply) {
	s.t.Helper()
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w, decode(s.t, w)
}

func decode(t testing.TB, w *httptest.ResponseRecorder) reply {
	t.Helper()
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))
	var r reply
	dec := json.NewDecoder(strings.NewReader(w.Body.String()))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&r), "body %q", w.Body.String())
	return r
}

// parseID reads an ID the handler wrote in enc.
func parseID(t *testing.T, enc encodings.Encoding, s string) ringflake.ID {
	t.Helper()
	id, err := enc.Parse(s)
	require.NoError(t, err)
	return id
}

func TestID(t *testing.T) {
	s := newServer(t, nil)
	l := s.gen.Layout()
	w, r := s.get("/v1/id")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	id := parseID(t, encodings.Decimal(), r.ID)
	want, err := l.Compose(start, 5, 0)
	require.NoError(t, err)
	assert.Equal(t, want, id, "the first ID of node 5 at the clock's start")
	assert.Equal(t, `{"id":"`+want.String()+`"}`+"\n", w.Body.String())

	_, r = s.get("/v1/id")
	assert.Equal(t, want+1, parseID(t, encodings.Decimal(), r.ID))
}

func TestIDs(t *testing.T) {
	s := newServer(t, nil)
	for _, n := range []int{1, 3, 1000} {
		w, r := s.get(fmt.Sprintf("/v1/ids?n=%d", n))
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.Len(t, r.IDs, n)
		prev := ringflake.ID(-1)
		for _, text := range r.IDs {
			id := parseID(t, encodings.Decimal(), text)
			assert.Greater(t, id, prev)
			assert.Equal(t, int64(5), id.Node(s.gen.Layout()))
			prev = id
		}
	}
	assert.Equal(t, uint64(1004), s.gen.Stats().Issued)
}

// Every encoding of encodings.All writes JSON strings that need no
// escaping, and reads back as the ID.
func TestFormats(t *testing.T) {
	s := newServer(t, nil)
	for _, enc := range encodings.All() {
		t.Run(enc.String(), func(t *testing.T) {
			w, r := s.get("/v1/id?format=" + enc.String())
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			id := parseID(t, enc, r.ID)
			assert.Equal(t, int64(5), id.Node(s.gen.Layout()))

			w, r = s.get("/v1/ids?format=" + enc.String() + "&n=3")
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.Len(t, r.IDs, 3)
			assert.Greater(t, parseID(t, enc, r.IDs[0]), id)
			if enc.Sortable() {
				assert.Less(t, r.IDs[0], r.IDs[2])
			}
		})
	}
}

func TestMaxBatch(t *testing.T) {
	s := newServer(t, nil, idserver.WithMaxBatch(5))
	w, r := s.get("/v1/ids?n=5")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Len(t, r.IDs, 5)
	w, r = s.get("/v1/ids?n=6")
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Contains(t, r.Error, "from 1 to 5")
}

// Bad input is 400 with {"error":…,"code":"bad_request"} naming what
// was wrong, and issues nothing. Every route refuses a query parameter it
// does not take, the metrics route too: its handler never sees the
// request.
func TestBadRequests(t *testing.T) {
	s := newServer(t, nil, idserver.WithMetricsHandler(metricsText(t)))
	for _, tc := range []struct {
		target string
		want   string // a fragment of the error
	}{
		{"/v1/ids?n=0", `n="0"`},
		{"/v1/ids?n=-1", `n="-1"`},
		{"/v1/ids?n=abc", `n="abc"`},
		{"/v1/ids?n=", `n=""`},
		{"/v1/ids?n=1001", `from 1 to 1000`},
		{"/v1/ids?n=99999999999999999999", `n="99999999999999999999"`},
		{"/v1/ids", "n is missing"},
		{"/v1/ids?n=1&n=2", `"n" given twice`},
		{"/v1/ids?n=1&count=2", `unknown query parameter "count"`},
		{"/v1/id?n=3", `unknown query parameter "n": /v1/id takes format`},
		{"/v1/id?format=base99", `format="base99"`},
		{"/v1/id?format=", `format=""`},
		{"/v1/ids?n=2&format=HEX%", "query"},
		{"/v1/parse/12x", `invalid ID "12x"`},
		{"/v1/parse/0x", `invalid ID "0x"`},
		{"/v1/parse/base99:abc", `unknown encoding "base99"`},
		{"/v1/parse/-5", `invalid ID "-5"`},
		{"/v1/parse/9007199254740992?layout=js-safe", "53 bits"},
		{"/v1/parse/1?layout=twitter,seq=13", `layout="twitter,seq=13"`},
		{"/v1/parse/1?format=base99", `format="base99"`},
		{"/v1/parse/1?n=1", `unknown query parameter "n"`},
		{"/healthz?x=1", `unknown query parameter "x": /healthz takes no query parameters`},
		{"/healthz?format=hex", `unknown query parameter "format"`},
		{"/readyz?x=1", `unknown query parameter "x": /readyz takes no query parameters`},
		{"/metrics?x=1", `unknown query parameter "x": /metrics takes no query parameters`},
		{"/metrics?%zz", "query"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			w, r := s.get(tc.target)
			assert.Equal(t, http.StatusBadRequest, w.Code)
			assert.Contains(t, r.Error, tc.want)
			assert.NotContains(t, r.Error, "ringflake:")
			assert.Equal(t, idserver.CodeBadRequest, r.Code)
			assert.Empty(t, r.ID)
			assert.Empty(t, r.IDs)
		})
	}
	assert.Zero(t, s.gen.Stats().Issued)
}

// /v1/parse/{id} returns the object of `ringflake parse -json` (package
// idtext), in the generator's layout or the one asked for, and reads the
// ID as parse does.
func TestParse(t *testing.T) {
	s := newServer(t, nil)
	for _, tc := range []struct {
		target string
		id     ringflake.ID
		layout ringflake.Layout
	}{
		{"/v1/parse/1541815603606036480", 1541815603606036480, ringflake.TwitterLayout()},
		{"/v1/parse/0x1565a11f6217a000", 1541815603606036480, ringflake.TwitterLayout()},
		{"/v1/parse/base58:4aaW4SzAyQK", 1541815603606036480, ringflake.TwitterLayout()},
		{"/v1/parse/FWWhH2IXoAA?format=base64", 1541815603606036480, ringflake.TwitterLayout()},
		{"/v1/parse/300?layout=sonyflake", 300, ringflake.SonyflakeLayout()},
	} {
		t.Run(tc.target, func(t *testing.T) {
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.target, nil))
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			want, err := idserver.Decompose(tc.layout, tc.id)
			require.NoError(t, err)
			b, err := json.Marshal(want)
			require.NoError(t, err)
			assert.Equal(t, string(b)+"\n", w.Body.String())
		})
	}
}

func TestHealthAndReady(t *testing.T) {
	s := newServer(t, nil)
	w, r := s.get("/healthz")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "ok", r.Status)
	w, r = s.get("/readyz")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "ready", r.Status)
	assert.Zero(t, s.gen.Stats().Issued, "a ready handler issues nothing to say so")
}

// After a crash (kill -9), the restarted generator must wait out what the
// crashed run reserved ahead of its IDs: /readyz says so (503, reserving)
// until the clock has passed the reservation, so that no request stalls
// for it, and is ready from then on. Saying so issues nothing.
func TestNotReadyDuringAReservation(t *testing.T) {
	l := ringflake.TwitterLayout()
	store := &markStore{mark: ringflake.Mark{Since: start.Add(-100 * time.Millisecond), Limit: start.Add(840 * time.Millisecond), Node: 5, Layout: l.String()}}
	s := newServer(t, []ringflake.Option{ringflake.WithMarkStore(store)})
	require.ErrorIs(t, s.h.Ready(context.Background()), idserver.ErrReserving)
	w, r := s.get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, idserver.CodeReserving, r.Code)
	assert.Equal(t, 841*time.Millisecond, s.gen.Stats().Reserved, "to the end of the reservation's last tick")

	s.clk.Add(841 * time.Millisecond)
	assert.Zero(t, s.gen.Stats().Reserved)
	w, r = s.get("/readyz")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "ready", r.Status)
	assert.Zero(t, s.gen.Stats().Issued, "a ready handler issues nothing to say so")
	_, r = s.get("/v1/id")
	assert.Zero(t, s.gen.Stats().ReservationWaits, "the first request waits for nothing")
}

// Wrong methods are 405 with Allow, unknown paths 404: JSON both, with
// their codes.
func TestMethodsAndPaths(t *testing.T) {
	s := newServer(t, nil, idserver.WithMetricsHandler(metricsText(t)))
	for _, tc := range []struct {
		method, target string
		status         int
	}{
		{http.MethodPost, "/v1/id", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/id", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/ids", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/ids?n=2", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/parse/1", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/v1/parse/1", http.StatusMethodNotAllowed},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed},
		{http.MethodPatch, "/readyz", http.StatusMethodNotAllowed},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/v1/idz", http.StatusNotFound},
		{http.MethodGet, "/v1/id/", http.StatusNotFound},
		{http.MethodGet, "//v1/id", http.StatusNotFound}, // JSON, not ServeMux's HTML redirect
		{http.MethodGet, "/v1//ids?n=2", http.StatusNotFound},
		{http.MethodGet, "/v1/../v1/id", http.StatusNotFound},
		{http.MethodGet, "/v1/parse/", http.StatusNotFound},
		{http.MethodGet, "/v1/parse/1/2", http.StatusNotFound},
		{http.MethodPost, "/nowhere", http.StatusNotFound},
		{http.MethodHead, "/v1/id", http.StatusMethodNotAllowed},
		{http.MethodHead, "/v1/ids?n=3", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			w, r := s.do(tc.method, tc.target)
			assert.Equal(t, tc.status, w.Code)
			assert.NotEmpty(t, r.Error)
			code := map[int]string{http.StatusNotFound: idserver.CodeNotFound, http.StatusMethodNotAllowed: idserver.CodeMethodNotAllowed}
			assert.Equal(t, code[tc.status], r.Code)
			if tc.status == http.StatusMethodNotAllowed {
				// The routes that issue IDs refuse HEAD too.
				allow := "GET, HEAD"
				if strings.HasPrefix(tc.target, "/v1/id") {
					allow = "GET"
				}
				assert.Equal(t, allow, w.Header().Get("Allow"))
			}
		})
	}
	assert.Zero(t, s.gen.Stats().Issued)
}

// metricsText is a metrics handler of the test's: it answers in plain
// text, and fails the test when it sees a query.
func metricsText(t testing.TB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Empty(t, r.URL.RawQuery, "the metrics handler saw a query")
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "mine_total 1\n")
	})
}

// /metrics serves the handler given, GET and HEAD; without one it is 404
// and the 404s do not list it.
func TestMetrics(t *testing.T) {
	s := newServer(t, nil, idserver.WithMetricsHandler(metricsText(t)))
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, httptest.NewRequest(method, "/metrics", nil))
		require.Equal(t, http.StatusOK, w.Code, method)
		assert.Equal(t, "text/plain", w.Header().Get("Content-Type"), method)
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, "mine_total 1\n", w.Body.String())
	_, r := s.get("/nowhere")
	assert.Contains(t, r.Error, "/readyz, /metrics")

	s = newServer(t, nil)
	w, r = s.get("/metrics")
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Equal(t, idserver.CodeNotFound, r.Code)
	_, r = s.get("/nowhere")
	assert.NotContains(t, r.Error, "/metrics")
	assert.Contains(t, r.Error, "/readyz")
}

func TestNewErrors(t *testing.T) {
	g, err := ringflake.New(1, ringflake.WithClock(simclock.New(start)))
	require.NoError(t, err)
	for name, f := range map[string]func() (*idserver.Handler, error){
		"nil generator":       func() (*idserver.Handler, error) { return idserver.New(nil) },
		"nil option":          func() (*idserver.Handler, error) { return idserver.New(g, nil) },
		"nil lease":           func() (*idserver.Handler, error) { return idserver.New(g, idserver.WithLease(nil)) },
		"nil metrics handler": func() (*idserver.Handler, error) { return idserver.New(g, idserver.WithMetricsHandler(nil)) },
		"nil observer":        func() (*idserver.Handler, error) { return idserver.New(g, idserver.WithObserver(nil)) },
		"batch of 0":          func() (*idserver.Handler, error) { return idserver.New(g, idserver.WithMaxBatch(0)) },
		"batch above limit": func() (*idserver.Handler, error) {
			return idserver.New(g, idserver.WithMaxBatch(idserver.MaxBatchLimit+1))
		},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := f()
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			assert.Nil(t, h)
		})
	}
}

// lease is a lease whose Held the test sets.
type lease struct {
	node int64
	held atomic.Bool
}

func (l *lease) Node() int64 { return l.node }
func (l *lease) Held() bool  { return l.held.Load() }

// markStore keeps a mark in memory, and fails to save while fail is set.
type markStore struct {
	fail atomic.Bool
	mu   sync.Mutex
	mark ringflake.Mark
}

var errDiskFull = errors.New("disk full")

func (m *markStore) LoadMark(context.Context) (ringflake.Mark, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mark, nil
}

func (m *markStore) SaveMark(_ context.Context, mark ringflake.Mark) error {
	if m.fail.Load() {
		return errDiskFull
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mark = mark
	return nil
}

// refuse is a strategy of a user's own that fails with an error of its
// own on a rollback.
type refuse struct{}

var errRefused = errors.New("refused")

func (refuse) Decide(s strategies.Situation) strategies.Plan {
	if !s.IsBehind() {
		return strategies.Pass()
	}
	return strategies.Fail(errRefused)
}
func (refuse) String() string { return "refuse" }

// A generator error is 503 with a stable code; the handler is not ready
// while the generator fails calls, and ready again once a call — its own
// probe or a client's — succeeds.
func TestGeneratorErrors(t *testing.T) {
	stepBack := func(d time.Duration) func(*server) {
		return func(s *server) {
			_, r := s.get("/v1/id") // something to be behind of
			require.NotEmpty(s.t, r.ID)
			s.clk.Step(-d)
			s.clk.Add(time.Millisecond) // the generator reads the wall clock once a tick
		}
	}
	lost := &lease{node: 5}
	store := &markStore{}
	for _, tc := range []struct {
		name     string
		strategy strategies.Strategy
		marks    ringflake.MarkStore
		lease    *lease
		fail     func(*server) // makes the generator fail
		recover  func(*server) // makes it work again; nil: it does not
		code     string
		after    string // Retry-After
	}{
		{
			name: "rollback", strategy: mustParse(t, "error"), fail: stepBack(1500 * time.Millisecond),
			recover: func(s *server) { s.clk.Add(1500 * time.Millisecond) },
			code:    idserver.CodeClockRollback, after: "2",
		},
		{
			name: "rollback past the wait", strategy: mustParse(t, "wait:5ms,error"), fail: stepBack(time.Second),
			recover: func(s *server) { s.clk.Add(time.Second) },
			code:    idserver.CodeClockRollback, after: "1",
		},
		{
			name: "lease lost", strategy: strategies.Default(), lease: lost,
			fail:    func(s *server) {},
			recover: func(s *server) { lost.held.Store(true) },
			code:    idserver.CodeLeaseLost,
		},
		{
			name: "strategy's own error", strategy: refuse{}, fail: stepBack(time.Minute),
			recover: func(s *server) { s.clk.Add(time.Minute) },
			code:    idserver.CodeUnavailable,
		},
		{
			name: "mark not saved", strategy: strategies.Default(), marks: store,
			fail: func(s *server) {
				store.fail.Store(true)
				s.clk.Add(2 * ringflake.DefaultMarkAhead) // past the mark New saved
			},
			recover: func(s *server) { store.fail.Store(false) },
			code:    idserver.CodeMarkNotSaved,
		},
		{
			name: "layout expired", strategy: strategies.Default(),
			fail: func(s *server) { s.clk.Add(ringflake.TwitterLayout().Last().Sub(start) + time.Millisecond) },
			code: idserver.CodeLayoutExpired,
		},
		{
			name: "before the epoch", strategy: strategies.Default(),
			fail: func(s *server) {
				s.clk.Set(ringflake.TwitterLayout().Spec().Epoch.Add(-time.Hour))
				s.clk.Add(time.Millisecond)
			},
			code: idserver.CodeBeforeEpoch,
		},
		{
			name: "closed", strategy: strategies.Default(),
			fail: func(s *server) { require.NoError(s.t, s.gen.Close(context.Background())) },
			code: idserver.CodeClosed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gopts := []ringflake.Option{ringflake.WithStrategy(tc.strategy)}
			var hopts []idserver.Option
			if tc.marks != nil {
				gopts = append(gopts, ringflake.WithMarkStore(tc.marks))
			}
			if tc.lease != nil {
				gopts = append(gopts, ringflake.WithLease(tc.lease))
				hopts = append(hopts, idserver.WithLease(tc.lease))
			}
			s := newServer(t, gopts, hopts...)
			tc.fail(s)
			issued := s.gen.Stats().Issued
			for _, target := range []string{"/v1/id", "/v1/ids?n=10", "/v1/id?format=base58", "/readyz"} {
				w, r := s.get(target)
				assert.Equal(t, http.StatusServiceUnavailable, w.Code, target)
				assert.Equal(t, tc.code, r.Code, target)
				assert.NotEmpty(t, r.Error, target)
				assert.NotContains(t, r.Error, "ringflake:", target)
				assert.Equal(t, tc.after, w.Header().Get("Retry-After"), target)
				assert.Empty(t, r.ID, target)
				assert.Empty(t, r.IDs, target)
			}
			assert.Equal(t, issued, s.gen.Stats().Issued, "a failed batch hands out nothing")
			w, _ := s.get("/healthz")
			assert.Equal(t, http.StatusOK, w.Code, "the process is up")
			if tc.recover == nil {
				return
			}
			tc.recover(s)
			w, r := s.get("/readyz")
			assert.Equal(t, http.StatusOK, w.Code, r.Error)
			w, r = s.get("/v1/id")
			assert.Equal(t, http.StatusOK, w.Code, r.Error)
		})
	}
}

func mustParse(t *testing.T, s string) strategies.Strategy {
	t.Helper()
	st, err := strategies.Parse(s)
	require.NoError(t, err)
	return st
}

func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{&strategies.RollbackError{Behind: time.Second}, idserver.CodeClockRollback},
		{fmt.Errorf("saving: %w", ringflake.ErrLeaseLost), idserver.CodeLeaseLost},
		{ringflake.ErrLayoutExpired, idserver.CodeLayoutExpired},
		{ringflake.ErrBeforeEpoch, idserver.CodeBeforeEpoch},
		{errors.Join(errors.New("other"), ringflake.ErrClosed), idserver.CodeClosed},
		{context.Canceled, idserver.CodeCanceled},
		{fmt.Errorf("probe: %w", context.DeadlineExceeded), idserver.CodeTimeout},
		{fmt.Errorf("%w: %w", ringflake.ErrMarkNotSaved, context.DeadlineExceeded), idserver.CodeMarkNotSaved},
		{errRefused, idserver.CodeUnavailable},
		{nil, idserver.CodeUnavailable},
	} {
		assert.Equal(t, tc.code, idserver.ErrorCode(tc.err), "%v", tc.err)
	}
}

// stuckClock is a simulated clock on which waits never end; After
// reports that a call waits.
type stuckClock struct {
	*simclock.Clock
	waiting chan struct{}
}

func (c stuckClock) After(time.Duration) <-chan time.Time {
	select {
	case c.waiting <- struct{}{}:
	default:
	}
	return nil
}

// A request passes its context to the generator: a caller that goes away
// while the generator waits for a tick ends the wait, and that does not
// make the handler unready.
func TestClientGoesAway(t *testing.T) {
	clk := stuckClock{Clock: simclock.New(start), waiting: make(chan struct{}, 1)}
	s := newServerOn(t, clk.Clock, clk, nil)
	tick := make([]ringflake.ID, 4096)
	_, err := s.gen.NextN(context.Background(), tick) // the tick is used up; the clock never moves
	require.NoError(t, err)

	guard, stop := context.WithTimeout(context.Background(), 10*time.Second) // hang guard
	defer stop()
	for _, target := range []string{"/v1/id", "/v1/ids?n=2"} {
		ctx, cancel := context.WithCancel(guard)
		done := make(chan *httptest.ResponseRecorder)
		go func() {
			w := httptest.NewRecorder()
			s.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil).WithContext(ctx))
			done <- w
		}()
		select {
		case <-clk.waiting:
		case <-guard.Done():
			t.Fatalf("%s: the generator never waited", target)
		}
		cancel()
		select {
		case w := <-done:
			assert.Equal(t, http.StatusServiceUnavailable, w.Code, target)
			assert.Equal(t, idserver.CodeCanceled, decode(t, w).Code, target)
		case <-guard.Done():
			t.Fatalf("%s: the request did not end with its context", target)
		}
	}
	w, r := s.get("/readyz")
	assert.Equal(t, http.StatusOK, w.Code, r.Error)
	assert.Equal(t, uint64(4096), s.gen.Stats().Issued)
}

// One failed call does not make the handler unready when the generator
// issues again: /readyz asks it for one ID, and only then.
func TestReadyProbesOnlyAfterAFailure(t *testing.T) {
	s := newServer(t, []ringflake.Option{ringflake.WithStrategy(mustParse(t, "error"))})
	_, r := s.get("/v1/id")
	require.NotEmpty(t, r.ID)
	s.clk.Step(-10 * time.Millisecond)
	s.clk.Add(time.Millisecond)
	w, _ := s.get("/v1/id")
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	s.clk.Add(10 * time.Millisecond) // the clock catches up before the next probe

	w, r = s.get("/readyz")
	assert.Equal(t, http.StatusOK, w.Code, r.Error)
	assert.Equal(t, uint64(2), s.gen.Stats().Issued, "the probe issued one ID")
	w, _ = s.get("/readyz")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, uint64(2), s.gen.Stats().Issued, "and the next probe none")
}

// Many goroutines, single IDs and batches: every ID unique.
func TestConcurrentRequests(t *testing.T) {
	s := newServer(t, nil)
	const goroutines, requests, batch = 8, 200, 37
	var (
		mu   sync.Mutex
		seen = make(map[ringflake.ID]bool)
		wg   sync.WaitGroup
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []string
			for i := range requests {
				target := "/v1/id"
				if (g+i)%2 == 0 {
					target = fmt.Sprintf("/v1/ids?n=%d", batch)
				}
				w := httptest.NewRecorder()
				s.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				if !assert.Equal(t, http.StatusOK, w.Code, w.Body.String()) {
					return
				}
				var r reply
				if !assert.NoError(t, json.Unmarshal(w.Body.Bytes(), &r)) {
					return
				}
				mine = append(append(mine, r.IDs...), r.ID)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, text := range mine {
				if text == "" {
					continue
				}
				id, err := ringflake.Parse(text)
				assert.NoError(t, err)
				assert.False(t, seen[id], "ID %d issued twice", id)
				seen[id] = true
			}
		}()
	}
	wg.Wait()
	assert.Len(t, seen, goroutines*requests/2*(1+batch))
	assert.Equal(t, uint64(len(seen)), s.gen.Stats().Issued)
}
