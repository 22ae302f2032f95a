package scenario_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// docExample returns the example file of the package documentation: the
// indented block after "# The file format".
func docExample(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(src), "// # The file format\n")
	require.True(t, ok)
	var b strings.Builder
	for _, line := range strings.Split(rest, "\n") {
		text, indented := strings.CutPrefix(line, "//\t")
		switch {
		case indented:
			b.WriteString(text + "\n")
		case b.Len() > 0:
			return b.String()
		}
	}
	t.Fatal("no example in doc.go")
	return ""
}

// The example of the package documentation is a valid file that uses every
// field and every kind of event, and its expectations hold against every
// strategy.
func TestDocExample(t *testing.T) {
	src := docExample(t)
	s, err := scenario.Parse("doc.go example", []byte(src))
	require.NoError(t, err, src)
	assert.True(t, strings.HasPrefix(s.Comment, "A tour of the format"), s.Comment)
	assert.Equal(t, "tour", s.Name)

	kinds := map[scenario.Kind]bool{}
	for _, ev := range s.Events {
		kinds[ev.Kind] = true
	}
	for k := scenario.Step; k <= scenario.Restart; k++ {
		assert.True(t, kinds[k], "the example shows a %v", k)
	}
	for _, field := range []string{"name:", "layout:", "node:", "mark_ahead:", "goroutines:", "bursts:", "over:", "seed:", "expect:", "all:"} {
		assert.Contains(t, src, field)
	}

	list := scenario.Builtin()
	for _, name := range s.ExpectedStrategies() {
		st, err := strategies.Parse(name)
		require.NoError(t, err)
		list = append(list, st)
	}
	for _, st := range list {
		r := replay(t, s, st)
		assert.True(t, r.OK(), "%s: %v", st, r.Problems())
		assert.Zero(t, r.Duplicates)
		require.Len(t, r.Restarts, 1, "the crash")
	}
}
