//go:build !linux

package ringflake

import "time"

// threadSleeps reports whether sleepThread sleeps in the kernel: outside
// Linux the Go runtime's timers are precise enough, and sleepPrecise uses
// them.
const threadSleeps = false

// sleepThread is not used outside Linux.
func sleepThread(d time.Duration) { time.Sleep(d) }
