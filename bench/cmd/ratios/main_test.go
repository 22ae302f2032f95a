package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunPrintsOneLinePerTarget(t *testing.T) {
	in := strings.NewReader(`BenchmarkSeq/ringflake-wide-2 100 36.0 ns/op 0 B/op 0 allocs/op
BenchmarkSeq/bwmarrin-wide-2 100 35.0 ns/op 0 B/op 0 allocs/op
BenchmarkSeq/ringflake-logical-2 100 40.0 ns/op 0 B/op 0 allocs/op
BenchmarkSeq/xid-2 100 70.0 ns/op 0 B/op 0 allocs/op
`)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(nil, in, &out, &errOut), errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, len(targets)+1)
	assert.Equal(t, "uncapped, sequential: ringflake-wide/bwmarrin-wide = 1.03 (target <= 1.1): met", lines[0])
	assert.Equal(t, "logical vs xid, sequential: ringflake-logical/xid = 0.57 (1.75x faster; target <= 0.556, i.e. >= 1.8x faster): MISSED", lines[2])
	assert.Contains(t, lines[1], "n/a", "no parallel rows in the input")
	assert.Equal(t, "allocations: 0 allocs/op in all 2 ringflake rows (target 0): met", lines[len(lines)-1])
}

func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"-h"}, strings.NewReader(""), &out, &errOut))
	assert.Equal(t, 1, run([]string{"/no/such/file"}, strings.NewReader(""), &out, &errOut))
}
