package serialno

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ringflake/ringflake"
)

// Layout returns the layout whose IDs f writes.
func (f Format) Layout() ringflake.Layout { return f.layout }

// String returns the pattern f was made from.
func (f Format) String() string { return f.pattern }

// Width returns the length in bytes of every serial number f writes and
// the only length its Parse accepts; 0 for the zero Format.
func (f Format) Width() int { return f.width }

// Format returns id's serial number. Errors match [ringflake.ErrInvalidID] for an ID
// that is not valid under f's layout (negative, or with bits above the
// layout's width), and [ErrInvalidPattern] for the zero Format.
func (f Format) Format(id ringflake.ID) (string, error) {
	var arr [64]byte // most serial numbers fit; Append grows it for the others
	buf, err := f.Append(arr[:0], id)
	if err != nil {
		return "", err
	}
	return string(buf), nil
}

// Append appends id's serial number to dst and returns the extended
// buffer; it allocates only when dst has no room. It fails as
// [Format.Format] does, leaving dst as it was.
func (f Format) Append(dst []byte, id ringflake.ID) ([]byte, error) {
	if f.width == 0 {
		return dst, f.zeroError()
	}
	p, err := f.layout.Decompose(id)
	if err != nil {
		return dst, err
	}
	t := p.Time.UTC()
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	for _, e := range f.elems {
		switch e.kind {
		case litElem:
			dst = append(dst, e.lit...)
		case year4Elem:
			dst = appendDigits(dst, int64(year), e.digits)
		case year2Elem:
			dst = appendDigits(dst, int64(year%100), e.digits)
		case monthElem:
			dst = appendDigits(dst, int64(month), e.digits)
		case dayElem:
			dst = appendDigits(dst, int64(day), e.digits)
		case hourElem:
			dst = appendDigits(dst, int64(hour), e.digits)
		case minuteElem:
			dst = appendDigits(dst, int64(minute), e.digits)
		case secondElem:
			dst = appendDigits(dst, int64(second), e.digits)
		case fracElem:
			dst = append(dst, e.lit...)
			dst = appendDigits(dst, int64(t.Nanosecond())/pow10(9-e.digits), e.digits)
		case nodeElem:
			dst = appendDigits(dst, p.Node, e.digits)
		case seqElem:
			dst = appendDigits(dst, p.Sequence, e.digits)
		}
	}
	return dst, nil
}

