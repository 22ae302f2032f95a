package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/opaque"
	"github.com/ringflake/ringflake/serialno"
)

func parse(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("parse", stderr)
	layoutFlag := fs.String("layout", "twitter", "layout the IDs were made with: "+layoutPresets()+", key=value,...,\n"+
		"or auto: every preset under which the ID's time is plausible (from the preset's epoch to a day from now)")
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
	auto := *layoutFlag == "auto"
	layout := ringflake.TwitterLayout() // serial number formats need one; auto reads encodings only
	if !auto {
		l, err := ringflake.ParseLayout(*layoutFlag)
		if err != nil {
			return badValuef("-layout: %v", err)
		}
		layout = l
	}
	format, err := parseFormat(*formatFlag, layout, opq)
	if err != nil {
		return badValuef("-format: %v", err)
	}
	if auto && format.serial != nil {
		return badValuef("-layout auto: a serial number format belongs to one layout; name it")
	}
	now := time.Now()
	out := json.NewEncoder(stdout)
	first := true
	for _, s := range fs.Args() {
		id, err := format.parse(s)
		if err != nil {
			return withEncodingHint(err, s, format)
		}
		layouts := []ringflake.Layout{layout}
		if auto {
			if layouts = plausibleLayouts(id, now); len(layouts) == 0 {
				return fmt.Errorf("-layout auto: %s is not an ID of any preset with a time between the preset's epoch and a day from now", id)
			}
		}
		for _, l := range layouts {
			p, err := idserver.Decompose(l, id)
			if err != nil {
				return err
			}
			if *jsonFlag {
				var v any = p
				if auto {
					v = struct {
						Layout string `json:"layout"`
						idserver.Parts
					}{l.String(), p}
				}
				if err := out.Encode(v); err != nil {
					return err
				}
				continue
			}
			if !first {
				fmt.Fprintln(stdout)
			}
			first = false
			if auto {
				fmt.Fprintf(stdout, "layout    %s\n", l)
			}
			fmt.Fprintf(stdout, "id        %s\n", id)
			fmt.Fprintf(stdout, "time      %s\n", p.Time.Format(time.RFC3339Nano))
			if p.Datacenter != nil {
				fmt.Fprintf(stdout, "node      %d (datacenter %d, worker %d)\n", p.Node, *p.Datacenter, *p.Worker)
			} else {
				fmt.Fprintf(stdout, "node      %d\n", p.Node)
			}
			fmt.Fprintf(stdout, "sequence  %d\n", p.Sequence)
			if !auto && p.Time.After(now.Add(plausibleAhead)) {
				fmt.Fprintf(stdout, "note      the time is in the future under %s: -layout auto lists the presets that date it plausibly\n", l)
			}
		}
	}
	return nil
}

// plausibleAhead is how far past now a decoded time may be and still be
// plausible: clocks of other hosts may run ahead, a logical strategy may
// borrow time.
const plausibleAhead = 24 * time.Hour

// plausibleLayouts returns the presets under which id is an ID whose time
// falls between the preset's epoch and plausibleAhead from now, the one
// whose time is nearest now first: an ID seen today was most likely
// issued lately, not years ago under another preset.
func plausibleLayouts(id ringflake.ID, now time.Time) []ringflake.Layout {
	type fit struct {
		l    ringflake.Layout
		away time.Duration // from now, either way
	}
	var fits []fit
	for _, l := range layoutplan.Presets() {
		p, err := l.Decompose(id)
		if err == nil && !p.Time.After(now.Add(plausibleAhead)) {
			away := now.Sub(p.Time)
			fits = append(fits, fit{l, max(away, -away)})
		}
	}
	slices.SortStableFunc(fits, func(a, b fit) int { return cmp.Compare(a.away, b.away) })
	ls := make([]ringflake.Layout, len(fits))
	for i, f := range fits {
		ls[i] = f.l
	}
	return ls
}

// withEncodingHint adds to err, the error of reading s in format, the
// encodings that read s, if any: a bwmarrin Base58 string given without
// -format base58-flickr, say.
func withEncodingHint(err error, s string, format idFormat) error {
	if format.serial != nil || format.opaque != nil || strings.Trim(s, "0123456789") == "" || strings.HasPrefix(s, "0x") || strings.Contains(s, ":") {
		// Digits only: a decimal ID too long or too large; 0x or NAME:
		// name the encoding already.
		return err
	}
	var names []string
	for _, enc := range encodings.All() {
		if _, perr := enc.Parse(s); perr == nil && enc != format.enc {
			names = append(names, enc.String())
		}
	}
	if len(names) == 0 {
		return err
	}
	return fmt.Errorf("%w; it reads as an ID in %s: name its encoding with -format", err, strings.Join(names, ", "))
}

// formatHelp describes the -format flag of gen and parse.
var formatHelp = "ID format: an encoding (" + encodingNames() + "; see encodings.Encoding),\n" +
	"or serial:PATTERN for serial numbers such as serial:PAY{time:20060102150405.000}{node}{seq}\n" +
	"(see serialno.New; the time is UTC), or opaque (keyed public IDs, see package opaque:\n" +
	"18 characters with the key version and check characters) or opaque-number (the public number)"

// encodingNames lists the encodings' names: "dec, hex, … or zbase32".
func encodingNames() string {
	var names []string
	for _, enc := range encodings.All() {
		names = append(names, enc.String())
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// idFormat is how gen writes IDs and parse reads them: in an encoding, as
// serial numbers, or as opaque public IDs.
type idFormat struct {
	enc    encodings.Encoding
	serial *serialno.Format // nil for an encoding
	opaque *opaque.Codec    // nil unless -format opaque or opaque-number
	number bool             // the public number, not the text
}

// parseFormat reads a -format value for IDs of layout: an encoding's name,
// serial:PATTERN, opaque or opaque-number (with the keys and tweak of opq).
func parseFormat(s string, layout ringflake.Layout, opq opaqueFlags) (idFormat, error) {
	if f, ok, err := opq.format(s); ok || err != nil {
		return f, err
	}
	if pattern, ok := strings.CutPrefix(s, "serial:"); ok {
		sf, err := serialno.New(pattern, layout)
		if err != nil {
			return idFormat{}, err
		}
		return idFormat{serial: &sf}, nil
	}
	enc, err := encodings.Parse(s)
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
	return idserver.ParseID(s, f.enc)
}
