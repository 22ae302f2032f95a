package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ringflake/ringflake"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: twitter, sonyflake, js-safe, or key=value,...")
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
		return usagef("-layout: %v", err)
	}
	format, err := parseFormat(*formatFlag, layout)
	if err != nil {
		return usagef("-format: %v", err)
	}
	split := layout.Spec().DatacenterBits > 0
	out := json.NewEncoder(stdout)
	for i, s := range fs.Args() {
		id, err := format.parse(s)
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
// may hold colons), otherwise as parseID does.
func (f idFormat) parse(s string) (ringflake.ID, error) {
	if f.serial != nil {
		return f.serial.Parse(s)
	}
	return parseID(s, f.enc)
}

// parseID reads s in enc unless s says its own encoding: NAME:TEXT names
// any encoding (no alphabet has a colon), and 0x or 0X marks hex when enc
// is dec or hex, whose alphabets have no x (base58, base62 and base64 do,
// so there 0x... is read as it stands). After 0x come 1 to 16 hex digits,
// as in a Go literal; without it hex has its 16. Errors are
// *ringflake.SyntaxErrors about s as typed.
func parseID(s string, enc ringflake.Encoding) (ringflake.ID, error) {
	if name, text, ok := strings.Cut(s, ":"); ok {
		e, err := ringflake.ParseEncoding(name)
		if err != nil {
			return 0, &ringflake.SyntaxError{Input: s, Offset: -1, Reason: strings.TrimPrefix(err.Error(), "ringflake: ")}
		}
		id, err := e.Parse(text)
		return id, about(s, len(name)+1, err)
	}
	hex := ringflake.HexEncoding()
	if (enc == ringflake.DecimalEncoding() || enc == hex) && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
		digits := s[2:]
		if digits == "" || len(digits) > hex.Width() {
			return 0, &ringflake.SyntaxError{Input: s, Offset: -1,
				Reason: fmt.Sprintf("%d characters after %s, want 1 to %d hex digits", utf8.RuneCountInString(digits), s[:2], hex.Width())}
		}
		pad := hex.Width() - len(digits)
		id, err := hex.Parse(strings.Repeat("0", pad) + digits)
		return id, about(s, 2-pad, err)
	}
	return enc.Parse(s)
}

// about returns err, the error of parsing the part of arg that starts at
// byte start (before it when negative: the part was padded), as an error
// about arg itself, so that the user sees what they typed.
func about(arg string, start int, err error) error {
	var se *ringflake.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	typed := *se
	typed.Input = arg
	if typed.Offset >= 0 {
		typed.Offset += start
	}
	return &typed
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
