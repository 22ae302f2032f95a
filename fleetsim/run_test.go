package fleetsim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIssueScenario(t *testing.T) {
	s, err := ReadFile("testdata/issue.yaml")
	require.NoError(t, err)
	sim, r, err := runSim(context.Background(), s, options{})
	require.NoError(t, err)
	procs := 0
	for _, inc := range sim.incs {
		for _, p := range inc.procs {
			require.True(t, p.ended, "every proc ran to its end: no goroutine is left behind")
			procs++
		}
	}
	require.Greater(t, procs, 10)
	t.Log(r)
	r2, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, r.String(), r2.String())
	require.True(t, r.OK(), "%s", r)
}
