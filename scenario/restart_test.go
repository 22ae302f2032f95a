package scenario_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

var restartStart = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// restartDuringStep steps the clock back 20 ms at 200 ms and restarts the
// generator (%s: crash or clean) 5 ms later, under %d callers. With a
// 100 ms mark interval the generator saves its mark whenever a call is
// past half of it: New saves 100 ms, the calls at ticks 51, 102 and 153
// save 151, 202 and 253 ms, each with the newest it knew of then as the
// mark's Since. The step leaves the clock at 185 ms at the restart, 14 ms
// behind the newest ID (199 ms).
const restartDuringStep = `
start: 2026-11-22T12:00:00Z
duration: 350ms
mark_ahead: 100ms
load: {rate: 10/ms, goroutines: %d}
events:
  - {at: 200ms, step: -20ms}
  - {at: 205ms, restart: %s}
`

// Across a restart the new run starts after the mark the old one left:
// the mark saved ahead after a crash, the newest ID after a clean restart.
// The part of the mark behind the clock that is also behind the mark's
// Since is a rollback, which the strategy handles; the rest is the
// previous run's reservation, which every strategy but a logical one
// waits out. Every strategy keeps its promises across it, monotonic ones
// stay monotonic, and what the new run pays until the clock passes the
// mark is in the report.
func TestRestartCarriesTheMark(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		kind     string
		mark     time.Duration // the mark the new run loads, after the start
		since    time.Duration // its Since
		behind   time.Duration
		rollback time.Duration
		lead     time.Duration // logical:1s's largest lead
	}{
		// The mark saved at tick 153 covers the clock (185 ms): the whole
		// 68 ms are its reservation, although the old run issued up to
		// 199 ms: the new run cannot tell those IDs from reserved time.
		// It waits to one tick past the mark; logical counts on from there.
		{"crash", "crash", 253 * ms, 153 * ms, 68 * ms, 0, 69 * ms},
		// The exact mark is the newest ID: the new run is 14 ms behind
		// it, a rollback. The old run's lead through the step (tick 199
		// at 180 ms) is logical's larger lead.
		{"clean", "clean", 199 * ms, 199 * ms, 14 * ms, 14 * ms, 19 * ms},
	} {
		for _, callers := range []int{1, 3} {
			s := parse(t, fmt.Sprintf(restartDuringStep, callers, tc.kind))
			for _, st := range scenario.Builtin() {
				t.Run(fmt.Sprintf("%s/%d callers/%s", tc.name, callers, st), func(t *testing.T) {
					r := replay(t, s, st)
					assert.True(t, r.OK(), "%v", r.Problems())
					assert.Zero(t, r.Duplicates)
					assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
					if r.Promise.Monotonic {
						assert.Zero(t, r.OutOfOrder, "monotonic across the restart")
					}
					require.Len(t, r.Restarts, 1)
					re := r.Restarts[0]
					assert.Equal(t, 205*ms, re.At)
					assert.Equal(t, tc.kind == "clean", re.Clean)
					assert.Equal(t, re.At, re.Resumed, "no call was under way")
					assert.Zero(t, re.FailedStarts)
					assert.True(t, restartStart.Add(tc.mark).Equal(re.Mark), "mark %v", re.Mark)
					assert.True(t, restartStart.Add(tc.since).Equal(re.Since), "since %v", re.Since)
					assert.Equal(t, tc.behind, re.Behind)
					assert.Equal(t, tc.rollback, re.Rollback)
					assert.Equal(t, tc.behind-tc.rollback, re.Reservation)
					assert.Zero(t, re.Abandoned)
					assert.Zero(t, re.Duplicates)
					wait := time.Duration(0) // the reservation wait: to the tick after the mark
					if re.Reservation > 0 {
						wait = re.Reservation + ms
					}
					switch st.String() {
					case "logical:1s":
						// It counts on from the mark, within its lead.
						assert.Zero(t, re.Failed)
						assert.True(t, r.Available())
						assert.Equal(t, tc.lead, r.MaxLead)
						assert.Zero(t, re.ReservationWait, "it borrows across the reservation")
					case "wait:5ms", "ring,wait:5ms,error":
						// They fail until the clock is within 5 ms of the
						// mark's Since, then wait for it, and for the tick
						// after it; or wait out the reservation.
						assert.Equal(t, int64(callsPerMs*max(tc.rollback-5*ms, 0)/ms), re.Failed)
						assert.Equal(t, max(wait, min(tc.rollback, 5*ms)+ms), re.MaxStall)
						assert.Equal(t, wait, re.ReservationWait)
						assert.Equal(t, wait, r.MaxReservationWait)
					default:
						// error fails until the clock passes Since; so does
						// the ring, which forgot its spare capacity. Then
						// they wait out the reservation, if any.
						assert.Equal(t, int64(callsPerMs*tc.rollback/ms), re.Failed)
						assert.Equal(t, max(wait, ms), re.MaxStall, "the mark's own tick is used up")
						assert.Equal(t, wait, re.ReservationWait)
					}
				})
			}
		}
	}
}

