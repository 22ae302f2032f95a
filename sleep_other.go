//go:build !linux

package ringflake

import (
	"context"
	"time"
)

// sleepPrecise waits d (at most [preciseWait]) for a generator on the
// system clock, or until ctx is done, and returns ctx.Err() if it was.
// Outside Linux the Go runtime's timers are precise enough.
func sleepPrecise(ctx context.Context, d time.Duration) error {
	return sleepTimer(ctx, time.After(d))
}
