package promtext_test

import (
	"bytes"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// WriteText escapes help text and label values as the format says,
// spells NaN and the infinities as it does, and writes a histogram's
// buckets (adding +Inf), a summary's quantiles, and the _sum and _count
// of both; a Prometheus text parser reads it back.
func TestWriteText(t *testing.T) {
	families := []promtext.Family{
		{Desc: promtext.Desc{Name: "a_gauge", Help: "Backslash \\, line\nfeed, \"quotes\".", Type: promtext.Gauge, Labels: []string{"v"}},
			Series: []promtext.Series{
				{Labels: []promtext.Label{{"v", "nan"}}, Value: math.NaN()},
				{Labels: []promtext.Label{{"v", "+inf"}}, Value: math.Inf(1)},
				{Labels: []promtext.Label{{"v", "-inf"}}, Value: math.Inf(-1)},
				{Labels: []promtext.Label{{"v", "-0"}}, Value: math.Copysign(0, -1)},
				{Labels: []promtext.Label{{"v", "a\\b\"c\nd"}}, Value: 1234567},
				{Labels: []promtext.Label{{"v", "small"}}, Value: -0.00001},
			}},
		{Desc: promtext.Desc{Name: "b_total", Type: promtext.Counter}, Series: []promtext.Series{{Value: 20400}}},
		{Desc: promtext.Desc{Name: "c_seconds", Help: "A histogram.", Type: promtext.Histogram, Labels: []string{"route"}},
			Series: []promtext.Series{
				{Labels: []promtext.Label{{"route", "/x"}}, Count: 3, Sum: 2.5,
					Buckets: []promtext.Bucket{{UpperBound: 0.5, Count: 1}, {UpperBound: 1, Count: 2}}},
				{Count: 1, Sum: 0.25, Buckets: []promtext.Bucket{{UpperBound: 0.5, Count: 1}, {UpperBound: math.Inf(1), Count: 1}}},
			}},
		{Desc: promtext.Desc{Name: "d_seconds", Help: "A summary.", Type: promtext.Summary},
			Series: []promtext.Series{{Count: 4, Sum: 0.01, Quantiles: []promtext.Quantile{{0, 0.001}, {0.5, 0.002}, {1, 0.005}}}}},
	}
	var b bytes.Buffer
	require.NoError(t, promtext.WriteText(&b, families))
	assert.Equal(t, `# HELP a_gauge Backslash \\, line\nfeed, "quotes".
# TYPE a_gauge gauge
a_gauge{v="nan"} NaN
a_gauge{v="+inf"} +Inf
a_gauge{v="-inf"} -Inf
a_gauge{v="-0"} 0
a_gauge{v="a\\b\"c\nd"} 1.234567e+06
a_gauge{v="small"} -1e-05
# TYPE b_total counter
b_total 20400
# HELP c_seconds A histogram.
# TYPE c_seconds histogram
c_seconds_bucket{route="/x",le="0.5"} 1
c_seconds_bucket{route="/x",le="1"} 2
c_seconds_bucket{route="/x",le="+Inf"} 3
c_seconds_sum{route="/x"} 2.5
c_seconds_count{route="/x"} 3
c_seconds_bucket{le="0.5"} 1
c_seconds_bucket{le="+Inf"} 1
c_seconds_sum 0.25
c_seconds_count 1
# HELP d_seconds A summary.
# TYPE d_seconds summary
d_seconds{quantile="0"} 0.001
d_seconds{quantile="0.5"} 0.002
d_seconds{quantile="1"} 0.005
d_seconds_sum 0.01
d_seconds_count 4
`, b.String())

	p := expfmt.NewTextParser(model.LegacyValidation)
	parsed, err := p.TextToMetricFamilies(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	require.Len(t, parsed, 4)
	g := parsed["a_gauge"]
	assert.Equal(t, "Backslash \\, line\nfeed, \"quotes\".", g.GetHelp())
	assert.Equal(t, "a\\b\"c\nd", g.GetMetric()[4].GetLabel()[0].GetValue())
	assert.True(t, math.IsNaN(g.GetMetric()[0].GetGauge().GetValue()))
	assert.True(t, math.IsInf(g.GetMetric()[2].GetGauge().GetValue(), -1))
	h := parsed["c_seconds"].GetMetric()[0].GetHistogram()
	assert.Equal(t, uint64(3), h.GetSampleCount())
	assert.Len(t, h.GetBucket(), 3)
	assert.Len(t, parsed["d_seconds"].GetMetric()[0].GetSummary().GetQuantile(), 3)
}

// failingWriter fails every write.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWriteTextReturnsTheWritersError(t *testing.T) {
	errDisk := errors.New("disk full")
	err := promtext.WriteText(failingWriter{errDisk}, []promtext.Family{{Desc: promtext.Desc{Name: "x", Type: promtext.Gauge},
		Series: []promtext.Series{{Value: 1}}}})
	require.ErrorIs(t, err, errDisk)
}

// The handler answers with the text format's Content-Type whatever the
// request asks for, the families of its sources sorted by name.
func TestHandler(t *testing.T) {
	a, err := promtext.NewSource([]promtext.Metric[int]{{Desc: promtext.Desc{Name: "z_total", Help: "Z.", Type: promtext.Counter},
		Read: func(n int, emit func(float64, ...string)) { emit(float64(n)) }}}, nil, func() (int, bool) { return 7, true })
	require.NoError(t, err)
	b, err := promtext.NewSource([]promtext.Metric[string]{{Desc: promtext.Desc{Name: "a", Help: "A.", Type: promtext.Gauge,
		Labels: []string{"s"}}, Read: func(s string, emit func(float64, ...string)) { emit(1, s) }}},
		map[string]string{"node": "3"}, func() (string, bool) { return "x", true })
	require.NoError(t, err)
	h, err := promtext.NewHandler(a, b)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	r.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", w.Header().Get("Content-Type"))
	assert.Equal(t, "# HELP a A.\n# TYPE a gauge\na{node=\"3\",s=\"x\"} 1\n# HELP z_total Z.\n# TYPE z_total counter\nz_total 7\n",
		w.Body.String())

	_, err = promtext.NewHandler(a, a)
	require.ErrorIs(t, err, promtext.ErrInvalidSource, "two families named z_total")
	_, err = promtext.NewHandler(a, nil)
	require.ErrorIs(t, err, promtext.ErrInvalidSource)
}

func TestNewSourceRejects(t *testing.T) {
	read := func() (int, bool) { return 0, true }
	emitOne := func(_ int, emit func(float64, ...string)) { emit(1, "x") }
	metrics := []promtext.Metric[int]{{Desc: promtext.Desc{Name: "m", Type: promtext.Gauge, Labels: []string{"kind"}}, Read: emitOne}}
	for name, labels := range map[string]map[string]string{
		"a variable label": {"kind": "x"},
		"empty name":       {"": "x"},
		"reserved":         {"__name": "x"},
		"not classic":      {"a-b": "x"},
		"digit first":      {"1a": "x"},
		"bad UTF-8":        {"node": "\xff"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := promtext.NewSource(metrics, labels, read)
			require.ErrorIs(t, err, promtext.ErrInvalidLabels)
			assert.Nil(t, s)
		})
	}
	for name, tc := range map[string]struct {
		metrics []promtext.Metric[int]
		read    func() (int, bool)
	}{
		"nil read":        {metrics, nil},
		"a histogram":     {[]promtext.Metric[int]{{Desc: promtext.Desc{Name: "h", Type: promtext.Histogram}, Read: emitOne}}, read},
		"no type":         {[]promtext.Metric[int]{{Desc: promtext.Desc{Name: "h"}, Read: emitOne}}, read},
		"no Read":         {[]promtext.Metric[int]{{Desc: promtext.Desc{Name: "h", Type: promtext.Gauge}}}, read},
		"bad metric name": {[]promtext.Metric[int]{{Desc: promtext.Desc{Name: "a.b", Type: promtext.Gauge}, Read: emitOne}}, read},
		"bad label name":  {[]promtext.Metric[int]{{Desc: promtext.Desc{Name: "a", Type: promtext.Gauge, Labels: []string{"__x"}}, Read: emitOne}}, read},
		"twice the name":  {append(metrics, metrics[0]), read},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := promtext.NewSource(tc.metrics, nil, tc.read)
			require.ErrorIs(t, err, promtext.ErrInvalidSource)
			assert.Nil(t, s)
		})
	}
	// The metric's own label names and the histogram's le are refused
	// by NewRequests as well.
	for _, name := range []string{"route", "status", "code", "le"} {
		r, err := promtext.NewRequests(map[string]string{name: "x"})
		require.ErrorIs(t, err, promtext.ErrInvalidLabels, name)
		assert.Nil(t, r)
	}
}
