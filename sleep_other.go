//go:build !linux

package ringflake

import (
	"context"
	"time"
)

// kernelSleep: outside Linux the Go runtime's timers are precise enough,
// and every waiting caller uses one (no thread each).
const kernelSleep = false

// sleepThread sleeps for d; only a waitq would call it, and outside Linux
// none does.
func sleepThread(d time.Duration) { time.Sleep(d) }

// sleepPrecise waits d (at most [preciseWait]) for a generator on the
// system clock, or until ctx is done, and returns ctx.Err() if it was.
// Outside Linux the Go runtime's timers are precise enough.
func sleepPrecise(ctx context.Context, d time.Duration) error {
	return sleepTimer(ctx, time.After(d))
}
