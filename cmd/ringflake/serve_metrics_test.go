package main

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/simclock"
)

// serveFamilies are the families serve's /metrics exposes, as
// docs/serve.md lists them, with their types: the process_ ones on
// Linux only.
var serveFamilies = map[string]dto.MetricType{
	"ringflake_ids_issued_total":                 dto.MetricType_COUNTER,
	"ringflake_clock_rollbacks_total":            dto.MetricType_COUNTER,
	"ringflake_clock_freezes_total":              dto.MetricType_COUNTER,
	"ringflake_clock_rollback_largest_seconds":   dto.MetricType_GAUGE,
	"ringflake_ring_reuses_total":                dto.MetricType_COUNTER,
	"ringflake_borrowed_seconds_total":           dto.MetricType_COUNTER,
	"ringflake_max_lead_seconds":                 dto.MetricType_GAUGE,
	"ringflake_rollback_waits_total":             dto.MetricType_COUNTER,
	"ringflake_rollback_wait_seconds_total":      dto.MetricType_COUNTER,
	"ringflake_tick_waits_total":                 dto.MetricType_COUNTER,
	"ringflake_tick_wait_seconds_total":          dto.MetricType_COUNTER,
	"ringflake_errors_total":                     dto.MetricType_COUNTER,
	"ringflake_lead_seconds":                     dto.MetricType_GAUGE,
	"ringflake_layout_time_left_seconds":         dto.MetricType_GAUGE,
	"ringflake_http_requests_total":              dto.MetricType_COUNTER,
	"ringflake_http_ids_total":                   dto.MetricType_COUNTER,
	"ringflake_http_request_duration_seconds":    dto.MetricType_HISTOGRAM,
	"ringflake_clock_synchronised":               dto.MetricType_GAUGE,
	"ringflake_clock_info":                       dto.MetricType_GAUGE,
	"ringflake_clock_max_error_seconds":          dto.MetricType_GAUGE,
	"ringflake_clock_est_error_seconds":          dto.MetricType_GAUGE,
	"ringflake_clock_pending_correction_seconds": dto.MetricType_GAUGE,
	"ringflake_clock_read_timestamp_seconds":     dto.MetricType_GAUGE,
	"go_goroutines":                              dto.MetricType_GAUGE,
	"go_threads":                                 dto.MetricType_GAUGE,
	"go_info":                                    dto.MetricType_GAUGE,
	"go_sched_gomaxprocs_threads":                dto.MetricType_GAUGE,
	"go_gc_duration_seconds":                     dto.MetricType_SUMMARY,
	"go_gc_gogc_percent":                         dto.MetricType_GAUGE,
	"go_gc_gomemlimit_bytes":                     dto.MetricType_GAUGE,
	"go_memstats_last_gc_time_seconds":           dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes":                    dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes_total":              dto.MetricType_COUNTER,
	"go_memstats_sys_bytes":                      dto.MetricType_GAUGE,
	"go_memstats_mallocs_total":                  dto.MetricType_COUNTER,
	"go_memstats_frees_total":                    dto.MetricType_COUNTER,
	"go_memstats_heap_alloc_bytes":               dto.MetricType_GAUGE,
	"go_memstats_heap_sys_bytes":                 dto.MetricType_GAUGE,
	"go_memstats_heap_idle_bytes":                dto.MetricType_GAUGE,
	"go_memstats_heap_inuse_bytes":               dto.MetricType_GAUGE,
	"go_memstats_heap_released_bytes":            dto.MetricType_GAUGE,
	"go_memstats_heap_objects":                   dto.MetricType_GAUGE,
	"go_memstats_stack_inuse_bytes":              dto.MetricType_GAUGE,
	"go_memstats_stack_sys_bytes":                dto.MetricType_GAUGE,
	"go_memstats_mspan_inuse_bytes":              dto.MetricType_GAUGE,
	"go_memstats_mspan_sys_bytes":                dto.MetricType_GAUGE,
	"go_memstats_mcache_inuse_bytes":             dto.MetricType_GAUGE,
	"go_memstats_mcache_sys_bytes":               dto.MetricType_GAUGE,
	"go_memstats_buck_hash_sys_bytes":            dto.MetricType_GAUGE,
	"go_memstats_gc_sys_bytes":                   dto.MetricType_GAUGE,
	"go_memstats_other_sys_bytes":                dto.MetricType_GAUGE,
	"go_memstats_next_gc_bytes":                  dto.MetricType_GAUGE,
	"process_cpu_seconds_total":                  dto.MetricType_COUNTER,
	"process_resident_memory_bytes":              dto.MetricType_GAUGE,
	"process_virtual_memory_bytes":               dto.MetricType_GAUGE,
	"process_start_time_seconds":                 dto.MetricType_GAUGE,
	"process_open_fds":                           dto.MetricType_GAUGE,
	"process_max_fds":                            dto.MetricType_GAUGE,
	"process_virtual_memory_max_bytes":           dto.MetricType_GAUGE,
	"process_network_receive_bytes_total":        dto.MetricType_COUNTER,
	"process_network_transmit_bytes_total":       dto.MetricType_COUNTER,
}

