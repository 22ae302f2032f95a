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

// ErrClockFrozen is matched (with [errors.Is]) by the errors a generator
// returns when its clock stopped advancing: the sequence numbers of the
// clock's tick are used up, the call waited for the next tick, and the
// clock did not get there — without reading earlier than before, and
// without any ID issued at a later tick — within the wait its strategy
// allows. It does not match [ErrClockRollback]: the clock did not step
// back. The amount is reachable with [errors.As] and a [*FrozenError].
var ErrClockFrozen = errors.New("ringflake: clock frozen")

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
	// Clock is the clock's reading and Newest the start of the newest
	// tick issued, when the situation told them ([Situation.Epoch]); zero
	// otherwise. A step of hours or years is easier told by its two
	// instants than by its length.
	Clock, Newest time.Time
}

func (e *RollbackError) Error() string {
	if e.Clock.IsZero() || e.Newest.IsZero() {
		return fmt.Sprintf("ringflake: clock moved backwards: it reads %v behind the newest ID issued", e.Behind)
	}
	return fmt.Sprintf("ringflake: clock moved backwards: it reads %s, %v behind the newest ID issued, at %s",
		e.Clock.UTC().Format(time.RFC3339Nano), e.Behind, e.Newest.UTC().Format(time.RFC3339Nano))
}

// Is reports whether target is [ErrClockRollback].
func (e *RollbackError) Is(target error) bool { return target == ErrClockRollback }

// FrozenError reports a clock that stopped advancing (see
// [Situation.Frozen]). It matches [ErrClockFrozen] with [errors.Is], and
// not [ErrClockRollback].
type FrozenError struct {
	// Behind is how far the clock reads behind the start of the tick the
	// call waited for: the next tick after the used-up one.
	Behind time.Duration
}

func (e *FrozenError) Error() string {
	return fmt.Sprintf("ringflake: clock frozen: its tick's sequence numbers are used up and it stays %v short of the next tick", e.Behind)
}

// Is reports whether target is [ErrClockFrozen].
func (e *FrozenError) Is(target error) bool { return target == ErrClockFrozen }

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

// ErrObservedTooFar is matched (with [errors.Is]) by the error of
// ringflake's Generator.Observe for an ID stamped further ahead of the
// generator's clock than its bound (WithMaxForward). The distance is
// reachable with [errors.As] and an [*AheadError]. It lives here, next to
// [ErrClockRollback], because it is the other side of the same question:
// how far an ID may be from the clock.
var ErrObservedTooFar = errors.New("ringflake: observed ID too far ahead of the clock")

// AheadError reports an observed ID stamped further ahead of the clock
// than the generator may follow. It matches [ErrObservedTooFar] with
// [errors.Is].
type AheadError struct {
	// Ahead is how far the ID's time is ahead of the clock's reading.
	Ahead time.Duration
	// Max is the bound it exceeds (WithMaxForward).
	Max time.Duration
}

func (e *AheadError) Error() string {
	return fmt.Sprintf("ringflake: observed ID too far ahead of the clock: %v ahead, more than the bound %v", e.Ahead, e.Max)
}

// Is reports whether target is [ErrObservedTooFar].
func (e *AheadError) Is(target error) bool { return target == ErrObservedTooFar }
