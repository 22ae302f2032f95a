package clockhealth

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnsupported is returned by sources that cannot read on this system
// (the kernel source outside Linux, ClockBound outside Linux).
var ErrUnsupported = errors.New("ringflake: clock health source not supported on this system")

// ErrInvalidReading is matched by the errors of a source whose data is
// malformed (a ClockBound segment with a wrong magic number, size or
// version; a text form that does not parse).
var ErrInvalidReading = errors.New("ringflake: invalid clock health reading")

// ErrInvalidOption is matched by the errors of [NewMonitor] and of
// [Requirement.Validate] for a nil source, a non-positive interval or a
// negative bound.
var ErrInvalidOption = errors.New("ringflake: invalid clock health option")

// ErrClockNotSynchronised is matched by the [*HealthError] of
// [Requirement.Check] when synchronisation is required and the reading
// is not [StatusSynchronised].
var ErrClockNotSynchronised = errors.New("ringflake: clock not synchronised")

// ErrClockErrorTooLarge is matched by the [*HealthError] of
// [Requirement.Check] when the reading's maximum error is unknown or
// larger than the required bound.
var ErrClockErrorTooLarge = errors.New("ringflake: clock error beyond bound")

// ErrNoReading is matched by the error of [Monitor.Ready] before the
// monitor's first reading.
var ErrNoReading = errors.New("ringflake: no clock health reading yet")

// Requirement is what a service asks of its clock before it starts and
// while it reports ready. The zero Requirement asks nothing.
type Requirement struct {
	// Synchronised requires [StatusSynchronised].
	Synchronised bool
	// MaxError, when positive, requires a known maximum error of at
	// most MaxError from a synchronised clock: a clock that is not
	// synchronised (or whose status is unknown) has no bound, whatever
	// maximum error its source reports — an unsynchronised kernel reports
	// one that stops growing at 16 s, and a chronyd that never reached a
	// source one that only says how long ago it started.
	MaxError time.Duration
}

// Validate returns an error matching [ErrInvalidOption] for a negative
// MaxError.
func (q Requirement) Validate() error {
	if q.MaxError < 0 {
		return fmt.Errorf("%w: maximum clock error %v is negative", ErrInvalidOption, q.MaxError)
	}
	return nil
}

// Zero reports whether q asks nothing.
func (q Requirement) Zero() bool { return !q.Synchronised && q.MaxError <= 0 }

// Check returns nil when r meets q, and otherwise a [*HealthError] that
// matches [ErrClockNotSynchronised] or [ErrClockErrorTooLarge].
func (q Requirement) Check(r Reading) error {
	if q.Synchronised && r.Status != StatusSynchronised {
		return &HealthError{Reading: r, Requirement: q, cause: ErrClockNotSynchronised}
	}
	if q.MaxError > 0 && (r.Status != StatusSynchronised || !r.MaxErrorKnown || r.MaxError > q.MaxError) {
		return &HealthError{Reading: r, Requirement: q, cause: ErrClockErrorTooLarge}
	}
	return nil
}

// HealthError reports a reading that does not meet a [Requirement]. It
// matches [ErrClockNotSynchronised] or [ErrClockErrorTooLarge].
type HealthError struct {
	Reading     Reading
	Requirement Requirement
	cause       error
}

func (e *HealthError) Error() string {
	if e.cause == ErrClockErrorTooLarge {
		if e.Reading.Status != StatusSynchronised {
			return fmt.Sprintf("ringflake: clock error beyond %v: a clock that is not synchronised has no bound: %s", e.Requirement.MaxError, e.Reading)
		}
		return fmt.Sprintf("ringflake: clock error beyond %v: %s", e.Requirement.MaxError, e.Reading)
	}
	return fmt.Sprintf("ringflake: clock not synchronised: %s", e.Reading)
}

// Is reports whether target is the sentinel e stands for.
func (e *HealthError) Is(target error) bool { return target == e.cause }
