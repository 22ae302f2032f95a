package scenario

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// Limits on what one scenario may ask for, so that a typo cannot make a
// replay run for hours or exhaust memory.
const (
	// MaxCalls is the most calls to the generator a scenario's load may
	// make, steady rate and bursts together. To find duplicates a replay
	// keeps 24 bytes per ID issued, allocated at the start for every call
	// the load makes: 120 MB at most.
	MaxCalls = 5_000_000
	// MaxGoroutines is the most simulated callers a scenario may have.
	MaxGoroutines = 1024
	// MaxFileSize is the most bytes a scenario file may hold: 1 MiB, some
	// 30,000 events. [ReadFile] reads no more, and parsing it takes
	// about a second and 100 MB at most.
	MaxFileSize = 1 << 20
	// MaxEvents is the most events a scenario may have, a YAML alias
	// counting as often as it is used.
	MaxEvents = 10_000
	// MaxBursts is the most bursts a scenario's load may have, a YAML
	// alias counting as often as it is used.
	MaxBursts = 10_000
	// MaxExpectations is the most strategies (and all) a scenario may
	// state expectations for: `ringflake replay -all-strategies` replays
	// each.
	MaxExpectations = 16
)

// A Scenario is a clock-skew story to replay against a strategy: the host's
// wall clock from a start time, timed events that step, freeze, drift or
// jitter it, the load the service puts on its generator, and what the file
// expects of each strategy. Read one with [ReadFile] or [Parse], or build
// one in code; [Replay] validates it.
//
// The zero values of Layout (the Twitter layout), Node (node 0) and
// Load.Goroutines (one caller) are defaults; Start and Duration must be
// set. A Scenario is not modified by [Replay] and may be replayed by
// several goroutines at once.
type Scenario struct {
	// Name names the scenario in reports: the file's name field, or the
	// file name without directory and extension.
	Name string
	// File is the path the scenario was read from (or the name given to
	// Parse), used in error messages and reports; empty for a scenario
	// built in code.
	File string
	// Comment is the comment at the top of the file: what real event the
	// scenario models.
	Comment string
	// Start is what the wall clock reads when the replay begins.
	Start time.Time
	// Layout is the ID layout of the generator; the zero Layout means
	// ringflake.TwitterLayout().
	Layout ringflake.Layout
	// Node is the generator's node id.
	Node int64
	// Duration is how long the replay runs, in true (monotonic) time. No
	// call starts at or after it; calls under way may finish after it.
	Duration time.Duration
	// MarkAhead is how far ahead of the IDs it issues the generator saves
	// its high-water mark (ringflake.WithMarkAhead); 0 means
	// ringflake.DefaultMarkAhead. A replay keeps the mark, in memory, only
	// when the scenario has a [Restart] event or sets MarkAhead: see the
	// package documentation.
	MarkAhead time.Duration
	// Load is how hard the service calls its generator.
	Load Load
	// Events are the timed clock events, in any order.
	Events []Event
	// Expect holds what the scenario expects of strategies.
	Expect []Expectation

	// lines maps a field path ("start", "events[2].step") to its line in
	// the file, for errors found after parsing.
	lines map[string]int
}

// Load is the load a scenario puts on the generator: a steady rate, spread
// evenly over the whole duration, plus bursts, served by Goroutines callers.
// Each call is due at an instant; the first idle caller makes it, and a
// call due while every caller is busy starts as soon as one is free.
type Load struct {
	// Rate is the steady load; the zero Rate adds none.
	Rate Rate
	// Goroutines is the number of simulated callers sharing the generator;
	// 0 means 1.
	Goroutines int
	// Bursts are extra calls at given instants.
	Bursts []Burst
}

// Rate is a number of calls per time unit, written "10/ms", "2500/s" or
// "3/10ms" in scenario files. The zero Rate means no calls.
type Rate struct {
	Count int64         // calls per Per, >= 0
	Per   time.Duration // > 0 when Count > 0
}

// String returns r in the form scenario files use, such as "10/ms" or
// "3/10ms".
func (r Rate) String() string {
	if r.Count == 0 && r.Per == 0 {
		return "0"
	}
	per := formatDuration(r.Per)
	if strings.HasPrefix(per, "1") && strings.IndexFunc(per[1:], isDigitOrDot) < 0 {
		per = per[1:] // "1ms" → "ms"
	}
	return strconv.FormatInt(r.Count, 10) + "/" + per
}

