package simclock_test

import (
	"testing"

	"github.com/ringflake/ringflake/internal/zerotest"
	"github.com/ringflake/ringflake/simclock"
)

// TestZeroValuesDoNotPanic calls the methods of the package's zero values
// with zero arguments: none panics. The zero Clock panicked in Set.
func TestZeroValuesDoNotPanic(t *testing.T) {
	zerotest.Methods(t, nil,
		&simclock.Clock{}, simclock.Event{}, &simclock.EventError{}, simclock.Kind(0))
	zerotest.Call(t, "New", simclock.New)
}
