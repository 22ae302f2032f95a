package idserver_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// Mount the handler under a prefix of your own server. (The simulated
// clock makes the output the same on every run; leave WithClock out to
// use the system clock.)
func Example() {
	clk := simclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	g, err := ringflake.New(7, ringflake.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close(context.Background()) // after the server has stopped: saves the exact mark, if any
	h, err := idserver.New(g, idserver.WithMaxBatch(500))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ids/", http.StripPrefix("/ids", h))

	for _, target := range []string{"/ids/v1/id", "/ids/v1/ids?n=2&format=hex", "/ids/v1/ids?n=0", "/ids/readyz"} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// 200 {"id":"2028077791441874944"}
	// 200 {"ids":["1c252e018fc07001","1c252e018fc07002"]}
	// 400 {"error":"n=\"0\": want a number from 1 to 500","code":"bad_request"}
	// 200 {"status":"ready"}
}

// idsByRoute is an Observer: it counts the IDs served by each route, as a
// program would in its own metrics system.
type idsByRoute struct {
	mu  sync.Mutex
	ids map[string]int
}

func (c *idsByRoute) Observe(o idserver.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids[o.Route] += o.IDs
}

// Inject metrics: an Observer learns every request's outcome, and
// WithMetricsHandler serves your metrics system's handler on /metrics.
// (Package ringflakeprom has both for Prometheus.)
func ExampleWithObserver() {
	g, err := ringflake.New(7, ringflake.WithClock(simclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close(context.Background())
	counts := &idsByRoute{ids: map[string]int{}}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		counts.mu.Lock()
		defer counts.mu.Unlock()
		fmt.Fprintf(w, "ids %d\n", counts.ids[idserver.RouteID]+counts.ids[idserver.RouteIDs])
	})
	h, err := idserver.New(g, idserver.WithObserver(counts), idserver.WithMetricsHandler(metrics))
	if err != nil {
		log.Fatal(err)
	}
	for _, target := range []string{"/v1/id", "/v1/ids?n=5", "/v1/ids?n=0", "/metrics"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		if target == "/metrics" {
			fmt.Print(w.Body.String())
		}
	}
	// Output: ids 6
}

// ErrorCode names a generator error for the "code" of a 503.
func ExampleErrorCode() {
	fmt.Println(idserver.ErrorCode(&strategies.RollbackError{Behind: 3 * time.Millisecond}))
	fmt.Println(idserver.ErrorCode(ringflake.ErrLeaseLost))
	// Output:
	// clock_rollback
	// lease_lost
}
