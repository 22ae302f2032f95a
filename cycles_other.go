//go:build !amd64

package ringflake

// cycles is the CPU's cycle counter where ringflake reads one (amd64);
// elsewhere there is none, and [cyclesTrusted] never turns it on.
func cycles() uint64 { return 0 }

// cyclesSource: no kernel clock source turns the counter on here.
const cyclesSource = ""
