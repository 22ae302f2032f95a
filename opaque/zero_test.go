package opaque_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/internal/zerotest"
	"github.com/ringflake/ringflake/opaque"
)

// TestZeroValuesDoNotPanic calls the methods of the package's zero values
// with zero arguments (Key.Format, a fmt.Formatter called by package fmt
// with its own fmt.State, excepted): the zero Codec, which has no keys,
// returns errors matching ErrUnknownVersion instead of panicking.
func TestZeroValuesDoNotPanic(t *testing.T) {
	zerotest.Methods(t, []string{"opaque.Key.Format", "*opaque.Key.Format"},
		&opaque.Codec{}, &opaque.DecodeError{}, &opaque.Key{}, &opaque.KeyError{}, &opaque.Keys{}, &opaque.Text{}, opaque.Text{})
	var c opaque.Codec
	_, err := c.Encode(1)
	require.ErrorIs(t, err, opaque.ErrUnknownVersion)
	_, err = c.Decode(1)
	require.ErrorIs(t, err, opaque.ErrUnknownVersion)
	_, err = c.Format(1)
	require.ErrorIs(t, err, opaque.ErrUnknownVersion)
	_, err = c.EncodeVersion(0, 1)
	require.ErrorIs(t, err, opaque.ErrUnknownVersion)
	_, err = c.Parse("000000000000000000")
	require.Error(t, err)
}
