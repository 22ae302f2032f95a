package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/cmd/ringflake/internal/idtext"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: twitter, sonyflake, js-safe, or key=value,...")
	formatFlag := fs.String("format", "dec", "encoding of the IDs: dec, hex, base32, base58, base62 or base64;\n"+
		"an ID written NAME:TEXT (base58:4aaW4SzAyQK) is in encoding NAME whatever the flag says,\n"+
		"and with dec or hex an ID written 0x and 1 to 16 hex digits (0xff) is hex")
	jsonFlag := fs.Bool("json", false, "print each ID as a JSON object on a line of its own")
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
	enc, err := ringflake.ParseEncoding(*formatFlag)
	if err != nil {
		return usagef("-format: %v", err)
	}
	out := json.NewEncoder(stdout)
	for i, s := range fs.Args() {
		id, err := idtext.Parse(s, enc)
		if err != nil {
			return err
		}
		p, err := idtext.Decompose(layout, id)
		if err != nil {
			return err
		}
		if *jsonFlag {
			if err := out.Encode(p); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "id        %s\n", id)
		fmt.Fprintf(stdout, "time      %s\n", p.Time.Format(time.RFC3339Nano))
		if p.Datacenter != nil {
			fmt.Fprintf(stdout, "node      %d (datacenter %d, worker %d)\n", p.Node, *p.Datacenter, *p.Worker)
		} else {
			fmt.Fprintf(stdout, "node      %d\n", p.Node)
		}
		fmt.Fprintf(stdout, "sequence  %d\n", p.Sequence)
	}
	return nil
}
