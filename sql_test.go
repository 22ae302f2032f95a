package ringflake_test

import (
	"database/sql"
	"database/sql/driver"
	"encoding"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

var (
	_ sql.Scanner   = (*ringflake.ID)(nil)
	_ driver.Valuer = ringflake.ID(0)
	_ sql.Scanner   = (*ringflake.NullID)(nil)
	_ driver.Valuer = ringflake.NullID{}

	_ json.Marshaler           = ringflake.NullID{}
	_ json.Unmarshaler         = (*ringflake.NullID)(nil)
	_ encoding.TextMarshaler   = ringflake.NullID{}
	_ encoding.TextUnmarshaler = (*ringflake.NullID)(nil)
)

func TestIDScan(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  any
		want ringflake.ID
	}{
		{"BIGINT", int64(1541815603606036480), 1541815603606036480},
		{"BIGINT zero", int64(0), 0},
		{"BIGINT largest", int64(math.MaxInt64), math.MaxInt64},
		{"unsigned", uint64(math.MaxInt64), math.MaxInt64},
		{"text as string", "1541815603606036480", 1541815603606036480},
		{"text as bytes", []byte("9223372036854775807"), math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var id ringflake.ID
			require.NoError(t, id.Scan(tc.src))
			assert.Equal(t, tc.want, id)

			var n ringflake.NullID
			require.NoError(t, n.Scan(tc.src))
			assert.Equal(t, ringflake.NullID{ID: tc.want, Valid: true}, n)
		})
	}
}

func TestIDScanRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  any
	}{
		{"NULL", nil},
		{"negative", int64(-1)},
		{"smallest int64", int64(math.MinInt64)},
		{"unsigned above 2^63-1", uint64(1 << 63)},
		{"malformed text", "12x"},
		{"negative text", []byte("-5")},
		{"empty text", ""},
		{"text above 2^63-1", "9223372036854775808"},
		{"float", 1.5},
		{"bool", true},
		{"time", time.Unix(0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := ringflake.ID(42)
			err := id.Scan(tc.src)
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
			assert.Equal(t, ringflake.ID(42), id, "a failed Scan leaves the ID alone")

			if tc.src == nil {
				return // NULL is fine for a NullID
			}
			n := ringflake.NullID{ID: 42, Valid: true}
			require.ErrorIs(t, n.Scan(tc.src), ringflake.ErrInvalidID)
			assert.Equal(t, ringflake.NullID{ID: 42, Valid: true}, n, "a failed Scan leaves the NullID alone")
		})
	}
}

func TestIDScanSyntaxError(t *testing.T) {
	var id ringflake.ID
	var se *ringflake.SyntaxError
	require.ErrorAs(t, id.Scan("12x"), &se)
	assert.Equal(t, "12x", se.Input)
	assert.Equal(t, 2, se.Offset)
	require.ErrorAs(t, id.Scan(int64(-7)), &se)
	assert.Equal(t, "-7", se.Input)
}

func TestNullIDScanNULL(t *testing.T) {
	n := ringflake.NullID{ID: 42, Valid: true}
	require.NoError(t, n.Scan(nil))
	assert.Equal(t, ringflake.NullID{}, n)
}

func TestIDValue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value driver.Valuer
		want  driver.Value
	}{
		{"ID", ringflake.ID(1541815603606036480), int64(1541815603606036480)},
		{"largest ID", ringflake.ID(math.MaxInt64), int64(math.MaxInt64)},
		{"zero ID", ringflake.ID(0), int64(0)},
		{"valid NullID", ringflake.NullID{ID: 7, Valid: true}, int64(7)},
		{"NULL", ringflake.NullID{}, nil},
		{"NULL with a stale ID", ringflake.NullID{ID: 7}, nil},
		{"NULL with a negative ID", ringflake.NullID{ID: -7}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.value.Value()
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
			assert.True(t, v == nil || driver.IsValue(v), "a driver.Value every driver accepts")
		})
	}
}

func TestIDValueRejectsNegative(t *testing.T) {
	for _, v := range []driver.Valuer{ringflake.ID(-1), ringflake.NullID{ID: -1, Valid: true}} {
		_, err := v.Value()
		require.ErrorIs(t, err, ringflake.ErrInvalidID)
	}
}

// Scan allocates nothing, whatever the column type.
func TestIDScanAllocs(t *testing.T) {
	for name, src := range map[string]any{
		"BIGINT":         int64(1541815603606036480),
		"text as bytes":  []byte("1541815603606036480"),
		"text as string": "1541815603606036480",
	} {
		var id ringflake.ID
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = id.Scan(src) }), name)
		assert.Equal(t, ringflake.ID(1541815603606036480), id, name)
	}
}

