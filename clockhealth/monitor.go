package clockhealth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultInterval is how often a [Monitor] reads its source by default.
const DefaultInterval = time.Second

// Clock is what a [Monitor] needs of a clock: the wall clock to stamp
// failed reads and a way to wait. Both the clocks of
// github.com/benbjohnson/clock and *simclock.Clock satisfy it.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Monitor reads a [Source] in the background, every interval (about once
// a second by default), and keeps the last [Reading] so that readiness
// probes, metrics and logs read it without waiting and without locks.
// Make one with [NewMonitor] and start it with [Monitor.Run]; the zero
// Monitor has no source: Run and Poll return an error matching
// [ErrInvalidOption], and it has no reading. A Monitor is safe for concurrent use by
// multiple goroutines.
//
// A Monitor is never on the hot path of a generator: nothing issues IDs
// through it.
type Monitor struct {
	src      Source
	clk      Clock
	interval time.Duration
	onChange func(prev, cur Reading)
	logger   *slog.Logger

	last atomic.Pointer[Reading]
	// readMu makes each read-store-notify step one step, so that
	// notifications arrive in the order of the readings.
	readMu sync.Mutex
}

// MonitorOption configures a [Monitor].
type MonitorOption interface{ apply(*Monitor) error }

type monitorOption func(*Monitor) error

func (f monitorOption) apply(m *Monitor) error { return f(m) }

// WithInterval sets how often the Monitor reads its source (default
// [DefaultInterval]). A non-positive interval is an error matching
// [ErrInvalidOption].
func WithInterval(d time.Duration) MonitorOption {
	return monitorOption(func(m *Monitor) error {
		if d <= 0 {
			return fmt.Errorf("%w: monitor interval %v is not positive", ErrInvalidOption, d)
		}
		m.interval = d
		return nil
	})
}

// WithClock sets the clock the Monitor waits on and stamps failed reads
// with (default: the system clock). A nil clock is an error matching
// [ErrInvalidOption].
func WithClock(c Clock) MonitorOption {
	return monitorOption(func(m *Monitor) error {
		if c == nil {
			return fmt.Errorf("%w: nil monitor clock", ErrInvalidOption)
		}
		m.clk = c
		return nil
	})
}

// WithOnChange sets a function called, on the Monitor's goroutine, after
// each reading whose state differs from the one before (see
// [StateChanged]), and after the first reading with a zero prev. It must
// not block for long.
func WithOnChange(f func(prev, cur Reading)) MonitorOption {
	return monitorOption(func(m *Monitor) error {
		m.onChange = f
		return nil
	})
}

// WithLogger makes the Monitor log one line on l at each change of state
// (see [StateChanged]): Info when the clock becomes synchronised, Warn
// otherwise. Readings that change only in their error bounds are not
// logged.
func WithLogger(l *slog.Logger) MonitorOption {
	return monitorOption(func(m *Monitor) error {
		m.logger = l
		return nil
	})
}

// NewMonitor returns a Monitor of src. A nil src, or an invalid option,
// is an error matching [ErrInvalidOption].
func NewMonitor(src Source, opts ...MonitorOption) (*Monitor, error) {
	if src == nil {
		return nil, fmt.Errorf("%w: nil clock health source", ErrInvalidOption)
	}
	m := &Monitor{src: src, clk: realClock{}, interval: DefaultInterval}
	for _, o := range opts {
		if err := o.apply(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// StateChanged reports whether cur differs from prev in what a person
// watching the clock cares about: source, status or leap state. Changes
// of the error bounds alone are not state changes.
func StateChanged(prev, cur Reading) bool {
	return prev.Source != cur.Source || prev.Status != cur.Status || prev.Leap != cur.Leap
}

// Run reads the source at once and then every interval until ctx is
// done, and returns ctx's error. Run one Run per Monitor.
func (m *Monitor) Run(ctx context.Context) error {
	if m.src == nil {
		return errNoSource
	}
	for {
		m.Poll(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.clk.After(m.interval):
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Poll reads the source once now, stores the reading as the last one,
// and returns it with the source's error. A failed read is stored too, as
// the [StatusUnknown] Reading the source returned with its error, unless
// ctx was done (a read cut short by the caller says nothing about the
// clock, and is not stored).
func (m *Monitor) Poll(ctx context.Context) (Reading, error) {
	if m.src == nil {
		return Reading{}, errNoSource
	}
	m.readMu.Lock()
	defer m.readMu.Unlock()
	r, err := m.src.Read(ctx)
	if err != nil && ctx.Err() != nil {
		return r, err
	}
	if err != nil {
		r.Status = StatusUnknown
		if r.At.IsZero() {
			r.At = m.clk.Now()
		}
		if r.Detail == "" {
			r.Detail = err.Error()
		}
	}
	prev := m.last.Swap(&r)
	if prev == nil || StateChanged(*prev, r) {
		var p Reading
		if prev != nil {
			p = *prev
		}
		m.changed(p, r)
	}
	return r, err
}

// errNoSource is the error of the zero Monitor's Run and Poll.
var errNoSource = fmt.Errorf("%w: the zero Monitor has no source; make one with NewMonitor", ErrInvalidOption)

// changed logs and notifies a change of state from prev to cur.
func (m *Monitor) changed(prev, cur Reading) {
	if m.logger != nil {
		level := slog.LevelWarn
		if cur.Status == StatusSynchronised {
			level = slog.LevelInfo
		}
		attrs := []slog.Attr{
			slog.String("source", cur.Source),
			slog.String("status", cur.Status.String()),
			slog.String("previous", prev.Status.String()),
			slog.String("leap", cur.Leap.String()),
			slog.String("detail", cur.Detail),
		}
		if cur.MaxErrorKnown {
			attrs = append(attrs, slog.Duration("max_error", cur.MaxError))
		}
		if cur.PendingKnown {
			attrs = append(attrs, slog.Duration("pending_correction", cur.Pending))
		}
		m.logger.LogAttrs(context.Background(), level, "ringflake: clock health changed", attrs...)
	}
	if m.onChange != nil {
		m.onChange(prev, cur)
	}
}

// Last returns the last reading and true, or a zero Reading and false
// before the first. It does not block.
func (m *Monitor) Last() (Reading, bool) {
	p := m.last.Load()
	if p == nil {
		return Reading{}, false
	}
	return *p, true
}

// Ready returns nil when the last reading meets q, [ErrNoReading] before
// the first reading, and otherwise the [*HealthError] of
// [Requirement.Check]. It does not block and reads no source.
func (m *Monitor) Ready(q Requirement) error {
	r, ok := m.Last()
	if !ok {
		return ErrNoReading
	}
	return q.Check(r)
}
