package ringflake_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ringflake.ID
	}{
		{"0", 0},
		{"42", 42},
		{"1541815603606036480", 1541815603606036480},
		{"9223372036854775807", math.MaxInt64},
		{"007", 7},
		{"0000000000000000007", 7},
		{"0009223372036854775", 9223372036854775},
	} {
		got, err := ringflake.Parse(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseIDRejects(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		offset   int
	}{
		{"empty", "", -1},
		{"sign", "-1", 0},
		{"plus", "+1", 0},
		{"space", " 1", 0},
		{"trailing space", "1 ", 1},
		{"letter", "12a4", 2},
		{"hex", "0x10", 1},
		{"too large by one", "9223372036854775808", 18},
		{"20 digits", "10000000000000000000", -1},
		{"far too large", "99999999999999999999999", -1},
		{"the largest ID with a leading zero", "09223372036854775807", -1},
		{"10001 zeros", strings.Repeat("0", 10001), -1},
		{"non-ASCII digit", "١٢", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ringflake.Parse(tc.in)
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
			var se *ringflake.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.offset, se.Offset)
			assert.Equal(t, tc.in, se.Input)
		})
	}
}

func TestIDText(t *testing.T) {
	id := ringflake.ID(1541815603606036480)
	assert.Equal(t, "1541815603606036480", id.String())

	b, err := id.MarshalText()
	require.NoError(t, err)
	var back ringflake.ID
	require.NoError(t, back.UnmarshalText(b))
	assert.Equal(t, id, back)

	buf := make([]byte, 0, 32)
	allocs := testing.AllocsPerRun(100, func() { buf, _ = id.AppendText(buf[:0]) })
	assert.Zero(t, allocs)
	assert.Equal(t, "1541815603606036480", string(buf))

	require.ErrorIs(t, back.UnmarshalText([]byte("x")), ringflake.ErrInvalidID)
}

func TestIDJSON(t *testing.T) {
	type doc struct {
		ID  ringflake.ID            `json:"id"`
		Map map[ringflake.ID]string `json:"map"`
	}
	in := doc{ID: math.MaxInt64, Map: map[ringflake.ID]string{7: "seven"}}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"9223372036854775807","map":{"7":"seven"}}`, string(b))

	var out doc
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)

	// A JSON number is accepted too, and null leaves the value alone.
	var n struct{ ID ringflake.ID }
	require.NoError(t, json.Unmarshal([]byte(`{"ID":1541815603606036480}`), &n))
	assert.Equal(t, ringflake.ID(1541815603606036480), n.ID)
	require.NoError(t, json.Unmarshal([]byte(`{"ID":null}`), &n))
	assert.Equal(t, ringflake.ID(1541815603606036480), n.ID)

	for _, bad := range []string{`{"ID":"12x"}`, `{"ID":1.5}`, `{"ID":-3}`, `{"ID":"9223372036854775808"}`, `{"ID":""}`, `{"ID":true}`} {
		err := json.Unmarshal([]byte(bad), &n)
		require.ErrorIs(t, err, ringflake.ErrInvalidID, bad)
	}
}

func TestIDJSONEscapedString(t *testing.T) {
	var n struct{ ID ringflake.ID }
	require.NoError(t, json.Unmarshal([]byte(`{"ID":"\u0031\u0035\u0034\u0031815603606036480"}`), &n))
	assert.Equal(t, ringflake.ID(1541815603606036480), n.ID)

	id := ringflake.ID(5)
	require.ErrorIs(t, id.UnmarshalJSON([]byte(`"\x"`)), ringflake.ErrInvalidID, "not JSON")
	require.ErrorIs(t, id.UnmarshalJSON([]byte(`"\u002D5"`)), ringflake.ErrInvalidID, "an escaped minus sign")
	assert.Equal(t, ringflake.ID(5), id)
}

// A negative ID is never valid: writing it as text, JSON or SQL fails
// rather than produce what the readers would reject.
func TestIDNegativeDoesNotMarshal(t *testing.T) {
	id := ringflake.ID(-5)
	for name, marshal := range map[string]func() error{
		"MarshalText": func() error { _, err := id.MarshalText(); return err },
		"AppendText":  func() error { _, err := id.AppendText(nil); return err },
		"MarshalJSON": func() error { _, err := id.MarshalJSON(); return err },
		"json.Marshal": func() error {
			_, err := json.Marshal(struct{ ID ringflake.ID }{id})
			return err
		},
	} {
		require.ErrorIs(t, marshal(), ringflake.ErrInvalidID, name)
	}
	// encoding/json flattens a map key's error into text, so only its
	// failure can be checked.
	_, err := json.Marshal(map[ringflake.ID]int{id: 1})
	require.Error(t, err)
	assert.Equal(t, "-5", id.String(), "String still shows it, for debugging")
}
