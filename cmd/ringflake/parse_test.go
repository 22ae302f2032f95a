package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ringflake/ringflake/layoutplan"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCLIHexPrefix(t *testing.T) {
	code, out, errOut := runCLI("parse", "0xff", "0X1000")
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "id        255\n"), out)
	assert.Contains(t, out, "\nid        4096\n")

	code, out, errOut = runCLI("parse", "-json", "0x1565a11f6217a000")
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, `{"id":"1541815603606036480",`), out)
}

// Messages quote the argument as the user typed it, not the text that was
// parsed after a prefix or padding.
func TestParseCLIErrorsQuoteTheArgument(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // stderr
	}{
		{"0x alone", []string{"0x"}, `ringflake: invalid ID "0x": 0 characters after 0x, want 1 to 16 hex digits` + "\n"},
		{"17 hex digits", []string{"0x1ffffffffffffffff"},
			`ringflake: invalid ID "0x1ffffffffffffffff": 17 characters after 0x, want 1 to 16 hex digits` + "\n"},
		{"not a hex digit", []string{"0xfg"}, `ringflake: invalid ID "0xfg": not a hex digit 'g' at offset 3` + "\n"},
		{"above 2^63-1", []string{"0x8000000000000000"},
			`ringflake: invalid ID "0x8000000000000000": larger than 2^63-1 at offset 17` + "\n"},
		{"NAME:TEXT", []string{"base58:4aaW4SzAyQl"},
			`ringflake: invalid ID "base58:4aaW4SzAyQl": not a base58 digit 'l' at offset 17` + "\n"},
		{"unknown NAME", []string{"base16:xyz"},
			`ringflake: invalid ID "base16:xyz": unknown encoding "base16": want dec, hex, base32, base58, base62, base64, base2, base36, base58-flickr or zbase32` + "\n"},
		{"decimal too long", []string{"00000000000000000001"},
			`ringflake: invalid ID "00000000000000000001": 20 characters, want at most 19 decimal digits` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"parse"}, tc.args...)...)
			assert.Equal(t, 1, code)
			assert.Empty(t, out)
			assert.Equal(t, tc.want, errOut)
		})
	}
}

// -layout auto lists the presets under which an ID's time is plausible:
// Discord's documented example ID names discord, with its documented time.
func TestParseLayoutAuto(t *testing.T) {
	code, out, errOut := runCLI("parse", "-layout", "auto", "-json", "175928847299117063")
	require.Equal(t, 0, code, errOut)
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var p struct {
			Layout string    `json:"layout"`
			Time   time.Time `json:"time"`
			Node   int64     `json:"node"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &p), line)
		assert.False(t, p.Time.After(time.Now().Add(24*time.Hour)), "%s: a plausible time", p.Layout)
		if p.Layout == "discord" {
			found = true
			assert.Equal(t, time.Date(2016, 4, 30, 11, 18, 25, 796_000_000, time.UTC), p.Time.UTC())
		}
	}
	assert.True(t, found, "discord is among the candidates: %s", out)

	code, out, _ = runCLI("parse", "-layout", "auto", "175928847299117063")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "layout    discord")

	code, _, errOut = runCLI("parse", "-layout", "auto", "-format", "serial:A{time:20060102150405.000}{node}{seq}", "x")
	assert.Equal(t, 2, code, "a serial format needs its layout named")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
}

// -layout auto lists first the preset under which the ID's time is
// nearest now: an ID issued a moment ago under sonyflake names sonyflake
// first, though it dates plausibly under others too.
func TestParseLayoutAutoNearestFirst(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, l := range layoutplan.Presets() {
		id, err := l.Compose(now, 1, 0)
		require.NoError(t, err)
		ls := plausibleLayouts(id, now)
		require.NotEmpty(t, ls, l.String())
		assert.Equal(t, l.String(), ls[0].String(), "the preset it was issued under comes first among %v", ls)
		var last time.Duration
		for _, c := range ls {
			p, err := c.Decompose(id)
			require.NoError(t, err)
			away := now.Sub(p.Time)
			away = max(away, -away)
			assert.GreaterOrEqual(t, away, last, "nearest now first")
			last = away
		}
	}
}

// A string that is not decimal names the encodings it would be an ID in:
// a bwmarrin Base58 string points at base58-flickr.
func TestParseNamesTheEncodingsThatRead(t *testing.T) {
	code, out, errOut := runCLI("parse", "5We8tjt6RBW")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "base58-flickr")

	code, _, errOut = runCLI("parse", "!!!")
	assert.Equal(t, 1, code)
	assert.NotContains(t, errOut, "reads as an ID in", "no encoding reads it")
}
