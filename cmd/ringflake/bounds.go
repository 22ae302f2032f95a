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
			"Prints the smallest ID of FROM's tick and the largest of TO's tick, one per line,\n"+
			"for WHERE id BETWEEN lo AND hi. FROM and TO are RFC 3339 times (2026-01-02T15:04:05Z)\n"+
			"or dates (2026-01-02, in UTC): a date FROM is the start of its day, a date TO its end,\n"+
			"so that bounds 2026-01-02 2026-01-02 covers the whole day.\n\n")
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
	from, err := parseDayOrTime("FROM", pos[0], false)
	if err != nil {
		return err
	}
	to, err := parseDayOrTime("TO", pos[1], true)
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
	// A range outside the layout's life is a range of time with no IDs,
	// not a clock that reads wrong (the library's ErrBeforeEpoch).
	switch {
	case layout.Tick(to) < 0:
		return fmt.Errorf("TO %s is before the layout's epoch, %s: no ID is that old", pos[1], layout.TickTime(0).UTC().Format(time.RFC3339Nano))
	case layout.Tick(from) > layout.MaxTick():
		return fmt.Errorf("FROM %s is past the layout's last tick, %s: no ID is that new", pos[0], layout.Last().UTC().Format(time.RFC3339Nano))
	}
	lo, hi, err := layout.Bounds(from, to)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n%s\n", enc.Format(lo), enc.Format(hi))
	return err
}

// parseDayOrTime reads an RFC 3339 time, or a date in UTC: the start of
// its day, or its last instant when end is set.
func parseDayOrTime(what, s string, end bool) (time.Time, error) {
	day, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, badValuef("%s %q is neither an RFC 3339 time such as 2026-01-02T15:04:05Z nor a date such as 2026-01-02", what, s)
		}
		return t, nil
	}
	if end {
		return day.AddDate(0, 0, 1).Add(-time.Nanosecond), nil
	}
	return day, nil
}