const callsPerMs = 10

// waitDuringCrash steps the clock back 3 ms at 50 ms: a wait strategy
// parks every caller that calls then, until the clock catches up at 53 ms.
// The restart comes at 51 ms. The mark interval is the default, 1 s.
const waitDuringCrash = `
start: 2026-11-22T12:00:00Z
duration: 100ms
load: {rate: 10/ms, goroutines: %d}
events:
  - {at: 50ms, step: -3ms}
  - {at: 51ms, restart: %s}
`

// A crash abandons the calls under way: they never return, and count as
// errors of kind crash. A clean restart lets them end first.
func TestRestartWithCallsUnderWay(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		kind      string
		callers   int
		abandoned int64
		resumed   time.Duration
	}{
		{"a crash abandons the one caller", "crash", 1, 1, 51 * ms},
		{"a crash abandons every caller", "crash", 4, 4, 51 * ms},
		{"a clean restart lets the one caller end", "clean", 1, 0, 52 * ms},
		{"a clean restart lets every caller end", "clean", 4, 0, 52 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := replay(t, parse(t, fmt.Sprintf(waitDuringCrash, tc.callers, tc.kind)), strategies.Wait(5*ms))
			assert.True(t, r.OK(), "%v", r.Problems())
			require.Len(t, r.Restarts, 1)
			re := r.Restarts[0]
			assert.Equal(t, tc.abandoned, re.Abandoned)
			assert.Equal(t, tc.abandoned, r.Errors["crash"])
			assert.Equal(t, tc.resumed, re.Resumed)
			assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
			assert.Equal(t, int64(1000), r.Calls, "every call of the load is made, before or after the restart")
			if tc.kind == "crash" {
				// The crash leaves the mark New saved, 1 s after the start.
				assert.True(t, restartStart.Add(time.Second).Equal(re.Mark), "mark %v", re.Mark)
				assert.Equal(t, 952*ms, re.Behind)
			} else {
				assert.Zero(t, re.Behind, "the calls under way waited for the clock to catch up")
			}
		})
	}
}

// Restarts anywhere: at the start, at the end, twice, at the instant of a
// step, without load.
func TestRestartEdgeCases(t *testing.T) {
	ms := time.Millisecond
	// No call before 50 ms saves a mark past the one New saves, 100 ms.
	const head = "start: 2026-11-22T12:00:00Z\nduration: 100ms\nmark_ahead: 100ms\n"
	for _, tc := range []struct {
		name     string
		src      string
		restarts int
		check    func(t *testing.T, r *scenario.Report)
	}{
		{"crash before the first call", head + "load: {rate: 10/ms}\nevents: [{at: 0s, restart: crash}]\n", 1,
			func(t *testing.T, r *scenario.Report) {
				assert.Equal(t, 100*ms, r.Restarts[0].Behind, "the mark New saved")
			}},
		{"restart at the end", head + "load: {rate: 10/ms}\nevents: [{at: 100ms, restart: crash}]\n", 1,
			func(t *testing.T, r *scenario.Report) {
				assert.Equal(t, 100*ms, r.Restarts[0].Resumed)
				assert.Zero(t, r.Restarts[0].Failed)
			}},
		{"a crash, then a clean restart", head + "load: {rate: 10/ms, goroutines: 2}\nevents:\n  - {at: 60ms, restart: clean}\n  - {at: 30ms, restart: crash}\n", 2,
			func(t *testing.T, r *scenario.Report) {
				assert.Equal(t, 30*ms, r.Restarts[0].At, "in the order of time")
				assert.False(t, r.Restarts[0].Clean)
				assert.True(t, r.Restarts[1].Clean)
				assert.False(t, r.Restarts[1].Mark.Before(r.Restarts[0].Mark), "a run never moves the mark back")
			}},
		{"a step at the instant of the crash comes first", head + "load: {rate: 10/ms}\nevents:\n  - {at: 50ms, restart: crash}\n  - {at: 50ms, step: -10ms}\n", 1,
			func(t *testing.T, r *scenario.Report) {
				assert.Equal(t, 60*ms, r.Restarts[0].Behind)
			}},
		{"no load", head + "events: [{at: 10ms, restart: crash}, {at: 20ms, restart: clean}]\n", 2,
			func(t *testing.T, r *scenario.Report) {
				assert.Zero(t, r.Calls)
				assert.Equal(t, 90*ms, r.Restarts[0].Behind)
				assert.True(t, r.Restarts[1].Mark.Equal(r.Restarts[0].Mark), "the mark of a run without IDs is the one it loaded")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parse(t, tc.src)
			for _, st := range scenario.Builtin() {
				r := replay(t, s, st)
				assert.True(t, r.OK(), "%s: %v", st, r.Problems())
				assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
				require.Len(t, r.Restarts, tc.restarts)
				tc.check(t, r)
			}
		})
	}
}

