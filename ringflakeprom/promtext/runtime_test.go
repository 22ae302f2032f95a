package promtext_test

import (
	"bytes"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// GoRuntime and Process write the families client_golang's Go and
// process collectors (the ones `ringflake serve` registered before it
// used promtext) write, with the same names and types, and the same
// values where they cannot move between two reads.
func TestGoRuntimeAndProcessMatchClientGolang(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gathered, err := reg.Gather()
	require.NoError(t, err)
	want := map[string]*dto.MetricFamily{}
	for _, f := range gathered {
		want[f.GetName()] = f
	}

	h, err := promtext.NewHandler(promtext.GoRuntime(), promtext.Process())
	require.NoError(t, err)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.LegacyValidation)
	got, err := p.TextToMetricFamilies(bytes.NewReader(w.Body.Bytes()))
	require.NoError(t, err, w.Body.String())

	if runtime.GOOS != "linux" { // no /proc: the process collectors have nothing either
		for name := range got {
			assert.False(t, strings.HasPrefix(name, "process_"), name)
		}
		return
	}
	require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)))
	for name, f := range want {
		assert.Equal(t, f.GetType(), got[name].GetType(), name)
		assert.Len(t, got[name].GetMetric(), len(f.GetMetric()), name)
	}
	value := func(families map[string]*dto.MetricFamily, name string) float64 {
		m := families[name].GetMetric()[0]
		return m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	for _, name := range []string{"go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads",
		"process_max_fds", "process_virtual_memory_max_bytes", "process_start_time_seconds"} {
		assert.Equal(t, value(want, name), value(got, name), name)
	}
	assert.Equal(t, runtime.Version(), got["go_info"].GetMetric()[0].GetLabel()[0].GetValue())
	assert.Len(t, got["go_gc_duration_seconds"].GetMetric()[0].GetSummary().GetQuantile(), 5)
	// The rest move with every allocation and every scheduling of this
	// test; they are read, not invented: the process uses memory and has
	// files open.
	for _, name := range []string{"go_goroutines", "go_threads", "go_memstats_alloc_bytes", "go_memstats_sys_bytes",
		"go_memstats_heap_objects", "go_memstats_mallocs_total", "process_resident_memory_bytes", "process_open_fds",
		"process_virtual_memory_bytes"} {
		assert.Positive(t, value(got, name), name)
	}
}
