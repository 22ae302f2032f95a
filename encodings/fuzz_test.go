package encodings_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// FuzzEncodingsRoundTrip: in every encoding, every ID formats to text of
// the encoding's width (at most its MaxWidth when the width varies) that
// parses back to the same ID, also zero-padded to MaxWidth; Append agrees
// with Format, and the text of two IDs compares like the IDs where the
// encoding is sortable, and for dec, base2 and base36 where the two texts
// have the same length. A negative ID's text never parses.
func FuzzEncodingsRoundTrip(f *testing.F) {
	for _, pair := range [][2]int64{{0, 1}, {1541815603606036480, 1541815603606036481}, {math.MaxInt64, 1 << 62},
		{1<<53 - 1, 1 << 53}, {57, 58}, {61, 62}, {-1, 0}, {math.MinInt64, math.MaxInt64}} {
		f.Add(pair[0], pair[1])
	}
	f.Fuzz(func(t *testing.T, a, b int64) {
		for _, enc := range encodings.All() {
			sa, sb := enc.Format(ringflake.ID(a)), enc.Format(ringflake.ID(b))
			assert.Equal(t, "<"+sa, string(enc.Append([]byte("<"), ringflake.ID(a))), "%s", enc)
			if enc.Width() > 0 {
				assert.Len(t, sa, enc.Width(), "%s", enc)
			}
			for _, c := range []struct {
				id int64
				s  string
			}{{a, sa}, {b, sb}} {
				back, err := enc.Parse(c.s)
				if c.id < 0 {
					require.ErrorIs(t, err, ringflake.ErrInvalidID, "%s: Parse(%q) of negative %d", enc, c.s, c.id)
					continue
				}
				require.NoError(t, err, "%s: Parse(Format(%d))", enc, c.id)
				assert.Equal(t, ringflake.ID(c.id), back, "%s", enc)
				assert.LessOrEqual(t, len(c.s), enc.MaxWidth(), "%s", enc)
				if enc.Width() == 0 {
					zero := enc.Format(0)
					padded := strings.Repeat(zero, enc.MaxWidth()-len(c.s)) + c.s
					back, err := enc.Parse(padded)
					require.NoError(t, err, "%s: Parse(%q), Format(%d) zero-padded", enc, padded, c.id)
					assert.Equal(t, ringflake.ID(c.id), back, "%s", enc)
				}
			}
			inOrder := enc.Sortable() || (len(sa) == len(sb) && (enc.String() == "dec" || enc.String() == "base2" || enc.String() == "base36"))
			if inOrder && a >= 0 && b >= 0 {
				assert.Equal(t, cmp.Compare(a, b), strings.Compare(sa, sb), "%s: %d vs %d as %q vs %q", enc, a, b, sa, sb)
			}
		}
	})
}

