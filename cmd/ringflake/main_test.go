package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/serialno"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestGen(t *testing.T) {
	code, out, errOut := runCLI("gen", "-n", "5", "-node", "3")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	l := ringflake.TwitterLayout()
	var prev ringflake.ID
	for _, line := range lines {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		assert.Greater(t, id, prev)
		assert.Equal(t, int64(3), id.Node(l))
		assert.WithinDuration(t, time.Now(), id.Time(l), time.Minute)
		prev = id
	}
}

func TestGenWithLayoutAndStrategy(t *testing.T) {
	code, out, errOut := runCLI("gen", "-n", "3", "-layout", "js-safe", "-strategy", "logical:1s", "-node", "127", "-offset", "64")
	require.Equal(t, 0, code, errOut)
	for _, line := range strings.Fields(out) {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		assert.Less(t, int64(id), int64(1)<<53)
		assert.Equal(t, int64(127), id.Node(ringflake.JSSafeLayout()))
	}
}

func TestGenZero(t *testing.T) {
	code, out, _ := runCLI("gen", "-n", "0")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
}

func TestParse(t *testing.T) {
	code, out, errOut := runCLI("parse", "1541815603606036480", "4096")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `id        1541815603606036480
time      2022-06-28T16:07:40.105Z
node      378 (datacenter 11, worker 26)
sequence  0

id        4096
time      2010-11-04T01:42:54.657Z
node      1 (datacenter 0, worker 1)
sequence  0
`, out)

	// A Sonyflake ID of machine 1, sequence 0, 50 units after the start
	// (sony/sonyflake's TestSonyflakeOnce; issue 18).
	code, out, errOut = runCLI("parse", "-layout", "sonyflake", "838860801")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "id        838860801\ntime      2014-09-01T00:00:00.5Z\nnode      1\nsequence  0\n", out)

	// Discord's documented example, worker and process as datacenter and worker.
	code, out, errOut = runCLI("parse", "-layout", "discord", "175928847299117063")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "id        175928847299117063\ntime      2016-04-30T11:18:25.796Z\nnode      32 (datacenter 1, worker 0)\nsequence  7\n", out)
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // a fragment of stderr naming the problem
	}{
		{"no command", nil, 2, "usage:"},
		{"unknown command", []string{"frob"}, 2, `unknown command "frob"`},
		{"bad flag", []string{"gen", "-colour", "red"}, 2, "-colour"},
		{"negative count", []string{"gen", "-n", "-1"}, 2, "-n -1"},
		{"stray argument", []string{"gen", "5"}, 2, "no arguments"},
		{"negative offset", []string{"gen", "-offset", "-1"}, 2, "-offset -1"},
		{"bad strategy", []string{"gen", "-strategy", "ring,,"}, 2, `part 2`},
		{"bad layout", []string{"gen", "-layout", "twitter,seq=13"}, 2, "-layout"},
		{"node out of range", []string{"gen", "-node", "5000"}, 1, "node id 5000 out of range [0, 1023]"},
		{"parse without IDs", []string{"parse"}, 2, "at least one ID"},
		{"malformed ID", []string{"parse", "12x"}, 1, `invalid ID "12x"`},
		{"ID beyond the layout", []string{"parse", "-layout", "js-safe", "9007199254740992"}, 1, "53 bits"},
		{"count not a number", []string{"gen", "-n", "abc"}, 2, `invalid value "abc" for flag -n`},
		{"plan without years", []string{"plan", "-nodes", "8", "-rate", "1000/s"}, 2, "-years"},
		{"serve has no -format", []string{"serve", "-format", "hex"}, 2, "-format"},
		{"version with an argument", []string{"version", "x"}, 2, "no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "ringflake: ringflake:", "the prefix appears once")
			if tc.code == 2 && tc.args != nil {
				// One line naming the problem and where the flags are
				// told, not the whole usage.
				assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
				assert.NotContains(t, errOut, "usage:")
				if tc.args[0] != "frob" {
					assert.Contains(t, errOut, "ringflake "+tc.args[0]+" -h")
				}
			}
		})
	}
}

// TestVersion: version, -version and --version print one line naming
// ringflake and the Go that built it.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "-version", "--version"} {
		code, out, errOut := runCLI(arg)
		require.Equal(t, 0, code, errOut)
		assert.Regexp(t, `^ringflake \S+ \(go\S+.*\)\n$`, out)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI("help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "ringflake gen")
	code, _, errOut := runCLI("gen", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "-strategy")
}

