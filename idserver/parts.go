package idserver

// This file reads IDs as people type them and describes an ID as the JSON
// object of /v1/parse/{id}. `ringflake parse -json` uses the same two
// functions, so that the command and the server read and describe IDs
// alike; they are exported for it (a nested module may not import the
// core's internal packages, see RELEASING.md) and for Go clients of
// /v1/parse/{id}.

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// ParseID reads s as /v1/parse/{id} reads its ID: in enc unless s says
// its own encoding. NAME:TEXT names any encoding (no alphabet has a
// colon), and 0x or 0X marks hex when enc is dec or hex, whose alphabets
// have no x (base58, base62 and base64 do, so there 0x... is read as it
// stands). After 0x come 1 to 16 hex digits, as in a Go literal; without
// it hex has its 16. Errors are *ringflake.SyntaxErrors about s as typed,
// matching ringflake.ErrInvalidID.
func ParseID(s string, enc encodings.Encoding) (ringflake.ID, error) {
	if name, text, ok := strings.Cut(s, ":"); ok {
		e, err := encodings.Parse(name)
		if err != nil {
			return 0, &ringflake.SyntaxError{Input: s, Offset: -1, Reason: strings.TrimPrefix(err.Error(), "encodings: ")}
		}
		id, err := e.Parse(text)
		return id, about(s, len(name)+1, err)
	}
	hex := encodings.Hex()
	if (enc == encodings.Decimal() || enc == hex) && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
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

// Parts is an ID taken apart, the JSON object of /v1/parse/{id} and
// `ringflake parse -json`: the ID (a decimal string), the
// start of its tick (RFC 3339, UTC), the tick, node and sequence numbers,
// and the datacenter and worker only for layouts that split the node.
type Parts struct {
	ID         ringflake.ID `json:"id"`
	Time       time.Time    `json:"time"`
	Tick       int64        `json:"tick"`
	Node       int64        `json:"node"`
	Datacenter *int64       `json:"datacenter,omitempty"`
	Worker     *int64       `json:"worker,omitempty"`
	Sequence   int64        `json:"sequence"`
}

// Decompose takes id apart with layout l. Its errors are those of
// [ringflake.Layout.Decompose]: an ID the layout cannot have made matches
// ringflake.ErrInvalidID.
func Decompose(l ringflake.Layout, id ringflake.ID) (Parts, error) {
	p, err := l.Decompose(id)
	if err != nil {
		return Parts{}, err
	}
	j := Parts{ID: id, Time: p.Time.UTC(), Tick: p.Tick, Node: p.Node, Sequence: p.Sequence}
	if l.Spec().DatacenterBits > 0 {
		j.Datacenter, j.Worker = &p.Datacenter, &p.Worker
	}
	return j, nil
}
