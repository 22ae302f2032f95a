package scenario_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// parse reads a scenario from text, failing the test on errors.
func parse(t *testing.T, src string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse("test.yaml", []byte(src))
	require.NoError(t, err)
	return s
}

func replay(t *testing.T, s *scenario.Scenario, st strategies.Strategy, opts ...scenario.Option) *scenario.Report {
	t.Helper()
	r, err := scenario.Replay(context.Background(), s, st, opts...)
	require.NoError(t, err)
	return r
}

const stepBack = `
start: 2026-11-22T12:00:00Z
duration: 40ms
load: {rate: 10/ms}
events:
  - {at: 20ms, step: -3ms}
`

// liar is a strategy that behaves like one strategy and promises what
// another promises: the replay must catch it breaking its promise.
type liar struct {
	name    string
	promise strategies.Promise
	behave  strategies.Strategy
}

func (l liar) Decide(s strategies.Situation) strategies.Plan { return l.behave.Decide(s) }
func (l liar) String() string                                { return l.name }
func (l liar) Promise() strategies.Promise                   { return l.promise }

// sleeper sleeps far longer than the wait it promises.
type sleeper struct{}

func (sleeper) Decide(s strategies.Situation) strategies.Plan {
	if s.IsBehind() && s.Waited == 0 {
		return strategies.Sleep(50 * time.Millisecond)
	}
	return strategies.Pass()
}
func (sleeper) String() string { return "wait:1ms" }
func (sleeper) Promise() strategies.Promise {
	return strategies.Promise{Monotonic: true, MaxStall: time.Millisecond}
}

// custom is a strategy that states no promise.
type custom struct{}

func (custom) Decide(s strategies.Situation) strategies.Plan { return strategies.Ring().Decide(s) }
func (custom) String() string                                { return "mine" }

func TestReplayCatchesBrokenPromises(t *testing.T) {
	s := parse(t, stepBack)
	for _, tc := range []struct {
		name     string
		strategy strategies.Strategy
		promise  string // the promise that must be reported broken, or "" for none
	}{
		{"honest ring", strategies.Ring(), ""},
		{"a ring that promises to be monotonic", liar{"mine", strategies.Promise{Monotonic: true}, strategies.Ring()}, "monotonic"},
		{"a long sleep that promises a 1ms wait", sleeper{}, "stall"},
		{"a strategy without a promise is only held to uniqueness", custom{}, ""},
		// The promise comes from the strategy, not from its name.
		{"a ring named error", liar{"error", strategies.Promise{Reuses: true}, strategies.Ring()}, ""},
		{"a strategy without a promise named error", namedError{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := replay(t, s, tc.strategy)
			if tc.promise == "" {
				assert.True(t, r.OK(), "%v", r.Problems())
				assert.Zero(t, r.ViolationCount)
				return
			}
			assert.False(t, r.OK())
			require.NotEmpty(t, r.Violations)
			assert.Equal(t, tc.promise, r.Violations[0].Promise, "%v", r.Violations)
			assert.Positive(t, r.Violations[0].Call)
			assert.EqualValues(t, len(r.Violations), min(r.ViolationCount, scenario.MaxViolations))
			assert.Contains(t, r.Problems()[0], "broke its promise: call ")
		})
	}
}

// A logical strategy with a long lead, named as one with a short lead,
// borrows further ahead than the name allows when the clock steps back by
// more than the short lead.
func TestReplayCatchesALongLead(t *testing.T) {
	s := parse(t, strings.Replace(stepBack, "step: -3ms", "step: -10ms", 1))
	r := replay(t, s, liar{"mine", strategies.Promise{Monotonic: true, MaxLead: 2 * time.Millisecond}, strategies.Logical(time.Second)})
	assert.False(t, r.OK())
	require.NotEmpty(t, r.Violations)
	assert.Equal(t, "lead", r.Violations[0].Promise, "%v", r.Violations)

	honest := replay(t, s, strategies.Logical(time.Second))
	assert.True(t, honest.OK(), "%v", honest.Problems())
}

// namedError is a ring that calls itself "error" and states no promise.
type namedError struct{ custom }

func (namedError) String() string { return "error" }

// The report carries the promise strategies.PromiseOf states, and whether
// the strategy states one.
func TestReportPromise(t *testing.T) {
	s := parse(t, stepBack)
	for _, st := range scenario.Builtin() {
		want, ok := strategies.PromiseOf(st)
		require.True(t, ok)
		r := replay(t, s, st)
		assert.Equal(t, want, r.Promise, st.String())
		assert.True(t, r.PromiseKnown, st.String())
	}
	for _, st := range []strategies.Strategy{custom{}, namedError{}, strategies.Chain(strategies.Ring(), custom{})} {
		r := replay(t, s, st)
		assert.False(t, r.PromiseKnown, st.String())
		assert.Zero(t, r.Promise, st.String())
	}
}

