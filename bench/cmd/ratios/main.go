// Command ratios reads go test -bench output of the bench module (files,
// or standard input) and prints one line per benchmark target of
// BENCHMARKS.md: the median ns/op of a ringflake row over a peer's, and
// whether the target is met. scripts/bench.sh runs it.
//
//	go run ./cmd/ratios bench.txt
//
// With -cores it prints instead the many-core table of BENCHMARKS.md: the
// median ns/op of every BenchmarkPar row per GOMAXPROCS, from runs with
// -cpu 1,2,4,8,16.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ringflake/ringflake/bench/ratios"
)

// targets are the benchmark targets of BENCHMARKS.md (issues 4, 11 and 33).
var targets = []ratios.Target{
	{What: "uncapped, sequential", Ours: "Seq/ringflake-wide", Peer: "Seq/bwmarrin-wide", Max: 1.10},
	{What: "uncapped, parallel", Ours: "Par/ringflake-wide", Peer: "Par/bwmarrin-wide", Max: 1.00},
	{What: "logical vs xid, sequential", Ours: "Seq/ringflake-logical", Peer: "Seq/xid", Max: 1 / 1.8, Speed: true},
	{What: "logical vs UUIDv7, sequential", Ours: "Seq/ringflake-logical", Peer: "Seq/uuidv7", Max: 1 / 5.0, Speed: true},
	{What: "ring path during a rollback, sequential", Ours: "Seq/ringflake-rollback-ring", Peer: "Seq/ringflake-rollback-normal", Max: 2},
	{What: "ring path during a rollback, parallel", Ours: "Par/ringflake-rollback-ring", Peer: "Par/ringflake-rollback-normal", Max: 2},
	{What: "NextN of 256 against Next, per ID, sequential", Ours: "Batch/seq/ringflake-nextn-256", Peer: "Batch/seq/ringflake-next", Max: 0.25, Speed: true},
	{What: "NextN of 256 against Next, per ID, parallel", Ours: "Batch/par/ringflake-nextn-256", Peer: "Batch/par/ringflake-next", Max: 0.25, Speed: true},
	{What: "NextN of 256 against xid, per ID", Ours: "Batch/seq/ringflake-nextn-256", Peer: "Batch/seq/xid", Max: 1, Speed: true},
	{What: "NextN of 256 against UUIDv7, per ID", Ours: "Batch/seq/ringflake-nextn-256", Peer: "Batch/seq/uuidv7", Max: 1, Speed: true},
	{What: "Next against one monotonic clock read, sequential", Ours: "Seq/ringflake-wide", Peer: "Seq/time-since", Max: 1.25},
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var in []io.Reader
	cores := false
	if len(args) > 0 && args[0] == "-cores" {
		cores, args = true, args[1:]
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			fmt.Fprintln(stderr, "usage: ratios [-cores] [FILE...]  (go test -bench output; standard input without files)")
			return 2
		}
		f, err := os.Open(a)
		if err != nil {
			fmt.Fprintf(stderr, "ratios: %v\n", err)
			return 1
		}
		defer f.Close()
		in = append(in, f)
	}
	if len(in) == 0 {
		in = append(in, stdin)
	}
	if cores {
		c, err := ratios.ParseCores(io.MultiReader(in...), "Par/")
		if err != nil {
			fmt.Fprintf(stderr, "ratios: %v\n", err)
			return 1
		}
		c.Markdown(stdout)
		return 0
	}
	s, err := ratios.Parse(io.MultiReader(in...))
	if err != nil {
		fmt.Fprintf(stderr, "ratios: %v\n", err)
		return 1
	}
	for _, t := range targets {
		fmt.Fprintln(stdout, s.Check(t))
	}
	allocating, rows := s.Allocs("ringflake-")
	switch {
	case rows == 0:
		fmt.Fprintln(stdout, "allocations: no ringflake rows with allocs/op (run with -benchmem): MISSED")
	case len(allocating) == 0:
		fmt.Fprintf(stdout, "allocations: 0 allocs/op in all %d ringflake rows (target 0): met\n", rows)
	default:
		fmt.Fprintf(stdout, "allocations: %s allocate (target 0): MISSED\n", strings.Join(allocating, ", "))
	}
	return 0
}
