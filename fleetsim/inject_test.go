package fleetsim

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSearchFindsInjectedBugs injects each bug into the simulation and
// checks that the search over at most 200 seeds finds a violation, and
// shrinks it to at most 12 events: a scenario that fails with the bug and
// passes without it.
func TestSearchFindsInjectedBugs(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    faults
	}{
		{"late saves applied blindly", faults{blindSaves: true}},
		{"Held not checked", faults{noHeld: true}},
		{"no quiet period after data loss", faults{noQuiet: true}},
		{"Observe's floor ignored", faults{noObserve: true}},
		{"mark files not synced", faults{unsyncedMarks: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := search(context.Background(), 1, 200, tc.f, nil)
			require.NoError(t, err)
			require.NotNil(t, f, "no violation in 200 seeds")
			var b bytes.Buffer
			_, _ = f.Shrunk.WriteTo(&b)
			t.Logf("seed %d: %s; shrunk in %d runs to %d events:\n%s%s", f.Seed, f.Report.Violations[0], f.Runs, len(f.Shrunk.Events), b.String(), f.SReport)
			require.LessOrEqual(t, len(f.Shrunk.Events), 12)
			// The shrunk file reproduces it, and only with the bug.
			back, err := Parse("shrunk.yaml", b.Bytes())
			require.NoError(t, err)
			r, err := run(context.Background(), back, options{faults: tc.f})
			require.NoError(t, err)
			require.False(t, r.OK())
			r, err = Run(context.Background(), back)
			require.NoError(t, err)
			require.True(t, r.OK(), "%s", r)
		})
	}
}