// FuzzEncodingsParse: each encoding's Parse accepts exactly what an
// independent reference decoder (math/big over the alphabet) accepts and
// yields the same value; what it accepts formats back to the input's
// canonical spelling; what it rejects is an ErrInvalidID that names the
// input and an offset inside it.
func FuzzEncodingsParse(f *testing.F) {
	for _, s := range []string{"0", "007", "9223372036854775807", "9223372036854775808", "-1", "",
		"0000000000000000007", "00000000000000000007", "09223372036854775807", "000000000000000000000000000000000",
		"1565a11f6217a000", "1565A11F6217A000", "7fffffffffffffff", "8000000000000000", "0x65a11f6217a000",
		"1ASD13XH1F800", "iasd13xhlf8oO", "7ZZZZZZZZZZZZ", "8000000000000", "1ASD13XH1F80U",
		"4aaW4SzAyQK", "NQm6nKp8qFC", "NQm6nKp8qFD", "0aaW4SzAyQK", "1ptWyK4WgZU", "AzL8n0Y58m8",
		"FWWhH2IXoAA", "f_________8", "gAAAAAAAAAA", "AAAAAAAAAAB", "FWWhH2IXo+A", "1ptWyK4Wgé",
		"4jgmnx8Js8A", "npL6MjP8Qfc", "npL6MjP8Qfd", "b8wjm1zroyyyy", "B8WJM1ZROYYYY", "8999999999999", "9yyyyyyyyyyyy",
		"8hgmw4blvlkw", "1Y2P0IJ32E8E7", "1y2p0ij32e8e8", "+1", "1_0",
		"111101111111101110110101100101001000000000000000000000000000", "0111111111111111111111111111111111111111111111111111111111111111"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 { // longer tells nothing new and slows minimising
			return
		}
		for _, enc := range encodings.All() {
			id, err := enc.Parse(s)
			want, canonical, ok := referenceDecode(enc, s)
			if !ok {
				require.Error(t, err, "%s: Parse(%q) = %d, the reference rejects it", enc, s, id)
				requireSyntaxError(t, err, s)
				continue
			}
			require.NoError(t, err, "%s: Parse(%q); the reference reads %d", enc, s, want)
			assert.Equal(t, ringflake.ID(want), id, "%s: Parse(%q)", enc, s)
			assert.Equal(t, canonical, enc.Format(id), "%s: Format(Parse(%q))", enc, s)
		}
	})
}

var referenceAlphabets = map[string]string{
	"dec":    "0123456789",
	"hex":    "0123456789abcdef",
	"base32": "0123456789ABCDEFGHJKMNPQRSTVWXYZ",
	"base58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
	"base62": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	"base64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
	"base2":  "01",
	"base36": "0123456789abcdefghijklmnopqrstuvwxyz",
	// As bwmarrin/snowflake's snowflake.go spells them (encodeBase58Map,
	// encodeBase32Map).
	"base58-flickr": "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ",
	"zbase32":       "ybndrfg8ejkmcpqxot1uwisza345h769",
}

// referenceText writes n in alphabet's base without leading zero digits.
func referenceText(n *big.Int, alphabet string) string {
	base := big.NewInt(int64(len(alphabet)))
	var digits []byte
	for n = new(big.Int).Set(n); ; {
		var d big.Int
		n.DivMod(n, base, &d)
		digits = append([]byte{alphabet[d.Int64()]}, digits...)
		if n.Sign() == 0 {
			return string(digits)
		}
	}
}

// referenceDecode decodes s the slow, obvious way: normalise what the
// encoding's spec allows (hex and base36 case; Crockford's case and I, L,
// O), look each character up in the alphabet, add up in math/big, and
// check the width (for encodings of varying width: 1 to as many
// characters as 2^63-1 has digits, leading zeros included) and the range.
// It returns the value and the canonical spelling.
func referenceDecode(enc encodings.Encoding, s string) (v int64, canonical string, ok bool) {
	name := enc.String()
	alphabet := referenceAlphabets[name]
	maxDigits := len(referenceText(big.NewInt(math.MaxInt64), alphabet))
	if s == "" || (enc.Width() > 0 && len(s) != enc.Width()) || (enc.Width() == 0 && len(s) > maxDigits) {
		return 0, "", false
	}
	for _, r := range s {
		if r >= utf8.RuneSelf { // every alphabet is ASCII
			return 0, "", false
		}
	}
	norm := s
	switch name {
	case "hex", "base36":
		norm = strings.ToLower(s)
	case "base32":
		norm = strings.NewReplacer("I", "1", "L", "1", "O", "0").Replace(strings.ToUpper(s))
	}
	n := new(big.Int)
	base := big.NewInt(int64(len(alphabet)))
	for i := 0; i < len(norm); i++ {
		d := strings.IndexByte(alphabet, norm[i])
		if d < 0 {
			return 0, "", false
		}
		n.Mul(n, base).Add(n, big.NewInt(int64(d)))
	}
	if name == "base64" { // 66 bits: the ID's 64 and 2 zero bits
		if n.Bit(0) != 0 || n.Bit(1) != 0 {
			return 0, "", false
		}
		n.Rsh(n, 2)
	}
	if !n.IsInt64() {
		return 0, "", false
	}
	canonical = norm
	if enc.Width() == 0 {
		canonical = referenceText(n, alphabet)
	}
	return n.Int64(), canonical, true
}

