package fleetsim

import (
	"context"
	"strings"
	"testing"
	"time"

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

// Regression files: scenarios the search found, each passing since the
// simulator's fix its comment names.
func TestRegressionFiles(t *testing.T) {
	for _, f := range []string{"testdata/loss-during-quiet.yaml"} {
		s, err := ReadFile(f)
		require.NoError(t, err)
		r, err := Run(context.Background(), s)
		require.NoError(t, err)
		require.True(t, r.OK(), "%s", r)
	}
}

// A node's clock follows a recording: its events become the node's.
func TestClockFollowsARecording(t *testing.T) {
	s, err := ReadFile("testdata/follows-recording.yaml")
	require.NoError(t, err)
	require.Len(t, s.Events, 3)
	for _, e := range s.Events {
		require.Equal(t, 1, e.Node)
	}
	require.Equal(t, Step, s.Events[0].Kind)
	require.Equal(t, -150*time.Millisecond, s.Events[0].D)
	r, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.True(t, r.OK(), "%s", r)
	_, err = Parse("x.yaml", []byte("start: 2026-11-27T12:00:00Z\nduration: 1s\nfleet: {nodes: 1, server: {kind: redis}, strategy: error, clocks: {0: missing.yaml}}\n"))
	require.ErrorIs(t, err, ErrInvalid)
}

// Sampling lanes for a plot changes nothing the run does: the same trace
// hash; the plot has a lane per node.
func TestLanes(t *testing.T) {
	s, err := ReadFile("testdata/issue.yaml")
	require.NoError(t, err)
	plain, err := Run(context.Background(), s)
	require.NoError(t, err)
	r, err := Run(context.Background(), s, WithLanes())
	require.NoError(t, err)
	require.Equal(t, plain.TraceHash, r.TraceHash)
	require.Len(t, r.Lanes, 3)
	var b strings.Builder
	require.NoError(t, r.Plot(&b))
	require.Equal(t, 3, strings.Count(b.String(), ">node "))
	require.Error(t, plain.Plot(&b), "no lanes without WithLanes")
}

func TestIsFleet(t *testing.T) {
	require.True(t, IsFleet([]byte("start: 2026-11-27T12:00:00Z\nfleet:\n  nodes: 2\n")))
	require.False(t, IsFleet([]byte("start: 2026-11-27T12:00:00Z\nload: {rate: 1/ms}\n# fleet: not a key\n  fleet: nested\n")))
}
