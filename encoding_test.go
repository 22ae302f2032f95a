package ringflake_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

var (
	encDec = ringflake.DecimalEncoding()
	encHex = ringflake.HexEncoding()
	encB32 = ringflake.Base32Encoding()
	encB58 = ringflake.Base58Encoding()
	encB62 = ringflake.Base62Encoding()
	encB64 = ringflake.Base64Encoding()
)

// edgeIDs are the IDs where an encoding's arithmetic can go wrong: zero,
// one, each power of two and its neighbours, each encoding's digit
// boundaries, a real ID and the largest.
func edgeIDs() []ringflake.ID {
	ids := []ringflake.ID{0, 1, 1541815603606036480, math.MaxInt64}
	for b := 0; b < 63; b++ {
		ids = append(ids, 1<<b-1, 1<<b, 1<<b+1)
	}
	for _, base := range []int64{10, 32, 58, 62} {
		for p := int64(base); p < math.MaxInt64/base; p *= base {
			ids = append(ids, ringflake.ID(p-1), ringflake.ID(p))
		}
	}
	return ids
}

func TestEncodingsKnownValues(t *testing.T) {
	for _, tc := range []struct {
		enc                      ringflake.Encoding
		zero, one, real, largest string
	}{
		{encDec, "0", "1", "1541815603606036480", "9223372036854775807"},
		{encHex, "0000000000000000", "0000000000000001", "1565a11f6217a000", "7fffffffffffffff"},
		{encB32, "0000000000000", "0000000000001", "1ASD13XH1F800", "7ZZZZZZZZZZZZ"},
		{encB58, "11111111111", "11111111112", "4aaW4SzAyQK", "NQm6nKp8qFC"},
		{encB62, "00000000000", "00000000001", "1ptWyK4WgZU", "AzL8n0Y58m7"},
		{encB64, "AAAAAAAAAAA", "AAAAAAAAAAE", "FWWhH2IXoAA", "f_________8"},
	} {
		t.Run(tc.enc.String(), func(t *testing.T) {
			for id, want := range map[ringflake.ID]string{0: tc.zero, 1: tc.one, 1541815603606036480: tc.real, math.MaxInt64: tc.largest} {
				assert.Equal(t, want, tc.enc.Format(id), "Format(%d)", id)
				got, err := tc.enc.Parse(want)
				require.NoError(t, err)
				assert.Equal(t, id, got, "Parse(%q)", want)
			}
		})
	}
}

func TestEncodingsRoundTrip(t *testing.T) {
	for _, enc := range ringflake.Encodings() {
		t.Run(enc.String(), func(t *testing.T) {
			prefix := []byte("id=")
			for _, id := range edgeIDs() {
				s := enc.Format(id)
				if enc.Width() > 0 {
					assert.Len(t, s, enc.Width(), "Format(%d)", id)
				}
				back, err := enc.Parse(s)
				require.NoError(t, err, "Parse(Format(%d)) = Parse(%q)", id, s)
				assert.Equal(t, id, back)
				assert.Equal(t, "id="+s, string(enc.Append(slices.Clip(prefix), id)))
			}
		})
	}
}

// Hex and base64 are the ID's 8 big-endian bytes, so the standard library's
// decoders read them and its encoders write them.
func TestEncodingsMatchTheStandardLibrary(t *testing.T) {
	for _, id := range edgeIDs() {
		be := binary.BigEndian.AppendUint64(nil, uint64(id))
		assert.Equal(t, hex.EncodeToString(be), encHex.Format(id))
		assert.Equal(t, base64.RawURLEncoding.EncodeToString(be), encB64.Format(id))
	}
}

func TestEncodingsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := edgeIDs()
	for range 2000 {
		ids = append(ids, ringflake.ID(rng.Int64()), ringflake.ID(rng.Int64N(1<<40)))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, enc := range ringflake.Encodings() {
		t.Run(enc.String(), func(t *testing.T) {
			texts := make([]string, len(ids))
			for i, id := range ids {
				texts[i] = enc.Format(id)
			}
			assert.Equal(t, enc.Sortable(), slices.IsSorted(texts),
				"Sortable() says %v; the text of sorted IDs is sorted: %v", enc.Sortable(), slices.IsSorted(texts))
		})
	}
}

