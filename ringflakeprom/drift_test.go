package ringflakeprom_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/ringflakeprom"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
	"github.com/ringflake/ringflake/segment"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// The collectors of this package, on a client_golang registry, and
// promtext's text writer, given the same generator, clock monitor, lease
// recorder, segment allocator and requests, expose the same families:
// names, types, help, labels and values, scraped and parsed as a
// Prometheus server parses them. The inputs move between scrapes, so a
// family that reads a stale value or leaves one out differs.
func TestPromtextMatchesCollectors(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	g, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Chain(strategies.Ring(), strategies.Error())))
	require.NoError(t, err)
	reading := clockhealth.Reading{Source: "clockbound:/run/a \"b\"\\c\nd", At: time.Unix(1795716979, 500_000_000),
		Status: clockhealth.StatusSynchronised, MaxError: 3 * time.Millisecond, MaxErrorKnown: true,
		EstError: time.Millisecond, Pending: -300 * time.Millisecond, PendingKnown: true, Leap: clockhealth.LeapNone}
	mon, err := clockhealth.NewMonitor(clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		return reading, nil
	}))
	require.NoError(t, err)
	var rec lease.Recorder
	seg := &fixedStats{Left: 1899, NextReady: true, Step: 1000, Ranges: 3, Prefetches: 2, RoundTrips: 7}
	labels := prometheus.Labels{"node": "3", "zone": "a\"\\\nb"}

	// The client_golang side.
	gc, err := ringflakeprom.NewCollector(g, labels)
	require.NoError(t, err)
	cc, err := ringflakeprom.NewClockCollector(mon, labels)
	require.NoError(t, err)
	lc, err := ringflakeprom.NewLeaseCollector(&rec, labels)
	require.NoError(t, err)
	sc, err := ringflakeprom.NewSegmentCollector(seg, labels)
	require.NoError(t, err)
	rc, err := ringflakeprom.NewRequestCollector(labels)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(gc, cc, lc, sc, rc)
	client := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})

	// The promtext side.
	gs, err := promtext.NewSource(promtext.GeneratorMetrics(), labels, func() (ringflake.Stats, bool) { return g.Stats(), true })
	require.NoError(t, err)
	cs, err := promtext.NewSource(promtext.ClockMetrics(), labels, mon.Last)
	require.NoError(t, err)
	ls, err := promtext.NewSource(promtext.LeaseMetrics(), labels, func() (lease.EventStats, bool) { return rec.Stats(), true })
	require.NoError(t, err)
	ss, err := promtext.NewSource(promtext.SegmentMetrics(), labels, func() (segment.Stats, bool) { return seg.Stats(), true })
	require.NoError(t, err)
	rs, err := promtext.NewRequests(labels)
	require.NoError(t, err)
	text, err := promtext.NewHandler(gs, cs, ls, ss, rs)
	require.NoError(t, err)

	observe := func(outcomes ...idserver.Outcome) {
		for _, o := range outcomes {
			rc.Observe(o)
			rs.Observe(o)
		}
	}
	same := func(phase string, wantFamilies int) {
		t.Helper()
		want, wantText := scrape(t, client)
		got, gotText := scrape(t, text)
		require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), "%s: the families", phase)
		assert.Len(t, got, wantFamilies, phase)
		for name, w := range want {
			assert.True(t, proto.Equal(w, got[name]), "%s: family %s differs:\nclient_golang:\n%s\npromtext:\n%s",
				phase, name, family(t, w), family(t, got[name]))
		}
		if t.Failed() {
			t.Logf("client_golang:\n%s\npromtext:\n%s", wantText, gotText)
		}
	}

	// Before anything happened: no clock reading, no lease offset, no
	// request.
	same("at the start", 14+1+11)

	for range 5 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	clk.Step(-2 * time.Millisecond)
	clk.Add(time.Millisecond)
	for range 4 {
		_, err := g.Next() // from spare room of tick 0
		require.NoError(t, err)
	}
	_, err = mon.Poll(context.Background())
	require.NoError(t, err)
	rec.Record(lease.Event{Kind: lease.RenewFailed})
	rec.Record(lease.Event{Kind: lease.Renewed, Offset: lease.Offset{Offset: -2500 * time.Millisecond,
		Uncertainty: 250 * time.Microsecond, RoundTrip: 500 * time.Microsecond, At: time.Unix(1795716979, 0)}})
	seg.Left, seg.Failing, seg.Errors = 0, true, 4
	observe(
		idserver.Outcome{Route: idserver.RouteID, Status: 200, IDs: 1, Duration: 100 * time.Microsecond}, // on a bound
		idserver.Outcome{Route: idserver.RouteID, Status: 200, IDs: 1, Duration: 30 * time.Millisecond},
		idserver.Outcome{Route: idserver.RouteIDs, Status: 200, IDs: 250, Duration: 12 * time.Second}, // above every bound
		idserver.Outcome{Route: idserver.RouteIDs, Status: 400, Code: idserver.CodeBadRequest, Duration: time.Microsecond},
		idserver.Outcome{Status: 404, Code: idserver.CodeNotFound, Duration: 2 * time.Microsecond},
		idserver.Outcome{Route: idserver.RouteHealth, Status: 418, Duration: 0},
	)
	same("after a rollback, a clock reading, lease events and requests", 14+6+5+11+3)

	// The clock source no longer bounds its error nor knows a pending
	// correction; the generator is closed and refuses a call.
	reading = clockhealth.Reading{Source: "kernel", At: time.Unix(1795716980, 0), Status: clockhealth.StatusUnsynchronised,
		EstError: 16 * time.Second, Leap: clockhealth.LeapUnknown}
	_, err = mon.Poll(context.Background())
	require.NoError(t, err)
	require.NoError(t, g.Close(context.Background()))
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClosed)
	observe(idserver.Outcome{Route: idserver.RouteID, Status: 503, Code: idserver.CodeClosed, Duration: 3 * time.Millisecond})
	same("after the clock lost its sync and the generator closed", 14+4+5+11+3)
}

// scrape returns the families h serves, as a Prometheus server's text
// parser reads them, and the text itself.
func scrape(t *testing.T, h http.Handler) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Header().Get("Content-Type"), "text/plain; version=0.0.4")
	body, err := io.ReadAll(w.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "%s", body)
	return families, string(body)
}

// family is f in the text format.
func family(t *testing.T, f *dto.MetricFamily) string {
	t.Helper()
	if f == nil {
		return "(none)"
	}
	var b bytes.Buffer
	_, err := expfmt.MetricFamilyToText(&b, f)
	require.NoError(t, err)
	return b.String()
}
