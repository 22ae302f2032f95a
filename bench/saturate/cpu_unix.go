//go:build unix

package saturate

import (
	"syscall"
	"time"
)

// ProcessCPU returns the user plus system CPU time the process has used,
// from getrusage(RUSAGE_SELF).
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
