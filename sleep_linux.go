package ringflake

import (
	"syscall"
	"time"
)

// threadSleeps reports whether sleepThread sleeps in the kernel.
const threadSleeps = true

// sleepThread sleeps the calling thread for d in the kernel, to the
// precision of the kernel's timers rather than the millisecond of the Go
// runtime's network poller. The runtime hands the goroutine's P to another
// thread while it sleeps, so other goroutines go on.
func sleepThread(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		// On EINTR ts holds what is left; no other error can occur for
		// the waits a generator asks for.
		if err := syscall.Nanosleep(&ts, &ts); err != syscall.EINTR {
			return
		}
	}
}