// A mark interval without a restart gives the generator a mark store, which
// changes nothing a replay reports on its own.
func TestMarkAheadWithoutRestart(t *testing.T) {
	without := parse(t, stepBack)
	with := parse(t, strings.Replace(stepBack, "duration: 40ms", "duration: 40ms\nmark_ahead: 10ms", 1))
	for _, st := range scenario.Builtin() {
		a, b := replay(t, without, st), replay(t, with, st)
		assert.True(t, b.OK(), "%s: %v", st, b.Problems())
		assert.Empty(t, b.Restarts)
		assert.Equal(t, []any{a.Issued, a.Errors, a.OutOfOrder, a.MaxStall, a.MaxLead, a.MaxLag, a.Borrowed},
			[]any{b.Issued, b.Errors, b.OutOfOrder, b.MaxStall, b.MaxLead, b.MaxLag, b.Borrowed}, st.String())
	}
}

// The generator saves its mark on a goroutine of its own, in real time,
// while simulated time stands still. Replays of the same file must not
// depend on that: every shipped restart scenario and the scenarios above,
// replayed again and again, give equal reports, traces included. (Their
// mark intervals leave a save 50 ticks or more to complete: see the
// package documentation.)
func TestRestartReplaysAreDeterministic(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	require.NoError(t, err)
	var all []*scenario.Scenario
	for _, f := range files {
		s, err := scenario.ReadFile(f)
		require.NoError(t, err)
		if slices.ContainsFunc(s.Events, func(ev scenario.Event) bool { return ev.Kind == scenario.Restart }) {
			all = append(all, s)
		}
	}
	require.Len(t, all, 4, "the shipped scenarios with restarts")
	all = append(all, parse(t, fmt.Sprintf(restartDuringStep, 3, "crash")), parse(t, fmt.Sprintf(waitDuringCrash, 4, "crash")))
	const replays = 5
	for _, s := range all {
		for _, st := range scenario.Builtin() {
			t.Run(s.Name+"/"+st.String(), func(t *testing.T) {
				first := replay(t, s, st, scenario.WithTrace())
				for range replays - 1 {
					require.Equal(t, first, replay(t, s, st, scenario.WithTrace()))
				}
			})
		}
	}
}