func TestEncodingsParseLeniency(t *testing.T) {
	for _, tc := range []struct {
		name string
		enc  ringflake.Encoding
		in   string
		want ringflake.ID
	}{
		{"decimal leading zeros", encDec, "007", 7},
		{"decimal zero-padded to 19 digits", encDec, "0000000000000000007", 7},
		{"decimal 19 zeros", encDec, "0000000000000000000", 0},
		{"hex upper case", encHex, "1565A11F6217A000", 1541815603606036480},
		{"hex mixed case", encHex, "1565a11F6217a000", 1541815603606036480},
		{"base32 lower case", encB32, "1asd13xh1f800", 1541815603606036480},
		{"base32 I and L read as 1", encB32, "IASD13XHLF800", 1541815603606036480},
		{"base32 i and l read as 1", encB32, "iasd13xhlf800", 1541815603606036480},
		{"base32 O and o read as 0", encB32, "1ASD13XH1F8oO", 1541815603606036480},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.enc.Parse(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEncodingsParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		enc    ringflake.Encoding
		in     string
		offset int
	}{
		{"decimal empty", encDec, "", -1},
		{"decimal negative", encDec, "-1", 0},
		{"decimal above 2^63-1", encDec, "9223372036854775808", 18},
		{"decimal 20 digits", encDec, "10000000000000000000", -1},
		{"decimal zero-padded to 20 digits", encDec, "00000000000000000007", -1},
		{"decimal 10001 zeros", encDec, strings.Repeat("0", 10001), -1},
		{"decimal 20 characters, not all digits", encDec, "1234567890x234567890", -1},
		{"hex empty", encHex, "", -1},
		{"hex too short", encHex, "ff", -1},
		{"hex too long", encHex, "00000000000000001", -1},
		{"hex 0x prefix", encHex, "0x565a11f6217a00", 1},
		{"hex not a digit", encHex, "1565a11f6217g000", 12},
		{"hex above 2^63-1", encHex, "8000000000000000", 15},
		{"hex negative one", encHex, "ffffffffffffffff", 15},
		{"base32 empty", encB32, "", -1},
		{"base32 too short", encB32, "7ZZZZZZZZZZZ", -1},
		{"base32 too long", encB32, "7ZZZZZZZZZZZZZ", -1},
		{"base32 U is not a digit", encB32, "1ASD13XH1F80U", 12},
		{"base32 hyphen", encB32, "1ASD-13XH1F80", 4},
		{"base32 check symbol", encB32, "1ASD13XH1F80*", 12},
		{"base32 above 2^63-1", encB32, "8000000000000", 12},
		{"base58 empty", encB58, "", -1},
		{"base58 too long", encB58, "111111111112", -1},
		{"base58 zero is not a digit", encB58, "0aaW4SzAyQK", 0},
		{"base58 l is not a digit", encB58, "4aaW4SzAyQl", 10},
		{"base58 above 2^63-1", encB58, "NQm6nKp8qFD", 10},
		{"base58 largest 11 digits", encB58, "zzzzzzzzzzz", 10},
		{"base62 empty", encB62, "", -1},
		{"base62 too short", encB62, "1ptWyK4WgZ", -1},
		{"base62 dash", encB62, "1ptWyK4WgZ-", 10},
		{"base62 above 2^63-1", encB62, "AzL8n0Y58m8", 10},
		{"base64 empty", encB64, "", -1},
		{"base64 padding", encB64, "FWWhH2IXoAA=", -1},
		{"base64 standard alphabet", encB64, "FWWhH2IXo+A", 9},
		{"base64 top bit set", encB64, "gAAAAAAAAAA", 0},
		{"base64 negative one", encB64, "__________8", 0},
		{"base64 bits beyond 64", encB64, "AAAAAAAAAAB", 10},
		{"non-ASCII", encB62, "1ptWyK4Wgé", 9},
		{"non-ASCII too short", encB62, "1ptWyK4Wé", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := tc.enc.Parse(tc.in)
			require.ErrorIs(t, err, ringflake.ErrInvalidID, "parsed as %d", id)
			var se *ringflake.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.in, se.Input)
			assert.Equal(t, tc.offset, se.Offset, se.Reason)
			assert.NotEmpty(t, se.Reason)
			assert.Zero(t, id)
		})
	}
}

