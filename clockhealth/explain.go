package clockhealth

import (
	"context"
	"log/slog"

	"github.com/ringflake/ringflake"
)

// Explain returns a rollback hook, for [ringflake.WithRollbackHook], that
// calls f with each rollback the generator meets and the reading m read
// last (ok is false before the first): a rollback comes with the clock's
// health at the time — whether anything disciplined the clock, how far
// off it could be, what correction was pending — so that it is explained,
// not only counted. It reads no source: the monitor's background reads
// keep the reading fresh, and the hook stays as cheap as f.
func (m *Monitor) Explain(f func(e ringflake.RollbackEvent, r Reading, ok bool)) func(ringflake.RollbackEvent) {
	return func(e ringflake.RollbackEvent) {
		r, ok := m.Last()
		f(e, r, ok)
	}
}

// LogRollbacks returns a rollback hook, for [ringflake.WithRollbackHook],
// that logs each rollback to l at level Warn (Error when the call failed)
// with the event's fields and the clock health m read last
// (clock_source, clock_status, clock_max_error, clock_pending_correction).
// It takes the place of [ringflake.WithLogger] where a monitor runs.
func (m *Monitor) LogRollbacks(l *slog.Logger) func(ringflake.RollbackEvent) {
	return m.Explain(func(e ringflake.RollbackEvent, r Reading, ok bool) {
		level := slog.LevelWarn
		if e.Err != nil {
			level = slog.LevelError
		}
		attrs := []slog.Attr{
			slog.Time("at", e.At), slog.Duration("behind", e.Behind),
			slog.String("strategy", e.Strategy), slog.Duration("waited", e.Waited),
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("error", e.Err.Error()))
		}
		if ok {
			attrs = append(attrs, slog.String("clock_source", r.Source), slog.String("clock_status", r.Status.String()))
			if r.MaxErrorKnown {
				attrs = append(attrs, slog.Duration("clock_max_error", r.MaxError))
			}
			if r.PendingKnown {
				attrs = append(attrs, slog.Duration("clock_pending_correction", r.Pending))
			}
		}
		l.LogAttrs(context.Background(), level, "ringflake: clock behind the newest ID", attrs...)
	})
}
