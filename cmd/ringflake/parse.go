package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: twitter, sonyflake, js-safe, or key=value,...")
	formatFlag := fs.String("format", "dec", "encoding of the IDs: dec, hex, base32, base58, base62 or base64;\n"+
		"an ID written NAME:TEXT (base58:4aaW4SzAyQK) is in encoding NAME whatever the flag says,\n"+
		"and with dec or hex an ID written 0x... is hex")
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
	split := layout.Spec().DatacenterBits > 0
	out := json.NewEncoder(stdout)
	for i, s := range fs.Args() {
		id, err := parseID(s, enc)
		if err != nil {
			return err
		}
		p, err := layout.Decompose(id)
		if err != nil {
			return err
		}
		if *jsonFlag {
			if err := out.Encode(jsonParts(id, p, split)); err != nil {
				return err
			}
			continue
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

// parseID reads s in enc unless s says its own encoding: NAME:TEXT names
// any encoding (no alphabet has a colon), and 0x or 0X marks hex when enc
// is dec or hex, whose alphabets have no x (base58, base62 and base64 do,
// so there 0x... is read as it stands).
func parseID(s string, enc ringflake.Encoding) (ringflake.ID, error) {
	if name, text, ok := strings.Cut(s, ":"); ok {
		e, err := ringflake.ParseEncoding(name)
		if err != nil {
			return 0, err
		}
		return e.Parse(text)
	}
	hex := ringflake.HexEncoding()
	if (enc == ringflake.DecimalEncoding() || enc == hex) && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		return hex.Parse(s[2:])
	}
	return enc.Parse(s)
}

// idJSON is what parse -json prints for one ID. The datacenter and worker
// appear only for layouts that split the node.
type idJSON struct {
	ID         ringflake.ID `json:"id"`
	Time       time.Time    `json:"time"`
	Tick       int64        `json:"tick"`
	Node       int64        `json:"node"`
	Datacenter *int64       `json:"datacenter,omitempty"`
	Worker     *int64       `json:"worker,omitempty"`
	Sequence   int64        `json:"sequence"`
}

func jsonParts(id ringflake.ID, p ringflake.Parts, split bool) idJSON {
	j := idJSON{ID: id, Time: p.Time.UTC(), Tick: p.Tick, Node: p.Node, Sequence: p.Sequence}
	if split {
		j.Datacenter, j.Worker = &p.Datacenter, &p.Worker
	}
	return j
}
