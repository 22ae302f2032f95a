package scenario_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
)

// FuzzParse feeds arbitrary files to Parse. Whatever the input: nothing
// panics; a rejected file gives an *Error that matches ErrInvalid and names
// the file; an accepted one is valid, and writing it and reading it back
// gives the same scenario.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	require.NoError(f, err)
	for _, p := range files {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, src := range []string{
		full,
		stepBack,
		"start: 2026-11-22T12:00:00Z\nduration: 1ms\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1ms\nevents: [{at: 0s, restart: clean}]\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1s\nmark_ahead: 250ms\nevents: [{at: 10ms, restart: crash}, {at: 20ms, restart: true}]\n",
		"start: yesterday\n",
		"- a\n- b\n",
		"name: \"x: y\"\nstart: 2026-11-22T12:00:00+02:00\nduration: 1h0m0.5s\nnode: 3\nlayout: js-safe\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1s\nexpect: {all: {errors: {rollback: \"<3\"}}}\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1s\nevents: [{at: 10ms, pause: 20ms}]\nexpect: {all: {errors: {frozen: 0}}}\n",
	} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.yaml", data)
		if err != nil {
			require.ErrorIs(t, err, scenario.ErrInvalid)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "fuzz.yaml", e.File)
			assert.NotEmpty(t, e.Reason)
			return
		}
		require.NoError(t, s.Validate())
		var first bytes.Buffer
		_, err = s.WriteTo(&first)
		require.NoError(t, err)
		again, err := scenario.Parse("fuzz.yaml", first.Bytes())
		require.NoError(t, err, "what WriteTo writes reads back:\n%s", first.String())
		var second bytes.Buffer
		_, err = again.WriteTo(&second)
		require.NoError(t, err)
		require.Equal(t, first.String(), second.String())
		assert.Equal(t, s.Events, again.Events)
		assert.Equal(t, s.Load, again.Load)
		assert.Equal(t, s.MarkAhead, again.MarkAhead)
		assert.True(t, s.Start.Equal(again.Start))
		assert.True(t, s.Layout.Equal(again.Layout))
	})
}

// FuzzReplay replays small scenarios made of fuzzed numbers (written as a
// file and parsed, as users write them) against a built-in strategy, and
// asserts what holds of every replay: no duplicate ID, no broken promise
// (the built-in strategies keep theirs), every call either issued an ID
// or failed, and the same report, trace included, when replayed again.
func FuzzReplay(f *testing.F) {
	// duration ms, rate per ms, goroutines, burst, step at, step µs,
	// freeze at, freeze µs, jitter µs, seed, restart at, clean, mark ahead
	// ms, strategy
	f.Add(uint8(40), uint8(10), uint8(1), uint16(0), uint8(20), int32(-3000), uint8(0), uint16(0), uint16(0), uint64(0), uint8(0), false, uint8(0), uint8(0))
	f.Add(uint8(30), uint8(5), uint8(4), uint16(12288), uint8(11), int32(-3000), uint8(0), uint16(0), uint16(0), uint64(0), uint8(0), false, uint8(0), uint8(3))
	f.Add(uint8(60), uint8(10), uint8(4), uint16(0), uint8(30), int32(-50000), uint8(0), uint16(0), uint16(0), uint64(0), uint8(35), false, uint8(20), uint8(4))
	f.Add(uint8(60), uint8(10), uint8(2), uint16(0), uint8(30), int32(-20000), uint8(0), uint16(0), uint16(0), uint64(0), uint8(32), true, uint8(0), uint8(1))
	f.Add(uint8(50), uint8(4), uint8(1), uint16(100), uint8(0), int32(0), uint8(10), uint16(5000), uint16(2000), uint64(42), uint8(0), false, uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, duration, rate, goroutines uint8, burst uint16, stepAt uint8, stepUS int32,
		freezeAt uint8, freezeUS, jitterUS uint16, seed uint64, restartAt uint8, clean bool, markMS, strategy uint8) {
		var b strings.Builder
		fmt.Fprintf(&b, "start: 2026-11-22T12:00:00Z\nduration: %dms\n", max(duration%100, 1))
		if markMS > 1 {
			fmt.Fprintf(&b, "mark_ahead: %dms\n", markMS)
		}
		fmt.Fprintf(&b, "load:\n  rate: %d/ms\n  goroutines: %d\n", rate%40, goroutines%8+1)
		if burst > 0 {
			fmt.Fprintf(&b, "  bursts:\n    - {at: 0s, count: %d}\n", burst%20000)
		}
		b.WriteString("events:\n")
		if stepUS != 0 {
			fmt.Fprintf(&b, "  - {at: %dms, step: %dus}\n", stepAt, stepUS%2_000_000)
		}
		if freezeUS > 0 {
			fmt.Fprintf(&b, "  - {at: %dms, freeze: %dus}\n", freezeAt, freezeUS)
		}
		if jitterUS > 0 {
			fmt.Fprintf(&b, "  - {at: 0s, jitter: %dus, seed: %d}\n", jitterUS%5000, seed>>1)
		}
		if restartAt > 0 {
			kind := "crash"
			if clean {
				kind = "clean"
			}
			fmt.Fprintf(&b, "  - {at: %dms, restart: %s}\n", restartAt, kind)
		}
		s, err := scenario.Parse("fuzz.yaml", []byte(b.String()))
		if err != nil {
			require.ErrorIs(t, err, scenario.ErrInvalid, b.String()) // e.g. an event after the end
			return
		}
		st := scenario.Builtin()[int(strategy)%len(scenario.Builtin())]
		r, err := scenario.Replay(context.Background(), s, st, scenario.WithTrace())
		require.NoError(t, err, b.String())
		require.Zero(t, r.Duplicates, "%s\n%v", b.String(), r.Violations)
		require.Zero(t, r.ViolationCount, "%s: %s\n%v", st, b.String(), r.Violations)
		require.Equal(t, r.Calls, s.Calls(), "every call of the load is made")
		require.Equal(t, r.Calls, r.Issued+r.Errors.Total())
		if r.Promise.Monotonic {
			require.Zero(t, r.OutOfOrder)
		}
		again, err := scenario.Replay(context.Background(), s, st, scenario.WithTrace())
		require.NoError(t, err)
		require.Equal(t, r, again, "deterministic: %s", b.String())
	})
}

