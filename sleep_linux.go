package ringflake

import (
	"syscall"
	"time"
)

// sleepThread sleeps the calling thread for d in the kernel, to the
// precision of the kernel's timers rather than the millisecond of the Go
// runtime's network poller. It reports whether it slept.
func sleepThread(d time.Duration) bool {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		err := syscall.Nanosleep(&ts, &ts) // on EINTR, ts holds what is left
		if err != syscall.EINTR {
			return err == nil
		}
	}
}
