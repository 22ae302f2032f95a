package ringflake_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// markFileText is the content of a mark file holding text (a v2 mark's
// text, or a v1 bare time) under header.
func markFileText(header, text string) string {
	line := header + text
	return fmt.Sprintf("%s crc32=%08x\n", line, crc32.ChecksumIEEE([]byte(line)))
}

// A start that is refused — by New, or by the first call, after which the
// program closes the generator — leaves the mark file byte for byte: a
// wrong node id or layout must not stamp another node's mark, and a mark
// far ahead must not be rewritten as this node's.
func TestRefusedStartLeavesTheMarkFile(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	errorStrategy, err := strategies.Parse("error")
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		content string
		newErr  error // what New refuses the mark with, or nil
		nextErr error // what the first call fails with, when New takes the mark
	}{
		{
			name:    "a v1 mark far ahead",
			content: markFileText("ringflake-mark v1 ", "2070-01-01T00:00:00Z"),
			nextErr: ringflake.ErrClockRollback,
		},
		{
			name:    "a v2 mark of this node far ahead",
			content: markFileText("ringflake-mark v2 ", "limit=2070-01-01T00:00:00Z since=2070-01-01T00:00:00Z node=3 layout=twitter"),
			nextErr: ringflake.ErrClockRollback,
		},
		{
			name:    "a mark of another node",
			content: markFileText("ringflake-mark v2 ", "limit=2026-11-26T11:00:00Z since=2026-11-26T11:00:00Z node=4 layout=twitter"),
			newErr:  ringflake.ErrMarkMismatch,
		},
		{
			name:    "a mark of another layout",
			content: markFileText("ringflake-mark v2 ", "limit=2026-11-26T11:00:00Z since=2026-11-26T11:00:00Z node=3 layout=sonyflake"),
			newErr:  ringflake.ErrMarkMismatch,
		},
		{
			name:    "a mark past the layout's end",
			content: markFileText("ringflake-mark v2 ", "limit=2090-01-01T00:00:00Z since=2090-01-01T00:00:00Z node=3 layout=twitter"),
			newErr:  ringflake.ErrLayoutExpired,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "node.mark")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			g, err := ringflake.New(3, ringflake.WithClock(simclock.New(now)), ringflake.WithStrategy(errorStrategy),
				ringflake.WithMarkStore(hostlocal.NewMarkFile(path)))
			if tc.newErr != nil {
				require.ErrorIs(t, err, tc.newErr)
			} else {
				require.NoError(t, err)
				_, err = g.Next()
				require.ErrorIs(t, err, tc.nextErr)
				require.NoError(t, g.Close(ctx))
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.content, string(after), "the mark file is left byte for byte")
		})
	}
}

// A run that issues IDs past the previous run's mark still saves the exact
// mark at Close, as before.
func TestCloseSavesTheExactMarkAfterIssuing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "node.mark")
	content := markFileText("ringflake-mark v2 ", "limit=2026-11-26T11:00:00Z since=2026-11-26T11:00:00Z node=3 layout=twitter")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	g, err := ringflake.New(3, ringflake.WithClock(simclock.New(now)), ringflake.WithMarkStore(hostlocal.NewMarkFile(path)))
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	require.NoError(t, g.Close(ctx))
	m, err := hostlocal.NewMarkFile(path).LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, m.Limit.Equal(id.Time(g.Layout())), "the exact mark: the newest ID's tick")
}
