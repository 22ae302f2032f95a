package layoutplan_test

import (
	"testing"

	"github.com/ringflake/ringflake/internal/zerotest"
	"github.com/ringflake/ringflake/layoutplan"
)

// TestZeroValuesDoNotPanic calls the package's functions and the methods
// of its zero values with zero arguments: zero values or errors.
func TestZeroValuesDoNotPanic(t *testing.T) {
	for name, f := range map[string]any{
		"Capacity": layoutplan.Capacity, "CheckMigration": layoutplan.CheckMigration, "Fits": layoutplan.Fits,
	} {
		zerotest.Call(t, name, f)
	}
	zerotest.Methods(t, nil, layoutplan.Demand{}, layoutplan.Fit{}, layoutplan.Migration{}, layoutplan.Shortfall{},
		&layoutplan.DemandError{}, &layoutplan.NoFitError{})
}
