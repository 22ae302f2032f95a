package scenario_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

const full = `# What this models.
# Second line.
name: everything
start: 2026-11-22T12:00:00.5Z
layout: sonyflake
node: 7
duration: 2s
mark_ahead: 250ms
load:
  rate: 3/10ms
  goroutines: 4
  bursts:
    - {at: 20ms, count: 300}
    - at: 1s
      count: 50
      over: 100ms
events:
  - {at: 50ms, step: -3ms}
  - {at: 60ms, freeze: 20ms}
  - {at: 0s, drift: -0.5%}
  - {at: 100ms, drift: 200ppm}
  - {at: 200ms, drift: 0.001}
  - {at: 0s, jitter: 2ms, seed: 42}
  - {at: 2s, step: 1m30s}
  - {at: 1s, restart: crash}
  - {at: 1500ms, restart: clean}
expect:
  all: {duplicates: 0}
  error: {available: false, errors: ">0"}
  wait: {max_stall: 5ms, errors: {rollback: "<= 3", expired: 0}}
  "ring,wait:5ms,error": {out_of_order: ">=1", max_lead: "<1s", max_lag: 3ms, borrowed: 0, issued: ">100"}
`

func TestParse(t *testing.T) {
	s, err := scenario.Parse("full.yaml", []byte(full))
	require.NoError(t, err)
	ms := time.Millisecond
	assert.Equal(t, "everything", s.Name)
	assert.Equal(t, "full.yaml", s.File)
	assert.Equal(t, "What this models.\nSecond line.", s.Comment)
	assert.Equal(t, time.Date(2026, 11, 22, 12, 0, 0, 5e8, time.UTC), s.Start)
	assert.True(t, s.Layout.Equal(ringflake.SonyflakeLayout()))
	assert.Equal(t, int64(7), s.Node)
	assert.Equal(t, 2*time.Second, s.Duration)
	assert.Equal(t, 250*ms, s.MarkAhead)
	assert.Equal(t, scenario.Load{
		Rate:       scenario.Rate{Count: 3, Per: 10 * ms},
		Goroutines: 4,
		Bursts:     []scenario.Burst{{At: 20 * ms, Count: 300}, {At: time.Second, Count: 50, Over: 100 * ms}},
	}, s.Load)
	assert.Equal(t, []scenario.Event{
		{At: 50 * ms, Kind: scenario.Step, D: -3 * ms},
		{At: 60 * ms, Kind: scenario.Freeze, D: 20 * ms},
		{At: 0, Kind: scenario.Drift, Rate: -0.005},
		{At: 100 * ms, Kind: scenario.Drift, Rate: 200e-6},
		{At: 200 * ms, Kind: scenario.Drift, Rate: 0.001},
		{At: 0, Kind: scenario.Jitter, D: 2 * ms, Seed: 42},
		{At: 2 * time.Second, Kind: scenario.Step, D: 90 * time.Second},
		{At: time.Second, Kind: scenario.Restart},
		{At: 1500 * ms, Kind: scenario.Restart, Clean: true},
	}, s.Events)
	assert.Equal(t, []scenario.Expectation{
		{Key: "all", Bounds: []scenario.Bound{{Field: "duplicates", Op: scenario.Equal, Value: 0, Line: 28}}},
		{Strategy: "error", Key: "error", Bounds: []scenario.Bound{
			{Field: "available", Op: scenario.Equal, Value: 0, Line: 29},
			{Field: "errors", Op: scenario.Above, Value: 0, Line: 29}}},
		{Strategy: "wait:5ms", Key: "wait", Bounds: []scenario.Bound{ // "wait" is stored in its canonical form, and kept as written
			{Field: "max_stall", Op: scenario.AtMost, Value: int64(5 * ms), Line: 30},
			{Field: "errors.rollback", Op: scenario.AtMost, Value: 3, Line: 30},
			{Field: "errors.expired", Op: scenario.Equal, Value: 0, Line: 30}}},
		{Strategy: "ring,wait:5ms,error", Key: "ring,wait:5ms,error", Bounds: []scenario.Bound{
			{Field: "out_of_order", Op: scenario.AtLeast, Value: 1, Line: 31},
			{Field: "max_lead", Op: scenario.Below, Value: int64(time.Second), Line: 31},
			{Field: "max_lag", Op: scenario.AtMost, Value: int64(3 * ms), Line: 31},
			{Field: "borrowed", Op: scenario.AtMost, Value: 0, Line: 31},
			{Field: "issued", Op: scenario.Above, Value: 100, Line: 31}}},
	}, s.Expect)
	assert.Equal(t, []string{"error", "wait:5ms", "ring,wait:5ms,error"}, s.ExpectedStrategies())
	assert.Equal(t, int64(600+300+50), s.Calls())
}

