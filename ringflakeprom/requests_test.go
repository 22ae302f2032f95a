package ringflakeprom_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/ringflakeprom"
	"github.com/ringflake/ringflake/simclock"
)

// A RequestCollector given to an ID server as its Observer counts its
// requests by route, status and code, and the IDs it served; the
// server's /metrics, given a registry holding it, serves them.
func TestRequestCollector(t *testing.T) {
	g, err := ringflake.New(3, ringflake.WithClock(simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	defer g.Close(context.Background())
	c, err := ringflakeprom.NewRequestCollector(prometheus.Labels{"node": "3"})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	h, err := idserver.New(g, idserver.WithObserver(c), idserver.WithMetricsHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	require.NoError(t, err)
	for _, target := range []string{"/v1/id", "/v1/id", "/v1/ids?n=10", "/v1/ids?n=0", "/healthz?x=1", "/nowhere"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodHead, "/v1/id", nil))

	expected := `
# HELP ringflake_http_ids_total IDs the ID server handed out in responses, by route.
# TYPE ringflake_http_ids_total counter
ringflake_http_ids_total{node="3",route="/v1/id"} 2
ringflake_http_ids_total{node="3",route="/v1/ids"} 10
# HELP ringflake_http_requests_total Requests the ID server answered, by route, status and error code.
# TYPE ringflake_http_requests_total counter
ringflake_http_requests_total{code="",node="3",route="/v1/id",status="200"} 2
ringflake_http_requests_total{code="",node="3",route="/v1/ids",status="200"} 1
ringflake_http_requests_total{code="bad_request",node="3",route="/healthz",status="400"} 1
ringflake_http_requests_total{code="bad_request",node="3",route="/v1/ids",status="400"} 1
ringflake_http_requests_total{code="method_not_allowed",node="3",route="/v1/id",status="405"} 1
ringflake_http_requests_total{code="not_found",node="3",route="other",status="404"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"ringflake_http_ids_total", "ringflake_http_requests_total"))
	// One duration series per route seen, each with every request of it.
	assert.Equal(t, 4, testutil.CollectAndCount(c, "ringflake_http_request_duration_seconds"))

	// /metrics serves them, and counts itself once served.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `ringflake_http_ids_total{node="3",route="/v1/ids"} 10`+"\n")
	assert.Contains(t, w.Body.String(), `ringflake_http_request_duration_seconds_count{node="3",route="/v1/id"} 3`+"\n")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Contains(t, w.Body.String(), `ringflake_http_requests_total{code="",node="3",route="/metrics",status="200"} 1`+"\n")
}

func TestRequestCollectorInvalidLabels(t *testing.T) {
	for name, labels := range map[string]prometheus.Labels{
		"route":      {"route": "x"},
		"status":     {"status": "x"},
		"code":       {"code": "x"},
		"empty name": {"": "x"},
		"reserved":   {"__name": "x"},
		"bad UTF-8":  {"node": "\xff"},
		"name UTF-8": {"\xff": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := ringflakeprom.NewRequestCollector(labels)
			require.ErrorIs(t, err, ringflakeprom.ErrInvalidLabels)
			assert.Nil(t, c)
		})
	}
}
