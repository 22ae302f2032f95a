package causal_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/causal"
	"github.com/ringflake/ringflake/simclock"
)

var start = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func newGen(t *testing.T, node int64, skew time.Duration) *ringflake.Generator {
	t.Helper()
	g, err := ringflake.New(node, ringflake.WithClock(simclock.New(start.Add(skew))))
	require.NoError(t, err)
	return g
}

// A calls B while handling a request: B's clock is 400 ms behind A's and
// its node id sorts below. With the middleware on both and the transport
// on A's client, B's ID follows A's first one and A's second follows B's,
// with no code beyond the wiring and causal.Next.
func TestChainOfServices(t *testing.T) {
	gA, gB := newGen(t, 2, 0), newGen(t, 1, -400*time.Millisecond)
	b := httptest.NewServer(causal.Middleware(gB, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := causal.Next(r.Context(), gB)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, id)
	})))
	defer b.Close()
	client := &http.Client{Transport: causal.Transport(nil)}
	defer client.CloseIdleConnections()

	var first, fromB, second ringflake.ID
	a := httptest.NewServer(causal.Middleware(gA, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		if first, err = causal.Next(r.Context(), gA); !assert.NoError(t, err) {
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, b.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if !assert.NoError(t, err) {
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		fromB, err = ringflake.Parse(strings.TrimSpace(string(body)))
		require.NoError(t, err)
		second, err = causal.Next(r.Context(), gA) // after B's answer, through the response header
		assert.NoError(t, err)
	})))
	defer a.Close()

	resp, err := http.Get(a.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Greater(t, fromB, first, "B's ID follows A's, though B's clock is behind")
	assert.Greater(t, second, fromB, "A's next ID follows B's")
	assert.Equal(t, strconv.FormatInt(int64(second), 10), resp.Header.Get(causal.Header), "A's response carries its newest")
}

// A header that is not an ID, or one too far ahead, is a 400 and the
// handler does not run.
func TestMiddlewareRefuses(t *testing.T) {
	g := newGen(t, 1, 0)
	ran := false
	h := causal.Middleware(g, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
	far, err := g.Layout().Compose(start.Add(5*time.Second), 3, 0)
	require.NoError(t, err)
	for _, v := range []string{"x", "-5", far.String()} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(causal.Header, v)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusBadRequest, w.Code, v)
	}
	assert.False(t, ran)
	assert.Equal(t, uint64(1), g.Stats().ObserveRefused, "the far ID was refused by the generator")
}

// Without tracking, Saw and Newest do nothing and Next is the
// generator's Next.
func TestWithoutTracking(t *testing.T) {
	g := newGen(t, 1, 0)
	ctx := context.Background()
	causal.Saw(ctx, 42)
	_, ok := causal.Newest(ctx)
	assert.False(t, ok)
	id, err := causal.Next(ctx, g)
	require.NoError(t, err)
	assert.Positive(t, id)

	ctx = causal.WithTracking(ctx)
	causal.Saw(ctx, id+5)
	causal.Saw(ctx, id)
	got, ok := causal.Newest(ctx)
	assert.True(t, ok)
	assert.Equal(t, id+5, got, "the newest, never moved back")
}