// appendDigits appends v ≥ 0 as exactly n decimal digits, zero-padded;
// v has at most n digits.
func appendDigits(dst []byte, v int64, n int) []byte {
	start := len(dst)
	for range n {
		dst = append(dst, '0')
	}
	for i := len(dst) - 1; i >= start && v > 0; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// Parse reads a serial number f wrote and returns its ID. It is strict:
// exactly [Format.Width] bytes, the pattern's literal text as it
// stands, digits where digits go, a real UTC date and time (months 01-12,
// days that exist, hours 00-23, no leap second) at the start of a tick of
// the layout within its lifetime, a node and sequence within the layout's
// range. Errors match [ringflake.ErrInvalidID]; each is a [*ringflake.SyntaxError] that names
// the byte offset at fault (or -1 for a wrong length). The zero
// Format returns an error matching [ErrInvalidPattern]. Parse
// allocates nothing when it succeeds.
func (f Format) Parse(s string) (ringflake.ID, error) {
	if f.width == 0 {
		return 0, f.zeroError()
	}
	if len(s) != f.width {
		return 0, &ringflake.SyntaxError{Input: s, Offset: -1, Reason: fmt.Sprintf("%d bytes, want %d for serial numbers of %q", len(s), f.width, f.pattern)}
	}
	var v [seqElem + 1]int64
	var at [seqElem + 1]int // offset in s of each element
	timeAt := -1
	pos := 0
	for _, e := range f.elems {
		if e.kind == litElem {
			if s[pos:pos+len(e.lit)] != e.lit {
				i := pos
				for s[i] == e.lit[i-pos] {
					i++
				}
				return 0, &ringflake.SyntaxError{Input: s, Offset: i, Reason: fmt.Sprintf("want %q of the pattern", e.lit)}
			}
			pos += len(e.lit)
			continue
		}
		if e.kind == fracElem && e.lit != "" {
			if s[pos] != e.lit[0] {
				return 0, &ringflake.SyntaxError{Input: s, Offset: pos, Reason: fmt.Sprintf("want %q before the fraction of a second", e.lit)}
			}
			pos++
		}
		if timeAt < 0 && e.kind != nodeElem && e.kind != seqElem {
			timeAt = pos
		}
		n, err := parseDigits(s, pos, e.digits)
		if err != nil {
			return 0, err
		}
		v[e.kind], at[e.kind] = n, pos
		pos += e.digits
	}
	t, err := f.parseTime(s, v, at, timeAt)
	if err != nil {
		return 0, err
	}
	l := f.layout
	for _, c := range []struct {
		kind serialKind
		max  int64
	}{{nodeElem, l.MaxNode()}, {seqElem, l.MaxSequence()}} {
		if v[c.kind] > c.max {
			return 0, &ringflake.SyntaxError{Input: s, Offset: at[c.kind],
				Reason: fmt.Sprintf("%s %d out of range [0, %d]", elemName(c.kind), v[c.kind], c.max)}
		}
	}
	id, err := l.Compose(t, v[nodeElem], v[seqElem])
	if err != nil { // parseTime and the checks above rule this out
		return 0, &ringflake.SyntaxError{Input: s, Offset: -1, Reason: strings.TrimPrefix(err.Error(), "ringflake: ")}
	}
	return id, nil
}

// parseDigits reads n decimal digits of s at pos.
func parseDigits(s string, pos, n int) (int64, error) {
	var v int64
	for i := pos; i < pos+n; i++ {
		if !isDigit(s[i]) {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return 0, &ringflake.SyntaxError{Input: s, Offset: i, Reason: "not a digit " + strconv.QuoteRune(r)}
		}
		d := int64(s[i] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, &ringflake.SyntaxError{Input: s, Offset: pos, Reason: fmt.Sprintf("%q is beyond any node id or sequence number", s[pos:pos+n])}
		}
		v = v*10 + d
	}
	return v, nil
}

// parseTime checks the time elements read from s (values v at offsets at;
// the time starts at timeAt) and returns the start of the tick they show.
func (f Format) parseTime(s string, v [seqElem + 1]int64, at [seqElem + 1]int, timeAt int) (time.Time, error) {
	l := f.layout
	bad := func(k serialKind, reason string, args ...any) (time.Time, error) {
		return time.Time{}, &ringflake.SyntaxError{Input: s, Offset: at[k], Reason: fmt.Sprintf(reason, args...)}
	}
	// Elements the pattern leaves out read as zero, which is in range.
	year := v[year4Elem]
	if f.year2 {
		year = int64(l.Spec().Epoch.UTC().Year()/100*100) + v[year2Elem]
	}
	month := v[monthElem]
	switch {
	case month < 1 || month > 12:
		return bad(monthElem, "month %02d out of range [01, 12]", month)
	case v[dayElem] < 1 || v[dayElem] > int64(daysIn(int(year), time.Month(month))):
		return bad(dayElem, "day %02d out of range [01, %02d] for %04d-%02d", v[dayElem], daysIn(int(year), time.Month(month)), year, month)
	case v[hourElem] > 23:
		return bad(hourElem, "hour %02d out of range [00, 23]", v[hourElem])
	case v[minuteElem] > 59:
		return bad(minuteElem, "minute %02d out of range [00, 59]", v[minuteElem])
	case v[secondElem] > 59:
		return bad(secondElem, "second %02d out of range [00, 59]", v[secondElem])
	}
	var ns int64
	if f.fracDigits > 0 {
		ns = v[fracElem] * pow10(9-f.fracDigits)
	}
	t := time.Date(int(year), time.Month(month), int(v[dayElem]), int(v[hourElem]), int(v[minuteElem]), int(v[secondElem]), int(ns), time.UTC)
	tick := l.Tick(t)
	switch {
	case tick < 0:
		return time.Time{}, &ringflake.SyntaxError{Input: s, Offset: timeAt,
			Reason: fmt.Sprintf("time %s is before the layout's epoch %s", t.Format(time.RFC3339Nano), l.Spec().Epoch.UTC().Format(time.RFC3339Nano))}
	case tick > l.MaxTick():
		return time.Time{}, &ringflake.SyntaxError{Input: s, Offset: timeAt,
			Reason: fmt.Sprintf("time %s is after the layout's last tick %s", t.Format(time.RFC3339Nano), l.Last().UTC().Format(time.RFC3339Nano))}
	case !l.TickTime(tick).Equal(t):
		return time.Time{}, &ringflake.SyntaxError{Input: s, Offset: timeAt,
			Reason: fmt.Sprintf("time %s is not the start of one of the layout's %v ticks", t.Format(time.RFC3339Nano), l.Spec().Unit)}
	}
	return t, nil
}

// daysIn returns the number of days of month in year (UTC, proleptic
// Gregorian, as package time counts).
func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func (f Format) zeroError() error {
	return &PatternError{Pattern: "", Offset: -1, Reason: "zero Format; use New"}
}
