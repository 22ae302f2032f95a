package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
)

// migrateCheck checks that IDs of the layout -to, issued from -at on, sort
// above every ID the layout -from could have issued before it. It prints
// its answer; a broken order is an error (exit 1) naming the time and the
// two IDs.
func migrateCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate-check", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: ringflake migrate-check -from LAYOUT -to LAYOUT -at TIME\n\n"+
			"Checks that every ID the layout -to can issue at or after TIME (RFC 3339), on any node,\n"+
			"is greater than every ID the layout -from could have issued before it, on any node.\n"+
			"Exit status 0 when it is, 1 when the order breaks, 2 on bad input.\n\n")
		fs.PrintDefaults()
	}
	fromFlag := fs.String("from", "", "the layout IDs were issued with before the cut-over (required)")
	toFlag := fs.String("to", "", "the layout IDs are issued with from the cut-over on (required)")
	atFlag := fs.String("at", "", "the cut-over time, RFC 3339, or a date (2026-01-02: its start, in UTC) (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("migrate-check takes no arguments, got %q", fs.Args())
	case *fromFlag == "":
		return usagef("migrate-check needs -from")
	case *toFlag == "":
		return usagef("migrate-check needs -to")
	case *atFlag == "":
		return usagef("migrate-check needs -at")
	}
	from, err := ringflake.ParseLayout(*fromFlag)
	if err != nil {
		return badValuef("-from: %v", err)
	}
	to, err := ringflake.ParseLayout(*toFlag)
	if err != nil {
		return badValuef("-to: %v", err)
	}
	at, err := parseDayOrTime("-at", *atFlag, false)
	if err != nil {
		return err
	}
	m, err := layoutplan.CheckMigration(from, to, at)
	if errors.Is(err, ringflake.ErrLayoutExpired) {
		return badValuef("-at: %v", err) // -to cannot issue anything at -at
	}
	if err != nil {
		return err
	}
	return writeMigration(stdout, m)
}

// writeMigration prints m and returns an error when the order breaks.
func writeMigration(w io.Writer, m layoutplan.Migration) error {
	at := stamp(m.At)
	fmt.Fprintf(w, "from  %s\nto    %s\n", m.From, m.To)
	if m.OK {
		fmt.Fprintf(w, "ok: every new ID from %s on sorts above every old ID before it\n", at)
	} else {
		fmt.Fprintf(w, "order breaks at %s: new IDs from then on can sort below old IDs issued before it\n", at)
	}
	fmt.Fprintf(w, "  first new ID  %d  %s, node 0, sequence 0\n", m.First, stamp(m.First.Time(m.To)))
	if m.Last < 0 {
		fmt.Fprintf(w, "  last old ID   none: the old layout starts at %s\n", stamp(m.From.Spec().Epoch))
	} else {
		fmt.Fprintf(w, "  last old ID   %d  %s, node %d, sequence %d\n", m.Last,
			stamp(m.Last.Time(m.From)), m.Last.Node(m.From), m.Last.Sequence(m.From))
	}
	if m.OK {
		return nil
	}
	if m.Cutover.IsZero() {
		fmt.Fprintf(w, "  switching at one instant (old until then, new from then on) keeps the order at no time before the new layout runs out (%s)\n", stamp(m.To.Last()))
	} else {
		fmt.Fprintf(w, "  switching at one instant (old until then, new from then on) keeps the order from %s\n", stamp(m.Cutover))
	}
	if !m.CatchUp.IsZero() {
		fmt.Fprintf(w, "  or with a pause: stop the old layout at %s and start the new one at %s, when its IDs pass the last old ID; issue nothing in between\n",
			at, stamp(m.CatchUp))
	}
	return fmt.Errorf("order breaks at %s: the first new ID %d is not above the last old ID %d", at, m.First, m.Last)
}

// stamp formats t as RFC 3339 in UTC.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
