package idserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
)

// discard is a ResponseWriter that keeps nothing, so that a benchmark
// measures the handler rather than a recorder.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }

// BenchmarkHandler measures the handler alone, without the network and
// the HTTP server: what /v1/id costs beyond /healthz is the generator and
// the response's encoding.
func BenchmarkHandler(b *testing.B) {
	g, err := ringflake.New(0, ringflake.WithLayout(mustLayout(b, "twitter,node=0,seq=22"))) // uncapped
	if err != nil {
		b.Fatal(err)
	}
	plain, err := idserver.New(g)
	if err != nil {
		b.Fatal(err)
	}
	observed, err := idserver.New(g, idserver.WithObserver(countOutcomes{}))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"/healthz", "/v1/id", "/v1/id?format=base58", "/v1/ids?n=100", "/v1/id observed"} {
		target, obs := strings.CutSuffix(name, " observed")
		h := plain
		if obs {
			h = observed // the cost of WithObserver: a pooled recorder and the clock, twice
		}
		b.Run(name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, target, nil)
			w := &discard{header: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				h.ServeHTTP(w, r)
			}
			if w.status != 0 && w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		})
	}
}

// countOutcomes is an Observer as cheap as one can be: it counts.
type countOutcomes struct{}

var outcomesSeen atomic.Int64

func (countOutcomes) Observe(idserver.Outcome) { outcomesSeen.Add(1) }

func mustLayout(b *testing.B, s string) ringflake.Layout {
	l, err := ringflake.ParseLayout(s)
	if err != nil {
		b.Fatal(err)
	}
	return l
}
