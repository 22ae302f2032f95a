package chronyhealth

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/ringflake/ringflake/clockhealth"
)

// DefaultAddr is chronyd's default command port.
const DefaultAddr = "127.0.0.1:323"

// DefaultTimeout is how long [Source] waits for each of its attempts.
const DefaultTimeout = time.Second

// DefaultMinStale is the least time without a clock update after which a
// [Source] calls the clock unsynchronised (see [FromTracking]).
const DefaultMinStale = 10 * time.Second

// attempts is how many requests Read sends (UDP may lose one).
const attempts = 3

// Source is a [clockhealth.Source] that asks chronyd for its tracking
// report. The zero Source asks [DefaultAddr]. A Source is safe for
// concurrent use; each Read uses a socket of its own.
type Source struct {
	// Addr is chronyd's command address (host:port), DefaultAddr when
	// empty. chronyd answers there only when its configuration has
	// `cmdport` (default 323), `bindcmdaddress` and `cmdallow` for us.
	Addr string
	// Timeout bounds each of Read's attempts; DefaultTimeout when 0.
	Timeout time.Duration
	// MinStale is the floor of the staleness limit of [FromTracking];
	// DefaultMinStale when 0.
	MinStale time.Duration
	// Now returns the wall-clock time stamped on readings; time.Now when
	// nil.
	Now func() time.Time
}

// Name returns the Source name of the readings: "chrony ADDR".
func (s Source) Name() string { return "chrony " + s.addr() }

func (s Source) addr() string {
	if s.Addr == "" {
		return DefaultAddr
	}
	return s.Addr
}

// Read asks chronyd for its tracking report and returns it as a
// [clockhealth.Reading] (see [FromTracking]). When chronyd does not
// answer, the error says so and the Reading is [clockhealth.StatusUnknown].
func (s Source) Read(ctx context.Context) (clockhealth.Reading, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t, err := s.Tracking(ctx)
	at := now()
	if err != nil {
		return clockhealth.Reading{Source: s.Name(), At: at, Detail: strings.TrimPrefix(err.Error(), "ringflake: ")}, err
	}
	return FromTracking(s.Name(), t, at, s.MinStale), nil
}

// Tracking asks chronyd for its tracking report: up to three requests,
// each waiting Timeout (or until ctx is done).
func (s Source) Tracking(ctx context.Context) (Tracking, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", s.addr())
	if err != nil {
		return Tracking{}, fmt.Errorf("ringflake: chronyd at %s: %w", s.addr(), err)
	}
	defer conn.Close()
	var lastErr error
	buf := make([]byte, 1024)
	for try := 0; try < attempts; try++ {
		if err := ctx.Err(); err != nil {
			return Tracking{}, err
		}
		seq := rand.Uint32()
		deadline := time.Now().Add(timeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		if err := conn.SetDeadline(deadline); err != nil {
			return Tracking{}, err
		}
		if _, err := conn.Write(trackingRequest(seq)); err != nil {
			lastErr = err
			continue
		}
		for {
			n, err := conn.Read(buf)
			if err != nil {
				lastErr = err
				break
			}
			t, err := parseTracking(buf[:n], seq)
			if err == nil {
				return t, nil
			}
			lastErr = err
			if !errors.Is(err, errProtocol) {
				break
			}
			// A late reply to an earlier attempt, or garbage: keep
			// reading until the deadline.
		}
	}
	return Tracking{}, fmt.Errorf("ringflake: chronyd at %s did not answer the tracking request: %w", s.addr(), lastErr)
}

// FromTracking turns chronyd's tracking report, taken at wall time at,
// into a [clockhealth.Reading] named source:
//
//   - Status is unsynchronised when the leap status is "not
//     synchronised", when chronyd has no reference (RefID 0), or when
//     chronyd has not updated the clock for longer than
//     max(8 × its last update interval, minStale) (DefaultMinStale when
//     minStale is 0). chronyd keeps reporting "normal" while it holds
//     over after losing every source (its root dispersion keeps growing);
//     eight update intervals without an update is the reach register of
//     an NTP source running empty, the point where chronyd itself calls
//     a source unreachable.
//   - MaxError = |CurrentCorrection| + RootDelay/2 + RootDispersion: the
//     NTP synchronisation distance (how far chronyd's estimate of true
//     time may be from true time) plus the offset the clock still has to
//     be corrected by.
//   - EstError = |CurrentCorrection| + RMSOffset.
//   - Pending = CurrentCorrection (negative: the clock is fast and will
//     be moved back).
//   - Leap follows the leap status.
func FromTracking(source string, t Tracking, at time.Time, minStale time.Duration) clockhealth.Reading {
	if minStale <= 0 {
		minStale = DefaultMinStale
	}
	corr := math.Abs(t.CurrentCorrection)
	r := clockhealth.Reading{
		Source:        source,
		At:            at,
		Status:        clockhealth.StatusSynchronised,
		MaxError:      secs(corr + t.RootDelay/2 + t.RootDispersion),
		MaxErrorKnown: true,
		EstError:      secs(corr + t.RMSOffset),
		Pending:       secs(t.CurrentCorrection),
		PendingKnown:  true,
	}
	stale := max(secs(8*t.LastUpdateInterval), minStale)
	age := at.Sub(t.RefTime)
	switch {
	case t.LeapStatus == leapUnsync:
		r.Status = clockhealth.StatusUnsynchronised
		r.Leap = clockhealth.LeapUnknown
		r.Detail = "leap status: not synchronised"
	case t.RefID == 0:
		r.Status = clockhealth.StatusUnsynchronised
		r.Leap = clockhealth.LeapUnknown
		r.Detail = "no reference"
	case age > stale:
		r.Status = clockhealth.StatusUnsynchronised
		r.Leap = clockhealth.LeapUnknown
		r.Detail = fmt.Sprintf("no clock update for %v (limit %v)", age.Round(time.Millisecond), stale)
	default:
		switch t.LeapStatus {
		case leapInsert:
			r.Leap, r.Detail = clockhealth.LeapInsert, "leap status: insert second"
		case leapDelete:
			r.Leap, r.Detail = clockhealth.LeapDelete, "leap status: delete second"
		default:
			r.Leap, r.Detail = clockhealth.LeapNone, "leap status: normal"
		}
		r.Detail += fmt.Sprintf(", stratum %d, updated %v ago", t.Stratum, age.Round(time.Millisecond))
	}
	return r
}

// secs converts seconds to a Duration, saturating.
func secs(f float64) time.Duration {
	ns := f * 1e9
	switch {
	case math.IsNaN(ns):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(math.Round(ns))
}