func TestParseDefaults(t *testing.T) {
	s, err := scenario.Parse("dir/minimal.yml", []byte("start: 2026-01-01T00:00:00Z\nduration: 1ms\n"))
	require.NoError(t, err)
	assert.Equal(t, "minimal", s.Name, "the name defaults to the file's")
	assert.True(t, s.Layout.IsZero(), "the zero layout stands for Twitter's")
	assert.Zero(t, s.Node)
	assert.Zero(t, s.MarkAhead, "the zero mark interval stands for ringflake's default")
	assert.Zero(t, s.Calls())
	assert.Empty(t, s.Comment)
}

// Every malformed file gives an *Error naming file, line and field.
func TestParseErrors(t *testing.T) {
	const head = "start: 2026-11-22T12:00:00Z\nduration: 100ms\n" // lines 1 and 2
	for _, tc := range []struct {
		name  string
		src   string
		line  int
		field string
		cause error // a more specific sentinel the error must match too, or nil
	}{
		{"empty file", "", 0, "", nil},
		{"not YAML", head + "node: 1: 2\n", 3, "", nil},
		{"not a mapping", "- 1\n- 2\n", 1, "", nil},
		{"unknown top-level field", head + "colour: red\n", 3, "colour", nil},
		{"field given twice", head + "node: 1\nnode: 2\n", 4, "node", nil},
		{"missing start", "duration: 1s\n", 1, "start", nil},
		{"missing duration", "start: 2026-11-22T12:00:00Z\n", 1, "duration", nil},
		{"bad time", "start: yesterday\nduration: 1s\n", 1, "start", nil},
		{"date without time", "start: 2026-11-22\nduration: 1s\n", 1, "start", nil},
		{"start before the epoch", "start: 2000-01-01T00:00:00Z\nduration: 1s\n", 1, "start", ringflake.ErrBeforeEpoch},
		{"duration without unit", "start: 2026-11-22T12:00:00Z\nduration: 100\n", 2, "duration", nil},
		{"negative duration", "start: 2026-11-22T12:00:00Z\nduration: -1s\n", 2, "duration", nil},
		{"duration of the wrong type", "start: 2026-11-22T12:00:00Z\nduration: [1s]\n", 2, "duration", nil},
		{"bad layout", head + "layout: twitter,seq=13\n", 3, "layout", ringflake.ErrInvalidLayout},
		{"node of the wrong type", head + "node: seven\n", 3, "node", nil},
		{"node out of range", head + "node: 5000\n", 3, "node", ringflake.ErrNodeOutOfRange},
		{"load not a mapping", head + "load: 10/ms\n", 3, "load", nil},
		{"bad rate", head + "load: {rate: fast}\n", 3, "load.rate", nil},
		{"rate without unit", head + "load: {rate: 10}\n", 3, "load.rate", nil},
		{"goroutines of the wrong type", head + "load: {goroutines: 1.5}\n", 3, "load.goroutines", nil},
		{"no goroutines", head + "load: {goroutines: 0}\n", 3, "load.goroutines", nil},
		{"bursts not a list", head + "load:\n  bursts: {at: 1ms}\n", 4, "load.bursts", nil},
		{"burst without count", head + "load:\n  bursts:\n    - {at: 1ms}\n", 5, "load.bursts[0].count", nil},
		{"burst count of the wrong type", head + "load:\n  bursts:\n    - {at: 1ms, count: many}\n", 5, "load.bursts[0].count", nil},
		{"burst with a negative time", head + "load:\n  bursts:\n    - {at: -1ms, count: 1}\n", 5, "load.bursts[0].at", nil},
		{"burst past the end", head + "load:\n  bursts:\n    - {at: 90ms, count: 1, over: 20ms}\n", 5, "load.bursts[0].over", nil},
		{"too many calls", head + "load: {rate: 1000000000/ns}\n", 3, "load.rate", nil},
		{"events not a list", head + "events: {at: 1ms, step: -1ms}\n", 3, "events", nil},
		{"unknown event", head + "events:\n  - {at: 1ms, slew: -1ms}\n", 4, "events[0].slew", nil},
		{"no event", head + "events:\n  - {at: 1ms}\n", 4, "events[0]", nil},
		{"two events in one", head + "events:\n  - {at: 1ms, step: -1ms, freeze: 1ms}\n", 4, "events[0].freeze", nil},
		{"event without time", head + "events:\n  - {step: -1ms}\n", 4, "events[0].at", nil},
		{"event with a negative time", head + "events:\n  - {at: -1ms, step: -1ms}\n", 4, "events[0].at", nil},
		{"event after the end", head + "events:\n  - {at: 1s, step: -1ms}\n", 4, "events[0].at", nil},
		{"event time of the wrong type", head + "events:\n  - {at: true, step: -1ms}\n", 4, "events[0].at", nil},
		{"zero step", head + "events:\n  - {at: 1ms, step: 0s}\n", 4, "events[0].step", nil},
		{"negative freeze", head + "events:\n  - {at: 1ms, freeze: -20ms}\n", 4, "events[0].freeze", nil},
		{"negative jitter", head + "events:\n  - {at: 1ms, jitter: -2ms}\n", 4, "events[0].jitter", nil},
		{"drift of the wrong type", head + "events:\n  - {at: 1ms, drift: slow}\n", 4, "events[0].drift", nil},
		{"drift too fast", head + "events:\n  - {at: 1ms, drift: -150%}\n", 4, "events[0].drift", nil},
		{"seed on a step", head + "events:\n  - {at: 1ms, step: -1ms, seed: 3}\n", 4, "events[0].seed", nil},
		{"negative seed", head + "events:\n  - {at: 1ms, jitter: 1ms, seed: -3}\n", 4, "events[0].seed", nil},
		{"block-style event, error on its second line", head + "events:\n  - at: 1ms\n    step: soon\n", 5, "events[0].step", nil},
		{"restart of the wrong kind", head + "events:\n  - {at: 1ms, restart: twice}\n", 4, "events[0].restart", nil},
		{"restart with a seed", head + "events:\n  - {at: 1ms, restart: crash, seed: 1}\n", 4, "events[0].seed", nil},
		{"mark interval of the wrong type", head + "mark_ahead: soon\n", 3, "mark_ahead", nil},
		{"negative mark interval", head + "mark_ahead: -1s\n", 3, "mark_ahead", nil},
		{"mark interval of one tick", head + "mark_ahead: 1ms\n", 3, "mark_ahead", ringflake.ErrInvalidOption},
		{"mark interval of one sonyflake tick", head + "layout: sonyflake\nmark_ahead: 10ms\n", 4, "mark_ahead", ringflake.ErrInvalidOption},
		{"unknown strategy", head + "expect:\n  retry: {errors: 0}\n", 4, "expect.retry", strategies.ErrInvalidStrategy},
		{"malformed strategy", head + "expect:\n  \"ring,,error\": {errors: 0}\n", 4, `expect["ring,,error"]`, strategies.ErrInvalidStrategy},
		{"strategy that does not fit the layout", head + "layout: sonyflake\nexpect:\n  \"logical:1ms\": {errors: 0}\n", 5, `expect["logical:1ms"]`, strategies.ErrInvalidStrategy},
		{"strategy given twice", head + "expect:\n  wait: {errors: 0}\n  \"wait:5ms\": {errors: 0}\n", 5, `expect["wait:5ms"]`, nil},
		{"expectation not a mapping", head + "expect:\n  ring: 0\n", 4, "expect.ring", nil},
		{"unknown expectation field", head + "expect:\n  ring: {speed: 0}\n", 4, "expect.ring.speed", nil},
		{"count of the wrong type", head + "expect:\n  ring: {errors: some}\n", 4, "expect.ring.errors", nil},
		{"negative count", head + "expect:\n  ring: {errors: -1}\n", 4, "expect.ring.errors", nil},
		{"bad duration bound", head + "expect:\n  ring: {max_stall: \"<soon\"}\n", 4, "expect.ring.max_stall", nil},
		{"available of the wrong type", head + "expect:\n  ring: {available: 1}\n", 4, "expect.ring.available", nil},
		{"unknown error kind", head + "expect:\n  ring: {errors: {timeout: 0}}\n", 4, "expect.ring.errors.timeout", nil},
		{"a strategy's key as written", head + "expect:\n  wait: {speed: 0}\n", 4, "expect.wait.speed", nil},
		{"a strategy's key as written, not a mapping", head + "expect:\n  wait: 5ms\n", 4, "expect.wait", nil},
		{"a second YAML document", head + "---\nstart: 2026-11-22T12:00:00Z\nduration: 1s\n", 3, "", nil},
		{"a second YAML document after an empty one", head + "---\n---\nnode: 3\n", 4, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("bad.yaml", []byte(tc.src))
			require.ErrorIs(t, err, scenario.ErrInvalid)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "bad.yaml", e.File)
			assert.Equal(t, tc.line, e.Line, "line of %v", err)
			assert.Equal(t, tc.field, e.Field, "field of %v", err)
			assert.NotEmpty(t, e.Reason)
			if tc.cause != nil {
				assert.ErrorIs(t, err, tc.cause)
			}
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "scenario: bad.yaml"), msg)
			assert.Equal(t, 1, strings.Count(msg, "scenario: "), "one prefix: %s", msg)
			assert.NotContains(t, msg, "ringflake: ", "causes are shown without their prefix: %s", msg)
		})
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := scenario.Parse("scenarios/x.yaml", []byte("start: 2026-11-22T12:00:00Z\nduration: 100ms\nevents:\n  - {at: 1ms, step: -3x}\n"))
	require.Error(t, err)
	assert.Equal(t, `scenario: scenarios/x.yaml:4: events[0].step: "-3x" is not a duration such as 3ms, -2s or 1m30s`, err.Error())
}

