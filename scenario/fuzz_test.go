package scenario_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
)

// FuzzParse feeds arbitrary files to Parse. Whatever the input: nothing
// panics; a rejected file gives an *Error that matches ErrInvalid and names
// the file; an accepted one is valid, and writing it and reading it back
// gives the same scenario.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	require.NoError(f, err)
	for _, p := range files {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, src := range []string{
		full,
		stepBack,
		"start: 2026-11-22T12:00:00Z\nduration: 1ms\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1ms\nevents: [{at: 0s, restart: clean}]\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1s\nmark_ahead: 250ms\nevents: [{at: 10ms, restart: crash}, {at: 20ms, restart: true}]\n",
		"start: yesterday\n",
		"- a\n- b\n",
		"name: \"x: y\"\nstart: 2026-11-22T12:00:00+02:00\nduration: 1h0m0.5s\nnode: 3\nlayout: js-safe\n",
		"start: 2026-11-22T12:00:00Z\nduration: 1s\nexpect: {all: {errors: {rollback: \"<3\"}}}\n",
	} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.yaml", data)
		if err != nil {
			require.ErrorIs(t, err, scenario.ErrInvalid)
			var e *scenario.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "fuzz.yaml", e.File)
			assert.NotEmpty(t, e.Reason)
			return
		}
		require.NoError(t, s.Validate())
		var first bytes.Buffer
		_, err = s.WriteTo(&first)
		require.NoError(t, err)
		again, err := scenario.Parse("fuzz.yaml", first.Bytes())
		require.NoError(t, err, "what WriteTo writes reads back:\n%s", first.String())
		var second bytes.Buffer
		_, err = again.WriteTo(&second)
		require.NoError(t, err)
		require.Equal(t, first.String(), second.String())
		assert.Equal(t, s.Events, again.Events)
		assert.Equal(t, s.Load, again.Load)
		assert.Equal(t, s.MarkAhead, again.MarkAhead)
		assert.True(t, s.Start.Equal(again.Start))
		assert.True(t, s.Layout.Equal(again.Layout))
	})
}