func TestGenFormats(t *testing.T) {
	for _, enc := range encodings.All() {
		t.Run(enc.String(), func(t *testing.T) {
			code, out, errOut := runCLI("gen", "-n", "20", "-node", "3", "--format", enc.String())
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			require.Len(t, lines, 20)
			var prev ringflake.ID = -1
			for _, line := range lines {
				if enc.Width() > 0 {
					assert.Len(t, line, enc.Width())
				}
				id, err := enc.Parse(line)
				require.NoError(t, err, line)
				assert.Greater(t, id, prev)
				assert.Equal(t, int64(3), id.Node(ringflake.TwitterLayout()))
				prev = id
			}
		})
	}
}

func TestParseFormats(t *testing.T) {
	const want = "id        1541815603606036480\n"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"decimal", []string{"1541815603606036480"}},
		{"hex by flag", []string{"-format", "hex", "1565a11f6217a000"}},
		{"hex by flag, upper case", []string{"--format", "hex", "1565A11F6217A000"}},
		{"hex by flag with 0x", []string{"-format", "hex", "0x1565a11f6217a000"}},
		{"hex by 0x", []string{"0x1565a11f6217a000"}},
		{"hex by 0X", []string{"0X1565A11F6217A000"}},
		{"hex by name", []string{"hex:1565a11f6217a000"}},
		{"base32 by flag", []string{"-format", "base32", "1ASD13XH1F800"}},
		{"base32 as typed", []string{"-format", "base32", "iasd13xhlf8oo"}},
		{"base32 by name", []string{"base32:1ASD13XH1F800"}},
		{"base58 by flag", []string{"-format", "base58", "4aaW4SzAyQK"}},
		{"base58 by name", []string{"base58:4aaW4SzAyQK"}},
		{"base62 by flag", []string{"-format", "base62", "1ptWyK4WgZU"}},
		{"base62 by name", []string{"base62:1ptWyK4WgZU"}},
		{"base64 by flag", []string{"-format", "base64", "FWWhH2IXoAA"}},
		{"base64 by name", []string{"base64:FWWhH2IXoAA"}},
		{"name beats flag", []string{"-format", "base58", "dec:1541815603606036480"}},
		{"base2 by flag", []string{"-format", "base2", "1010101100101101000010001111101100010000101111010000000000000"}},
		{"base36 by flag", []string{"-format", "base36", "bppc0m3ju134"}},
		{"base36 by name", []string{"base36:bppc0m3ju134"}},
		{"base58-flickr by flag", []string{"-format", "base58-flickr", "4zzv4rZaYpj"}},
		{"base58-flickr by name", []string{"base58-flickr:4zzv4rZaYpj"}},
		{"zbase32 by flag", []string{"-format", "zbase32", "bk3pbd7tbxeyy"}},
		{"zbase32 by name", []string{"zbase32:bk3pbd7tbxeyy"}},
		{"serial number", []string{"-format", "serial:PAY{time:20060102150405.000}{node:4}{seq:4}", "PAY20220628160740.10503780000"}},
		{"serial number with colons", []string{"-format", "serial:{time:2006-01-02T15:04:05.000Z}/{node}/{seq}", "2022-06-28T16:07:40.105Z/0378/0000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"parse"}, tc.args...)...)
			require.Equal(t, 0, code, errOut)
			assert.True(t, strings.HasPrefix(out, want), out)
		})
	}
}

// With base58, base62 and base64, whose alphabets have an x, 0x is data,
// not a prefix.
// bwmarrin's Base58 text, read as the trap: with base58-flickr it
// is bwmarrin's ID, with base58 another, valid one.
func TestParseBwmarrinBase58(t *testing.T) {
	code, out, errOut := runCLI("parse", "-format", "base58-flickr", "4jgmnx8Js8A")
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "id        1428076403798048768\n"), out)
	code, out, errOut = runCLI("parse", "base58:4jgmnx8Js8A")
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "id        1609467648527167071\n"), out)
}

