package ringflake

// cycles returns the CPU's time-stamp counter (RDTSC). It is not ordered
// against the loads before it: see [cycleClock] for why the fast path
// does not need it to be.
func cycles() uint64

// cyclesSource is the kernel clock source under which the counter counts
// time: the one Linux selects only after checking that the counter runs at
// a constant rate, through sleep states, in step on every CPU.
const cyclesSource = "tsc"