func TestReadFileMissing(t *testing.T) {
	_, err := scenario.ReadFile("testdata/no-such-file.yaml")
	require.Error(t, err)
	assert.NotErrorIs(t, err, scenario.ErrInvalid)
}

// Scenarios built in code are validated by Replay, with the same errors
// (without file and line).
func TestValidate(t *testing.T) {
	ok := func() *scenario.Scenario {
		return &scenario.Scenario{Start: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), Duration: time.Second}
	}
	require.NoError(t, ok().Validate())
	for _, tc := range []struct {
		name   string
		change func(*scenario.Scenario)
		field  string
		cause  error
	}{
		{"no start", func(s *scenario.Scenario) { s.Start = time.Time{} }, "start", nil},
		{"no duration", func(s *scenario.Scenario) { s.Duration = 0 }, "duration", nil},
		{"negative rate", func(s *scenario.Scenario) { s.Load.Rate = scenario.Rate{Count: -1, Per: time.Millisecond} }, "load.rate", nil},
		{"rate without period", func(s *scenario.Scenario) { s.Load.Rate = scenario.Rate{Count: 1} }, "load.rate", nil},
		{"too many goroutines", func(s *scenario.Scenario) { s.Load.Goroutines = scenario.MaxGoroutines + 1 }, "load.goroutines", nil},
		{"zero kind", func(s *scenario.Scenario) { s.Events = []scenario.Event{{At: 1}} }, "events[0]", nil},
		{"rate on a step", func(s *scenario.Scenario) {
			s.Events = []scenario.Event{{Kind: scenario.Step, D: 1, Rate: 0.1}}
		}, "events[0].step", nil},
		{"clean step", func(s *scenario.Scenario) {
			s.Events = []scenario.Event{{Kind: scenario.Step, D: 1, Clean: true}}
		}, "events[0].step", nil},
		{"restart with a duration", func(s *scenario.Scenario) {
			s.Events = []scenario.Event{{Kind: scenario.Restart, D: time.Millisecond}}
		}, "events[0].restart", nil},
		{"restart with a rate", func(s *scenario.Scenario) {
			s.Events = []scenario.Event{{Kind: scenario.Restart, Rate: 0.1}}
		}, "events[0].restart", nil},
		{"negative mark interval", func(s *scenario.Scenario) { s.MarkAhead = -time.Second }, "mark_ahead", nil},
		{"mark interval of one tick", func(s *scenario.Scenario) { s.MarkAhead = time.Millisecond }, "mark_ahead", ringflake.ErrInvalidOption},
		{"unknown bound", func(s *scenario.Scenario) {
			s.Expect = []scenario.Expectation{{Bounds: []scenario.Bound{{Field: "speed", Op: scenario.Equal}}}}
		}, "expect.all.speed", nil},
		{"unknown comparison", func(s *scenario.Scenario) {
			s.Expect = []scenario.Expectation{{Bounds: []scenario.Bound{{Field: "issued", Op: "!="}}}}
		}, "expect.all.issued", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok()
			tc.change(s)
			err := s.Validate()
			require.ErrorIs(t, err, scenario.ErrInvalid)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.field, e.Field)
			assert.Zero(t, e.Line)
			if tc.cause != nil {
				assert.ErrorIs(t, err, tc.cause)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		got  string
		want string
	}{
		{scenario.Rate{Count: 10, Per: ms}.String(), "10/ms"},
		{scenario.Rate{Count: 3, Per: 10 * ms}.String(), "3/10ms"},
		{scenario.Rate{Count: 2500, Per: time.Second}.String(), "2500/s"},
		{scenario.Rate{Count: 1, Per: 1500 * time.Microsecond}.String(), "1/1.5ms"},
		{scenario.Event{At: 20 * ms, Kind: scenario.Step, D: -3 * ms}.String(), "at 20ms: step -3ms"},
		{scenario.Event{Kind: scenario.Drift, Rate: -0.005}.String(), "at 0s: drift -0.5%"},
		{scenario.Event{Kind: scenario.Jitter, D: 2 * ms, Seed: 42}.String(), "at 0s: jitter 2ms seed 42"},
		{scenario.Event{At: time.Minute, Kind: scenario.Restart, Clean: true}.String(), "at 1m: restart clean"},
		{scenario.Kind(9).String(), "Kind(9)"},
		{scenario.Bound{Field: "errors", Op: scenario.Above}.String(), "errors: >0"},
		{scenario.Bound{Field: "errors", Op: scenario.Equal, Value: 3}.String(), "errors: 3"},
		{scenario.Bound{Field: "max_stall", Op: scenario.AtMost, Value: int64(5 * ms)}.String(), "max_stall: 5ms"},
		{scenario.Bound{Field: "max_lead", Op: scenario.Below, Value: int64(time.Second)}.String(), "max_lead: <1s"},
		{scenario.Bound{Field: "available", Op: scenario.Equal, Value: 1}.String(), "available: true"},
	} {
		assert.Equal(t, tc.want, tc.got)
	}
}

