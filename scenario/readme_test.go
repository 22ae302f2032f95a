package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
)

// The replay page's (docs/replay.md) words for whether a strategy keeps issuing IDs through a
// scenario.
const (
	keepsIssuing = "keeps issuing" // no call fails
	failsCalls   = "fails calls"   // some calls return an error
)

// readmeRow is a row of the replay page's table of shipped scenarios.
type readmeRow struct {
	file   string          // the scenario's file under scenarios/
	models string          // what real event it models
	keeps  map[string]bool // per strategy: keeps issuing (no call fails)
}

// readmeTable parses the table of shipped scenarios in docs/replay.md's
// section "Replaying clock skew in CI": its strategies, in column order,
// and its rows. It fails the test on a table it cannot read, so that the
// page cannot drift from what the test checks.
func readmeTable(t *testing.T) (strats []string, rows []readmeRow) {
	t.Helper()
	data, err := os.ReadFile("../docs/replay.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Replaying clock skew in CI\n")
	require.True(t, ok, "docs/replay.md has the section")
	section, _, _ = strings.Cut(section, "\n## ")

	var header []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break // the end of the table
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case header == nil:
			require.Equal(t, []string{"scenario", "models"}, cells[:2], "the table's first columns: %s", line)
			header = cells
			strats = cells[2:]
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		require.Len(t, cells, len(header), "a cell per column: %s", line)
		name := strings.Trim(cells[0], "`")
		row := readmeRow{file: name + ".yaml", models: cells[1], keeps: map[string]bool{}}
		for i, cell := range cells[2:] {
			switch cell {
			case keepsIssuing:
				row.keeps[strats[i]] = true
			case failsCalls:
				row.keeps[strats[i]] = false
			default:
				t.Fatalf("docs/replay.md: %s, %s: %q is neither %q nor %q", name, strats[i], cell, keepsIssuing, failsCalls)
			}
		}
		rows = append(rows, row)
	}
	require.NotEmpty(t, rows, "the replay page's table of shipped scenarios")
	return strats, rows
}

// docs/replay.md's table covers every shipped scenario and every built-in
// strategy, once each, and only them.
func TestReadmeTableCoversTheShippedScenarios(t *testing.T) {
	strats, rows := readmeTable(t)
	var builtin []string
	for _, st := range scenario.Builtin() {
		builtin = append(builtin, st.String())
	}
	assert.Equal(t, builtin, strats, "a column per built-in strategy, in order")

	files, err := filepath.Glob("../scenarios/*.yaml")
	require.NoError(t, err)
	var shipped, listed []string
	for _, f := range files {
		shipped = append(shipped, filepath.Base(f))
	}
	for _, r := range rows {
		listed = append(listed, r.file)
		assert.NotEmpty(t, r.models, r.file)
	}
	assert.ElementsMatch(t, shipped, listed, "a row per file under scenarios/, and no other")
}
