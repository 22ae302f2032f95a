package main

import (
	"fmt"
	"io"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// bounds prints the smallest and the largest ID of the ticks from FROM to
// TO, one per line, for WHERE id BETWEEN lo AND hi.
func bounds(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bounds", stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: ringflake bounds FROM TO [-layout LAYOUT] [-format FORMAT]\n\n"+
			"Prints the smallest ID of FROM's tick and the largest of TO's tick (RFC 3339 times),\n"+
			"one per line, for WHERE id BETWEEN lo AND hi.\n\n")
		fs.PrintDefaults()
	}
	layoutFlag := fs.String("layout", "twitter", "layout of the IDs: a preset or key=value,... (see ringflake.ParseLayout)")
	formatFlag := fs.String("format", "dec", "encoding of the IDs printed (see encodings.Parse)")
	pos, err := interleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("bounds needs FROM and TO, got %d arguments", len(pos))
	}
	from, err := parseTime("FROM", pos[0])
	if err != nil {
		return err
	}
	to, err := parseTime("TO", pos[1])
	if err != nil {
		return err
	}
	if to.Before(from) {
		return badValuef("TO %s is before FROM %s", pos[1], pos[0])
	}
	layout, err := ringflake.ParseLayout(*layoutFlag)
	if err != nil {
		return badValuef("-layout: %v", err)
	}
	enc, err := encodings.Parse(*formatFlag)
	if err != nil {
		return badValuef("-format: %v", err)
	}
	lo, hi, err := layout.Bounds(from, to)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n%s\n", enc.Format(lo), enc.Format(hi))
	return err
}

// parseTime reads an RFC 3339 time given as what (a flag or an argument).
func parseTime(what, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, badValuef("%s %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", what, s)
	}
	return t, nil
}
