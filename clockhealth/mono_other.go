//go:build !linux

package clockhealth

import "time"

// monotonicCoarse reports ErrUnsupported: CLOCK_MONOTONIC_COARSE, and
// ClockBound, exist on Linux only.
func monotonicCoarse() (time.Duration, error) { return 0, ErrUnsupported }
