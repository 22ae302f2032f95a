package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shippedScenarios returns the scenario files of the repository.
func shippedScenarios(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../scenarios/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// jsonReport is the part of a report's JSON the tests read.
type jsonReport struct {
	Scenario   string           `json:"scenario"`
	File       string           `json:"file"`
	Strategy   string           `json:"strategy"`
	OK         bool             `json:"ok"`
	Calls      int64            `json:"calls"`
	Issued     int64            `json:"issued"`
	Duplicates int64            `json:"duplicates"`
	OutOfOrder int64            `json:"out_of_order"`
	Errors     map[string]int64 `json:"errors"`
	MaxStall   int64            `json:"max_stall_ns"`
	Unmet      []string         `json:"unmet"`
	Promise    struct {
		Monotonic bool `json:"monotonic"`
	} `json:"promise"`
	MaxStrategyWait    int64       `json:"max_strategy_wait_ns"`
	MaxQueue           int64       `json:"max_queue_ns"`
	MaxReservationWait int64       `json:"max_reservation_wait_ns"`
	Events             []jsonEvent `json:"events"`
	Steady             jsonEvent   `json:"steady"`
	Restarts           []struct {
		At              int64  `json:"at_ns"`
		Clean           bool   `json:"clean"`
		Mark            string `json:"mark"`
		Since           string `json:"since"`
		Behind          int64  `json:"behind_ns"`
		Rollback        int64  `json:"rollback_ns"`
		Reservation     int64  `json:"reservation_ns"`
		Failed          int64  `json:"failed"`
		ReservationWait int64  `json:"reservation_wait_ns"`
		Duplicates      int64  `json:"duplicates"`
	} `json:"restarts"`
}

// jsonEvent is the part of an event's row the tests read.
type jsonEvent struct {
	Index  int              `json:"index"`
	Event  string           `json:"event"`
	Kind   string           `json:"kind"`
	Until  int64            `json:"until_ns"`
	Calls  int64            `json:"calls"`
	Errors map[string]int64 `json:"errors"`
}

func replayJSON(t *testing.T, args ...string) []jsonReport {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"replay", "-format", "json"}, args...)...)
	require.Equal(t, 0, code, errOut)
	var reports []jsonReport
	require.NoError(t, json.Unmarshal([]byte(out), &reports), out)
	return reports
}

