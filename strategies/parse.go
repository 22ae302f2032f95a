package strategies

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Parse returns the strategy described by a configuration string: one of
//
//	error            Error()
//	wait             Wait(DefaultWait)
//	wait:DURATION    Wait(DURATION), for example "wait:5ms"
//	logical          Logical(DefaultLead)
//	logical:DURATION Logical(DURATION), for example "logical:1s"
//	ring             Ring()
//
// or several of them separated by commas, which make a [Chain]: for example
// "ring,wait:5ms,error". Durations use [time.ParseDuration] syntax and must
// be positive. Spaces around parts are ignored; names are case-sensitive.
// The String method of every strategy Parse returns gives back an
// equivalent string.
//
// A step after error is refused: error fails every call that reaches it,
// so no call would reach the steps after it.
//
// Errors match [ErrInvalidStrategy] and name the offending part.
func Parse(s string) (Strategy, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &StrategyError{Input: s, Reason: "empty; want error, wait[:DURATION], logical[:DURATION] or ring, separated by commas"}
	}
	parts := strings.Split(s, ",")
	steps := make([]Strategy, 0, len(parts))
	for i, part := range parts {
		step, reason := parseOne(strings.TrimSpace(part))
		if reason == "" && i > 0 && steps[i-1] == Error() {
			reason = "no call reaches it: error before it ends every chain; put error last"
		}
		if reason != "" {
			return nil, &StrategyError{Input: s, Token: part, Index: i + 1, Reason: reason}
		}
		steps = append(steps, step)
	}
	return Chain(steps...), nil
}

func parseOne(tok string) (Strategy, string) {
	name, arg, hasArg := strings.Cut(tok, ":")
	switch name {
	case "":
		if !hasArg {
			return nil, "empty part"
		}
		return nil, "missing strategy name before ':'"
	case "error", "ring":
		if hasArg {
			return nil, fmt.Sprintf("%s takes no argument", name)
		}
		if name == "error" {
			return Error(), ""
		}
		return Ring(), ""
	case "wait", "logical":
		d := DefaultWait
		if name == "logical" {
			d = DefaultLead
		}
		if hasArg {
			var reason string
			if d, reason = parseDuration(arg); reason != "" {
				return nil, reason
			}
		}
		if name == "wait" {
			return Wait(d), ""
		}
		return Logical(d), ""
	default:
		return nil, fmt.Sprintf("unknown strategy %q; want error, wait, logical or ring", name)
	}
}

func parseDuration(arg string) (time.Duration, string) {
	d, err := time.ParseDuration(arg)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a duration such as 5ms or 1s", arg)
	}
	if d <= 0 {
		return 0, fmt.Sprintf("duration %q must be positive", arg)
	}
	return d, ""
}

// formatDuration is d.String() without the zero units it ends with
// ("1m" rather than "1m0s"); time.ParseDuration reads both.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Validate reports whether s can drive a generator whose layout ticks every
// unit: s and every step of a chain must be non-nil, a chain must have a
// step, and steps that have a Validate(unit time.Duration) error method
// (as [Wait] and [Logical] do) must accept the unit. Errors match
// [ErrInvalidStrategy].
func Validate(s Strategy, unit time.Duration) error {
	if s == nil {
		return &StrategyError{Input: "<nil>", Reason: "no strategy"}
	}
	steps := Flatten(s)
	if len(steps) == 0 {
		return &StrategyError{Input: s.String(), Reason: "a chain needs at least one strategy"}
	}
	for i, step := range steps {
		if step == nil {
			return &StrategyError{Input: s.String(), Token: "<nil>", Index: i + 1, Reason: "nil strategy in chain"}
		}
		v, ok := step.(interface{ Validate(time.Duration) error })
		if !ok {
			continue
		}
		if err := v.Validate(unit); err != nil {
			if len(steps) == 1 {
				return err
			}
			reason := err.Error()
			var se *StrategyError
			if errors.As(err, &se) {
				reason = se.Reason
			}
			return &StrategyError{Input: s.String(), Token: step.String(), Index: i + 1, Reason: reason}
		}
	}
	return nil
}
