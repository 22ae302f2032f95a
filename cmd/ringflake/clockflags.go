package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// clockSourceHelp documents -clock-source.
const clockSourceHelp = "where the clock's health is read: kernel (adjtimex, read-only), chrony://HOST:PORT\n" +
	"(chronyd's command port, e.g. chrony://127.0.0.1:323), or clockbound:PATH (ClockBound's\n" +
	"shared-memory file, e.g. clockbound:" + clockhealth.DefaultClockBoundPath + ")"

// clockFlags are the flags of the commands that issue IDs (gen, serve)
// about the clock's health: what to require of it, and where to read it.
type clockFlags struct {
	requireSync *bool
	maxError    *time.Duration
	source      *string
}

// addClockFlags registers the clock health flags on fs.
func addClockFlags(fs *flag.FlagSet) *clockFlags {
	return &clockFlags{
		requireSync: fs.Bool("require-sync", false, "refuse to start unless -clock-source reports the clock synchronised"+
			"\n(serve: and report not ready while it does not)"),
		maxError: fs.Duration("max-clock-error", 0, "refuse to start unless -clock-source bounds the clock's error within this"+
			"\n(serve: and report not ready while it does not); 0: no bound"),
		source: fs.String("clock-source", "kernel", clockSourceHelp),
	}
}

// requirement returns what the flags require, or a usage error.
func (f *clockFlags) requirement() (clockhealth.Requirement, error) {
	q := clockhealth.Requirement{Synchronised: *f.requireSync, MaxError: *f.maxError}
	if q.Validate() != nil {
		return q, badValuef("-max-clock-error %v: want 0 (no bound) or a positive duration such as 100ms", *f.maxError)
	}
	return q, nil
}

// parseClockSource returns the source a -clock-source value names.
func parseClockSource(spec string) (clockhealth.Source, error) {
	switch {
	case spec == "kernel":
		return clockhealth.Kernel{}, nil
	case strings.HasPrefix(spec, "chrony://"):
		addr := strings.TrimPrefix(spec, "chrony://")
		if addr == "" || strings.ContainsAny(addr, "/?#") || !strings.Contains(addr, ":") {
			return nil, badValuef("-clock-source %q: want chrony://HOST:PORT, e.g. chrony://127.0.0.1:323", spec)
		}
		return chronyhealth.Source{Addr: addr}, nil
	case strings.HasPrefix(spec, "clockbound:"):
		path := strings.TrimPrefix(spec, "clockbound:")
		if path == "" {
			return nil, badValuef("-clock-source %q: want clockbound:PATH, e.g. clockbound:%s", spec, clockhealth.DefaultClockBoundPath)
		}
		return clockhealth.ClockBound{Path: path}, nil
	}
	return nil, badValuef("-clock-source %q: want kernel, chrony://HOST:PORT or clockbound:PATH", spec)
}

// clockGate is the clock health a command watches: the requirement and a
// monitor of the source, nil when the flags ask nothing.
type clockGate struct {
	req clockhealth.Requirement
	mon *clockhealth.Monitor
}

// open checks the flags and, when they ask something of the clock, reads
// the source once and refuses (an error of one line naming the source and
// what it reported) unless the reading meets the requirement. log, when
// not nil, receives a line at each later change of the clock's state.
// It returns nil when the flags ask nothing.
func (f *clockFlags) open(ctx context.Context, log io.Writer) (*clockGate, error) {
	q, err := f.requirement()
	if err != nil {
		return nil, err
	}
	src, err := parseClockSource(*f.source)
	if err != nil {
		return nil, err
	}
	if q.Zero() {
		return nil, nil
	}
	opts := []clockhealth.MonitorOption{}
	if log != nil {
		opts = append(opts, clockhealth.WithLogger(slog.New(slog.NewTextHandler(log, nil))))
	}
	mon, err := clockhealth.NewMonitor(src, opts...)
	if err != nil {
		return nil, err
	}
	r, err := mon.Poll(ctx)
	if err != nil {
		return nil, fmt.Errorf("clock health: %s", r)
	}
	if err := q.Check(r); err != nil {
		return nil, err
	}
	return &clockGate{req: q, mon: mon}, nil
}

// clockUnhealthyCode is the code of serve's /readyz 503 while the clock
// does not meet -require-sync or -max-clock-error.
const clockUnhealthyCode = "clock_unhealthy"

// readyz wraps next so that /readyz answers 503, with a JSON body naming
// the clock source and what it reported, while the monitor's last reading
// does not meet the requirement; otherwise next answers as usual (it has
// readiness conditions of its own). The check reads the last reading only:
// no source is read on a probe.
func (g *clockGate) readyz(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			if err := g.mon.Ready(g.req); err != nil {
				body, _ := json.Marshal(map[string]string{
					"error": strings.TrimPrefix(err.Error(), "ringflake: "),
					"code":  clockUnhealthyCode,
				})
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write(append(body, '\n'))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// metrics returns the clock health's metrics (ringflake_clock_…, the
// families of ringflakeprom.ClockCollector) for serve's /metrics.
func (g *clockGate) metrics() (promtext.Source, error) {
	return promtext.NewSource(promtext.ClockMetrics(), nil, g.mon.Last)
}