func TestReplayEveryShippedScenario(t *testing.T) {
	files := shippedScenarios(t)
	code, out, errOut := runCLI(append([]string{"replay", "-all-strategies"}, files...)...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Empty(t, errOut, "no progress when stderr is not a terminal")
	tables := strings.Split(strings.TrimSpace(out), "\n\n")
	require.Len(t, tables, 3, "a table of restarts follows, then one of events, each after an empty line: %s", out)
	replays, restarts, events := tables[0], tables[1], tables[2]
	lines := strings.Split(replays, "\n")
	assert.Len(t, lines, 1+5*len(files), "a header and one row per scenario and strategy")
	assert.Equal(t, []string{"SCENARIO", "STRATEGY", "ISSUED", "DUPLICATES", "OUT", "OF", "ORDER", "ERRORS", "MAX", "STALL",
		"STRATEGY", "WAIT", "QUEUE", "WAIT", "RESERVATION", "WAIT", "MAX", "LEAD", "MAX", "LAG", "BORROWED", "RESULT"}, strings.Fields(lines[0]))
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		assert.Equal(t, "ok", f[len(f)-1], l)
		assert.Equal(t, "0", f[3], "no duplicates: %s", l)
	}
	var row []string
	for _, l := range lines {
		if f := strings.Fields(l); f[0] == "small-step-back" && f[1] == "error" {
			row = f
		}
	}
	assert.Equal(t, []string{"small-step-back", "error", "980", "0", "0", "rollback=20", "0", "0", "0", "0", "0", "0", "0", "ok"}, row,
		"the error strategy fails on a -3ms step")

	lines = strings.Split(restarts, "\n")
	assert.Equal(t, []string{"SCENARIO", "STRATEGY", "RESTART", "AT", "RESUMED", "FAILED", "STARTS", "BEHIND", "MARK", "ROLLBACK",
		"RESERVATION", "ABANDONED", "FAILED", "BEHIND", "MAX", "STALL", "BEHIND", "RESERVATION", "WAIT", "DUPLICATES"}, strings.Fields(lines[0]))
	assert.Len(t, lines, 1+5*(1+5+1+1), "a row per restart of each replay of the four restart scenarios: one, five, one and one restarts")
	row = nil
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		assert.Equal(t, "0", f[len(f)-1], "no duplicates across a restart: %s", l)
		if f[0] == "crash-restart-during-rollback" && f[1] == "error" {
			row = f
		}
	}
	assert.Equal(t, []string{"crash-restart-during-rollback", "error", "crash", "310ms", "310ms", "0", "95ms", "0", "95ms", "0", "0", "96ms", "96ms", "0"}, row,
		"the new run starts 95 ms behind the mark the crashed one saved, all of it past the mark's Since: "+
			"a reservation, which it waits out to the tick after the mark")

	lines = strings.Split(events, "\n")
	assert.Equal(t, []string{"SCENARIO", "STRATEGY", "EVENT", "UNDER", "WAY", "UNTIL", "CALLS", "ERRORS", "STALLED", "MAX", "STALL", "BORROWED"},
		strings.Fields(lines[0]))
	var freeze []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); f[0] == "freeze-under-load" && f[1] == "ring,wait:5ms,error" && f[2] == "freeze" {
			freeze = f
		}
	}
	require.NotNil(t, freeze, "freeze-under-load has a row for its freeze: %s", events)
	assert.Equal(t, []string{"freeze", "3s", "at", "2s", "5s"}, freeze[2:7])
	assert.True(t, strings.HasPrefix(freeze[8], "frozen="), "the frozen clock's errors are not rollbacks: %v", freeze)

	reports := replayJSON(t, append([]string{"-all-strategies"}, files...)...)
	require.Len(t, reports, 5*len(files))
	for _, r := range reports {
		assert.True(t, r.OK, "%s %s: %v", r.Scenario, r.Strategy, r.Unmet)
		assert.Zero(t, r.Duplicates)
		assert.Equal(t, r.Calls, r.Issued+r.Errors["rollback"]+r.Errors["frozen"]+r.Errors["expired"]+r.Errors["before_epoch"]+r.Errors["crash"]+r.Errors["other"])
		calls := r.Steady.Calls
		for _, e := range r.Events {
			calls += e.Calls
		}
		assert.Equal(t, r.Calls, calls, "%s %s: each call counts under one event, or none", r.Scenario, r.Strategy)
		if r.Promise.Monotonic {
			assert.Zero(t, r.OutOfOrder)
		}
		assert.LessOrEqual(t, max(r.MaxStrategyWait, r.MaxQueue, r.MaxReservationWait), r.MaxStall, "the parts of the longest stall")
		for _, re := range r.Restarts {
			assert.Zero(t, re.Duplicates)
			assert.NotEmpty(t, re.Mark)
			assert.NotEmpty(t, re.Since)
			assert.Equal(t, re.Behind, re.Rollback+re.Reservation)
			assert.LessOrEqual(t, re.ReservationWait, r.MaxReservationWait)
		}
	}
}

// Scenarios without restarts print no table of restarts.
func TestReplayWithoutRestarts(t *testing.T) {
	code, out, errOut := runCLI("replay", "../../scenarios/small-step-back.yaml")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, out, "RESTART")
	reports := replayJSON(t, "../../scenarios/small-step-back.yaml")
	require.Len(t, reports, 1)
	assert.NotNil(t, reports[0].Restarts, "an empty list in JSON")
	assert.Empty(t, reports[0].Restarts)
}

