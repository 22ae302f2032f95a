package ringflake

import "github.com/ringflake/ringflake/strategies"

// ErrClockFrozen is matched (with [errors.Is]) by the error a generator
// returns when its clock stopped advancing: the sequence numbers of the
// clock's tick are used up, the call waited for the next tick, and the
// clock did not reach it — without stepping back — within the wait its
// strategy allows. It does not match [ErrClockRollback]. Use [errors.As]
// with a [*strategies.FrozenError] to learn how far short of the next tick
// the clock stayed. It is the same value as [strategies.ErrClockFrozen].
var ErrClockFrozen = strategies.ErrClockFrozen
