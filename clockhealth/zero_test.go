package clockhealth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/internal/zerotest"
)

// TestZeroValuesDoNotPanic calls the package's functions and the methods
// of its zero values with zero arguments: the zero Monitor, which has no
// source, panicked in Poll and Run.
func TestZeroValuesDoNotPanic(t *testing.T) {
	zerotest.Call(t, "StateChanged", clockhealth.StateChanged)
	zerotest.Methods(t, nil, clockhealth.ClockBound{}, &clockhealth.HealthError{}, clockhealth.Leap(0),
		&clockhealth.Monitor{}, clockhealth.Reading{}, clockhealth.Requirement{}, clockhealth.Status(0))
	var m clockhealth.Monitor
	_, err := m.Poll(context.Background())
	require.ErrorIs(t, err, clockhealth.ErrInvalidOption)
	require.ErrorIs(t, m.Run(context.Background()), clockhealth.ErrInvalidOption)
}