func TestReplayChoosesStrategies(t *testing.T) {
	file := "../../scenarios/small-step-back.yaml"
	names := func(rs []jsonReport) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Strategy)
		}
		return out
	}
	assert.Equal(t, []string{"ring,wait:5ms,error"}, names(replayJSON(t, file)), "the default strategy")
	assert.Equal(t, []string{"error", "ring"}, names(replayJSON(t, "-strategy", "error", file, "--strategy", "ring")),
		"repeated, and flags after the file")

	dir := t.TempDir()
	extra := writeScenario(t, dir, "extra.yaml", stepBack+"expect:\n  \"logical:50ms\": {available: true}\n  ring: {available: true}\n")
	assert.Equal(t, []string{"error", "wait:5ms", "logical:1s", "ring", "ring,wait:5ms,error", "logical:50ms"},
		names(replayJSON(t, "-all-strategies", extra)), "the built-ins and those the file has expectations for")
}

const stepBack = `# A step back.
start: 2026-11-22T12:00:00Z
duration: 40ms
load: {rate: 10/ms}
events:
  - {at: 20ms, step: -3ms}
`

func writeScenario(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// A file whose expectations are not met fails the command, with the
// reason next to the table.
func TestReplayFailsOnUnmetExpectations(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "gate.yaml", stepBack+"expect:\n  error: {available: true}\n  ring: {available: true}\n")

	code, out, errOut := runCLI("replay", "-strategy", "ring", file)
	assert.Equal(t, 0, code, "%s\n%s", out, errOut)

	code, out, errOut = runCLI("replay", "-strategy", "ring", "-strategy", "error", file)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAIL gate [error]: expectation not met: "+file+":8: expect.error.available: want true, got false")
	assert.NotContains(t, out, "FAIL gate [ring]")
	assert.Contains(t, errOut, "ringflake: replay failed: 1 of 2 replays broke a promise or missed an expectation")
	assert.NotContains(t, errOut, "ringflake: ringflake:")

	var reports []jsonReport
	code, out, _ = runCLI("replay", "-format", "json", "-strategy", "error", file)
	assert.Equal(t, 1, code)
	require.NoError(t, json.Unmarshal([]byte(out), &reports))
	require.Len(t, reports, 1)
	assert.False(t, reports[0].OK)
	assert.Equal(t, []string{file + ":8: expect.error.available: want true, got false"}, reports[0].Unmet)
}

func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeScenario(t, dir, "good.yaml", stepBack)
	bad := writeScenario(t, dir, "bad.yaml", stepBack+"  - {at: 30ms, slew: 1ms}\n")
	sony := writeScenario(t, dir, "sony.yaml", stepBack+"layout: sonyflake\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // a fragment of stderr
	}{
		{"no file", []string{"replay"}, 2, "at least one scenario file"},
		{"both strategy flags", []string{"replay", "-strategy", "ring", "-all-strategies", good}, 2, "exclude each other"},
		{"bad format", []string{"replay", "-format", "xml", good}, 2, `-format "xml"`},
		{"bad strategy", []string{"replay", "-strategy", "ring,,error", good}, 2, "part 2"},
		{"one plot file for two scenarios", []string{"replay", "-plot", filepath.Join(dir, "p.svg"), good, good}, 2, "give a directory"},
		{"malformed file", []string{"replay", bad, good}, 1, bad + `:7: events[1].slew: unknown event "slew"`},
		{"missing file", []string{"replay", filepath.Join(dir, "none.yaml")}, 1, "none.yaml"},
		{"strategy that does not fit the layout", []string{"replay", "-strategy", "logical:1ms", sony}, 1, "one time unit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "ringflake: ringflake:")
		})
	}
	// The good file of a mixed run is still replayed and reported.
	code, out, errOut := runCLI("replay", bad, good)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "good ")
	assert.Contains(t, errOut, "1 of 2 files could not be replayed")
}

