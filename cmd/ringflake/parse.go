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
