//go:build unix && !linux

package leasetest

// stoppedProbe returns nil: this system has no /proc to tell whether a
// process has stopped, so Pause returns when the signal is sent.
func stoppedProbe(int) func() bool { return nil }
