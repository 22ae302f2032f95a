package scenario

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
)

// end returns the end of the layout's last tick: the first instant l
// cannot represent.
func end(l ringflake.Layout) time.Time { return l.Last().Add(l.Spec().Unit) }

// earliest returns the earliest wall-clock reading a replay on l accepts.
// A clock may read before the layout's epoch — a host whose RTC battery
// died boots in 1970, and its generator must fail or cope, which is worth
// replaying — by up to a century, as long as any two readings between
// earliest and [end] stay within a time.Duration of each other.
func earliest(l ringflake.Layout) time.Time {
	const century, span = 100 * 365 * 24 * time.Hour, 280 * 365 * 24 * time.Hour
	lo := l.Spec().Epoch.Add(-century)
	if floor := end(l).Add(-span); floor.After(lo) {
		lo = floor // a layout of more than 180 years
		if lo.After(l.Spec().Epoch) {
			lo = l.Spec().Epoch
		}
	}
	return lo
}

// checkClock follows the wall clock through the scenario's events as the
// replay's simclock will, and rejects the first step, jitter or drift that
// takes the wall clock, or a reading of it with jitter, outside what a
// replay accepts: before [earliest] (a century before the layout's epoch)
// or past the end of the layout's last tick.
// Within that range every difference of two readings fits in a
// time.Duration, which the replay's arithmetic relies on.
//
// Between events the wall clock never runs backwards (a drift is above
// -100 %), so it is enough to look at it at each event's instant, just
// before and just after the event, and at the end.
func (s *Scenario) checkClock() error {
	l := s.layout()
	lo, hi := earliest(l), end(l)
	order := make([]int, len(s.Events))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Events[a].At, s.Events[b].At) })

	clk := simclock.New(s.Start)
	var (
		now     time.Duration
		jitter  = -1 // the jitter event in force, or -1
		drift   = -1 // the drift event in force, or -1
		forward = -1 // the latest step forward, or -1
	)
	// check reports the wall clock at true time now, blaming event i (or,
	// for i < 0, what has been pushing the clock forward) when it, or a
	// reading with the jitter in force, is outside [lo, hi].
	check := func(i int) error {
		wall, j := clk.Wall(), time.Duration(0)
		if jitter >= 0 {
			j = s.Events[jitter].D
		}
		blame := func(why string) string {
			switch {
			case i >= 0:
				return fmt.Sprintf("events[%d].%s", i, s.Events[i].Kind)
			case why == "jitter" && jitter >= 0:
				return fmt.Sprintf("events[%d].jitter", jitter)
			case drift >= 0 && s.Events[drift].Rate > 0:
				return fmt.Sprintf("events[%d].drift", drift)
			case forward >= 0:
				return fmt.Sprintf("events[%d].step", forward)
			}
			return "duration"
		}
		switch {
		case wall.Before(lo):
			return s.fail(blame("wall"), ringflake.ErrBeforeEpoch, "the wall clock reads %s at %v, before %s, a century before the layout's epoch (the earliest a replay accepts)",
				wall.Format(time.RFC3339Nano), formatDuration(now), lo.Format(time.RFC3339Nano))
		case wall.After(hi):
			return s.fail(blame("wall"), ringflake.ErrLayoutExpired, "the wall clock reads %s at %v, past the end of the layout's last tick, %s",
				wall.Format(time.RFC3339Nano), formatDuration(now), hi.Format(time.RFC3339Nano))
		case wall.Add(-j).Before(lo):
			return s.fail(blame("jitter"), ringflake.ErrBeforeEpoch, "with jitter of ±%v the wall clock reads as early as %s at %v, before %s, a century before the layout's epoch (the earliest a replay accepts)",
				j, wall.Add(-j).Format(time.RFC3339Nano), formatDuration(now), lo.Format(time.RFC3339Nano))
		case wall.Add(j).After(hi):
			return s.fail(blame("jitter"), ringflake.ErrLayoutExpired, "with jitter of ±%v the wall clock reads as late as %s at %v, past the end of the layout's last tick, %s",
				j, wall.Add(j).Format(time.RFC3339Nano), formatDuration(now), hi.Format(time.RFC3339Nano))
		}
		return nil
	}
	for _, i := range order {
		ev := s.Events[i]
		clk.Add(ev.At - now)
		now = ev.At
		if err := check(-1); err != nil {
			return err
		}
		switch ev.Kind {
		case Step:
			clk.Step(ev.D)
			if ev.D > 0 {
				forward = i
			}
		case Freeze, Pause:
			clk.Freeze(ev.D)
			continue
		case Drift:
			if err := clk.SetDrift(ev.Rate); err != nil {
				return s.fail(fmt.Sprintf("events[%d].drift", i), err, "%s", trimPrefix(err))
			}
			drift = i
			continue
		case Jitter:
			jitter = i
		default:
			continue
		}
		if err := check(i); err != nil {
			return err
		}
	}
	clk.Add(s.Duration - now)
	now = s.Duration
	return check(-1)
}

// addSat returns a+b for a, b >= 0, or the largest Duration when the sum
// does not fit.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// mulSat returns n*d for n, d >= 0, or the largest Duration when the
// product does not fit.
func mulSat(n int64, d time.Duration) time.Duration {
	if n != 0 && int64(d) > math.MaxInt64/n {
		return math.MaxInt64
	}
	return time.Duration(n) * d
}