func TestReplayProgress(t *testing.T) {
	var out, errOut bytes.Buffer
	file := writeScenario(t, t.TempDir(), "small-step-back.yaml", stepBack) // no expectations left unchecked, no warning
	require.NoError(t, replayWith(context.Background(), []string{file}, &out, &errOut, true))
	assert.Contains(t, errOut.String(), "\rreplaying small-step-back [ring,wait:5ms,error]   0%")
	assert.Contains(t, errOut.String(), "100%")
	assert.True(t, strings.HasSuffix(errOut.String(), "\r\033[K"), "the progress line is cleared")
	assert.Contains(t, out.String(), "small-step-back")

	assert.False(t, isTerminal(&out))
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file is not a terminal")
}

func TestReplayInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	err := replayWith(ctx, []string{"../../scenarios/small-step-back.yaml"}, &out, &errOut, false)
	require.ErrorIs(t, err, context.Canceled)
}

// A file that cannot be read or replayed still has its row in the table
// (RESULT ERROR) and its object in JSON (with "ok": false and the error),
// next to the files that replayed; the reason is on stderr, once prefixed.
func TestReplayReportsFilesThatFail(t *testing.T) {
	dir := t.TempDir()
	good := writeScenario(t, dir, "good.yaml", stepBack)
	bad := writeScenario(t, dir, "bad.yaml", stepBack+"  - {at: 30ms, step: -1100000h}\n")
	missing := filepath.Join(dir, "missing.yaml")

	code, out, errOut := runCLI("replay", "-strategy", "ring", bad, good, missing)
	assert.Equal(t, 1, code)
	replays, _, _ := strings.Cut(strings.TrimSpace(out), "\n\n") // then the table of events
	lines := strings.Split(replays, "\n")
	require.Len(t, lines, 4, out)
	assert.Equal(t, []string{"bad", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "ERROR"}, strings.Fields(lines[1]))
	assert.Equal(t, "good", strings.Fields(lines[2])[0])
	assert.Equal(t, []string{"missing", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "ERROR"}, strings.Fields(lines[3]))
	assert.Contains(t, errOut, "ringflake: scenario: "+bad+":7: events[1].step: the wall clock reads ")
	assert.Contains(t, errOut, "before the layout's epoch")
	assert.Contains(t, errOut, "ringflake: "+missing+": open ")
	assert.NotContains(t, errOut, "ringflake: ringflake:")
	assert.Contains(t, errOut, "2 of 3 files could not be replayed")

	// Only files that fail: the table has their rows, not just a header.
	code, out, _ = runCLI("replay", bad)
	assert.Equal(t, 1, code)
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 2, out)

	code, out, _ = runCLI("replay", "-format", "json", "-strategy", "ring", bad, good)
	assert.Equal(t, 1, code)
	var entries []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &entries), out)
	require.Len(t, entries, 2)
	assert.Equal(t, bad, entries[0]["file"])
	assert.Equal(t, "bad", entries[0]["scenario"])
	assert.Equal(t, false, entries[0]["ok"])
	assert.Contains(t, entries[0]["error"], bad+":7: events[1].step: ")
	assert.Equal(t, good, entries[1]["file"])
	assert.Equal(t, true, entries[1]["ok"])
	assert.NotContains(t, entries[1], "error")
}