func TestEncodingsNegativeIDs(t *testing.T) {
	for _, enc := range ringflake.Encodings() {
		t.Run(enc.String(), func(t *testing.T) {
			for _, id := range []ringflake.ID{-1, math.MinInt64, -1541815603606036480} {
				s := enc.Format(id)
				if enc.Width() > 0 {
					assert.Len(t, s, enc.Width())
				}
				_, err := enc.Parse(s)
				require.ErrorIs(t, err, ringflake.ErrInvalidID, "Parse(%q)", s)
			}
		})
	}
}

func TestParseEncoding(t *testing.T) {
	names := []string{"dec", "hex", "base32", "base58", "base62", "base64"}
	var got []string
	for _, enc := range ringflake.Encodings() {
		got = append(got, enc.String())
		back, err := ringflake.ParseEncoding(enc.String())
		require.NoError(t, err)
		assert.Equal(t, enc, back)
	}
	assert.Equal(t, names, got)
	assert.Equal(t, ringflake.DecimalEncoding(), ringflake.Encoding{}, "the zero Encoding is decimal")

	for _, bad := range []string{"", "decimal", "HEX", "base36", "crockford", "dec "} {
		enc, err := ringflake.ParseEncoding(bad)
		require.ErrorIs(t, err, ringflake.ErrInvalidEncoding, bad)
		var ee *ringflake.EncodingError
		require.ErrorAs(t, err, &ee, bad)
		assert.Equal(t, bad, ee.Name, "the error carries the name as given")
		assert.Equal(t, ringflake.Encoding{}, enc)
	}
}

func TestEncodingText(t *testing.T) {
	for _, enc := range ringflake.Encodings() {
		b, err := enc.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, enc.String(), string(b))
		var back ringflake.Encoding
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, enc, back)
	}

	enc := encB58
	err := enc.UnmarshalText([]byte("base36"))
	require.ErrorIs(t, err, ringflake.ErrInvalidEncoding)
	var ee *ringflake.EncodingError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "base36", ee.Name)
	assert.Equal(t, encB58, enc, "a failed UnmarshalText leaves the Encoding alone")
}

// An Encoding in a configuration struct reads and writes its name, and an
// unset one is decimal.
func TestEncodingInJSONConfig(t *testing.T) {
	type config struct {
		Format ringflake.Encoding `json:"format"`
	}
	var c config
	require.NoError(t, json.Unmarshal([]byte(`{"format":"base62"}`), &c))
	assert.Equal(t, encB62, c.Format)

	b, err := json.Marshal(config{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":"dec"}`, string(b), "the zero Encoding is decimal")

	var unset config
	require.NoError(t, json.Unmarshal([]byte(`{}`), &unset))
	assert.Equal(t, encDec, unset.Format)

	require.ErrorIs(t, json.Unmarshal([]byte(`{"format":"base36"}`), &c), ringflake.ErrInvalidEncoding)
	require.Error(t, json.Unmarshal([]byte(`{"format":58}`), &c), "a name is a JSON string")
	assert.Equal(t, encB62, c.Format)
}

// With flag.TextVar an Encoding is a command-line flag.
func TestEncodingAsFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want ringflake.Encoding
	}{
		{"default", nil, encHex},
		{"set", []string{"-format", "base32"}, encB32},
		{"set to decimal", []string{"-format=dec"}, encDec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			var enc ringflake.Encoding
			fs.TextVar(&enc, "format", encHex, "ID encoding")
			require.NoError(t, fs.Parse(tc.args))
			assert.Equal(t, tc.want, enc)
			assert.Equal(t, "hex", fs.Lookup("format").DefValue)
		})
	}

	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var enc ringflake.Encoding
	fs.TextVar(&enc, "format", encHex, "ID encoding")
	// flag.FlagSet.Parse formats the error of UnmarshalText with %v, so
	// only the failure can be checked.
	require.Error(t, fs.Parse([]string{"-format", "base36"}))
	assert.Equal(t, encHex, enc)
}

