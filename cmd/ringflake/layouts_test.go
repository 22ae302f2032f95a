package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
)

// plan's lines are layout strings gen -layout accepts, followed by a tab
// and the headroom.
func TestPlan(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "-nodes", "500", "-rate", "100000/s", "-years", "50"},
		{"plan", "-nodes", "500", "-rate", "100000/s", "-years", "50", "-epoch", "2026-01-01T00:00:00Z"},
		{"plan", "-nodes", "3", "-rate", "10/ms", "-years", "1", "-unit", "10ms"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			code, out, errOut := runCLI(args...)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			require.NotEmpty(t, lines)
			for _, line := range lines {
				layout, headroom, ok := strings.Cut(line, "\t")
				require.True(t, ok, line)
				assert.True(t, strings.HasPrefix(headroom, "headroom ×"), headroom)

				code, out, errOut := runCLI("gen", "-n", "3", "-node", "2", "-layout", layout)
				require.Equal(t, 0, code, "gen -layout %s: %s", layout, errOut)
				l, err := ringflake.ParseLayout(layout)
				require.NoError(t, err)
				for _, s := range strings.Fields(out) {
					id, err := ringflake.Parse(s)
					require.NoError(t, err)
					assert.Equal(t, int64(2), id.Node(l))
				}
			}
		})
	}
	code, out, _ := runCLI("plan", "-nodes", "500", "-rate", "100000/s", "-years", "50", "-epoch", "2026-01-01T00:00:00Z")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "epoch=2026-01-01T00:00:00Z,unit=1ms,time=43,node=11,seq=9\theadroom ×4.1: "+
		"2048 nodes (×4.1), 512000 IDs/s per node (×5.12), lasts to 2304-09-27 (×5.57)\n"), out)
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no layout fits", []string{"-nodes", "5000000", "-rate", "1e9/s", "-years", "100"}, 1,
			"no layout fits for 5000000 nodes at 1e+09 IDs/s per node for 100 years: with 1ms ticks 23 node + 20 sequence + 42 time bits = 85, 22 more than 63;"},
		{"beyond 292 years", []string{"-nodes", "1", "-rate", "1/s", "-years", "300", "-unit", "1s"}, 1, "292 years"},
		{"no nodes", []string{"-rate", "1/s", "-years", "1"}, 2, "plan needs -nodes"},
		{"bad rate", []string{"-nodes", "1", "-rate", "fast", "-years", "1"}, 2, `-rate "fast"`},
		{"per fortnight", []string{"-nodes", "1", "-rate", "5/fortnight", "-years", "1"}, 2, `-rate "5/fortnight"`},
		{"negative nodes", []string{"-nodes", "-4", "-rate", "1/s", "-years", "1"}, 2, "Nodes: -4"},
		{"bad unit", []string{"-nodes", "1", "-rate", "1/s", "-years", "1", "-unit", "1500us"}, 2, "Unit"},
		{"bad epoch", []string{"-nodes", "1", "-rate", "1/s", "-years", "1", "-epoch", "2026"}, 2, `-epoch "2026"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"plan"}, tc.args...)...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			if tc.code == 1 || strings.Contains(tc.name, "bad") {
				assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
			}
		})
	}
}

// bounds prints two IDs: parse reads the first as FROM's tick (node 0,
// sequence 0) and the second as TO's tick with every node and sequence
// bit set, the last ID before the end of TO's tick.
func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		layout   string
		from, to string
	}{
		{"twitter", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"},
		{"sonyflake", "2026-01-01T00:00:00.005Z", "2026-01-01T01:00:00.019Z"},
		{"discord,order=time,seq,node", "2026-03-04T05:06:07.891Z", "2026-03-04T05:06:07.891Z"},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			code, out, errOut := runCLI("bounds", tc.from, tc.to, "-layout", tc.layout)
			require.Equal(t, 0, code, errOut)
			lines := strings.Fields(out)
			require.Len(t, lines, 2)
			l, err := ringflake.ParseLayout(tc.layout)
			require.NoError(t, err)
			from, to := mustTime(t, tc.from), mustTime(t, tc.to)

			var got [2]idserver.Parts
			for i, s := range lines {
				code, out, errOut := runCLI("parse", "-json", "-layout", tc.layout, s)
				require.Equal(t, 0, code, errOut)
				got[i] = decodeParts(t, out)
			}
			assert.True(t, got[0].Time.Equal(l.TickTime(l.Tick(from))), "FROM's tick: %v", got[0].Time)
			assert.Equal(t, [2]int64{0, 0}, [2]int64{got[0].Node, got[0].Sequence})
			assert.True(t, got[1].Time.Equal(l.TickTime(l.Tick(to))), "TO's tick: %v", got[1].Time)
			assert.Equal(t, [2]int64{l.MaxNode(), l.MaxSequence()}, [2]int64{got[1].Node, got[1].Sequence})
			end := got[1].Time.Add(l.Spec().Unit)
			assert.True(t, end.After(to), "the tick ends after TO")
			next, _, err := l.Bounds(end, end)
			require.NoError(t, err)
			assert.Equal(t, next, got[1].ID+1, "and the next ID is the next tick's first")
		})
	}

	// Flags may come first, and the IDs can be written in a sortable encoding.
	code, out, errOut := runCLI("bounds", "-format", "hex", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "1bd893690fc00000\n1bd893690fffffff\n", out) // 2006515713438646272 and the tick's last
}

func TestBoundsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"one time", []string{"2026-01-01T00:00:00Z"}, 2, "bounds needs FROM and TO, got 1 arguments"},
		{"bad time", []string{"2026-01-01 12:00", "2026-01-02T00:00:00Z"}, 2, `FROM "2026-01-01 12:00" is neither an RFC 3339 time`},
		{"reversed", []string{"2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"}, 2, "TO 2026-01-01T00:00:00Z is before FROM"},
		{"bad layout", []string{"-layout", "tweeter", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"}, 2, `"tweeter"`},
		{"before the epoch", []string{"-layout", "sonyflake-v2", "2020-01-01T00:00:00Z", "2024-01-01T00:00:00Z"}, 1, "before the layout's epoch"},
		{"past the end", []string{"-layout", "js-safe", "2200-01-01T00:00:00Z", "2201-01-01T00:00:00Z"}, 1, "past the layout's last"},
		{"all before the epoch", []string{"1999-01-01", "2000-01-01"}, 1, "TO 2000-01-01 is before the layout's epoch, 2010-11-04T01:42:54.657Z: no ID is that old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"bounds"}, tc.args...)...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "clock", "a range of time, not a clock reading")
		})
	}
}

func TestMigrateCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to string
		code     int
		want     []string // lines of stdout that must be there
		err      string   // stderr when the order breaks
	}{
		{name: "twitter to twitter", from: "twitter", to: "twitter", want: []string{
			"ok: every new ID from 2026-01-01T00:00:00Z on sorts above every old ID before it",
			"  first new ID  2006515713438646272  2026-01-01T00:00:00Z, node 0, sequence 0",
			"  last old ID   2006515713438646271  2025-12-31T23:59:59.999Z, node 1023, sequence 4095",
		}},
		{name: "twitter to a later epoch", from: "twitter", to: "twitter,epoch=2020-01-01T00:00:00Z", code: 1, want: []string{
			"order breaks at 2026-01-01T00:00:00Z: new IDs from then on can sort below old IDs issued before it",
			"  first new ID  794354201395200000  2026-01-01T00:00:00Z, node 0, sequence 0",
			"  last old ID   2006515713438646271  2025-12-31T23:59:59.999Z, node 1023, sequence 4095",
			"  switching at one instant (old until then, new from then on) keeps the order at no time before the new layout runs out (2089-09-06T15:47:35.551Z)",
			"  or with a pause: stop the old layout at 2026-01-01T00:00:00Z and start the new one at 2035-02-27T22:17:05.343Z, when its IDs pass the last old ID; issue nothing in between",
		}, err: "ringflake: order breaks at 2026-01-01T00:00:00Z: the first new ID 794354201395200000 is not above the last old ID 2006515713438646271\n"},
		{name: "sonyflake to sonyflake-v2", from: "sonyflake", to: "sonyflake-v2", code: 1, want: []string{
			"order breaks at 2026-01-01T00:00:00Z: new IDs from then on can sort below old IDs issued before it",
			"  first new ID  52908628377600000  2026-01-01T00:00:00Z, node 0, sequence 0",
			"  last old ID   600114305433599999  2025-12-31T23:59:59.99Z, node 65535, sequence 255",
			"  switching at one instant (old until then, new from then on) keeps the order at no time before the new layout runs out (2199-03-19T03:28:58.87Z)",
			"  or with a pause: stop the old layout at 2026-01-01T00:00:00Z and start the new one at 2036-05-03T00:00:00Z, when its IDs pass the last old ID; issue nothing in between",
		}, err: "ringflake: order breaks at 2026-01-01T00:00:00Z: the first new ID 52908628377600000 is not above the last old ID 600114305433599999\n"},
		{name: "sonyflake to twitter", from: "sonyflake", to: "twitter", want: []string{
			"ok: every new ID from 2026-01-01T00:00:00Z on sorts above every old ID before it",
		}},
		{name: "sonyflake to twitter with a new epoch", from: "sonyflake", to: "twitter,epoch=2026-01-01T00:00:00Z", code: 1, want: []string{
			// twitter's IDs grow 2.5 times as fast as sonyflake's (2^22 per ms
			// against 2^24 per 10 ms): they catch up when (C-2026)·2^22 ms ≥
			// (C-2014-09-01)·2^24/10 ms, after 0.6·(C-2014-09-01).
			"  switching at one instant (old until then, new from then on) keeps the order from 2033-07-23T00:00:00Z",
			"  or with a pause: stop the old layout at 2026-01-01T00:00:00Z and start the new one at 2030-07-15T00:00:00Z, when its IDs pass the last old ID; issue nothing in between",
		}, err: "ringflake: order breaks at 2026-01-01T00:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI("migrate-check", "-from", tc.from, "-to", tc.to, "-at", "2026-01-01T00:00:00Z")
			assert.Equal(t, tc.code, code, errOut)
			lines := strings.Split(out, "\n")
			assert.Equal(t, []string{"from  " + tc.from, "to    " + expand(t, tc.to)}, lines[:2])
			for _, w := range tc.want {
				assert.Contains(t, lines, w)
			}
			if tc.code == 0 {
				assert.Empty(t, errOut)
			} else {
				assert.True(t, strings.HasPrefix(errOut, tc.err), errOut)
			}
		})
	}
}

// expand returns how the layout s prints: presets by name, others key=value.
func expand(t *testing.T, s string) string {
	l, err := ringflake.ParseLayout(s)
	require.NoError(t, err)
	return l.String()
}

// Bad input is one line on stderr and exit status 2.
func TestMigrateCheckBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown layout", []string{"-from", "twitter", "-to", "tweeter", "-at", "2026-01-01T00:00:00Z"},
			`ringflake: -to: invalid layout: preset: "tweeter" is not twitter, sonyflake, sonyflake-v2, discord or js-safe, nor a key=value pair`},
		{"bad layout key", []string{"-from", "twitter,colour=red", "-to", "twitter", "-at", "2026-01-01T00:00:00Z"},
			"ringflake: -from: invalid layout: colour: unknown key"},
		{"unparsable time", []string{"-from", "twitter", "-to", "twitter", "-at", "next tuesday"},
			`ringflake: -at "next tuesday" is neither an RFC 3339 time such as 2026-01-02T15:04:05Z nor a date such as 2026-01-02`},
		{"past the new layout", []string{"-from", "twitter", "-to", "js-safe", "-at", "2200-01-01T00:00:00Z"},
			"ringflake: -at: clock is past the layout's last representable time: 2200-01-01T00:00:00Z (limit 2112-02-09T13:44:29.43Z)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"migrate-check"}, tc.args...)...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.True(t, strings.HasPrefix(errOut, tc.want), errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
	code, _, errOut := runCLI("migrate-check", "-from", "twitter", "-to", "twitter")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "migrate-check needs -at")
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v
}

func decodeParts(t *testing.T, line string) idserver.Parts {
	t.Helper()
	var p idserver.Parts
	require.NoError(t, json.Unmarshal([]byte(line), &p))
	return p
}

// plan -epoch and migrate-check -at take a date as bounds does: the start
// of its day, in UTC.
func TestPlanAndMigrateCheckTakeDates(t *testing.T) {
	for _, pair := range [][2][]string{
		{{"plan", "-nodes", "8", "-rate", "1000/s", "-years", "10", "-epoch", "2026-01-02"},
			{"plan", "-nodes", "8", "-rate", "1000/s", "-years", "10", "-epoch", "2026-01-02T00:00:00Z"}},
		{{"migrate-check", "-from", "twitter", "-to", "sonyflake", "-at", "2026-01-02"},
			{"migrate-check", "-from", "twitter", "-to", "sonyflake", "-at", "2026-01-02T00:00:00Z"}},
	} {
		code, byDate, errOut := runCLI(pair[0]...)
		code2, byTime, errOut2 := runCLI(pair[1]...)
		require.Equal(t, code2, code, "%s / %s", errOut, errOut2)
		assert.NotContains(t, errOut, "RFC 3339")
		assert.Equal(t, byTime, byDate)
		assert.Equal(t, errOut2, errOut)
	}
}

// A date without a time is a whole day in UTC: FROM its start, TO its end.
func TestBoundsTakesDates(t *testing.T) {
	code, out, errOut := runCLI("bounds", "2026-01-02", "2026-01-02")
	require.Equal(t, 0, code, errOut)
	code, want, errOut := runCLI("bounds", "2026-01-02T00:00:00Z", "2026-01-02T23:59:59.999999999Z")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, want, out)
}
