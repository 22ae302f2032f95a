package fleetsim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIssueScenario(t *testing.T) {
	s, err := ReadFile("testdata/issue.yaml")
	require.NoError(t, err)
	r, err := Run(context.Background(), s)
	require.NoError(t, err)
	t.Log(r)
	r2, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, r.String(), r2.String())
	require.True(t, r.OK(), "%s", r)
}
