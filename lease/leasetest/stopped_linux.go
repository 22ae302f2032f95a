package leasetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// stoppedProbe returns a function that reports whether every thread of
// process pid is stopped, from /proc/PID/task/*/stat: its third field,
// after the command name in parentheses, is the state, T when stopped by
// a signal.
func stoppedProbe(pid int) func() bool {
	return func() bool {
		stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(stats) == 0 {
			return false
		}
		for _, f := range stats {
			b, err := os.ReadFile(f)
			i := bytes.LastIndexByte(b, ')')
			if err != nil || i < 0 || i+3 > len(b) || b[i+2] != 'T' {
				return false
			}
		}
		return true
	}
}
