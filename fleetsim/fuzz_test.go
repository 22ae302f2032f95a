package fleetsim

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzFleet drives the search's generator of fleets: every drawn scenario
// runs without breaking a property, twice with the same report, and its
// file reads back as the same scenario.
func FuzzFleet(f *testing.F) {
	for _, seed := range []uint64{1, 18, 42, 82} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		s := Draw(seed)
		// Keep each run short: the fuzzer's worth is many schedules.
		s.Duration = min(s.Duration, 12e9)
		for i := 0; i < len(s.Events); i++ {
			if s.Events[i].At > s.Duration {
				s.Events = append(s.Events[:i], s.Events[i+1:]...)
				i--
			}
		}
		r, err := Run(context.Background(), s)
		require.NoError(t, err)
		require.True(t, r.OK(), "%s", r)
		again, err := Run(context.Background(), s)
		require.NoError(t, err)
		require.Equal(t, r.String(), again.String())
		var b bytes.Buffer
		_, err = s.WriteTo(&b)
		require.NoError(t, err)
		back, err := Parse("drawn.yaml", b.Bytes())
		require.NoError(t, err)
		var b2 bytes.Buffer
		_, _ = back.WriteTo(&b2)
		require.Equal(t, b.String(), b2.String())
	})
}
