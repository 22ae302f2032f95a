package ringflake_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

func TestNodeSources(t *testing.T) {
	ctx := context.Background()
	twitter := ringflake.TwitterLayout()
	t.Setenv("RINGFLAKE_TEST_NODE", "17")
	t.Setenv("RINGFLAKE_TEST_NODE_BAD", "seventeen")
	t.Setenv("RINGFLAKE_TEST_NODE_BIG", "5000")
	t.Setenv("RINGFLAKE_TEST_NODE_EMPTY", " ")

	for _, tc := range []struct {
		name string
		src  ringflake.NodeSource
		want int64
		err  error
	}{
		{"static", ringflake.StaticNode(9), 9, nil},
		{"static out of range", ringflake.StaticNode(1024), 0, ringflake.ErrNodeOutOfRange},
		{"env", ringflake.EnvNode("RINGFLAKE_TEST_NODE"), 17, nil},
		{"env unset", ringflake.EnvNode("RINGFLAKE_TEST_NODE_UNSET"), 0, ringflake.ErrNodeUnavailable},
		{"env blank", ringflake.EnvNode("RINGFLAKE_TEST_NODE_EMPTY"), 0, ringflake.ErrNodeUnavailable},
		{"env not a number", ringflake.EnvNode("RINGFLAKE_TEST_NODE_BAD"), 0, ringflake.ErrNodeUnavailable},
		{"env out of range", ringflake.EnvNode("RINGFLAKE_TEST_NODE_BIG"), 0, ringflake.ErrNodeOutOfRange},
		{"statefulset ordinal", ringflake.OrdinalNode("ids-3"), 3, nil},
		{"statefulset FQDN", ringflake.OrdinalNode("id-gen-12.id-gen.prod.svc.cluster.local"), 12, nil},
		{"no ordinal", ringflake.OrdinalNode("ids"), 0, ringflake.ErrNodeUnavailable},
		{"trailing dash", ringflake.OrdinalNode("ids-"), 0, ringflake.ErrNodeUnavailable},
		{"signed ordinal", ringflake.OrdinalNode("ids-+3"), 0, ringflake.ErrNodeUnavailable},
		{"ordinal out of range", ringflake.OrdinalNode("ids-1024"), 0, ringflake.ErrNodeOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.src.NodeID(ctx, twitter)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	// An empty host name means the machine's own.
	host, err := os.Hostname()
	require.NoError(t, err)
	wantN, wantErr := ringflake.OrdinalNode(host).NodeID(ctx, twitter)
	gotN, gotErr := ringflake.OrdinalNode("").NodeID(ctx, twitter)
	assert.Equal(t, wantN, gotN)
	assert.Equal(t, wantErr, gotErr)
}
