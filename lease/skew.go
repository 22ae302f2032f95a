package lease

import (
	"context"
	"fmt"
	"time"
)

// DefaultMaxSkew is the default of [Options.MaxSkew]: how far a holder's
// clock may be from its lease server's.
const DefaultMaxSkew = time.Second

// DefaultSamples is how many samples [MeasureOffset] takes when asked for
// 0, and how many a lease takes at acquire and at each renewal.
const DefaultSamples = 5

// MaxSamples is the most samples [MeasureOffset] takes in one measurement.
const MaxSamples = 100

// An Offset is one measurement of how far a server's clock is from this
// host's, NTP-style: the host reads its clock when it sends a request for
// the server's time (send) and when the answer arrives (receive); the
// server read its clock at some instant in between, so
//
//	offset      = server − (send + receive)/2
//	uncertainty = (receive − send)/2 + the server's resolution/2
//
// bounds the true offset on both sides, whatever the network does, as
// long as neither clock steps during the round trip. Of several samples
// the one with the shortest round trip is kept: it bounds the offset most
// tightly. The zero Offset means nothing was measured.
type Offset struct {
	// Offset is the server's clock minus this host's: positive when this
	// host's clock is behind the server's, negative when it is ahead.
	Offset time.Duration
	// Uncertainty bounds the error of Offset: the true offset lies in
	// [Offset − Uncertainty, Offset + Uncertainty]. It is half the round
	// trip plus half the resolution of the server's answer (Redis TIME:
	// 1 µs), each rounded up to the nanosecond.
	Uncertainty time.Duration
	// RoundTrip is the kept sample's round trip, timed on the monotonic
	// clock (see [MeasureOffset]).
	RoundTrip time.Duration
	// At is the host's clock at the middle of the kept sample: the local
	// instant the offset was measured at.
	At time.Time
	// Samples is how many samples the measurement took.
	Samples int
}

// IsZero reports whether o is the zero Offset: nothing was measured.
func (o Offset) IsZero() bool { return o.At.IsZero() }

// Beyond reports whether this host's clock is certainly further from the
// server's than max: |Offset| − Uncertainty > max. A measurement whose
// uncertainty covers max is not beyond it: the clocks may agree well
// enough, and only a shorter round trip can tell.
func (o Offset) Beyond(max time.Duration) bool {
	return absDuration(o.Offset)-o.Uncertainty > max
}

// String returns the offset with its uncertainty and round trip, for logs:
// "+5.0021s ± 153µs (round trip 305µs)".
func (o Offset) String() string {
	sign := "+"
	if o.Offset < 0 {
		sign = "-"
	}
	return fmt.Sprintf("%s%v ± %v (round trip %v)", sign, absDuration(o.Offset), o.Uncertainty, o.RoundTrip)
}

// absDuration returns |d|, saturating at the largest Duration.
func absDuration(d time.Duration) time.Duration {
	if d >= 0 {
		return d
	}
	if d == -d { // math.MinInt64
		return 1<<63 - 1
	}
	return -d
}

// A WallClock is the clock an offset is measured on: Now is its wall
// reading. When it also has a method Monotonic() time.Duration, as
// *simclock.Clock and ringflake's system clock have, [MeasureOffset] times
// round trips on it; otherwise on the system's monotonic clock (a round
// trip is real time, whatever the wall clock says). The clocks of
// github.com/benbjohnson/clock and [Options.Clock] satisfy it.
type WallClock interface {
	Now() time.Time
}

// monotonic is the optional upgrade of a WallClock.
type monotonic interface {
	Monotonic() time.Duration
}

// systemWall is the WallClock of a nil clk: time.Now.
type systemWall struct{}

func (systemWall) Now() time.Time { return time.Now() }

// ReadServerClock reads a server's clock once, as late as it can before
// it returns: what [MeasureOffset] samples. The reading must be one the
// server took after the request was sent and before its answer was
// received (Redis TIME; PostgreSQL clock_timestamp()), truncated to the
// server's resolution at most.
type ReadServerClock func(ctx context.Context) (time.Time, error)