// serve's /metrics, with the clock's health watched, is text a
// Prometheus server parses, holding the families docs/serve.md lists
// and the counts of the requests served before it.
func TestServeMetricsParse(t *testing.T) {
	g, err := ringflake.New(1, ringflake.WithClock(simclock.New(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	defer g.Close(context.Background())
	mon, err := clockhealth.NewMonitor(clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		return clockhealth.Reading{Source: `clockbound:/run/"odd"\path`, At: time.Unix(1772323200, 0),
			Status: clockhealth.StatusSynchronised, MaxError: time.Millisecond, MaxErrorKnown: true, PendingKnown: true}, nil
	}))
	require.NoError(t, err)
	_, err = mon.Poll(context.Background())
	require.NoError(t, err)
	clock, err := (&clockGate{mon: mon}).metrics()
	require.NoError(t, err)
	reqs, metrics, err := serveMetrics(g, clock)
	require.NoError(t, err)
	h, err := idserver.New(g, idserver.WithObserver(reqs), idserver.WithMetricsHandler(metrics))
	require.NoError(t, err)
	for _, target := range []string{"/v1/id", "/v1/ids?n=3", "/nowhere"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	}

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", w.Header().Get("Content-Type"))
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(w.Body.Bytes()))
	require.NoError(t, err, w.Body.String())

	want := maps.Clone(serveFamilies)
	if runtime.GOOS != "linux" {
		maps.DeleteFunc(want, func(name string, _ dto.MetricType) bool { return strings.HasPrefix(name, "process_") })
	}
	require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(families)))
	doc, err := os.ReadFile("../../docs/serve.md")
	require.NoError(t, err)
	for name, typ := range want {
		assert.Equal(t, typ, families[name].GetType(), name)
		listed := strings.Contains(string(doc), "`"+name+"`") || strings.Contains(string(doc), "`"+name+"{")
		assert.True(t, listed, "docs/serve.md does not list %s", name)
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
	series:
		for _, m := range families[name].GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
					return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}) {
					continue series
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
		t.Fatalf("no series of %s with %q", name, labels)
		return 0
	}
	assert.Equal(t, 4.0, value("ringflake_ids_issued_total"))
	assert.Equal(t, 3.0, value("ringflake_http_ids_total", "route", "/v1/ids"))
	assert.Equal(t, 1.0, value("ringflake_http_requests_total", "route", "other", "status", "404", "code", "not_found"))
	assert.Equal(t, 1.0, value("ringflake_http_request_duration_seconds", "route", "/v1/id"))
	assert.Equal(t, 0.001, value("ringflake_clock_max_error_seconds", "source", `clockbound:/run/"odd"\path`))
	assert.Equal(t, 1.0, value("ringflake_clock_info", "status", "synchronised"))
	assert.Equal(t, 1.0, value("go_info", "version", runtime.Version()))
	assert.Positive(t, value("go_goroutines"))
}
