package scenario

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalid is matched (with [errors.Is]) by every error about a scenario
// that cannot be replayed: a malformed file, an unknown field or event, a
// value of the wrong type, a negative duration, a bad time, an unknown
// strategy in the expectations. The details, with the file, line and field,
// are in an [*Error].
var ErrInvalid = errors.New("scenario: invalid scenario")

// errCrashed is what a crashed run's handle on the replay's mark store
// returns for every save the run tries after its crash.
var errCrashed = errors.New("scenario: the process crashed")

// Error reports what is wrong with a scenario and where. It matches
// [ErrInvalid] with [errors.Is], and through Unwrap the more specific
// error behind it, when there is one: strategies.ErrInvalidStrategy for an
// unknown strategy, ringflake.ErrInvalidLayout for a bad layout,
// ringflake.ErrNodeOutOfRange for a node the layout cannot hold,
// ringflake.ErrInvalidOption for a mark interval the generator refuses.
type Error struct {
	File   string // the file's path, or the name given to Parse; may be empty
	Line   int    // 1-based line in the file, or 0 when unknown
	Field  string // where in the scenario, e.g. "events[2].step" or "load.rate"; may be empty
	Reason string // what is wrong
	Err    error  // the more specific cause, or nil
}

// Error returns a message of the form
// "scenario: scenarios/small-step-back.yaml:12: events[0].step: "-3x" is not a duration".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("scenario: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Is reports whether target is [ErrInvalid].
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the more specific cause, or nil.
func (e *Error) Unwrap() error { return e.Err }

// trimPrefix drops the package prefix of another package's error message,
// so that a wrapped cause reads as a reason.
func trimPrefix(err error) string {
	s := err.Error()
	for _, p := range []string{"ringflake: ", "simclock: ", "scenario: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
