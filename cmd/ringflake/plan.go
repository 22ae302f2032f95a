package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
)

// plan prints the layouts that fit a demand, one layout string per line,
// best first, each followed by a tab and its headroom.
func plan(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: ringflake plan -nodes N -rate R/s -years Y [-unit U] [-epoch T]\n\n"+
			"Prints the 63-bit layouts that fit, best first: a layout string for gen -layout,\n"+
			"a tab, and the headroom of each.\n\n")
		fs.PrintDefaults()
	}
	nodes := fs.Int64("nodes", 0, "node ids in use at the same time (required)")
	rateFlag := fs.String("rate", "", "most IDs one node issues, per second (100000/s, or /ms, /min, /h; required)")
	years := fs.Float64("years", 0, "years the layout must last after its epoch (required)")
	unit := fs.Duration("unit", 0, "tick length, a whole number of ms (default: try 1ms, 10ms, 100ms and 1s)")
	epochFlag := fs.String("epoch", "", "epoch of the layouts, RFC 3339, or a date (2026-01-02: its start, in UTC) (default: the start of this year, UTC)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("plan takes no arguments, got %q", fs.Args())
	}
	// A flag that is missing is a usage error; one given a value Plan
	// refuses (-nodes 0) is Plan's to explain.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, name := range []string{"nodes", "rate", "years"} {
		if !given[name] {
			return usagef("plan needs -%s", name)
		}
	}
	rate, err := parseRate(*rateFlag)
	if err != nil {
		return err
	}
	d := layoutplan.Demand{Nodes: *nodes, Rate: rate, Years: *years, Unit: *unit}
	if *epochFlag != "" {
		if d.Epoch, err = parseDayOrTime("-epoch", *epochFlag, false); err != nil {
			return err
		}
	}
	fits, err := layoutplan.Fits(d)
	if errors.Is(err, layoutplan.ErrInvalidDemand) || errors.Is(err, ringflake.ErrInvalidLayout) {
		return badValuef("%v", err) // the demand as given makes no sense
	}
	if err != nil {
		return err // no layout fits: the message says which bits are short
	}
	for _, f := range fits {
		l := f.Layout
		end := l.Last().Add(l.Spec().Unit)
		if _, err := fmt.Fprintf(stdout, "%s\theadroom ×%s: %d nodes (×%s), %s IDs/s per node (×%s), lasts to %s (×%s)\n",
			l, ratio(f.Headroom()), l.MaxNode()+1, ratio(f.Nodes), strconv.FormatFloat(layoutplan.Capacity(l), 'f', -1, 64),
			ratio(f.Rate), end.UTC().Format(time.DateOnly), ratio(f.Years)); err != nil {
			return err
		}
	}
	return nil
}

// ratio formats a headroom with three significant digits.
func ratio(r float64) string { return strconv.FormatFloat(r, 'g', 3, 64) }

// parseRate reads a rate: a number of IDs, optionally per s, ms, min or h
// (per second when bare), and returns it per second.
func parseRate(s string) (float64, error) {
	num, per, _ := strings.Cut(s, "/")
	scale := map[string]float64{"": 1, "s": 1, "ms": 1000, "min": 1.0 / 60, "h": 1.0 / 3600}
	k, ok := scale[per]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(n > 0) {
		return 0, badValuef("-rate %q: want a number of IDs above 0, per s, ms, min or h (100000/s)", s)
	}
	return n * k, nil
}