// gen writes serial numbers of one width that parse back to IDs of the
// node, in order, and parse reads them.
func TestGenSerial(t *testing.T) {
	for _, tc := range []struct{ layout, format string }{
		{"twitter", "serial:PAY{time:20060102150405.000}{node}{seq}"},
		{"sonyflake", "serial:PAY{time:20060102150405.000}{seq}{node}"}, // Sonyflake keeps the sequence above the machine
		{"js-safe", "serial:PAY{time:20060102150405.000}{node}{seq}"},
	} {
		layout, format := tc.layout, tc.format
		t.Run(layout, func(t *testing.T) {
			l, err := ringflake.ParseLayout(layout)
			require.NoError(t, err)
			sf, err := serialno.New(strings.TrimPrefix(format, "serial:"), l)
			require.NoError(t, err)
			code, out, errOut := runCLI("gen", "-n", "20", "-node", "3", "-layout", layout, "-format", format)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			require.Len(t, lines, 20)
			var prev string
			for _, line := range lines {
				assert.Len(t, line, sf.Width())
				assert.Greater(t, line, prev)
				id, err := sf.Parse(line)
				require.NoError(t, err, line)
				assert.Equal(t, int64(3), id.Node(l))
				prev = line
			}
			code, out, errOut = runCLI("parse", "-layout", layout, "-format", format, lines[0])
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "node      3")
		})
	}
}

func TestParse0xIsDataInBase62(t *testing.T) {
	want, err := encodings.Base62().Parse("0x123456789")
	require.NoError(t, err)
	code, out, errOut := runCLI("parse", "-format", "base62", "0x123456789")
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "id        "+want.String()+"\n"), out)
}

func TestParseJSON(t *testing.T) {
	code, out, errOut := runCLI("parse", "--json", "1541815603606036480", "base58:11111111112")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `{"id":"1541815603606036480","time":"2022-06-28T16:07:40.105Z","tick":367597485448,"node":378,"datacenter":11,"worker":26,"sequence":0}
{"id":"1","time":"2010-11-04T01:42:54.657Z","tick":0,"node":0,"datacenter":0,"worker":0,"sequence":1}
`, out)

	code, out, errOut = runCLI("parse", "-json", "-layout", "sonyflake,order=time,node,seq", "300")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `{"id":"300","time":"2014-09-01T00:00:00Z","tick":0,"node":1,"sequence":44}`+"\n", out)

	var parsed struct {
		ID   ringflake.ID
		Time time.Time
	}
	require.NoError(t, json.Unmarshal([]byte(out), &parsed))
	assert.Equal(t, ringflake.ID(300), parsed.ID)
}

func TestFormatErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // a fragment of stderr naming the problem
	}{
		{"gen with an unknown format", []string{"gen", "-format", "base16"}, 2, `-format: unknown encoding "base16"`},
		{"parse with an unknown format", []string{"parse", "-format", "decimal", "1"}, 2, `-format: unknown encoding "decimal"`},
		{"unknown encoding name", []string{"parse", "base16:xyz"}, 1, `unknown encoding "base16"`},
		{"gen with a serial format that loses bits", []string{"gen", "-format", "serial:PAY{time:20060102150405}{node}{seq}"}, 2,
			`-format: invalid pattern "PAY{time:20060102150405}{node}{seq}": the time shows 1s steps`},
		{"parse with a serial format too narrow for the layout", []string{"parse", "-layout", "sonyflake", "-format", "serial:{time:20060102150405.000}{node:4}{seq}", "1"}, 2,
			`{node:4} is too narrow: the layout's largest node number, 65535, takes 5 digits at offset 25`},
		{"not a serial number", []string{"parse", "-format", "serial:PAY{time:20060102150405.000}{node}{seq}", "PAY20221328160740.10503780000"}, 1,
			`invalid ID "PAY20221328160740.10503780000": month 13 out of range [01, 12] at offset 7`},
		{"base58-flickr is not base58", []string{"parse", "-format", "base58-flickr", "4aaW4SzAyQl"}, 1, "not a base58-flickr digit 'l' at offset 10"},
		{"not base58", []string{"parse", "-format", "base58", "4aaW4SzAyQl"}, 1, "not a base58 digit 'l' at offset 10"},
		{"hex too long", []string{"parse", "0x1ffffffffffffffff"}, 1, "17 characters after 0x, want 1 to 16 hex digits"},
		{"base32 too large", []string{"parse", "base32:8000000000000"}, 1, "larger than 2^63-1"},
		{"JSON of a bad ID", []string{"parse", "-json", "12x"}, 1, `invalid ID "12x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "ringflake: ringflake:", "the prefix appears once")
		})
	}
}

// epipeWriter fails every write as a pipe whose reader went away does.
type epipeWriter struct{}

func (epipeWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// A closed standard output ends gen cleanly: status 0, no message.
func TestGenClosedOutput(t *testing.T) {
	var errOut bytes.Buffer
	code := run([]string{"gen", "-n", "1000", "-node", "3"}, epipeWriter{}, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Empty(t, errOut.String())
}