func TestEncodingsWidthAndSortable(t *testing.T) {
	for _, tc := range []struct {
		enc      ringflake.Encoding
		width    int
		sortable bool
	}{
		{encDec, 0, false}, {encHex, 16, true}, {encB32, 13, true},
		{encB58, 11, true}, {encB62, 11, true}, {encB64, 11, false},
	} {
		assert.Equal(t, tc.width, tc.enc.Width(), tc.enc.String())
		assert.Equal(t, tc.sortable, tc.enc.Sortable(), tc.enc.String())
	}
}

// The documented allocation counts, for every edge ID: Append (every
// encoding) and AppendText into a buffer with room, and every successful
// Parse, allocate nothing; Format allocates its string, and decimal Format
// not even that for IDs below 100 (strconv keeps those).
func TestEncodingsAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	for _, enc := range ringflake.Encodings() {
		t.Run(enc.String(), func(t *testing.T) {
			for _, id := range edgeIDs() {
				var s string
				formatAllocs := testing.AllocsPerRun(10, func() { s = enc.Format(id) })
				if enc == encDec && id < 100 {
					assert.Zero(t, formatAllocs, "Format(%d)", id)
				} else {
					assert.Equal(t, 1.0, formatAllocs, "Format(%d)", id)
				}
				assert.Zero(t, testing.AllocsPerRun(10, func() { buf = enc.Append(buf[:0], id) }), "Append(%d)", id)
				assert.Equal(t, s, string(buf))
				var back ringflake.ID
				var err error
				assert.Zero(t, testing.AllocsPerRun(10, func() { back, err = enc.Parse(s) }), "Parse(%q)", s)
				require.NoError(t, err)
				assert.Equal(t, id, back)
			}
		})
	}
	t.Run("ID", func(t *testing.T) {
		for _, id := range edgeIDs() {
			var err error
			assert.Zero(t, testing.AllocsPerRun(10, func() { buf, err = id.AppendText(buf[:0]) }), "AppendText(%d)", id)
			require.NoError(t, err)
			s := string(buf)
			var back ringflake.ID
			assert.Zero(t, testing.AllocsPerRun(10, func() { back, err = ringflake.Parse(s) }), "Parse(%q)", s)
			require.NoError(t, err)
			assert.Equal(t, id, back)
			assert.Zero(t, testing.AllocsPerRun(10, func() { err = back.UnmarshalText(buf) }), "UnmarshalText(%q)", s)
			require.NoError(t, err)
			assert.Zero(t, testing.AllocsPerRun(10, func() { err = back.UnmarshalJSON(buf) }), "UnmarshalJSON(%s)", s)
			require.NoError(t, err)
			quoted := []byte(`"` + s + `"`)
			assert.Zero(t, testing.AllocsPerRun(10, func() { err = back.UnmarshalJSON(quoted) }), "UnmarshalJSON(%s)", quoted)
			require.NoError(t, err)
			assert.Equal(t, id, back)
		}
	})
}

func BenchmarkEncodings(b *testing.B) {
	id := ringflake.ID(1541815603606036480)
	for _, enc := range ringflake.Encodings() {
		s := enc.Format(id)
		b.Run(enc.String()+"/Append", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 32)
			for b.Loop() {
				buf = enc.Append(buf[:0], id)
			}
		})
		b.Run(enc.String()+"/Parse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enc.Parse(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