// FuzzIDUnmarshalJSON: ID.UnmarshalJSON accepts exactly JSON null (leaving
// the ID alone), a JSON string the decimal Parse accepts, and a JSON
// number that is a plain non-negative integer Parse accepts, checked
// against encoding/json's own reading of the input; what it accepts
// marshals back to a string of the same ID. NullID.UnmarshalJSON agrees
// with it, except that null makes the NullID NULL.
func FuzzIDUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"1541815603606036480"`, `1541815603606036480`, `null`, `"null"`, `""`, `"\u0031\u0032"`,
		`-3`, `1.5`, `1e3`, `"9223372036854775808"`, `true`, `"12`, `12"`, `"1"2"`, `{}`, `[1]`, `"\"1\""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 256 { // longer tells nothing new and slows minimising
			return
		}
		const sentinel = ringflake.ID(4242)
		id := sentinel
		err := id.UnmarshalJSON(b)
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrInvalidID, "%s", b)
			assert.Equal(t, sentinel, id, "a failed UnmarshalJSON leaves the ID alone")
		}
		checkNullIDUnmarshalJSON(t, b, id, err)
		if !json.Valid(b) || len(bytes.TrimSpace(b)) != len(b) {
			// encoding/json never passes this; it only must not panic
			// nor yield a negative ID.
			assert.GreaterOrEqual(t, id, ringflake.ID(0))
			return
		}
		want, ok := referenceJSON(t, b, sentinel)
		if !ok {
			require.Error(t, err, "%s parsed as %d", b, id)
			return
		}
		require.NoError(t, err, "%s", b)
		assert.Equal(t, want, id)
		out, err := json.Marshal(id)
		require.NoError(t, err)
		assert.Equal(t, `"`+id.String()+`"`, string(out))
	})
}

// checkNullIDUnmarshalJSON checks that NullID.UnmarshalJSON(b) reads what
// ID.UnmarshalJSON read (id, err), but null as NULL, and that what it
// reads marshals back to the same NullID.
func checkNullIDUnmarshalJSON(t *testing.T, b []byte, id ringflake.ID, err error) {
	t.Helper()
	old := ringflake.NullID{ID: 4242, Valid: true}
	n := old
	nerr := n.UnmarshalJSON(b)
	switch {
	case string(b) == "null":
		require.NoError(t, nerr)
		assert.Equal(t, ringflake.NullID{}, n)
	case err != nil:
		require.ErrorIs(t, nerr, ringflake.ErrInvalidID, "%s", b)
		assert.Equal(t, old, n, "a failed UnmarshalJSON leaves the NullID alone")
		return
	default:
		require.NoError(t, nerr, "%s", b)
		assert.Equal(t, ringflake.NullID{ID: id, Valid: true}, n)
	}
	out, err := json.Marshal(n)
	require.NoError(t, err)
	var back ringflake.NullID
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, n, back, "%s", out)
}

// referenceJSON reads the JSON value b with encoding/json and says which
// ID UnmarshalJSON should leave behind, starting from old.
func referenceJSON(t *testing.T, b []byte, old ringflake.ID) (ringflake.ID, bool) {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	require.NoError(t, d.Decode(&v))
	switch v := v.(type) {
	case nil:
		return old, true
	case string:
		id, err := ringflake.Parse(v)
		return id, err == nil
	case json.Number:
		id, err := ringflake.Parse(string(b))
		return id, err == nil
	}
	return 0, false
}
