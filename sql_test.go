package ringflake_test

import (
	"database/sql"
	"database/sql/driver"
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