func TestExpectationsNotMet(t *testing.T) {
	s := parse(t, stepBack+`expect:
  all: {issued: ">=1000"}
  error: {available: true, errors: {rollback: 0}, max_lag: 0s}
  ring: {out_of_order: 0}
`)
	r := replay(t, s, strategies.Error())
	assert.False(t, r.OK())
	assert.Zero(t, r.ViolationCount, "the strategy kept its promises; the file expected more")
	var got []string
	for _, u := range r.Unmet {
		got = append(got, u.String())
	}
	assert.Equal(t, []string{
		fmt.Sprintf("test.yaml:8: expect.all.issued: want >=1000, got %d", r.Issued),
		"test.yaml:9: expect.error.available: want true, got false",
		fmt.Sprintf("test.yaml:9: expect.error.errors.rollback: want 0, got %d", r.Errors["rollback"]),
	}, got, "the ring's expectations do not apply to error")

	r = replay(t, s, strategies.Ring())
	require.Len(t, r.Unmet, 2)
	assert.Equal(t, "out_of_order", r.Unmet[1].Bound.Field)
	assert.Equal(t, "ring", r.Unmet[1].Strategy)
}

// fakeT records what Run reports.
type fakeT struct {
	errors, fatals []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(path, []byte(stepBack+"expect:\n  error: {available: true}\n"), 0o600))

	ft := &fakeT{}
	r := scenario.Run(ft, path, strategies.Ring())
	require.NotNil(t, r)
	assert.Empty(t, ft.errors, "ring meets the file's expectations and its promises")
	assert.Empty(t, ft.fatals)

	ft = &fakeT{}
	r = scenario.Run(ft, path, strategies.Error())
	require.NotNil(t, r)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "s.yaml:8: expect.error.available: want true, got false")

	ft = &fakeT{}
	r = scenario.Run(ft, path, sleeper{})
	require.NotNil(t, r)
	assert.NotEmpty(t, ft.errors, "a broken promise fails the test")

	for _, bad := range []string{filepath.Join(dir, "missing.yaml"), writeFile(t, dir, "bad.yaml", "start: now\n")} {
		ft = &fakeT{}
		assert.Nil(t, scenario.Run(ft, bad, strategies.Ring()))
		assert.Len(t, ft.fatals, 1)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestReplayErrors(t *testing.T) {
	s := parse(t, stepBack)
	_, err := scenario.Replay(context.Background(), s, nil)
	require.ErrorIs(t, err, strategies.ErrInvalidStrategy)

	sony := parse(t, stepBack+"layout: sonyflake\n")
	_, err = scenario.Replay(context.Background(), sony, strategies.Logical(time.Millisecond))
	require.ErrorIs(t, err, strategies.ErrInvalidStrategy, "a lead below the layout's 10ms tick")

	_, err = scenario.Replay(context.Background(), &scenario.Scenario{}, strategies.Ring())
	require.ErrorIs(t, err, scenario.ErrInvalid)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = scenario.Replay(ctx, s, strategies.Ring())
	require.ErrorIs(t, err, context.Canceled)
}

func TestReplayWithoutLoad(t *testing.T) {
	r := replay(t, parse(t, "start: 2026-11-22T12:00:00Z\nduration: 10ms\nevents: [{at: 5ms, step: -1ms}]\n"), strategies.Ring())
	assert.Zero(t, r.Calls)
	assert.True(t, r.OK())
}

func TestProgress(t *testing.T) {
	var seen []time.Duration
	replay(t, parse(t, stepBack), strategies.Ring(), scenario.WithProgress(func(done, total time.Duration) {
		assert.Equal(t, 40*time.Millisecond, total)
		seen = append(seen, done)
	}))
	require.GreaterOrEqual(t, len(seen), 10)
	assert.Zero(t, seen[0])
	assert.Equal(t, 40*time.Millisecond, seen[len(seen)-1])
	assert.IsNonDecreasing(t, seen)
}

func TestTrace(t *testing.T) {
	s := parse(t, stepBack)
	assert.Nil(t, replay(t, s, strategies.Ring()).Trace, "no trace unless asked for")

	r := replay(t, s, strategies.Error(), scenario.WithTrace())
	tr := r.Trace
	require.NotNil(t, tr)
	assert.Equal(t, s.Start, tr.Start)
	assert.Equal(t, time.Millisecond, tr.Unit)
	assert.Equal(t, s.Events, tr.Events)

	// The wall clock: from 0 to 40ms of wall time, with the step as two
	// points at 20ms.
	require.NotEmpty(t, tr.Wall)
	assert.Equal(t, scenario.Point{At: 0, T: 0}, tr.Wall[0])
	assert.Equal(t, scenario.Point{At: 40 * time.Millisecond, T: 37 * time.Millisecond}, tr.Wall[len(tr.Wall)-1])
	var step []scenario.Point
	for i := 1; i < len(tr.Wall); i++ {
		assert.GreaterOrEqual(t, tr.Wall[i].At, tr.Wall[i-1].At)
		if tr.Wall[i].At == 20*time.Millisecond && tr.Wall[i-1].At == 20*time.Millisecond {
			step = []scenario.Point{tr.Wall[i-1], tr.Wall[i]}
		}
	}
	assert.Equal(t, []scenario.Point{{At: 20 * time.Millisecond, T: 20 * time.Millisecond}, {At: 20 * time.Millisecond, T: 17 * time.Millisecond}}, step)

	// IDs and errors. The error strategy stamps its IDs on the wall
	// clock: at true time before the step, 3 ms behind it after.
	var ids, errs int64
	for _, b := range tr.IDs {
		ids += b.Count
		assert.LessOrEqual(t, b.Min, b.Max)
		assert.LessOrEqual(t, b.MinOffset, b.MaxOffset)
		want := time.Duration(0)
		if b.At >= 20*time.Millisecond {
			want = -3 * time.Millisecond
		}
		assert.Equal(t, []time.Duration{want, want}, []time.Duration{b.MinOffset, b.MaxOffset}, "bucket at %v", b.At)
	}
	for _, p := range tr.Errors {
		errs += int64(p.T)
		assert.GreaterOrEqual(t, p.At, 20*time.Millisecond, "errors only after the step")
	}
	assert.Equal(t, r.Issued, ids)
	assert.Equal(t, r.Errors.Total(), errs)
	assert.LessOrEqual(t, len(tr.IDs), scenario.TraceBuckets+1)
}

// With several callers, a caller that waits out a rollback is parked while
// the others go on, and every caller's calls are checked.
func TestGoroutinesShareTheGenerator(t *testing.T) {
	one := parse(t, stepBack)
	four := parse(t, strings.Replace(stepBack, "{rate: 10/ms}", "{rate: 10/ms, goroutines: 4}", 1))
	for _, st := range scenario.Builtin() {
		a, b := replay(t, one, st), replay(t, four, st)
		assert.True(t, b.OK(), "%s: %v", st, b.Problems())
		assert.Equal(t, a.Calls, b.Calls, st.String())
	}
	// A burst larger than one tick: callers waiting for the next tick wake
	// before queued calls take it, so no call waits more than one tick.
	burst := parse(t, "start: 2026-11-22T12:00:00Z\nduration: 10ms\nload: {goroutines: 8, bursts: [{at: 1ms, count: 20000}]}\n")
	for _, st := range scenario.Builtin() {
		r := replay(t, burst, st)
		assert.True(t, r.OK(), "%s: %v", st, r.Problems())
		assert.Equal(t, int64(20000), r.Issued)
		if st.String() != "logical:1s" {
			assert.Equal(t, time.Millisecond, r.MaxStall, st.String())
		}
	}
}

// Steps that fire while a call waits (the steps are taken out of the
// stall) and a scenario starting with events at 0.
func TestEventsDuringCalls(t *testing.T) {
	s := parse(t, `
start: 2026-11-22T12:00:00Z
duration: 20ms
load: {bursts: [{at: 0s, count: 20000}]}
events:
  - {at: 0s, step: 5ms}
  - {at: 2500us, step: 30s}
  - {at: 3500us, step: -30s}
`)
	for _, st := range scenario.Builtin() {
		r := replay(t, s, st)
		assert.Zero(t, r.ViolationCount, "%s: %v", st, r.Violations)
	}
}

func TestDriftFreezeAndJitterReplay(t *testing.T) {
	s := parse(t, `
start: 2026-11-22T12:00:00Z
duration: 100ms
load: {rate: 20/ms, goroutines: 3}
events:
  - {at: 0s, jitter: 1ms, seed: 7}
  - {at: 10ms, drift: 1%}
  - {at: 30ms, freeze: 15ms}
  - {at: 60ms, drift: -1%}
  - {at: 70ms, jitter: 0s}
`)
	for _, st := range scenario.Builtin() {
		r := replay(t, s, st)
		assert.Zero(t, r.ViolationCount, "%s: %v", st, r.Violations)
		assert.Zero(t, r.Duplicates)
	}

	// On a wall clock running 50 % fast, a wait reckoned in wall time
	// moves the wall further than the wait: not a broken promise.
	fast := parse(t, `
start: 2026-11-22T12:00:00Z
duration: 100ms
load: {rate: 20/ms, goroutines: 2}
events:
  - {at: 0s, drift: 50%}
  - {at: 30ms, step: -6ms}
`)
	r := replay(t, fast, strategies.Wait(5*time.Millisecond))
	assert.True(t, r.OK(), "%v", r.Problems())
	assert.Positive(t, r.MaxStall)
}

// A replay keeps 24 bytes per ID to find duplicates, allocated once for
// every call of the load: not a slice grown by doubling, which allocated
// 160 bytes per call in all (745 MB at MaxCalls).
func TestReplayMemoryPerCall(t *testing.T) {
	s := parse(t, "start: 2026-11-22T12:00:00Z\nduration: 200ms\nload: {rate: 1000/ms}\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := replay(t, s, strategies.Ring())
	runtime.ReadMemStats(&after)
	require.EqualValues(t, 200_000, r.Calls)
	perCall := float64(after.TotalAlloc-before.TotalAlloc) / float64(r.Calls)
	assert.Less(t, perCall, 40.0, "bytes allocated per call")
}
