package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/cmd/ringflake/internal/idtext"
	"github.com/ringflake/ringflake/opaque"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: "+layoutPresets()+", or key=value,...")
	formatFlag := fs.String("format", "dec", formatHelp+";\n"+
		"unless it is a serial number format, an ID written NAME:TEXT (base58:4aaW4SzAyQK) is in\n"+
		"encoding NAME whatever the flag says, and with dec or hex an ID written 0x and 1 to 16\n"+
		"hex digits (0xff) is hex")
	jsonFlag := fs.Bool("json", false, "print each ID as a JSON object on a line of its own")
	opq := addOpaqueFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("parse needs at least one ID")
	}
	layout, err := ringflake.ParseLayout(*layoutFlag)
	if err != nil {
		return badValuef("-layout: %v", err)
	}
	format, err := parseFormat(*formatFlag, layout, opq)
	if err != nil {
		return badValuef("-format: %v", err)
	}
	out := json.NewEncoder(stdout)
	for i, s := range fs.Args() {
		id, err := format.parse(s)
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

// formatHelp describes the -format flag of gen and parse.
var formatHelp = "ID format: an encoding (" + encodingNames() + "; see ringflake.Encoding),\n" +
	"or serial:PATTERN for serial numbers such as serial:PAY{time:20060102150405.000}{node}{seq}\n" +
	"(see ringflake.NewSerialFormat; the time is UTC), or opaque (keyed public IDs, see package opaque:\n" +
	"18 characters with the key version and check characters) or opaque-number (the public number)"

// encodingNames lists the encodings' names: "dec, hex, … or zbase32".
func encodingNames() string {
	var names []string
	for _, enc := range ringflake.Encodings() {
		names = append(names, enc.String())
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// idFormat is how gen writes IDs and parse reads them: in an encoding, as
// serial numbers, or as opaque public IDs.
type idFormat struct {
	enc    ringflake.Encoding
	serial *ringflake.SerialFormat // nil for an encoding
	opaque *opaque.Codec           // nil unless -format opaque or opaque-number
	number bool                    // the public number, not the text
}

// parseFormat reads a -format value for IDs of layout: an encoding's name,
// serial:PATTERN, opaque or opaque-number (with the keys and tweak of opq).
func parseFormat(s string, layout ringflake.Layout, opq opaqueFlags) (idFormat, error) {
	if f, ok, err := opq.format(s); ok || err != nil {
		return f, err
	}
	if pattern, ok := strings.CutPrefix(s, "serial:"); ok {
		sf, err := ringflake.NewSerialFormat(pattern, layout)
		if err != nil {
			return idFormat{}, err
		}
		return idFormat{serial: &sf}, nil
	}
	enc, err := ringflake.ParseEncoding(s)
	return idFormat{enc: enc}, err
}

// append appends id to dst in the format.
func (f idFormat) append(dst []byte, id ringflake.ID) ([]byte, error) {
	if f.serial != nil {
		return f.serial.Append(dst, id)
	}
	if f.opaque != nil {
		return f.appendOpaque(dst, id)
	}
	return f.enc.Append(dst, id), nil
}

// parse reads an ID as the user typed it: a serial number or an opaque
// public ID whole (a serial number's text may hold colons), otherwise as
// idtext.Parse does.
func (f idFormat) parse(s string) (ringflake.ID, error) {
	if f.serial != nil {
		return f.serial.Parse(s)
	}
	if f.opaque != nil {
		return f.parseOpaque(s)
	}
	return idtext.Parse(s, f.enc)
}
