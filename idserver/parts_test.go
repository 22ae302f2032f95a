package idserver_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/idserver"
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
		for _, enc := range []encodings.Encoding{encodings.Decimal(), encodings.Hex()} {
			got, err := idserver.ParseID(tc.in, enc)
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
		enc    encodings.Encoding
		offset int
	}{
		{"0x alone", "0x", encodings.Decimal(), -1},
		{"0X alone", "0X", encodings.Hex(), -1},
		{"17 hex digits", "0x1ffffffffffffffff", encodings.Decimal(), -1},
		{"17 digits, leading zero", "0x07fffffffffffffff", encodings.Decimal(), -1},
		{"not a hex digit", "0xfg", encodings.Decimal(), 3},
		{"sign after 0x", "0x-1", encodings.Decimal(), 2},
		{"non-ASCII after 0x", "0Xé", encodings.Decimal(), 2},
		{"above 2^63-1 after 0x", "0x8000000000000000", encodings.Decimal(), 17},
		{"-1 after 0x", "0xffffffffffffffff", encodings.Hex(), 17},
		{"bad digit after NAME:", "base58:4aaW4SzAyQl", encodings.Decimal(), 17},
		{"too large after NAME:", "base32:8000000000000", encodings.Decimal(), 19},
		{"wrong width after NAME:", "hex:ff", encodings.Decimal(), -1},
		{"empty after NAME:", "dec:", encodings.Decimal(), -1},
		{"unknown NAME", "base16:xyz", encodings.Decimal(), -1},
		{"bad digit after base58-flickr:", "base58-flickr:4jgmnx8Js80", encodings.Decimal(), 24},
		{"empty NAME", ":123", encodings.Decimal(), -1},
		{"hex without 0x is 16 digits", "ff", encodings.Hex(), -1},
		{"decimal", "12x", encodings.Decimal(), 2},
		{"decimal, 20 digits", "00000000000000000001", encodings.Decimal(), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := idserver.ParseID(tc.in, tc.enc)
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
			var se *ringflake.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.in, se.Input)
			assert.Equal(t, tc.offset, se.Offset, se.Reason)
			assert.NotEmpty(t, se.Reason)
		})
	}
}
