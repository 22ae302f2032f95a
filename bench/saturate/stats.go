package saturate

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentiles are the latency percentiles the harness reports.
var Percentiles = []float64{50, 99, 99.9, 99.99}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted, an
// ascending slice, by the nearest-rank method: the smallest sample that
// at least p % of the samples are less than or equal to. It returns 0 for
// no samples. p outside (0, 100] is clamped to that range.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n))) // 1-based
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Latency summarises the latencies of single calls.
type Latency struct {
	Calls int
	P     []time.Duration // at [Percentiles], in that order
	Max   time.Duration
}

// Summarize sorts samples in place and returns their summary.
func Summarize(samples []time.Duration) Latency {
	slices.Sort(samples)
	l := Latency{Calls: len(samples), P: make([]time.Duration, len(Percentiles))}
	for i, p := range Percentiles {
		l.P[i] = Percentile(samples, p)
	}
	if len(samples) > 0 {
		l.Max = samples[len(samples)-1]
	}
	return l
}

// Throughput is the outcome of issuing IDs for a window of time.
type Throughput struct {
	IDs     int64
	Elapsed time.Duration // wall time from the start signal to the last goroutine's end
	CPU     time.Duration // user + system CPU time of the process meanwhile
}

// PerSecond returns the IDs issued per second, or 0 for no elapsed time.
func (t Throughput) PerSecond() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.IDs) / t.Elapsed.Seconds()
}

// OfCap returns the rate as a fraction of capacity (IDs per second):
// 0.995 is 99.5 %. It returns 0 for a capacity of 0 or less.
func (t Throughput) OfCap(capacity float64) float64 {
	if capacity <= 0 {
		return 0
	}
	return t.PerSecond() / capacity
}

// CPUPerID returns the CPU time spent per ID issued, or 0 for no IDs.
func (t Throughput) CPUPerID() time.Duration {
	if t.IDs <= 0 {
		return 0
	}
	return time.Duration(math.Round(float64(t.CPU) / float64(t.IDs)))
}

// Median returns the median of xs (the mean of the two middle values for
// an even count), or NaN for none. It does not modify xs.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianDuration is [Median] for durations, rounded to the nanosecond; 0
// for none.
func MedianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(math.Round(Median(xs)))
}

// MedianLatency returns, percentile by percentile, the median of several
// summaries of the same subject (Calls is summed).
func MedianLatency(ls []Latency) Latency {
	out := Latency{P: make([]time.Duration, len(Percentiles))}
	col := make([]time.Duration, len(ls))
	for i := range Percentiles {
		for j, l := range ls {
			col[j] = l.P[i]
		}
		out.P[i] = MedianDuration(col)
	}
	for j, l := range ls {
		col[j] = l.Max
		out.Calls += l.Calls
	}
	out.Max = MedianDuration(col)
	return out
}

// BurstSize returns how many IDs a burst must hold for bursts every period
// to load a generator of the given capacity (IDs per second) to load (0.5
// is 50 %), rounded to the nearest ID.
func BurstSize(capacity float64, period time.Duration, load float64) int {
	return int(math.Round(capacity * period.Seconds() * load))
}

// FormatDuration prints d with three significant digits in a unit that
// suits it: 812ns, 4.31µs, 1.02ms.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return sig3(float64(d)/float64(time.Microsecond)) + "µs"
	case d < time.Second:
		return sig3(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return sig3(d.Seconds()) + "s"
	}
}

func sig3(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}