// FuzzServedInOrder replays loads of any shape against layouts of 1 to 16
// IDs per tick — more callers than a tick has room for, bursts, many
// goroutines — with no clock event, and asserts that the callers are
// served in the order they started: the replay checks that on every call
// of a file without events (promise "order"), with every other promise.
func FuzzServedInOrder(f *testing.F) {
	// duration ms, rate per ms, goroutines, burst at ms, burst, sequence bits, unit ms, strategy
	f.Add(uint8(50), uint8(4), uint8(8), uint8(0), uint16(0), uint8(1), uint8(1), uint8(0))     // the overload repro
	f.Add(uint8(30), uint8(0), uint8(16), uint8(3), uint16(300), uint8(4), uint8(10), uint8(4)) // a burst, 10 ms ticks
	f.Add(uint8(80), uint8(20), uint8(3), uint8(10), uint16(50), uint8(0), uint8(1), uint8(1))  // one ID a tick, wait:5ms
	f.Fuzz(func(t *testing.T, duration, rate, goroutines, burstAt uint8, burst uint16, seqBits, unitMS, strategy uint8) {
		seq := int(seqBits % 5)
		var b strings.Builder
		fmt.Fprintf(&b, "start: 2026-11-22T12:00:00Z\nlayout: epoch=2026-01-01T00:00:00Z,unit=%dms,time=36,seq=%d,node=%d\nduration: %dms\n",
			unitMS%10+1, seq, 27-seq, max(duration%100, 1))
		fmt.Fprintf(&b, "load:\n  rate: %d/ms\n  goroutines: %d\n", rate%30, goroutines%24+1)
		if burst > 0 {
			fmt.Fprintf(&b, "  bursts:\n    - {at: %dms, count: %d}\n", burstAt%uint8(max(duration%100, 1)), burst%2000)
		}
		s, err := scenario.Parse("order.yaml", []byte(b.String()))
		require.NoError(t, err, b.String())
		st := scenario.Builtin()[int(strategy)%len(scenario.Builtin())]
		r, err := scenario.Replay(context.Background(), s, st)
		require.NoError(t, err, b.String())
		require.Zero(t, r.ViolationCount, "%s: %s\n%v", st, b.String(), r.Violations)
		require.Equal(t, r.Calls, r.Issued+r.Errors.Total())
	})
}
