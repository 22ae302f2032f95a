package scenario

import (
	"math"
	"time"

	"github.com/ringflake/ringflake"
)

// Trace is what a replay recorded for drawing it: the wall clock, the
// times of the IDs issued and of the errors, and the events, on one axis
// of true time since the start. Times on the other axis are offsets from
// Start. Replays are summarised in at most [TraceBuckets] buckets.
type Trace struct {
	Start  time.Time     // the wall clock at the start
	Unit   time.Duration // the layout's tick
	Bucket time.Duration // the width of a bucket of IDs and errors, in whole ticks where that fits in a Duration
	Wall   []Point       // the wall clock (without jitter), in true-time order; a step shows as two points at one instant
	IDs    []IDBucket    // the ID times per bucket of true time, in order, buckets without IDs left out
	Errors []Point       // per bucket with errors: T is the number of errors, not a time
	Events []Event       // the scenario's events
}

// TraceBuckets is the most buckets a [Trace] summarises IDs and errors in.
const TraceBuckets = 800

// Point is one sample of a [Trace]: at true time At since the start, the
// value T (a time offset from Trace.Start, or a count).
type Point struct {
	At time.Duration
	T  time.Duration
}

// IDBucket summarises the IDs issued in one bucket of true time: the
// earliest and latest ID time (offsets from Trace.Start, of the start of
// the ID's tick), how far the IDs were stamped from true time, and how
// many IDs.
type IDBucket struct {
	At       time.Duration // start of the bucket
	Min, Max time.Duration
	// MinOffset and MaxOffset bound the offsets of the IDs from true time:
	// the start of an ID's tick minus the start of the tick that true time
	// (Trace.Start plus the time since the start) was in when its call
	// returned. 0 for IDs of a clock that runs true; about -3ms after the
	// wall clock steps back 3 ms, for IDs that follow it; positive for
	// IDs stamped ahead of true time.
	MinOffset, MaxOffset time.Duration
	Count                int64
}

// tracer is what a replay records for a plot; its trace is nil unless
// [WithTrace] was given.
type tracer struct {
	trace      *Trace
	buckets    []IDBucket
	errBuckets []int64
}

// startTrace sets up the trace of the replay of events (in time order),
// with a stop of the scheduler at the start of each bucket and at the end.
func (e *engine) startTrace(events []Event) {
	s := e.s
	// Buckets of Duration/TraceBuckets rounded up, to a whole number of
	// ticks (so that each holds as many ticks' IDs as the next): at most
	// TraceBuckets of them start before the end. Counted by index, so
	// that no sum can overflow however long the scenario.
	bucket := s.Duration / TraceBuckets
	if s.Duration%TraceBuckets != 0 {
		bucket++
	}
	if r := bucket % e.unit; r != 0 && bucket <= math.MaxInt64-e.unit {
		bucket += e.unit - r
	}
	e.trace = &Trace{Start: s.Start, Unit: e.unit, Bucket: bucket, Events: events}
	for i := range time.Duration(TraceBuckets) {
		if i*bucket >= s.Duration {
			break
		}
		e.stops = append(e.stops, stop{at: i * bucket})
	}
	e.stops = append(e.stops, stop{at: s.Duration})
}

// bucket returns the trace bucket of the current time, growing the
// buckets as needed.
func (e *engine) bucket() int {
	b := int(e.mono / e.trace.Bucket)
	for len(e.buckets) <= b {
		e.buckets = append(e.buckets, IDBucket{})
	}
	return b
}

// sample adds a point of the wall clock to the trace.
func (e *engine) sample(wall time.Time) {
	if e.trace != nil {
		e.trace.Wall = append(e.trace.Wall, Point{At: e.mono, T: wall.Sub(e.s.Start)})
	}
}

// traceID adds an ID, stamped at tick, to the trace.
func (e *engine) traceID(id ringflake.ID, tick int64) {
	if e.trace == nil {
		return
	}
	b := e.bucket()
	bk := &e.buckets[b]
	t := id.Time(e.layout).Sub(e.s.Start)
	off := time.Duration(tick-e.layout.Tick(e.s.Start.Add(e.mono))) * e.unit
	if bk.Count == 0 {
		*bk = IDBucket{At: time.Duration(b) * e.trace.Bucket, Min: t, Max: t, MinOffset: off, MaxOffset: off}
	}
	bk.Min, bk.Max = min(bk.Min, t), max(bk.Max, t)
	bk.MinOffset, bk.MaxOffset = min(bk.MinOffset, off), max(bk.MaxOffset, off)
	bk.Count++
}

// traceError adds a failed call to the trace.
func (e *engine) traceError() {
	if e.trace == nil {
		return
	}
	b := e.bucket()
	for len(e.errBuckets) <= b {
		e.errBuckets = append(e.errBuckets, 0)
	}
	e.errBuckets[b]++
}

// finishTrace completes the trace at the end of the replay, and returns
// it: nil without one.
func (e *engine) finishTrace() *Trace {
	if e.trace == nil {
		return nil
	}
	e.sample(e.wall)
	for _, b := range e.buckets {
		if b.Count > 0 {
			e.trace.IDs = append(e.trace.IDs, b)
		}
	}
	for i, n := range e.errBuckets {
		if n > 0 {
			e.trace.Errors = append(e.trace.Errors, Point{At: time.Duration(i) * e.trace.Bucket, T: time.Duration(n)})
		}
	}
	return e.trace
}
