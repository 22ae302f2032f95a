package saturate_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/bench/saturate"
)

func TestPercentileNearestRank(t *testing.T) {
	// 1..100 µs: the p-th percentile of 100 samples is the p-th sample.
	var xs []time.Duration
	for i := 1; i <= 100; i++ {
		xs = append(xs, time.Duration(i)*time.Microsecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Microsecond},
		{99, 99 * time.Microsecond},
		{99.9, 100 * time.Microsecond}, // rank ceil(99.9) = 100
		{100, 100 * time.Microsecond},
		{0.5, 1 * time.Microsecond},
		{0, 1 * time.Microsecond},     // clamped to the first sample
		{150, 100 * time.Microsecond}, // clamped to the last
	} {
		assert.Equal(t, tc.want, saturate.Percentile(xs, tc.p), "p%v", tc.p)
	}
	assert.Zero(t, saturate.Percentile(nil, 50))

	// p99.99 of 20,000 samples is the 19,998th: two samples lie above it.
	big := make([]time.Duration, 20000)
	for i := range big {
		big[i] = time.Duration(i + 1)
	}
	assert.Equal(t, time.Duration(19998), saturate.Percentile(big, 99.99))
}

func TestSummarizeSortsAndReports(t *testing.T) {
	samples := []time.Duration{9, 1, 7, 3, 5, 2, 8, 4, 6, 10}
	l := saturate.Summarize(samples)
	assert.Equal(t, 10, l.Calls)
	assert.Equal(t, []time.Duration{5, 10, 10, 10}, l.P, "p50, p99, p99.9, p99.99")
	assert.Equal(t, time.Duration(10), l.Max)
	assert.IsNonDecreasing(t, samples, "sorted in place")

	assert.Equal(t, saturate.Latency{P: []time.Duration{0, 0, 0, 0}}, saturate.Summarize(nil))
}

func TestThroughputRates(t *testing.T) {
	tp := saturate.Throughput{IDs: 4_076_000, Elapsed: time.Second, CPU: 250 * time.Millisecond}
	assert.InDelta(t, 4_076_000.0, tp.PerSecond(), 1e-6)
	assert.InDelta(t, 0.995117, tp.OfCap(4_096_000), 1e-6)
	assert.Equal(t, time.Duration(61), tp.CPUPerID(), "250 ms / 4,076,000 IDs = 61.3 ns")

	half := saturate.Throughput{IDs: 1_024_000, Elapsed: 500 * time.Millisecond}
	assert.InDelta(t, 0.5, half.OfCap(4_096_000), 1e-12, "rates use the measured window")

	var zero saturate.Throughput
	assert.Zero(t, zero.PerSecond())
	assert.Zero(t, zero.CPUPerID())
	assert.Zero(t, tp.OfCap(0))
}

func TestMedians(t *testing.T) {
	assert.Equal(t, 3.0, saturate.Median([]float64{5, 1, 3}))
	assert.Equal(t, 2.5, saturate.Median([]float64{4, 1, 3, 2}))
	assert.True(t, math.IsNaN(saturate.Median(nil)))
	xs := []float64{3, 1, 2}
	saturate.Median(xs)
	assert.Equal(t, []float64{3, 1, 2}, xs, "the input is left alone")

	assert.Equal(t, 15*time.Nanosecond, saturate.MedianDuration([]time.Duration{10, 20}))
	assert.Zero(t, saturate.MedianDuration(nil))

	rounds := []saturate.Latency{
		{Calls: 100, P: []time.Duration{1, 2, 3, 40}, Max: 900},
		{Calls: 100, P: []time.Duration{2, 3, 4, 50}, Max: 100},
		{Calls: 100, P: []time.Duration{3, 4, 5, 9000}, Max: 9000},
	}
	m := saturate.MedianLatency(rounds)
	assert.Equal(t, 300, m.Calls)
	assert.Equal(t, []time.Duration{2, 3, 4, 50}, m.P, "one noisy round does not decide the p99.99")
	assert.Equal(t, time.Duration(900), m.Max)
}

func TestBurstSize(t *testing.T) {
	// Half of 4,096,000 IDs/s over 10 ms.
	assert.Equal(t, 20480, saturate.BurstSize(4_096_000, 10*time.Millisecond, 0.5))
	assert.Equal(t, 4096, saturate.BurstSize(4_096_000, time.Millisecond, 1))
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		812:                      "812ns",
		4310:                     "4.31µs",
		20_700:                   "20.7µs",
		537_000:                  "537µs",
		1_083_000:                "1.08ms",
		2_500 * time.Millisecond: "2.50s",
	} {
		assert.Equal(t, want, saturate.FormatDuration(d))
	}
}

func TestProcessCPUAdvances(t *testing.T) {
	a, err := saturate.ProcessCPU()
	require.NoError(t, err)
	x := 0
	for i := range 1_000_000 { // some CPU work, no sleeping
		x ^= i * i
	}
	_ = x
	b, err := saturate.ProcessCPU()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, b, a, "CPU time never decreases")
}
