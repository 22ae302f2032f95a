package scenario

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Defaults of a [Recorder].
const (
	// DefaultThreshold is the smallest change of the wall clock against
	// the monotonic clock between two samples that a Recorder reports as
	// a step.
	DefaultThreshold = 100 * time.Microsecond
	// DefaultWindow is the length of the windows a Recorder measures drift
	// over.
	DefaultWindow = time.Second
	// DefaultMinDrift is the smallest change of the drift rate a Recorder
	// reports: 10 ppm.
	DefaultMinDrift = 10e-6
)

// A Recorder turns samples of a host's wall clock, each taken together
// with a reading of its monotonic clock, into the events of a scenario, so
// that the skew of a real host can be replayed. Feed it with Observe (the
// command `ringflake record` samples time.Now every 10 ms) and read the
// result with Events or Scenario.
//
// Between two samples the wall clock should advance as much as the
// monotonic clock. What it does instead is reported as:
//
//   - a freeze, when consecutive samples read the same wall time; its start
//     and end are placed where the wall clock stopped and resumed, assuming
//     it ran at the monotonic clock's rate around them;
//   - a step, when the wall clock moved at least Threshold more or less
//     between two samples than the local trend says (the median rate of the
//     25 intervals before, or of the 25 after, whichever is closer), at the
//     second sample, by how much it moved beyond the trend of the nearest
//     intervals (rounded to the microsecond);
//   - a drift, per window of Window, when the rate at which the wall clock
//     gains on the monotonic clock (steps and freezes taken out) differs by
//     MinDrift or more from the rate reported last (rounded to the ppm).
//     Changes smaller than Threshold count towards their window's drift, so
//     the replayed wall clock ends every window where the host's did.
//
// On Linux, NTP slewing (adjtimex) slews the monotonic clock along with the
// wall clock, so only steps and freezes show between them; slews of the
// wall clock alone show up, as do those of systems whose monotonic clock
// is not slewed. Jitter shows up as steps back and forth.
//
// The zero Recorder is ready to use, with the defaults above. A Recorder
// is not safe for concurrent use.
type Recorder struct {
	// Threshold is the smallest step reported; 0 means DefaultThreshold.
	Threshold time.Duration
	// Window is the length of the windows drift is measured over; 0 means
	// DefaultWindow.
	Window time.Duration
	// MinDrift is the smallest change of drift reported; 0 means
	// DefaultMinDrift.
	MinDrift float64

	samples []sample
}

// trendSpan is how many intervals on either side of an interval make up
// its local trend.
const trendSpan = 25

type sample struct {
	wall time.Time
	mono time.Duration
}

// Observe records a sample: wall is the wall clock's reading and mono the
// monotonic clock's, taken at the same instant. Samples whose mono is not
// after the previous one are ignored.
func (r *Recorder) Observe(wall time.Time, mono time.Duration) {
	if n := len(r.samples); n > 0 && mono <= r.samples[n-1].mono {
		return
	}
	r.samples = append(r.samples, sample{wall: wall.Round(0), mono: mono})
}

// Samples returns the number of samples recorded.
func (r *Recorder) Samples() int { return len(r.samples) }

// Events returns the events the samples show, at true times since the
// first sample, in time order.
func (r *Recorder) Events() []Event {
	n := len(r.samples)
	if n < 2 {
		return nil
	}
	threshold := cmp.Or(r.Threshold, DefaultThreshold)
	window := cmp.Or(r.Window, DefaultWindow)
	minDrift := cmp.Or(r.MinDrift, DefaultMinDrift)
	s := r.samples
	base := s[0].mono
	// Interval k runs from sample k-1 to sample k.
	dm := func(k int) time.Duration { return s[k].mono - s[k-1].mono }
	dw := func(k int) time.Duration { return s[k].wall.Sub(s[k-1].wall) }
	explained := make([]bool, n) // intervals accounted for by a freeze or a step
	var events []Event

	for k := 1; k < n; k++ {
		if dw(k) != 0 || explained[k] {
			continue
		}
		a := k
		for k+1 < n && dw(k+1) == 0 {
			k++
		}
		b := k
		start, end := s[a-1].mono, s[b].mono
		if p := a - 1; p >= 1 && !explained[p] && dw(p) > 0 && dw(p) < dm(p) {
			start, explained[p] = s[p-1].mono+dw(p), true
		}
		if q := b + 1; q < n && dw(q) > 0 && dw(q) < dm(q) {
			end, explained[q] = s[q].mono-dw(q), true
		}
		for i := a; i <= b; i++ {
			explained[i] = true
		}
		events = append(events, Event{At: start - base, Kind: Freeze, D: end - start})
	}

	// A step is a change of the offset beyond the local trend: the median
	// rate of the intervals just before, and of those just after (so that
	// an interval where the drift changes belongs to one side or the
	// other), which a few steps do not move.
	rate := func(k int) float64 { return float64(dw(k)-dm(k)) / float64(dm(k)) }
	buf := make([]float64, 0, trendSpan)
	median := func(from, to int, skip ...int) (float64, bool) {
		buf = buf[:0]
		for j := max(1, from); j <= min(n-1, to); j++ {
			if !explained[j] && !slices.Contains(skip, j) {
				buf = append(buf, rate(j))
			}
		}
		if len(buf) == 0 {
			return 0, false
		}
		slices.Sort(buf)
		return buf[len(buf)/2], true
	}
	for k := 1; k < n; k++ {
		if explained[k] {
			continue
		}
		off := dw(k) - dm(k)
		excess, found := off, false
		for _, side := range [2][2]int{{k - trendSpan, k - 1}, {k + 1, k + trendSpan}} {
			if r, ok := median(side[0], side[1]); ok {
				if e := off - time.Duration(math.Round(r*float64(dm(k)))); !found || e.Abs() < excess.Abs() {
					excess, found = e, true
				}
			}
		}
		if excess >= threshold || excess <= -threshold {
			// Its size is measured against the nearest intervals, which
			// are in the same drift regime as the step.
			if r, ok := median(k-3, k+3, k); ok {
				excess = off - time.Duration(math.Round(r*float64(dm(k))))
			}
			if d := excess.Round(time.Microsecond); d != 0 {
				events = append(events, Event{At: s[k].mono - base, Kind: Step, D: d})
			}
			explained[k] = true
		}
	}

	current := 0.0
	for k := 1; k < n; {
		w := (s[k-1].mono - base) / window
		var off, span time.Duration
		for ; k < n && (s[k-1].mono-base)/window == w; k++ {
			if !explained[k] {
				off += dw(k) - dm(k)
				span += dm(k)
			}
		}
		if span < window/2 {
			continue
		}
		rate := math.Round(float64(off)/float64(span)*1e6) / 1e6
		if math.Abs(rate-current) >= minDrift && rate > -1 && rate <= 1 {
			events = append(events, Event{At: w * window, Kind: Drift, Rate: rate})
			current = rate
		}
	}
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	return events
}

// Scenario returns a scenario of what was recorded: starting at the first
// sample's wall time (in UTC), lasting until the last sample, with the
// events of Events. Its load is empty and it has no expectations: set them
// before replaying it. It returns nil with fewer than two samples.
func (r *Recorder) Scenario() *Scenario {
	n := len(r.samples)
	if n < 2 {
		return nil
	}
	return &Scenario{
		Start:    r.samples[0].wall.UTC(),
		Duration: r.samples[n-1].mono - r.samples[0].mono,
		Events:   r.Events(),
	}
}
