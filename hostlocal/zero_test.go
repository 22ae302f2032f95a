package hostlocal_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/internal/zerotest"
)

// TestZeroValuesDoNotPanic calls the package's functions and the methods
// of its zero values with zero arguments: zero values or errors, and no
// file made anywhere (the zero values have no path).
func TestZeroValuesDoNotPanic(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	zerotest.Methods(t, nil, &hostlocal.MarkFile{}, hostlocal.NewMarkFile(""), &hostlocal.Node{}, &hostlocal.NodeError{})
	zerotest.Call(t, "NewMarkFile", hostlocal.NewMarkFile)
	ctx := context.Background()
	for _, s := range []*hostlocal.MarkFile{{}, hostlocal.NewMarkFile("")} {
		require.ErrorIs(t, s.Hold(ctx), hostlocal.ErrMarkFileUnusable)
		_, err := s.LoadMark(ctx)
		require.ErrorIs(t, err, hostlocal.ErrMarkFileUnusable)
		require.ErrorIs(t, s.SaveMark(ctx, ringflake.Mark{Limit: time.Unix(1e9, 0)}), hostlocal.ErrMarkFileUnusable)
		require.NoError(t, s.Release())
	}
	var n hostlocal.Node
	_, err := n.NodeID(ctx, ringflake.TwitterLayout())
	require.ErrorIs(t, err, ringflake.ErrNodeUnavailable)
	require.ErrorIs(t, n.Claim(ctx, ringflake.TwitterLayout(), 1), ringflake.ErrNodeUnavailable)
	require.NoError(t, n.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "files made by zero values")
}
