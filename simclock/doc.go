// Package simclock provides a deterministic simulated clock for testing,
// replaying and fuzzing code that reads time, above all ringflake's generator
// when the host's wall clock misbehaves.
//
// A [Clock] models the two clocks a real host has:
//
//   - The monotonic clock, read with [Clock.Monotonic], measures true time
//     elapsed since the clock was made. It only moves forward, and only when
//     simulated time passes ([Clock.Add] with d >= 0, [Clock.Sleep],
//     [Clock.After]). Nothing else touches it: no step, freeze, drift or
//     jitter.
//   - The wall clock, read with [Clock.Now], starts at the time given to [New]
//     and follows true time, but it can be stepped backwards or forwards
//     ([Clock.Step], [Clock.Set], [Clock.Add] with d < 0) as NTP or `date -s`
//     would do, frozen for a while ([Clock.Freeze]), made to run fast or slow
//     ([Clock.SetDrift]), and made noisy ([Clock.SetJitter]).
//
// So after c.Step(-time.Second), c.Now() reads one second earlier while
// c.Monotonic() is unchanged, just as time.Now() and the monotonic reading
// inside it behave on a host whose clock was set back.
//
// Time never passes by itself. [Clock.Sleep] and [Clock.After] advance the
// simulated time by the requested duration and return at once, so code that
// waits runs instantly and the same way on every machine. A scenario can be
// written ahead as timed [Event] values given to [Clock.Schedule]; each one is
// applied exactly when true elapsed time reaches its At, even in the middle of
// a single [Clock.Add] or [Clock.Sleep].
//
// All state is kept in integer nanoseconds (drift in parts per billion, with
// the rounding remainder carried forward), so a scenario gives the same
// readings on every run and every platform.
//
// [Wrap] lays the same skew model over another clock from
// github.com/benbjohnson/clock (the real clock, or a *clock.Mock), for chaos
// tests of a live service: true time then comes from the base clock.
//
// A Clock is safe for concurrent use by multiple goroutines. Readings from a
// single goroutine are exact. When several goroutines sleep at once, each
// Sleep advances the shared clock by its own duration, one after the other,
// so simulated time runs ahead of what concurrent sleepers on a real host
// would see; Monotonic still equals the sum of everything that advanced it.
package simclock