// A file's expectations for a strategy that is not replayed are not
// checked: a warning says so, and -strict makes it an error, for CI jobs
// that replay another strategy than the file's gate.
func TestReplayStrict(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "gate.yaml", stepBack+"expect:\n  all: {duplicates: 0}\n  \"ring,wait:5ms,error\": {out_of_order: 0}\n")
	code, out, _ := runCLI("replay", file)
	require.Equal(t, 1, code, "the default chain misses its expectation: %s", out)

	code, out, errOut := runCLI("replay", "-strategy", "ring,logical:1s", file)
	assert.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Equal(t, "ringflake: WARNING: "+file+`: expect["ring,wait:5ms,error"] not checked: its strategy was not replayed `+
		"(give each with -strategy, or use -all-strategies); -strict makes this an error\n", errOut, "one loud line")

	for _, format := range []string{"table", "json"} {
		code, out, errOut = runCLI("replay", "-strict", "-format", format, "-strategy", "ring,logical:1s", file)
		assert.Equal(t, 1, code, "%s\n%s", out, errOut)
		assert.Equal(t, "ringflake: "+file+`: expect["ring,wait:5ms,error"] not checked: its strategy was not replayed `+
			"(give each with -strategy, or use -all-strategies)\n"+
			"ringflake: replay failed: 1 of 1 files have expectations for strategies that were not replayed (-strict)\n", errOut)
	}

	// Replaying every strategy the file names checks them all.
	code, out, errOut = runCLI("replay", "-strict", "-strategy", "ring,logical:1s", "-strategy", "ring,wait:5ms,error", file)
	assert.Equal(t, 1, code, "checked, and not met: %s", out)
	assert.NotContains(t, errOut, "not checked")
	code, _, errOut = runCLI("replay", "-strict", "-all-strategies", "../../scenarios/small-step-back.yaml")
	assert.Equal(t, 0, code, errOut)
	assert.Empty(t, errOut)
}

// The report names the scripted event each error came from: the freeze's
// used-up tick (frozen), the step back's rollbacks.
func TestReplayAttributesErrorsToEvents(t *testing.T) {
	file := writeScenario(t, t.TempDir(), "freeze-and-step.yaml", `# A freeze, then a step back.
start: 2026-11-22T12:00:00Z
duration: 8s
load: {rate: 5/ms}
events:
  - {at: 2s, freeze: 3s}
  - {at: 6s, step: -80ms}
`)
	code, out, errOut := runCLI("replay", "-strategy", "error", file)
	require.Equal(t, 0, code, errOut)
	tables := strings.Split(strings.TrimSpace(out), "\n\n")
	require.Len(t, tables, 2, out)
	rows := map[string][]string{}
	for _, l := range strings.Split(tables[1], "\n")[1:] {
		f := strings.Fields(l)
		require.Equal(t, []string{"freeze-and-step", "error"}, f[:2], l)
		rows[f[2]] = f[2:]
	}
	require.Len(t, rows, 3, tables[1])
	freeze, step, none := rows["freeze"], rows["step"], rows["(no"]
	assert.Equal(t, []string{"freeze", "3s", "at", "2s", "5s"}, freeze[:5])
	assert.Regexp(t, `^frozen=[1-9][0-9]*$`, freeze[6], "the freeze's errors, and no rollback: %v", freeze)
	assert.Equal(t, []string{"step", "-80ms", "at", "6s"}, step[:4])
	assert.Regexp(t, `^rollback=[1-9][0-9]*$`, step[6], "the step's errors are rollbacks: %v", step)
	assert.Equal(t, "0", none[4], "no error under no event: %v", none)

	reports := replayJSON(t, "-strategy", "error", file)
	require.Len(t, reports, 1)
	r := reports[0]
	require.Len(t, r.Events, 2)
	assert.Equal(t, "freeze 3s at 2s", r.Events[0].Event)
	assert.Equal(t, "freeze", r.Events[0].Kind)
	assert.Equal(t, int64(5e9), r.Events[0].Until)
	assert.Zero(t, r.Events[0].Errors["rollback"])
	assert.Equal(t, r.Errors["frozen"], r.Events[0].Errors["frozen"])
	assert.Equal(t, "step -80ms at 6s", r.Events[1].Event)
	assert.Equal(t, r.Errors["rollback"], r.Events[1].Errors["rollback"])
	assert.Equal(t, "none", r.Steady.Kind)
	assert.Equal(t, -1, r.Steady.Index)
}
