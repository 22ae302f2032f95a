package clockhealth

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Status says whether a source reports the clock as disciplined.
type Status int

const (
	// StatusUnknown: the source cannot tell (an unsupported system, a
	// read that failed, a ClockBound segment past its void-after time).
	StatusUnknown Status = iota
	// StatusSynchronised: the source reports the clock disciplined to a
	// reference, within Reading.MaxError of true time.
	StatusSynchronised
	// StatusUnsynchronised: the source reports the clock free-running or
	// not yet synchronised; its MaxError, when given, is only a bound the
	// source keeps growing.
	StatusUnsynchronised
)

var statusNames = [...]string{"unknown", "synchronised", "unsynchronised"}

// String returns "unknown", "synchronised" or "unsynchronised".
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("status(%d)", int(s))
	}
	return statusNames[s]
}

// MarshalText encodes s as its String form.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes the String form of a Status.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if string(b) == n {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown clock status %q", ErrInvalidReading, b)
}

// Leap is the leap-second state a source announces.
type Leap int

const (
	// LeapUnknown: the source does not say (or the clock is unsynchronised).
	LeapUnknown Leap = iota
	// LeapNone: no leap second pending.
	LeapNone
	// LeapInsert: a second is inserted at the end of the current UTC day.
	LeapInsert
	// LeapDelete: a second is deleted at the end of the current UTC day.
	LeapDelete
	// LeapInProgress: the inserted second is being played now.
	LeapInProgress
)

var leapNames = [...]string{"unknown", "none", "insert", "delete", "in-progress"}

// String returns "unknown", "none", "insert", "delete" or "in-progress".
func (l Leap) String() string {
	if l < 0 || int(l) >= len(leapNames) {
		return fmt.Sprintf("leap(%d)", int(l))
	}
	return leapNames[l]
}

// MarshalText encodes l as its String form.
func (l Leap) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText decodes the String form of a Leap.
func (l *Leap) UnmarshalText(b []byte) error {
	for i, n := range leapNames {
		if string(b) == n {
			*l = Leap(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown leap state %q", ErrInvalidReading, b)
}

// Reading is what a [Source] reported about the wall clock at one instant.
// The zero Reading is "nothing known": StatusUnknown, no source.
type Reading struct {
	// Source names where the reading came from: "kernel",
	// "chrony 127.0.0.1:323", "clockbound /var/run/clockbound/shm0".
	Source string
	// At is the wall-clock time the reading was taken.
	At time.Time
	// Status says whether the clock is disciplined.
	Status Status
	// MaxError bounds how far the clock may be from true time, as the
	// source computes it (see each source's doc); MaxErrorKnown is false
	// when the source gives no bound, and MaxError is then 0.
	MaxError      time.Duration
	MaxErrorKnown bool
	// EstError is the source's estimate of the clock's typical error
	// (0 when it gives none).
	EstError time.Duration
	// Pending is the correction the source is about to apply to the
	// clock: negative means the clock is ahead and will be moved back (a
	// rollback waiting to happen if it is stepped). PendingKnown is false
	// when the source cannot tell.
	Pending      time.Duration
	PendingKnown bool
	// Leap is the announced leap-second state.
	Leap Leap
	// Detail is the source's own words for its state, for people
	// ("TIME_ERROR, STA_UNSYNC", "leap status: not synchronised",
	// "read failed: ...").
	Detail string
}

// Synchronised reports whether r.Status is [StatusSynchronised].
func (r Reading) Synchronised() bool { return r.Status == StatusSynchronised }

// String describes r on one line, naming the source and what it reported:
//
//	kernel: unsynchronised (TIME_ERROR, STA_UNSYNC), max error 16s, est error 16s, leap unknown
func (r Reading) String() string {
	var b strings.Builder
	src := r.Source
	if src == "" {
		src = "no source"
	}
	fmt.Fprintf(&b, "%s: %s", src, r.Status)
	if r.Detail != "" {
		fmt.Fprintf(&b, " (%s)", r.Detail)
	}
	if r.MaxErrorKnown {
		fmt.Fprintf(&b, ", max error %v", r.MaxError)
		fmt.Fprintf(&b, ", est error %v", r.EstError)
	} else {
		b.WriteString(", max error unknown")
	}
	if r.PendingKnown {
		fmt.Fprintf(&b, ", pending correction %v", r.Pending)
	}
	fmt.Fprintf(&b, ", leap %s", r.Leap)
	return b.String()
}

// readingJSON is the JSON form of a Reading: durations in seconds (float)
// so that other tools read them without knowing Go's duration syntax.
type readingJSON struct {
	Source          string    `json:"source"`
	At              time.Time `json:"at"`
	Status          Status    `json:"status"`
	Synchronised    bool      `json:"synchronised"`
	MaxErrorSeconds *float64  `json:"max_error_seconds"`
	EstErrorSeconds float64   `json:"est_error_seconds"`
	PendingSeconds  *float64  `json:"pending_correction_seconds"`
	Leap            Leap      `json:"leap"`
	Detail          string    `json:"detail,omitempty"`
}

// MarshalJSON encodes r as an object with the fields source, at, status,
// synchronised, max_error_seconds (null when unknown), est_error_seconds,
// pending_correction_seconds (null when unknown), leap and detail.
func (r Reading) MarshalJSON() ([]byte, error) {
	j := readingJSON{
		Source: r.Source, At: r.At, Status: r.Status, Synchronised: r.Synchronised(),
		EstErrorSeconds: r.EstError.Seconds(), Leap: r.Leap, Detail: r.Detail,
	}
	if r.MaxErrorKnown {
		v := r.MaxError.Seconds()
		j.MaxErrorSeconds = &v
	}
	if r.PendingKnown {
		v := r.Pending.Seconds()
		j.PendingSeconds = &v
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (r *Reading) UnmarshalJSON(b []byte) error {
	var j readingJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Reading{Source: j.Source, At: j.At, Status: j.Status, EstError: seconds(j.EstErrorSeconds),
		Leap: j.Leap, Detail: j.Detail}
	if j.MaxErrorSeconds != nil {
		r.MaxError, r.MaxErrorKnown = seconds(*j.MaxErrorSeconds), true
	}
	if j.PendingSeconds != nil {
		r.Pending, r.PendingKnown = seconds(*j.PendingSeconds), true
	}
	return nil
}

// seconds converts a float number of seconds to a Duration, rounding to
// the nearest nanosecond and saturating far outside the Duration range.
func seconds(s float64) time.Duration {
	ns := s * 1e9
	switch {
	case ns != ns: // NaN
		return 0
	case ns >= float64(1<<63-1):
		return time.Duration(1<<63 - 1)
	case ns <= -float64(1<<63):
		return time.Duration(-1 << 63)
	}
	if ns < 0 {
		return time.Duration(ns - 0.5)
	}
	return time.Duration(ns + 0.5)
}

// Source is something that reports the clock's health. Read takes one
// reading now; it must be cheap enough to call about once a second and
// must not change the clock.
//
// When Read fails, it returns the error and a Reading with Source and At
// set, Status [StatusUnknown] and Detail saying what failed, so that a
// caller can still show and export where the failure came from.
type Source interface {
	Read(ctx context.Context) (Reading, error)
}

// SourceFunc adapts a function to a [Source].
type SourceFunc func(ctx context.Context) (Reading, error)

// Read calls f(ctx).
func (f SourceFunc) Read(ctx context.Context) (Reading, error) { return f(ctx) }