func isDigitOrDot(r rune) bool { return r == '.' || r >= '0' && r <= '9' }

// Burst is Count extra calls from At on: all due at At, or, when Over is
// set, due evenly spread over [At, At+Over).
type Burst struct {
	At    time.Duration
	Count int64
	Over  time.Duration
}

// Kind is what an [Event] does.
type Kind int

// The kinds of events. The zero Kind is not a kind.
const (
	// Step moves the wall clock by Event.D at once (negative: back), as an
	// NTP step or `date -s` does.
	Step Kind = iota + 1
	// Freeze stops the wall clock for Event.D of true time.
	Freeze
	// Drift makes the wall clock run at (1 + Event.Rate) times true time
	// from then on: -0.005 is 0.5 % slow, as while NTP slews it back.
	Drift
	// Jitter adds noise drawn from [-Event.D, +Event.D] to every wall clock
	// reading from then on (0 turns it off), seeded with Event.Seed.
	Jitter
	// Restart restarts the process: a new generator (same node, layout,
	// strategy and clock) replaces the running one and starts after the
	// high-water mark the old one left in the replay's mark store. Clean
	// (Event.Clean): the old process finishes the calls under way and
	// closes its generator, which saves the exact mark. Otherwise it
	// crashes: the calls under way are lost, and so is every save of the
	// mark after the one in flight.
	Restart
	// Pause stops the whole host for Event.D of true time, as a VM pause
	// (or a SIGSTOP) does: the wall clock stands still, as in a freeze,
	// and no call starts; the calls due meanwhile start when it ends, all
	// at once. A call already under way goes on: a wait inside the
	// generator ends when its true time is up.
	Pause
	// Observe makes the service observe an ID (ringflake.Generator.Observe,
	// as causal.Middleware does for a request that carries one): the
	// greatest ID of the tick Event.D ahead of the wall clock (negative:
	// behind), as a peer whose clock is that far ahead would send. Every
	// ID of a call that starts after it must sort above it.
	Observe
)

// lastKind is the last of the kinds.
const lastKind = Observe

var kindNames = [...]string{Step: "step", Freeze: "freeze", Drift: "drift", Jitter: "jitter", Restart: "restart", Pause: "pause", Observe: "observe"}