func TestNullIDJSON(t *testing.T) {
	type row struct {
		Parent ringflake.NullID `json:"parent"`
	}
	for _, tc := range []struct {
		name string
		in   ringflake.NullID
		json string
	}{
		{"valid", ringflake.NullID{ID: 1541815603606036480, Valid: true}, `{"parent":"1541815603606036480"}`},
		{"largest", ringflake.NullID{ID: math.MaxInt64, Valid: true}, `{"parent":"9223372036854775807"}`},
		{"zero ID", ringflake.NullID{ID: 0, Valid: true}, `{"parent":"0"}`},
		{"NULL", ringflake.NullID{}, `{"parent":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(row{tc.in})
			require.NoError(t, err)
			assert.JSONEq(t, tc.json, string(b))
			back := row{ringflake.NullID{ID: 42, Valid: true}}
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tc.in, back.Parent)
		})
	}
	t.Run("NULL with a stale or negative ID is still null", func(t *testing.T) {
		for _, n := range []ringflake.NullID{{ID: 7}, {ID: -7}} {
			b, err := json.Marshal(n)
			require.NoError(t, err)
			assert.Equal(t, "null", string(b))
		}
	})
}

func TestNullIDUnmarshalJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     ringflake.NullID
	}{
		{"string", `"4096"`, ringflake.NullID{ID: 4096, Valid: true}},
		{"number", `4096`, ringflake.NullID{ID: 4096, Valid: true}},
		{"escaped string", `"\u0034096"`, ringflake.NullID{ID: 4096, Valid: true}},
		{"null", `null`, ringflake.NullID{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ringflake.NullID{ID: 42, Valid: true}
			require.NoError(t, n.UnmarshalJSON([]byte(tc.in)))
			assert.Equal(t, tc.want, n)
		})
	}

	// A missing field leaves the NullID as it was: the zero NullID is NULL.
	var r struct{ Parent ringflake.NullID }
	require.NoError(t, json.Unmarshal([]byte(`{}`), &r))
	assert.Equal(t, ringflake.NullID{}, r.Parent)
}

func TestNullIDJSONRejects(t *testing.T) {
	for _, bad := range []string{`"12x"`, `1.5`, `-3`, `"-3"`, `"9223372036854775808"`, `""`, `"null"`, `true`, `{}`} {
		t.Run(bad, func(t *testing.T) {
			n := ringflake.NullID{ID: 42, Valid: true}
			require.ErrorIs(t, n.UnmarshalJSON([]byte(bad)), ringflake.ErrInvalidID)
			assert.Equal(t, ringflake.NullID{ID: 42, Valid: true}, n, "a failed UnmarshalJSON leaves the NullID alone")

			var r struct{ Parent ringflake.NullID }
			require.ErrorIs(t, json.Unmarshal([]byte(`{"Parent":`+bad+`}`), &r), ringflake.ErrInvalidID)
		})
	}
	_, err := json.Marshal(ringflake.NullID{ID: -1, Valid: true})
	require.ErrorIs(t, err, ringflake.ErrInvalidID, "a valid negative ID does not marshal")
}

func TestNullIDText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   ringflake.NullID
		text string
	}{
		{"valid", ringflake.NullID{ID: 1541815603606036480, Valid: true}, "1541815603606036480"},
		{"zero ID", ringflake.NullID{ID: 0, Valid: true}, "0"},
		{"NULL", ringflake.NullID{}, ""},
		{"NULL with a stale ID", ringflake.NullID{ID: 7}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.in.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, tc.text, string(b))
			back := ringflake.NullID{ID: 42, Valid: true}
			require.NoError(t, back.UnmarshalText(b))
			if tc.in.Valid {
				assert.Equal(t, tc.in, back)
			} else {
				assert.Equal(t, ringflake.NullID{}, back)
			}
		})
	}

	n := ringflake.NullID{ID: 42, Valid: true}
	for _, bad := range []string{"x", "null", "-1", " 1", "00000000000000000001"} {
		require.ErrorIs(t, n.UnmarshalText([]byte(bad)), ringflake.ErrInvalidID, bad)
	}
	assert.Equal(t, ringflake.NullID{ID: 42, Valid: true}, n, "a failed UnmarshalText leaves the NullID alone")
	_, err := ringflake.NullID{ID: -1, Valid: true}.MarshalText()
	require.ErrorIs(t, err, ringflake.ErrInvalidID)
}