// MeasureOffset measures the offset of the server that read reads against
// clk (nil: the system clock) with samples samples (0:
// [DefaultSamples]), one after another, and returns the one with the
// shortest round trip. The host's send and receive instants are clk's
// wall readings; the round trip between them is timed on clk's monotonic
// clock when it offers one (see [WallClock]) and on the system's
// otherwise, so that a step of the wall clock during a sample does not
// distort it. resolution is the server's: its readings are truncated to
// it, so half of it is added to each reading and to the uncertainty.
//
// Errors: a [*OptionError] (matching ringflake.ErrInvalidOption, Package
// "lease") for samples below 0 or above [MaxSamples] or a negative
// resolution; otherwise the first error of read, or ctx's.
func MeasureOffset(ctx context.Context, clk WallClock, samples int, resolution time.Duration, read ReadServerClock) (Offset, error) {
	switch {
	case samples < 0 || samples > MaxSamples:
		return Offset{}, &OptionError{Package: "lease", Reason: fmt.Sprintf("%d samples: want 0 (the default, %d) to %d", samples, DefaultSamples, MaxSamples)}
	case resolution < 0:
		return Offset{}, &OptionError{Package: "lease", Reason: fmt.Sprintf("negative resolution %v", resolution)}
	case read == nil:
		return Offset{}, &OptionError{Package: "lease", Reason: "nil ReadServerClock"}
	}
	if samples == 0 {
		samples = DefaultSamples
	}
	if clk == nil {
		clk = systemWall{}
	}
	mono, _ := clk.(monotonic)
	sysStart := time.Now() // for round trips when clk has no monotonic clock
	elapsed := func() time.Duration {
		if mono != nil {
			return mono.Monotonic()
		}
		return time.Since(sysStart)
	}
	var best Offset
	for i := range samples {
		if err := ctx.Err(); err != nil {
			return Offset{}, err
		}
		// The monotonic clock is read before the wall clock: a pause
		// between the two readings then lengthens the round trip (the
		// bound stays true) instead of shifting the send out of it.
		m0 := elapsed()
		send := clk.Now()
		server, err := read(ctx)
		rtt := elapsed() - m0
		if err != nil {
			return Offset{}, err
		}
		if i > 0 && rtt >= best.RoundTrip {
			continue
		}
		// The midpoint on the host's clock: its wall reading at send,
		// moved by half the round trip of monotonic time. Round(0)
		// drops a monotonic reading, so that Sub compares wall clocks.
		mid := send.Round(0).Add(rtt / 2)
		best = Offset{
			Offset:      server.Add(resolution / 2).Sub(mid),
			Uncertainty: (rtt+1)/2 + (resolution+1)/2, // both rounded up
			RoundTrip:   rtt,
			At:          mid,
		}
	}
	best.Samples = samples
	return best, nil
}

// A SkewError reports that this host's clock is certainly further from
// its lease server's clock than [Options.MaxSkew]: an acquire or a claim
// refused, or, in a [ClockSkewed] event, a holder that drifted. It
// matches [ErrClockSkew].
type SkewError struct {
	Package string // the lease module's package
	// Offset is the measurement: the server's clock minus this host's,
	// its uncertainty and round trip.
	Offset Offset
	// Max is [Options.MaxSkew].
	Max time.Duration
}

// Error names the offset, its uncertainty and the maximum, on one line.
func (e *SkewError) Error() string {
	side := "behind"
	if e.Offset.Offset < 0 {
		side = "ahead of"
	}
	return fmt.Sprintf("%v: %s: this host's clock is %v %s the server's (offset %v ± %v), more than MaxSkew %v",
		ErrClockSkew, e.Package, absDuration(e.Offset.Offset), side, e.Offset.Offset, e.Offset.Uncertainty, e.Max)
}

// Is reports whether target is [ErrClockSkew].
func (e *SkewError) Is(target error) bool { return target == ErrClockSkew }
