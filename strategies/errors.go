package strategies

import (
	"errors"
	"fmt"
	"time"
)

// ErrClockRollback is matched (with [errors.Is]) by the errors a generator
// returns when its clock reads earlier than the newest ID it has issued and
// its strategy does not keep it available. The amount is reachable with
// [errors.As] and a [*RollbackError].
var ErrClockRollback = errors.New("ringflake: clock moved backwards")

// ErrInvalidStrategy is matched by the errors of [Parse] and [Validate]:
// an unknown or malformed strategy, or one that does not fit the layout.
// The details are reachable with [errors.As] and a [*StrategyError].
var ErrInvalidStrategy = errors.New("ringflake: invalid strategy")

// RollbackError reports a clock that reads behind the newest ID issued.
// It matches [ErrClockRollback] with [errors.Is].
type RollbackError struct {
	// Behind is how far the clock reads behind the start of the newest
	// tick issued (see [Situation.Behind]).
	Behind time.Duration
}

func (e *RollbackError) Error() string {
	return fmt.Sprintf("ringflake: clock moved backwards: it reads %v behind the newest ID issued", e.Behind)
}

// Is reports whether target is [ErrClockRollback].
func (e *RollbackError) Is(target error) bool { return target == ErrClockRollback }

// StrategyError reports what is wrong with a strategy or its configuration
// string. It matches [ErrInvalidStrategy] with [errors.Is].
type StrategyError struct {
	// Input is the whole string given to [Parse], or the strategy's String
	// form for [Validate].
	Input string
	// Token is the offending comma-separated part, when there is one.
	Token string
	// Index is the 1-based position of Token in a chain, or 0.
	Index int
	// Reason says what is wrong.
	Reason string
}

func (e *StrategyError) Error() string {
	if e.Index > 0 {
		return fmt.Sprintf("ringflake: invalid strategy %q: part %d %q: %s", e.Input, e.Index, e.Token, e.Reason)
	}
	return fmt.Sprintf("ringflake: invalid strategy %q: %s", e.Input, e.Reason)
}

// Is reports whether target is [ErrInvalidStrategy].
func (e *StrategyError) Is(target error) bool { return target == ErrInvalidStrategy }
