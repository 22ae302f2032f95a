package hostlocal

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// FuzzMarkFile: any content of a mark file either reads as a mark that
// writes and reads back equal, or is an ErrMarkCorrupt — never a silent
// "no mark"; a mark's since is never after its limit. It fuzzes the file format in memory: a file per input costs a
// hundred times the parse, and the file store's own I/O is covered by
// mark_test.go.
func FuzzMarkFile(f *testing.F) {
	f.Add("ringflake-mark v1 2026-11-22T12:00:00Z crc32=00000000\n")
	f.Add("")
	f.Add("ringflake-mark v1 \n")
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f.Add(formatMarkFile(ringflake.Mark{Limit: at, Since: at.Add(-time.Second), Node: 3, Layout: "twitter"}))
	f.Add(formatMarkFile(ringflake.Mark{Node: 3, Layout: "sonyflake"}))
	f.Fuzz(func(t *testing.T, content string) {
		mark, err := parseMarkFile("mark", content)
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrMarkCorrupt)
			return
		}
		back, err := parseMarkFile("mark", formatMarkFile(mark))
		require.NoError(t, err)
		assert.True(t, mark.Limit.Equal(back.Limit) && mark.Since.Equal(back.Since), "%v reads back as %v", mark, back)
		assert.Equal(t, mark.Node, back.Node)
		assert.Equal(t, mark.Layout, back.Layout)
		assert.False(t, mark.Since.After(mark.Limit), "since is never after the limit")
	})
}
