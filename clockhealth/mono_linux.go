//go:build linux

package clockhealth

import (
	"syscall"
	"time"
	"unsafe"
)

// clockMonotonicCoarse is CLOCK_MONOTONIC_COARSE from <linux/time.h>.
const clockMonotonicCoarse = 6

// monotonicCoarse reads CLOCK_MONOTONIC_COARSE, the clock ClockBound
// stamps its segment with.
func monotonicCoarse() (time.Duration, error) {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonicCoarse, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, errno
	}
	return time.Duration(ts.Sec)*time.Second + time.Duration(ts.Nsec), nil
}
