// Package ringflakeexpvar publishes a generator's counters ([ringflake.Stats])
// and a lease's events ([lease.EventStats], with the offset to the lease
// server's clock) through the standard library's expvar package, served as
// JSON on /debug/vars.
//
// It is a package of its own so that importing ringflake registers nothing
// and links neither expvar nor net/http: importing expvar registers the
// /debug/vars handler (with the command line and memory statistics) on
// http.DefaultServeMux of every program that imports it. Import this
// package only where you mean to serve them.
package ringflakeexpvar

import (
	"expvar"
	"fmt"
	"sync"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/lease"
)

// publishMu makes checking a name and publishing it one step.
var publishMu sync.Mutex

// Publish publishes g's [ringflake.Stats] as the expvar variable name, a
// JSON object computed each time it is read (for example when /debug/vars
// is served). expvar names are process-wide and cannot be withdrawn, so
// publish each generator once; an empty name, a name already in use and a
// nil g are errors matching [ringflake.ErrInvalidOption] rather than
// expvar's panic.
func Publish(name string, g *ringflake.Generator) error {
	if g == nil {
		return fmt.Errorf("%w: ringflakeexpvar.Publish(%q, nil)", ringflake.ErrInvalidOption, name)
	}
	return publish(name, func() any { return g.Stats() })
}

// PublishLease publishes the [lease.EventStats] of r — a lease's events
// counted by kind, its latest offset to the server's clock (Offset, in
// nanoseconds, with its Uncertainty and RoundTrip) and whether that was
// beyond MaxSkew (Skewed) — as the expvar variable name, computed each
// time it is read. Pass r.Record as the lease's Options.OnEvent. As for
// [Publish], an empty name, a name already in use and a nil r are errors
// matching [ringflake.ErrInvalidOption].
func PublishLease(name string, r *lease.Recorder) error {
	if r == nil {
		return fmt.Errorf("%w: ringflakeexpvar.PublishLease(%q, nil)", ringflake.ErrInvalidOption, name)
	}
	return publish(name, func() any { return r.Stats() })
}

// publish publishes f as name, once.
func publish(name string, f expvar.Func) error {
	publishMu.Lock()
	defer publishMu.Unlock()
	if name == "" || expvar.Get(name) != nil {
		return fmt.Errorf("%w: expvar name %q is empty or already published", ringflake.ErrInvalidOption, name)
	}
	expvar.Publish(name, f)
	return nil
}

// PublishClock publishes the last reading of m (see
// [clockhealth.Monitor.Last]) as the expvar variable name: a JSON object
// with source, at, status, synchronised, max_error_seconds,
// est_error_seconds, pending_correction_seconds, leap and detail (see
// [clockhealth.Reading.MarshalJSON]), or null before the monitor's first
// reading. Reading it reads no clock. An empty name, a name already in
// use and a nil m are errors matching [ringflake.ErrInvalidOption].
func PublishClock(name string, m *clockhealth.Monitor) error {
	if m == nil {
		return fmt.Errorf("%w: ringflakeexpvar.PublishClock(%q, nil)", ringflake.ErrInvalidOption, name)
	}
	return publish(name, expvar.Func(func() any {
		r, ok := m.Last()
		if !ok {
			return nil
		}
		return r
	}))
}
