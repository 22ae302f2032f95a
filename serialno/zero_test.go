package serialno_test

import (
	"testing"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/zerotest"
	"github.com/ringflake/ringflake/serialno"
)

// TestZeroValuesDoNotPanic calls the package's functions and the methods
// of its zero values with zero arguments: zero values or errors.
func TestZeroValuesDoNotPanic(t *testing.T) {
	zerotest.Call(t, "New", serialno.New)
	zerotest.Methods(t, nil, serialno.Format{}, &serialno.PatternError{})
	f, err := serialno.New("{time:20060102}{node:4}{seq:4}", ringflake.Layout{})
	if err == nil {
		zerotest.Methods(t, nil, f)
	}
}
