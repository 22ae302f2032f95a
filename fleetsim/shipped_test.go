package fleetsim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShippedScenarios replays every fleet scenario under scenarios/fleet:
// each passes, twice with the same bytes; and each breaks, with the bug it
// guards against injected, the property it is about.
func TestShippedScenarios(t *testing.T) {
	guards := map[string]struct {
		f     faults
		broke string
	}{
		"data-loss":             {faults{noQuiet: true}, "overlaps"},
		"failover-lost-writes":  {faults{noQuiet: true}, "overlaps"},
		"paused-past-ttl":       {faults{noHeld: true}, "overlaps"},
		"partition":             {faults{noObserve: true}, "causal_violations"},
		"skewed-message-chains": {faults{noObserve: true}, "causal_violations"},
		"late-save":             {faults{blindSaves: true}, "mark_regressions"},
		"issue-example":         {faults{noObserve: true}, "causal_violations"},
		"mark-file-crash":       {faults{unsyncedMarks: true}, "duplicates"},
	}
	files, err := filepath.Glob("../scenarios/fleet/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 6)
	for _, f := range files {
		s, err := ReadFile(f)
		require.NoError(t, err)
		t.Run(s.Name, func(t *testing.T) {
			r, err := Run(context.Background(), s)
			require.NoError(t, err)
			assert.True(t, r.OK(), "%s", r)
			again, err := Run(context.Background(), s)
			require.NoError(t, err)
			assert.Equal(t, r.String(), again.String())
			g, ok := guards[s.Name]
			require.True(t, ok, "every shipped scenario names the bug it guards against")
			bad, err := run(context.Background(), s, options{faults: g.f})
			require.NoError(t, err)
			assert.Positive(t, bad.Count(g.broke), "with the bug injected: %s", bad)
		})
	}
}
