package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/clockhealth"
)

// clockReadTimeout bounds each source's read in `ringflake clock`.
const clockReadTimeout = 5 * time.Second

// clockReport is what `ringflake clock -format json` prints: one object
// with a member per source read.
type clockReport struct {
	Kernel     clockhealth.Reading  `json:"kernel"`
	Chrony     *clockhealth.Reading `json:"chrony,omitempty"`
	ClockBound *clockhealth.Reading `json:"clockbound,omitempty"`
}

func clock(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("clock", stderr)
	chrony := fs.String("chrony", "", "also ask chronyd at this command address (HOST:PORT, e.g. 127.0.0.1:323)")
	clockbound := fs.String("clockbound", "", "also read ClockBound's shared-memory file at this path (e.g. "+clockhealth.DefaultClockBoundPath+")")
	format := fs.String("format", "text", "text or json")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake clock [-chrony HOST:PORT] [-clockbound PATH] [-format text|json]\n\n"+
			"Prints the clock's health as the kernel sees it (adjtimex, read-only; \"unknown\" outside\n"+
			"Linux), and as chronyd and ClockBound see it when asked. Nothing is changed.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("clock takes no arguments, got %q", fs.Args())
	}
	if *format != "text" && *format != "json" {
		return badValuef("-format %q: want text or json", *format)
	}
	var failed []error
	read := func(src clockhealth.Source) clockhealth.Reading {
		ctx, cancel := context.WithTimeout(context.Background(), clockReadTimeout)
		defer cancel()
		r, err := src.Read(ctx)
		// A kernel this system cannot read is "unknown", not a failure.
		if err != nil && !errors.Is(err, clockhealth.ErrUnsupported) {
			failed = append(failed, fmt.Errorf("%s: %s", r.Source, strings.TrimPrefix(err.Error(), "ringflake: ")))
		}
		return r
	}
	rep := clockReport{Kernel: read(clockhealth.Kernel{})}
	if *chrony != "" {
		r := read(chronyhealth.Source{Addr: *chrony})
		rep.Chrony = &r
	}
	if *clockbound != "" {
		r := read(clockhealth.ClockBound{Path: *clockbound})
		rep.ClockBound = &r
	}
	if *format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	} else {
		for _, r := range []*clockhealth.Reading{&rep.Kernel, rep.Chrony, rep.ClockBound} {
			if r != nil {
				if _, err := fmt.Fprintln(stdout, r); err != nil {
					return err
				}
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("clock: %w", errors.Join(failed...))
	}
	return nil
}
