//go:build !linux

package ringflake

import "time"

// kernelSleep: outside Linux the Go runtime's timers are precise enough,
// and every waiting caller uses one (no thread each).
const kernelSleep = false

// sleepThread sleeps for d; only a waitq would call it, and outside Linux
// none does.
func sleepThread(d time.Duration) { time.Sleep(d) }
