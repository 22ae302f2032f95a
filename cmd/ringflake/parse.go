package main

import (
	"fmt"
	"io"
	"time"

	"github.com/ringflake/ringflake"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: twitter, sonyflake, js-safe, or key=value,...")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("parse needs at least one ID")
	}
	layout, err := ringflake.ParseLayout(*layoutFlag)
	if err != nil {
		return usagef("-layout: %v", err)
	}
	split := layout.Spec().DatacenterBits > 0
	for i, s := range fs.Args() {
		id, err := ringflake.Parse(s)
		if err != nil {
			return err
		}
		p, err := layout.Decompose(id)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "id        %s\n", id)
		fmt.Fprintf(stdout, "time      %s\n", p.Time.UTC().Format(time.RFC3339Nano))
		if split {
			fmt.Fprintf(stdout, "node      %d (datacenter %d, worker %d)\n", p.Node, p.Datacenter, p.Worker)
		} else {
			fmt.Fprintf(stdout, "node      %d\n", p.Node)
		}
		fmt.Fprintf(stdout, "sequence  %d\n", p.Sequence)
	}
	return nil
}