// A trailing "---" or an empty document after the scenario is harmless.
func TestParseEmptyTrailingDocuments(t *testing.T) {
	for _, tail := range []string{"---\n", "---\n# nothing more\n", "...\n", "---\n---\n"} {
		s, err := scenario.Parse("tail.yaml", []byte("start: 2026-11-22T12:00:00Z\nduration: 1s\n"+tail))
		require.NoError(t, err, "%q", tail)
		assert.Equal(t, time.Second, s.Duration)
	}
}

// An unmet expectation is named by the key the file wrote.
func TestUnmetNamesTheKeyAsWritten(t *testing.T) {
	s := parse(t, stepBack+"expect:\n  wait: {max_stall: 1us}\n")
	r := replay(t, s, strategies.Wait(5*time.Millisecond))
	require.Len(t, r.Unmet, 1)
	assert.Equal(t, "wait", r.Unmet[0].Key)
	assert.Equal(t, "wait:5ms", r.Unmet[0].Strategy)
	assert.Contains(t, r.Unmet[0].String(), "test.yaml:8: expect.wait.max_stall: want 1µs, got ")
}

// The limits on what a file may hold are checked before anything is
// decoded, a YAML alias counting as often as it is used, and each is an
// error naming the file, the line, the field and the limit.
func TestParseLimits(t *testing.T) {
	const head = "start: 2026-11-22T12:00:00Z\nduration: 100ms\n" // lines 1 and 2
	repeat := func(s string, n int) string { return strings.Repeat(s, n) }
	for _, tc := range []struct {
		name  string
		src   string
		line  int
		field string
		limit int
	}{
		{"too many events", head + "events:\n" + repeat("  - {at: 1ms, step: -1ms}\n", scenario.MaxEvents+1), 4, "events", scenario.MaxEvents},
		{"events repeated by an alias", head + "events: [&e {at: 1ms, step: -1ms}" + repeat(", *e", scenario.MaxEvents) + "]\n",
			3, "events", scenario.MaxEvents},
		{"an aliased list of events", head + "load: {bursts: &l [" + strings.TrimSuffix(repeat("{at: 1ms, count: 1}, ", scenario.MaxBursts+1), ", ") +
			"]}\nevents: *l\n", 3, "load.bursts", scenario.MaxBursts},
		{"too many bursts", head + "load:\n  bursts:\n" + repeat("    - {at: 1ms, count: 1}\n", scenario.MaxBursts+1), 5, "load.bursts", scenario.MaxBursts},
		{"too many expectations", head + "expect:\n" + func() string {
			var b strings.Builder
			for i := range scenario.MaxExpectations + 1 {
				fmt.Fprintf(&b, "  \"wait:%dms\": {errors: 0}\n", i+1)
			}
			return b.String()
		}(), 4, "expect", scenario.MaxExpectations},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("big.yaml", []byte(tc.src))
			require.ErrorIs(t, err, scenario.ErrInvalid)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.line, e.Line, "%v", err)
			assert.Equal(t, tc.field, e.Field, "%v", err)
			assert.Contains(t, e.Reason, fmt.Sprint(tc.limit), "the error names the limit")
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// A mapping of the format with more keys than its fields is refused before
// it is decoded: YAML compares the keys of a mapping it decodes with one
// another, in quadratic time.
func TestParseTooManyFields(t *testing.T) {
	const head = "start: 2026-11-22T12:00:00Z\nduration: 100ms\n"
	var b strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&b, "k%d: 1\n", i)
	}
	for _, tc := range []struct {
		name, src, field string
		line             int
	}{
		{"at the top", head + b.String(), "", 1},
		{"in an event", head + "events:\n  - {at: 1ms, step: -1ms, a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n", "events[0]", 4},
		{"an unknown field in an event", head + "events:\n  - {at: 1ms, step: -1ms, a: 1}\n", "events[0].a", 4},
		{"in the errors of an expectation", head + "expect:\n  all: {errors: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6}}\n", `expect.all.errors.a`, 4},
		{"a key given twice in an event", head + "events:\n  - {at: 1ms, step: -1ms, at: 2ms}\n", "events[0].at", 4},
		{"a key given twice in the errors", head + "expect:\n  all: {errors: {crash: 1, crash: 2}}\n", "expect.all.errors.crash", 4},
		{"a strategy given twice", head + "expect:\n  ring: {errors: 0}\n  ring: {errors: 1}\n", "expect.ring", 5},
		{"a number for a strategy", head + "expect:\n  1: {errors: 0}\n", "expect.1", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("keys.yaml", []byte(tc.src))
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.line, e.Line, "%v", err)
			assert.Equal(t, tc.field, e.Field, "%v", err)
		})
	}
}