// A process that crashes again and again during a rollback: each restart
// reports the true lead of the mark over the clock, and a run that issues
// nothing past the mark leaves it where it was, however often it crashes.
// A logical run borrows one tick past the mark and saves the next mark
// ahead of it, within its lead plus the interval.
func TestCrashLoopReportsTheTrueLead(t *testing.T) {
	ms := time.Millisecond
	s, err := scenario.ReadFile("../scenarios/crash-loop-during-rollback.yaml")
	require.NoError(t, err)
	const step = -150 * time.Millisecond
	for _, st := range scenario.Builtin() {
		t.Run(st.String(), func(t *testing.T) {
			r := replay(t, s, st)
			assert.True(t, r.OK(), "%v", r.Problems())
			require.Len(t, r.Restarts, 5)
			first := r.Restarts[0]
			assert.True(t, restartStart.Add(355*ms).Equal(first.Mark), "the mark saved at tick 255: %v", first.Mark)
			for i, re := range r.Restarts {
				wall := restartStart.Add(re.At + step) // the wall clock at the restart
				assert.Equal(t, re.Mark.Sub(wall), re.Behind, "restart %d: the lead of the mark over the clock", i)
				assert.Equal(t, re.Since.Sub(wall), re.Rollback, "restart %d: behind Since", i)
				assert.True(t, first.Since.Equal(re.Since), "restart %d: no run knew of anything newer", i)
				if st.String() != "logical:1s" {
					assert.True(t, first.Mark.Equal(re.Mark), "restart %d: the mark did not move: %v", i, re.Mark)
					continue
				}
				if i > 0 {
					prev := r.Restarts[i-1].Mark
					assert.Equal(t, s.MarkAhead+ms, re.Mark.Sub(prev), "restart %d: one tick past the mark, saved 100 ms ahead", i)
				}
				assert.LessOrEqual(t, re.Behind, strategies.DefaultLead+s.MarkAhead)
			}
		})
	}
}

// A new process cannot start while the clock reads before the layout's
// epoch: every call while it is down starts it again and fails, and the
// run resumes when the clock comes back.
func TestRestartBeforeTheEpoch(t *testing.T) {
	ms := time.Millisecond
	s, err := scenario.ReadFile("../scenarios/restart-while-before-epoch.yaml")
	require.NoError(t, err)
	for _, st := range scenario.Builtin() {
		t.Run(st.String(), func(t *testing.T) {
			r := replay(t, s, st)
			assert.True(t, r.OK(), "%v", r.Problems())
			require.Len(t, r.Restarts, 1)
			re := r.Restarts[0]
			const down = 800 // ms between the crash and the step back to after the epoch
			assert.Equal(t, int64(1+5*down), re.FailedStarts, "at the restart, and for each call while down")
			assert.Equal(t, int64(5*down), re.Failed)
			assert.Equal(t, int64(5*down), r.Errors["before_epoch"])
			assert.Equal(t, 1500*ms, re.Resumed, "when the clock came back")
			assert.Zero(t, re.Behind, "the clock came back past the mark")
			assert.Equal(t, r.Calls, r.Issued+r.Errors.Total())
			assert.Equal(t, s.Calls(), r.Calls)
		})
	}
	// Without load nothing starts the process again: it never resumes.
	quiet := parse(t, "start: 2025-01-01T00:00:00.300Z\nlayout: js-safe\nduration: 1s\nevents:\n"+
		"  - {at: 100ms, step: -1s}\n  - {at: 200ms, restart: crash}\n  - {at: 500ms, step: 1s}\n")
	r := replay(t, quiet, strategies.Default())
	require.Len(t, r.Restarts, 1)
	assert.Equal(t, -time.Duration(1), r.Restarts[0].Resumed)
	assert.Equal(t, int64(1), r.Restarts[0].FailedStarts)
	assert.Contains(t, r.Restarts[0].String(), "never resumed")
}

// A logical strategy borrows across the previous run's reservation only
// within its lead: when the tick after the mark is further ahead of the
// clock than that (the mark saved 1 s ahead, the clock stepped back
// 50 ms), it sleeps tick by tick until it is not. Those sleeps are the
// reservation's, not the strategy's: its promise allows no stall.
func TestLogicalWaitsForAReservationBeyondItsLead(t *testing.T) {
	ms := time.Millisecond
	s := parse(t, `
start: 2026-11-22T12:00:00Z
duration: 99ms
load: {rate: 4/ms}
events:
  - {at: 11ms, step: -50ms}
  - {at: 23ms, restart: crash}
`)
	r := replay(t, s, strategies.Logical(time.Second))
	assert.True(t, r.OK(), "%v", r.Problems())
	require.Len(t, r.Restarts, 1)
	re := r.Restarts[0]
	assert.True(t, restartStart.Add(time.Second).Equal(re.Mark), "the mark New saved: %v", re.Mark)
	assert.Equal(t, 27*ms, re.Rollback, "behind Since, the start")
	assert.Zero(t, r.MaxStrategyWait)
	assert.Equal(t, 28*ms, re.ReservationWait, "until the tick after the mark is within the lead of the clock")
	assert.Equal(t, re.ReservationWait, r.MaxStall)
}
