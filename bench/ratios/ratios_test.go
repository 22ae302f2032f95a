package ratios_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/bench/ratios"
)

const output = `goos: linux
goarch: amd64
pkg: github.com/ringflake/ringflake/bench
cpu: AMD EPYC
BenchmarkSeq/ringflake-wide-2    	30000000	        37.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSeq/bwmarrin-wide-2     	30000000	        35.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSeq/ringflake-wide-2    	30000000	        38.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSeq/bwmarrin-wide-2     	30000000	        36.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSeq/ringflake-wide-2    	30000000	        90.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSeq/bwmarrin-wide-2     	30000000	        34.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkSeq/ringflake-rollback-ring-2	20000000	  41.00 ns/op	   1.000 ring-IDs/op	       0 B/op	       0 allocs/op
BenchmarkSeq/uuidv7-2            	 6000000	       190.0 ns/op	      16 B/op	       1 allocs/op
BenchmarkSeq/ringflake-logical-2 	30000000	        40.00 ns/op	      16 B/op	       1 allocs/op
PASS
ok  	github.com/ringflake/ringflake/bench	12.3s
`

func TestParseAndMedians(t *testing.T) {
	s, err := ratios.Parse(strings.NewReader(output))
	require.NoError(t, err)

	m, n := s.Median("Seq/ringflake-wide", "ns/op")
	assert.Equal(t, 3, n)
	assert.Equal(t, 38.0, m, "the median ignores the noisy 90 ns sample")
	m, n = s.Median("Seq/ringflake-rollback-ring", "ring-IDs/op")
	assert.Equal(t, 1, n)
	assert.Equal(t, 1.0, m, "custom metrics are read too")

	s2, err := ratios.Parse(strings.NewReader("BenchmarkX-8 10 1 ns/op\nBenchmarkX-8 10 4 ns/op\n"))
	require.NoError(t, err)
	m, _ = s2.Median("X", "ns/op")
	assert.Equal(t, 2.5, m, "an even count takes the mean of the middle two")

	m, n = s.Median("Seq/none", "ns/op")
	assert.True(t, math.IsNaN(m))
	assert.Zero(t, n)
}

func TestParseRejectsBrokenResultLines(t *testing.T) {
	_, err := ratios.Parse(strings.NewReader("BenchmarkX-2 10 1.5 ns/op 3\n"))
	require.Error(t, err)
	_, err = ratios.Parse(strings.NewReader("BenchmarkX-2 10 fast ns/op\n"))
	require.Error(t, err)
}

func TestCheck(t *testing.T) {
	s, err := ratios.Parse(strings.NewReader(output))
	require.NoError(t, err)

	l := s.Check(ratios.Target{What: "uncapped", Ours: "Seq/ringflake-wide", Peer: "Seq/bwmarrin-wide", Max: 1.10})
	assert.InDelta(t, 38.0/35.0, l.Ratio, 1e-12)
	assert.True(t, l.Met)
	assert.Equal(t, "uncapped: ringflake-wide/bwmarrin-wide = 1.09 (target <= 1.1): met", l.String())

	l = s.Check(ratios.Target{What: "uncapped", Ours: "Seq/ringflake-wide", Peer: "Seq/bwmarrin-wide", Max: 1.08})
	assert.False(t, l.Met, "the ratio is checked unrounded: 1.0857 > 1.08")
	assert.Equal(t, "uncapped: ringflake-wide/bwmarrin-wide = 1.09 (target <= 1.08): MISSED", l.String())

	l = s.Check(ratios.Target{What: "logical vs UUIDv7", Ours: "Seq/ringflake-logical", Peer: "Seq/uuidv7", Max: 1 / 5.0, Speed: true})
	assert.InDelta(t, 40.0/190.0, l.Ratio, 1e-12)
	assert.False(t, l.Met)
	assert.Equal(t, "logical vs UUIDv7: ringflake-logical/uuidv7 = 0.21 (4.75x faster; target <= 0.2, i.e. >= 5x faster): MISSED", l.String())
	l = s.Check(ratios.Target{What: "logical vs UUIDv7", Ours: "Seq/ringflake-logical", Peer: "Seq/uuidv7", Max: 1 / 4.5, Speed: true})
	assert.True(t, l.Met)
	slower := ratios.Line{Target: l.Target, Ratio: 1.25}
	assert.Equal(t, "logical vs UUIDv7: ringflake-logical/uuidv7 = 1.25 (1.25x slower; target <= 0.222, i.e. >= 4.5x faster): MISSED", slower.String())

	l = s.Check(ratios.Target{What: "missing", Ours: "Par/ringflake-wide", Peer: "Seq/bwmarrin-wide", Max: 1})
	assert.False(t, l.Met)
	assert.Contains(t, l.String(), "n/a")
}

func TestAllocs(t *testing.T) {
	s, err := ratios.Parse(strings.NewReader(output))
	require.NoError(t, err)
	allocating, rows := s.Allocs("ringflake-")
	assert.Equal(t, 3, rows)
	assert.Equal(t, []string{"Seq/ringflake-logical"}, allocating)
}

func TestCoresTable(t *testing.T) {
	in := strings.NewReader(`BenchmarkPar/xid 100 80.0 ns/op
BenchmarkPar/ringflake-wide 100 50.0 ns/op
BenchmarkPar/xid-4 100 70.0 ns/op
BenchmarkPar/ringflake-wide-4 100 40.0 ns/op
BenchmarkPar/ringflake-wide-4 100 44.0 ns/op
BenchmarkPar/ringflake-wide-4 100 90.0 ns/op
BenchmarkSeq/xid-4 100 1.0 ns/op
`)
	c, err := ratios.ParseCores(in, "Par/")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 4}, c.Procs)
	assert.Equal(t, []string{"Par/xid", "Par/ringflake-wide"}, c.Names)
	m, n := c.Median("Par/ringflake-wide", 4)
	assert.Equal(t, 3, n)
	assert.InDelta(t, 44.0, m, 1e-9)
	var out strings.Builder
	c.Markdown(&out)
	assert.Equal(t, "| subject | 1 | 4 |\n|---|---:|---:|\n| xid | 80.0 | 70.0 |\n| ringflake-wide | 50.0 | 44.0 |\n", out.String())
}
