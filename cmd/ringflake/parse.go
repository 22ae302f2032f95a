package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: "+layoutPresets()+", or key=value,...")
	formatFlag := fs.String("format", "dec", formatHelp+";\n"+
		"unless it is a serial number format, an ID written NAME:TEXT (base58:4aaW4SzAyQK) is in\n"+
		"encoding NAME whatever the flag says, and with dec or hex an ID written 0x and 1 to 16\n"+
		"hex digits (0xff) is hex")
	jsonFlag := fs.Bool("json", false, "print each ID as a JSON object on a line of its own")
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
	format, err := parseFormat(*formatFlag, layout)
	if err != nil {
		return badValuef("-format: %v", err)
	}
	out := json.NewEncoder(stdout)
	for i, s := range fs.Args() {
		id, err := format.parse(s)
		if err != nil {
			return err
		}
		p, err := idserver.Decompose(layout, id)
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
	"(see ringflake.NewSerialFormat; the time is UTC)"

// encodingNames lists the encodings' names: "dec, hex, … or zbase32".
func encodingNames() string {
	var names []string
	for _, enc := range ringflake.Encodings() {
		names = append(names, enc.String())
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// idFormat is how gen writes IDs and parse reads them: in an encoding, or
// as serial numbers.
type idFormat struct {
	enc    ringflake.Encoding
	serial *ringflake.SerialFormat // nil for an encoding
}

// parseFormat reads a -format value for IDs of layout: an encoding's name,
// or serial:PATTERN.
func parseFormat(s string, layout ringflake.Layout) (idFormat, error) {
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
	return f.enc.Append(dst, id), nil
}

// parse reads an ID as the user typed it: a serial number whole (its text
// may hold colons), otherwise as idserver.ParseID does.
func (f idFormat) parse(s string) (ringflake.ID, error) {
	if f.serial != nil {
		return f.serial.Parse(s)
	}
	return idserver.ParseID(s, f.enc)
}
