package main

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// After 0x come 1 to 16 hex digits, as in a Go literal, in either case,
// up to 2^63-1.
func TestParseIDHexPrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ringflake.ID
	}{
		{"0x0", 0},
		{"0xff", 255},
		{"0XFF", 255},
		{"0x1f", 31},
		{"0x1000", 4096},
		{"0x1565a11f6217a000", 1541815603606036480},
		{"0x01565a11f6217a00", 1541815603606036480 >> 4},
		{"0x7fffffffffffffff", math.MaxInt64},
		{"0x0000000000000001", 1},
	} {
		for _, enc := range []ringflake.Encoding{ringflake.DecimalEncoding(), ringflake.HexEncoding()} {
			got, err := parseID(tc.in, enc)
			require.NoError(t, err, "%s with -format %s", tc.in, enc)
			assert.Equal(t, tc.want, got, "%s with -format %s", tc.in, enc)
		}
	}
}

// Every error names the argument as typed, and its offset points into it.
func TestParseIDErrorsNameTheArgument(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		enc    ringflake.Encoding
		offset int
	}{
		{"0x alone", "0x", ringflake.DecimalEncoding(), -1},
		{"0X alone", "0X", ringflake.HexEncoding(), -1},
		{"17 hex digits", "0x1ffffffffffffffff", ringflake.DecimalEncoding(), -1},
		{"17 digits, leading zero", "0x07fffffffffffffff", ringflake.DecimalEncoding(), -1},
		{"not a hex digit", "0xfg", ringflake.DecimalEncoding(), 3},
		{"sign after 0x", "0x-1", ringflake.DecimalEncoding(), 2},
		{"non-ASCII after 0x", "0Xé", ringflake.DecimalEncoding(), 2},
		{"above 2^63-1 after 0x", "0x8000000000000000", ringflake.DecimalEncoding(), 17},
		{"-1 after 0x", "0xffffffffffffffff", ringflake.HexEncoding(), 17},
		{"bad digit after NAME:", "base58:4aaW4SzAyQl", ringflake.DecimalEncoding(), 17},
		{"too large after NAME:", "base32:8000000000000", ringflake.DecimalEncoding(), 19},
		{"wrong width after NAME:", "hex:ff", ringflake.DecimalEncoding(), -1},
		{"empty after NAME:", "dec:", ringflake.DecimalEncoding(), -1},
		{"unknown NAME", "base16:xyz", ringflake.DecimalEncoding(), -1},
		{"bad digit after base58-flickr:", "base58-flickr:4jgmnx8Js80", ringflake.DecimalEncoding(), 24},
		{"empty NAME", ":123", ringflake.DecimalEncoding(), -1},
		{"hex without 0x is 16 digits", "ff", ringflake.HexEncoding(), -1},
		{"decimal", "12x", ringflake.DecimalEncoding(), 2},
		{"decimal, 20 digits", "00000000000000000001", ringflake.DecimalEncoding(), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseID(tc.in, tc.enc)
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
			var se *ringflake.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.in, se.Input)
			assert.Equal(t, tc.offset, se.Offset, se.Reason)
			assert.NotEmpty(t, se.Reason)
		})
	}
}

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
