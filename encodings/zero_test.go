package encodings_test

import (
	"testing"

	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/internal/zerotest"
)

// TestZeroValuesDoNotPanic calls the package's functions and the methods
// of its zero values with zero arguments: zero values or errors.
func TestZeroValuesDoNotPanic(t *testing.T) {
	zerotest.Call(t, "Parse", encodings.Parse)
	zerotest.Call(t, "All", encodings.All)
	zerotest.Methods(t, nil, encodings.Encoding{}, &encodings.Encoding{}, &encodings.NameError{})
	for _, e := range encodings.All() {
		zerotest.Methods(t, nil, e)
	}
}