// A file holds at most MaxFileSize bytes; ReadFile reads no more, so an
// endless stream is refused too.
func TestFileSize(t *testing.T) {
	big := "# " + strings.Repeat("x", scenario.MaxFileSize) + "\nstart: 2026-11-22T12:00:00Z\nduration: 1ms\n"
	_, err := scenario.Parse("big.yaml", []byte(big))
	var e *scenario.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "big.yaml", e.File)
	assert.Contains(t, e.Reason, fmt.Sprint(scenario.MaxFileSize))

	path := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(path, []byte(big), 0o600))
	_, err = scenario.ReadFile(path)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, path, e.File)
	assert.Contains(t, e.Reason, fmt.Sprint(scenario.MaxFileSize))

	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err = scenario.ReadFile("/dev/zero")
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "/dev/zero", e.File)
		assert.Contains(t, e.Reason, "more than")
	}

	// Exactly MaxFileSize bytes are accepted.
	valid := "start: 2026-11-22T12:00:00Z\nduration: 1ms\n"
	valid += "#" + strings.Repeat("x", scenario.MaxFileSize-len(valid)-2) + "\n"
	require.Len(t, valid, scenario.MaxFileSize)
	_, err = scenario.Parse("exact.yaml", []byte(valid))
	require.NoError(t, err)
}

// Values as long as the file are cut in messages, which stay one line.
func TestLongValuesInMessages(t *testing.T) {
	_, err := scenario.Parse("long.yaml", []byte("start: "+strings.Repeat("9", 100_000)+"\nduration: 1ms\n"))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 300, err.Error())
}
