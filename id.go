package ringflake

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// An ID is a 64-bit, time-ordered identifier. Its bits mean something only
// under a [Layout]; valid IDs are never negative. The zero ID is valid as a
// value but no generator issues it unless its clock reads the epoch's very
// first tick.
//
// ID is a plain value: compare it with ==, sort it as an integer, use it as
// a map key. As text (String, MarshalText, JSON) it is the decimal number;
// in JSON it is a string, because JavaScript numbers lose integers above
// 2^53, and a JSON number is accepted too.
type ID int64

// String returns the decimal form of id.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// Time returns the start of id's tick under layout l.
func (id ID) Time(l Layout) time.Time { return l.TickTime(id.tick(l)) }

// Node returns id's node under layout l (datacenter and worker together),
// wherever l's field order puts it.
func (id ID) Node(l Layout) int64 {
	return int64(id) >> l.nodeShift & mask(l.dcBits+l.workBits)
}

// Sequence returns id's sequence number under layout l, wherever l's field
// order puts it.
func (id ID) Sequence(l Layout) int64 { return int64(id) >> l.seqShift & mask(l.seqBits) }

func (id ID) tick(l Layout) int64 {
	return int64(id) >> l.timeShift & mask(l.timeBits)
}

// Parse reads the decimal form of an ID: 1 to 19 ASCII digits, nothing
// else (no sign, no spaces), at most 2^63-1. Leading zeros are allowed but
// count toward the 19, so "007" reads as 7 and a string longer than 19
// characters is an error whatever its digits. Errors match [ErrInvalidID];
// each is a [*SyntaxError] that says where the input went wrong. It is
// the decimal encoding's Parse; package encodings reads the others.
func Parse(s string) (ID, error) { return parseDecimal(s) }

// AppendText appends the decimal form of id to b. It allocates only when b
// has no room. A negative ID, which is never valid, is an error matching
// [ErrInvalidID], since [ID.UnmarshalText] could not read it back.
func (id ID) AppendText(b []byte) ([]byte, error) {
	if id < 0 {
		return b, negativeError(id)
	}
	return strconv.AppendInt(b, int64(id), 10), nil
}

// MarshalText returns the decimal form of id. A negative ID is an error
// matching [ErrInvalidID].
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText reads the decimal form of an ID, as [Parse] does (1 to 19
// digits), without copying b.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := parseDecimal(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalJSON returns id as a JSON string of its decimal form. A negative
// ID is an error matching [ErrInvalidID].
func (id ID) MarshalJSON() ([]byte, error) {
	if id < 0 {
		return nil, negativeError(id)
	}
	b := make([]byte, 0, 21)
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string holding the decimal form of an ID, or
// a JSON number without sign, fraction or exponent. JSON null leaves id as
// it is. Errors match [ErrInvalidID].
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		if bytes.IndexByte(b, '\\') >= 0 { // escaped characters, as in "\u0031"
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				return &SyntaxError{Input: string(b), Offset: -1, Reason: "not a JSON string"}
			}
			b = []byte(s)
		} else {
			b = b[1 : len(b)-1]
		}
	} else if bytes.IndexByte(b, '"') >= 0 {
		return &SyntaxError{Input: string(b), Offset: -1, Reason: "unterminated JSON string"}
	}
	return id.UnmarshalText(b)
}

func negativeError(id ID) error {
	return &SyntaxError{Input: id.String(), Offset: -1, Reason: "negative"}
}
