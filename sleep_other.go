//go:build !linux

package ringflake

import "time"

// sleepThread reports that it did not sleep: outside Linux the Go
// runtime's timers are precise enough, so systemClock.After uses them.
func sleepThread(time.Duration) bool { return false }