// String returns the kind's name in scenario files: "step", "freeze",
// "drift", "jitter", "restart", "pause" or "observe".
func (k Kind) String() string {
	if k >= Step && k <= lastKind {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one timed event of a scenario, at true elapsed time At since
// the start. Each kind uses only some fields, as in simclock.Event:
//
//	Kind     D                       Rate                Seed   Clean
//	Step     amount, non-zero, ±     0                   0      false
//	Freeze   length, > 0             0                   0      false
//	Drift    0                       > -1 and <= 1       0      false
//	Jitter   bound, >= 0 (0 = off)   0                   any    false
//	Restart  0                       0                   0      any
//	Pause    length, > 0             0                   0      false
//	Observe  lead of the ID, ±       0                   0      false
type Event struct {
	At   time.Duration
	Kind Kind
	D    time.Duration
	Rate float64
	Seed uint64
	// Clean, for a restart, means the old process closed its generator
	// before exiting; otherwise it crashed.
	Clean bool
}

// String describes e, for example "at 20ms: step -3ms",
// "at 0s: drift -0.5%" or "at 0s: jitter 2ms seed 42".
func (e Event) String() string {
	s := "at " + formatDuration(e.At) + ": " + e.Kind.String()
	switch e.Kind {
	case Drift:
		return s + " " + formatRate(e.Rate)
	case Jitter:
		return s + " " + formatDuration(e.D) + " seed " + strconv.FormatUint(e.Seed, 10)
	case Restart:
		if e.Clean {
			return s + " clean"
		}
		return s + " crash"
	}
	return s + " " + formatDuration(e.D)
}

// clock returns the simclock event for e; Restart has none.
func (e Event) clock() (simclock.Event, bool) {
	var k simclock.Kind
	switch e.Kind {
	case Step:
		k = simclock.Step
	case Freeze, Pause: // a pause stops the wall clock as a freeze does
		k = simclock.Freeze
	case Drift:
		k = simclock.Drift
	case Jitter:
		k = simclock.Jitter
	default:
		return simclock.Event{}, false
	}
	return simclock.Event{At: e.At, Kind: k, D: e.D, Rate: e.Rate, Seed: e.Seed}, true
}

// layout returns the scenario's layout, defaulting to Twitter's.
func (s *Scenario) layout() ringflake.Layout {
	if s.Layout.IsZero() {
		return ringflake.TwitterLayout()
	}
	return s.Layout
}

// keepsMark reports whether a replay of s keeps the generator's high-water
// mark: when s restarts the generator or sets its mark interval.
func (s *Scenario) keepsMark() bool {
	return s.MarkAhead > 0 || slices.ContainsFunc(s.Events, func(e Event) bool { return e.Kind == Restart })
}

// markAhead returns the mark interval, defaulting to ringflake's.
func (s *Scenario) markAhead() time.Duration {
	if s.MarkAhead == 0 {
		return ringflake.DefaultMarkAhead
	}
	return s.MarkAhead
}

// goroutines returns the number of callers, defaulting to 1.
func (s *Scenario) goroutines() int { return max(s.Load.Goroutines, 1) }

// line returns the line of field path in the file, or of the nearest
// enclosing field that has one, or 0.
func (s *Scenario) line(path string) int {
	for path != "" {
		if l, ok := s.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// fail returns an *Error about field path.
func (s *Scenario) fail(path string, cause error, format string, args ...any) *Error {
	return &Error{File: s.File, Line: s.line(path), Field: path, Reason: fmt.Sprintf(format, args...), Err: cause}
}

// Validate reports whether s can be replayed. Errors match [ErrInvalid]
// (an [*Error] naming the file, line and field):
//   - Start not set, or outside what the layout can represent (also
//     matching ringflake.ErrBeforeEpoch or ringflake.ErrLayoutExpired);
//   - Duration not positive, or longer than the layout lasts from Start:
//     past the end of its last tick (also matching
//     ringflake.ErrLayoutExpired);
//   - Node outside the layout's range;
//   - MarkAhead negative, or not longer than one tick of the layout (also
//     matching ringflake.ErrInvalidOption);
//   - Goroutines negative or above [MaxGoroutines];
//   - more events, bursts or expectations than [MaxEvents], [MaxBursts]
//     or [MaxExpectations];
//   - a negative Rate, or a Rate without a positive Per;
//   - a burst with a negative or late At, a Count below 1 or a negative
//     Over, or that does not end within Duration;
//   - an event at a negative time or after Duration, or whose fields do not
//     fit its kind (see [Event]);
//   - a step, jitter or drift that takes the wall clock, or a reading of it
//     with jitter, more than a century before the layout's epoch or past
//     the end of its last tick (also matching
//     ringflake.ErrBeforeEpoch or ringflake.ErrLayoutExpired);
//   - more calls in all than [MaxCalls];
//   - an expectation for a strategy that does not parse, or with an
//     unknown field.
func (s *Scenario) Validate() error {
	l := s.layout()
	switch {
	case s.Start.IsZero():
		return s.fail("start", nil, "not set; want an RFC 3339 time such as 2026-01-02T15:04:05Z")
	case l.Tick(s.Start) < 0:
		return s.fail("start", ringflake.ErrBeforeEpoch, "%s is before the layout's epoch %s",
			s.Start.Format(time.RFC3339Nano), l.Spec().Epoch.Format(time.RFC3339Nano))
	case l.Tick(s.Start) > l.MaxTick():
		return s.fail("start", ringflake.ErrLayoutExpired, "%s is after the layout's last time %s",
			s.Start.Format(time.RFC3339Nano), l.Last().Format(time.RFC3339Nano))
	case s.Duration <= 0:
		return s.fail("duration", nil, "%v: want a positive duration", s.Duration)
	case s.Duration > end(l).Sub(s.Start):
		return s.fail("duration", ringflake.ErrLayoutExpired, "%v runs past the end of the layout's last tick, %s, %v after the start",
			s.Duration, end(l).Format(time.RFC3339Nano), end(l).Sub(s.Start))
	case s.Node < 0 || s.Node > l.MaxNode():
		return s.fail("node", ringflake.ErrNodeOutOfRange, "%d is out of the layout's range [0, %d]", s.Node, l.MaxNode())
	case s.MarkAhead < 0:
		return s.fail("mark_ahead", nil, "%v is negative", s.MarkAhead)
	case s.MarkAhead > 0 && s.MarkAhead <= l.Spec().Unit:
		return s.fail("mark_ahead", ringflake.ErrInvalidOption, "%v: want more than one tick of the layout (%v)", s.MarkAhead, l.Spec().Unit)
	case s.Load.Goroutines < 0 || s.Load.Goroutines > MaxGoroutines:
		return s.fail("load.goroutines", nil, "%d: want 1 to %d", s.Load.Goroutines, MaxGoroutines)
	case len(s.Events) > MaxEvents:
		return s.fail("events", nil, "%d events, more than the %d a scenario may hold", len(s.Events), MaxEvents)
	case len(s.Load.Bursts) > MaxBursts:
		return s.fail("load.bursts", nil, "%d bursts, more than the %d a scenario may hold", len(s.Load.Bursts), MaxBursts)
	case len(s.Expect) > MaxExpectations:
		return s.fail("expect", nil, "expectations for %d strategies, more than the %d a scenario may hold", len(s.Expect), MaxExpectations)
	}
	if r := s.Load.Rate; r.Count < 0 || r.Count > 0 && r.Per <= 0 {
		return s.fail("load.rate", nil, "%d per %v: want a count >= 0 per positive duration", r.Count, r.Per)
	}
	for i, b := range s.Load.Bursts {
		p := fmt.Sprintf("load.bursts[%d]", i)
		switch {
		case b.At < 0:
			return s.fail(p+".at", nil, "%v is negative", b.At)
		case b.At >= s.Duration:
			return s.fail(p+".at", nil, "%v is not before the end of the scenario (%v)", b.At, s.Duration)
		case b.Count < 1:
			return s.fail(p+".count", nil, "%d: want at least 1", b.Count)
		case b.Over < 0:
			return s.fail(p+".over", nil, "%v is negative", b.Over)
		case b.Over > s.Duration-b.At:
			return s.fail(p+".over", nil, "the burst ends at %v, after the end of the scenario (%v)", b.At+b.Over, s.Duration)
		}
	}
	for i, ev := range s.Events {
		if err := s.checkEvent(i, ev); err != nil {
			return err
		}
	}
	if err := s.checkClock(); err != nil {
		return err
	}
	if _, err := s.calls(); err != nil {
		return err
	}
	return s.checkExpect()
}

// checkEvent validates event i.
func (s *Scenario) checkEvent(i int, ev Event) error {
	p := fmt.Sprintf("events[%d]", i)
	if ev.Kind < Step || ev.Kind > lastKind {
		return s.fail(p, nil, "%v is not an event; want step, freeze, drift, jitter, restart, pause or observe", ev.Kind)
	}
	k := p + "." + ev.Kind.String()
	switch {
	case ev.At < 0:
		return s.fail(p+".at", nil, "%v is negative", ev.At)
	case ev.At > s.Duration:
		return s.fail(p+".at", nil, "%v is after the end of the scenario (%v)", ev.At, s.Duration)
	case ev.Kind == Restart && ev.D != 0:
		return s.fail(k, nil, "a restart takes no duration")
	case ev.Kind == Step && ev.D == 0:
		return s.fail(k, nil, "a step must not be 0")
	case ev.Kind == Freeze && ev.D <= 0:
		return s.fail(k, nil, "%v: a freeze must last a positive duration", ev.D)
	case ev.Kind == Pause && ev.D <= 0:
		return s.fail(k, nil, "%v: a pause must last a positive duration", ev.D)
	case ev.Kind == Pause && ev.D > s.Duration-ev.At:
		return s.fail(k, nil, "the pause ends at %v, after the end of the scenario (%v)", ev.At+ev.D, s.Duration)
	case ev.Kind == Jitter && ev.D < 0:
		return s.fail(k, nil, "%v: a jitter bound must not be negative", ev.D)
	case ev.Kind == Drift && ev.D != 0:
		return s.fail(k, nil, "a drift takes a rate, not a duration")
	case ev.Kind == Drift && !(ev.Rate > -1 && ev.Rate <= 1):
		return s.fail(k, nil, "%v: want a rate above -100%% and at most +100%%, such as -0.5%%", ev.Rate)
	case ev.Kind != Drift && ev.Rate != 0:
		return s.fail(k, nil, "a %v takes no rate", ev.Kind)
	case ev.Kind != Jitter && ev.Seed != 0:
		return s.fail(p+".seed", nil, "only a jitter takes a seed")
	case ev.Kind != Restart && ev.Clean:
		return s.fail(k, nil, "only a restart can be clean")
	}
	return nil
}

// checkExpect validates the expectations.
func (s *Scenario) checkExpect() error {
	seen := map[string]bool{}
	for _, x := range s.Expect {
		p := x.path()
		if x.Strategy != "" {
			st, err := strategies.Parse(x.Strategy)
			if err != nil {
				return s.fail(p, err, "%s", trimPrefix(err))
			}
			if err := strategies.Validate(st, s.layout().Spec().Unit); err != nil {
				return s.fail(p, err, "%s", trimPrefix(err))
			}
		}
		if seen[x.Strategy] {
			return s.fail(p, nil, "expectations for this strategy are given twice")
		}
		seen[x.Strategy] = true
		for _, b := range x.Bounds {
			if _, ok := fieldKindOf(b.Field); !ok {
				return s.fail(p+"."+b.Field, nil, "unknown field; want one of %s", fieldList())
			}
			if !b.Op.valid() {
				return s.fail(p+"."+b.Field, nil, "unknown comparison %q", string(b.Op))
			}
		}
	}
	return nil
}

// stream is a run of calls due at start + i*num/den for i in [0, count).
type stream struct {
	start    time.Duration
	num, den int64
	count, i int64
	next     time.Duration // when call i is due, once advance reported it
}

// advance sets next to the instant call i is due, and reports whether
// there is such a call.
func (st *stream) advance() bool {
	if st.i >= st.count {
		return false
	}
	st.next = st.start
	if st.num != 0 {
		st.next += time.Duration(mulDiv(st.i, st.num, st.den))
	}
	return true
}

// mulDiv returns a*b/c for non-negative a, b and positive c with a < c or
// a*b/c fitting in an int64, without overflow in between.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(min(q, math.MaxInt64))
}

// calls returns the call streams of the load: the steady rate first, then
// each burst. The total is checked against MaxCalls.
func (s *Scenario) calls() ([]stream, error) {
	var out []stream
	total := int64(0)
	if r := s.Load.Rate; r.Count > 0 {
		// The calls at k*Per/Count for k*Per/Count < Duration, that is
		// k < ceil(Duration*Count/Per).
		hi, lo := bits.Mul64(uint64(s.Duration), uint64(r.Count))
		if hi >= uint64(r.Per) {
			return nil, s.fail("load.rate", nil, "%v over %v is more than %d calls", r, s.Duration, MaxCalls)
		}
		q, rem := bits.Div64(hi, lo, uint64(r.Per))
		if rem > 0 {
			q++
		}
		if q > MaxCalls {
			return nil, s.fail("load.rate", nil, "%v over %v is %d calls, more than %d", r, s.Duration, q, MaxCalls)
		}
		total = int64(q)
		out = append(out, stream{num: int64(r.Per), den: r.Count, count: total})
	}
	for i, b := range s.Load.Bursts {
		total += b.Count
		if b.Count > MaxCalls || total > MaxCalls {
			return nil, s.fail(fmt.Sprintf("load.bursts[%d].count", i), nil, "the load adds up to more than %d calls", MaxCalls)
		}
		out = append(out, stream{start: b.At, num: int64(b.Over), den: b.Count, count: b.Count})
	}
	return out, nil
}

// Calls returns the number of calls the scenario's load makes, or 0 when
// the scenario is not valid.
func (s *Scenario) Calls() int64 {
	st, err := s.calls()
	if err != nil {
		return 0
	}
	n := int64(0)
	for _, x := range st {
		n += x.count
	}
	return n
}

// formatDuration is d.String() without the zero units it ends with
// ("1m" rather than "1m0s").
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// formatRate writes a drift rate as a percentage: -0.005 is "-0.5%".
func formatRate(r float64) string {
	// Round to parts per billion, the drift's resolution, so that -0.005
	// prints as -0.5% and not -0.5000000000000001%.
	return strconv.FormatFloat(math.Round(r*1e9)/1e7, 'f', -1, 64) + "%"
}
