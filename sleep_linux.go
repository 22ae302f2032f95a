package ringflake

import (
	"syscall"
	"time"
)

// kernelSleep: on Linux a generator on the system clock waits short times
// in its waitq, where a thread sleeping in the kernel wakes all the callers
// due by its deadline.
const kernelSleep = true

// sleepThread sleeps the calling thread for d in the kernel, to the
// precision of the kernel's timers rather than the millisecond of the Go
// runtime's network poller (whose timeout has whole milliseconds: a wait
// of 300 µs would last about 1.1 ms). The runtime hands the goroutine's P
// to another thread meanwhile, so other goroutines go on. Nothing spins.
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
