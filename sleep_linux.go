package ringflake

import (
	"context"
	"syscall"
	"time"
)

// kernelSleep: on Linux a generator on the system clock waits short times
// in its waitq, one thread sleeping in the kernel for all waiting callers.
const kernelSleep = true

// sleepPrecise waits d (at most [preciseWait]) for a generator on the
// system clock, or until ctx is done, and returns ctx.Err() if it was.
//
// The Go runtime's timers cannot wait that precisely on Linux: they sleep
// in the network poller, whose timeout has whole milliseconds, so a wait of
// 300 µs for the next 1 ms tick lasts about 1.1 ms and a saturated
// generator loses ticks. So the calling thread sleeps in the kernel
// ([sleepThread]), in slices of [cancelSlice] when ctx can be cancelled.
// The runtime hands the goroutine's P to another thread meanwhile, so
// other goroutines go on. Nothing spins. A generator's waitq uses it for
// a caller whose deadline comes before the one its sleeper sleeps towards.
func sleepPrecise(ctx context.Context, d time.Duration) error {
	start := time.Now()
	return sleepSlices(ctx, d, sleepThread, func() time.Duration { return time.Since(start) })
}

// sleepThread sleeps the calling thread for d in the kernel, to the
// precision of the kernel's timers rather than the millisecond of the Go
// runtime's network poller.
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
