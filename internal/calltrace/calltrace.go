// Package calltrace lets the replay of package scenario learn why one call
// of a generator took the time it took: a clock given to the generator
// (WithClock) that is also a [Tracer] is told every wait of the slow path,
// by cause. The fast path never waits, and the context carries nothing.
package calltrace

import "time"

// A Cause is what a wait was for.
type Cause uint8

const (
	// Capacity: a tick with room — the next tick when the current one's
	// sequence is used up, and callers ahead in line.
	Capacity Cause = iota
	// Strategy: a sleep the strategy asked for (a wait strategy waiting
	// out a rollback, a logical one at its lead).
	Strategy
	// Reservation: the ticks a previous run's mark reserved, after a
	// restart.
	Reservation
)

// A Tracer is told each wait of a generator's calls, after the wait,
// from the goroutine of the call that waited: it slept d on the clock for
// cause. A generator looks for it on the clock it is given.
type Tracer interface {
	Waited(cause Cause, d time.Duration)
}

// A Call is what one call of a generator waited for, by cause. Each field
// is the time the call slept on the generator's clock for that cause.
type Call struct {
	Strategy    time.Duration
	Capacity    time.Duration
	Reservation time.Duration
}

// Add counts a wait of d for cause.
func (c *Call) Add(cause Cause, d time.Duration) {
	switch cause {
	case Strategy:
		c.Strategy += d
	case Reservation:
		c.Reservation += d
	default:
		c.Capacity += d
	}
}
