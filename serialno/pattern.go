package serialno

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ringflake/ringflake"
)

// A Format writes IDs as business serial numbers — a fixed prefix,
// the ID's time readable in UTC, its node and its sequence, like the
// payment and order numbers that payment systems print — and reads them
// back to the IDs. Get one from [New]:
//
//	f, err := serialno.New("PAY{time:20060102150405.000}{node:4}{seq:4}", ringflake.TwitterLayout())
//	s, err := f.Format(id) // "PAY20220628160740.105" + "0378" + "0000"
//	id, err = f.Parse(s)
//
// A serial number is the ID in another spelling: formatting and parsing
// are exact inverses over the layout's valid IDs, so serial numbers are as
// unique as the IDs, and Parse gives back the ID, hence its node and
// sequence. Every serial number of one Format has the same length
// ([Format.Width]), and their byte-wise order is the numeric order
// of the IDs (for the pattern's fixed literal text). The time is always
// UTC, whatever location the layout's epoch carries.
//
// A Format is an immutable value, safe to copy and to use from many
// goroutines at once. The zero Format is not valid: its Format,
// Append and Parse return errors matching [ErrInvalidPattern].
type Format struct {
	pattern    string
	layout     ringflake.Layout
	elems      []serialElem
	width      int  // bytes of every serial number
	year2      bool // the year has two digits, in the epoch's century
	fracDigits int  // digits of the fraction of a second, 0 without one
}

// serialKind is what one element of a serial number shows.
type serialKind uint8

const (
	litElem serialKind = iota
	year4Elem
	year2Elem
	monthElem
	dayElem
	hourElem
	minuteElem
	secondElem
	fracElem
	nodeElem
	seqElem
)

// timeElems names the time elements in the order they must appear, from
// the year down, and what each is in a Go reference-time layout.
var timeElems = [...]struct {
	kind serialKind
	name string
}{
	{year4Elem, "year (2006 or 06)"}, {monthElem, "month (01)"}, {dayElem, "day (02)"},
	{hourElem, "hour (15)"}, {minuteElem, "minute (04)"}, {secondElem, "second (05)"},
	{fracElem, "fraction of a second (.000)"},
}

// timeRank returns k's place in timeElems; the two years share place 0.
func timeRank(k serialKind) int {
	if k == year2Elem {
		return 0
	}
	for r, e := range timeElems {
		if e.kind == k {
			return r
		}
	}
	return -1
}

// serialElem is one element of a serial number: literal text, or digits.
type serialElem struct {
	kind   serialKind
	lit    string // litElem: the text; fracElem: the separator, "." or ","
	digits int    // digits written (fracElem: after the separator)
	at     int    // byte offset in the pattern, for errors
}

// New returns the serial format that pattern describes for IDs
// of layout. The pattern is literal text with three fields:
//
//	{time:LAYOUT}  the ID's time in UTC, in Go's reference-time notation, from the year
//	               down: 2006 (or 06 for two digits), 01, 02, 15, 04, 05, and .000
//	               (1 to 9 zeros; ,000 too, or just 000 right after 05) for
//	               fractions of a second. Between them any character but letters
//	               and digits; T and Z too.
//	{node:N}       the node id (datacenter and worker together) as N decimal digits
//	{seq:N}        the sequence number as N decimal digits
//
// {node} and {seq} without a width take as many digits as the layout's
// largest node id and sequence number need; "{{" and "}}" are literal
// braces. For example "PAY{time:20060102150405.000}{node:4}{seq:4}",
// "PAY{time:20060102150405000}{node}{seq}" (digits only) or
// "ORD-{time:2006-01-02T15:04:05.00Z}-{node}-{seq}".
//
// New refuses, with an error that names the place in the
// pattern, any pattern whose text would not tell every ID of the layout
// from every other or would not sort like the IDs:
//
//   - the time must start with the year and run down without gaps to at
//     least the day, each element once; fixed-width elements only (no
//     month or day names, 12-hour clock, zone or trimmed fractions);
//   - the finest element it shows must divide the layout's unit, and the
//     layout's epoch must fall on it ("05" shows whole seconds: no good
//     for 1 ms ticks, nor for 1 s ticks that start at .657 s);
//   - the years must fit: 4 digits up to 9999, and "06" only when the
//     layout's first and last tick fall in the same century;
//   - N must be at least the digits of the layout's largest node id
//     (sequence number), and at most 19; node and sequence may be left out
//     only when the layout gives them no bits;
//   - time, node and sequence must appear in the order of their bits in the
//     ID (the layout's field order), most significant first.
//
// Errors match [ErrInvalidPattern] and are [*PatternError] values; a
// zero layout is an error matching [ringflake.ErrInvalidLayout].
func New(pattern string, layout ringflake.Layout) (Format, error) {
	if layout.IsZero() {
		return Format{}, &ringflake.LayoutError{Field: "Layout", Reason: "zero value"}
	}
	f := Format{pattern: pattern, layout: layout}
	if err := f.scan(); err != nil {
		return Format{}, err
	}
	if err := f.check(); err != nil {
		return Format{}, err
	}
	for _, e := range f.elems {
		f.width += len(e.lit) + e.digits
	}
	return f, nil
}

// bad returns a *PatternError about the pattern at byte at.
func (f *Format) bad(at int, format string, args ...any) error {
	return &PatternError{Pattern: f.pattern, Offset: at, Reason: fmt.Sprintf(format, args...)}
}

// scan splits the pattern into elements and checks each on its own.
func (f *Format) scan() error {
	p := f.pattern
	for i := 0; i < len(p); {
		switch {
		case strings.HasPrefix(p[i:], "{{"), strings.HasPrefix(p[i:], "}}"):
			f.addLit(i, p[i:i+1])
			i += 2
		case p[i] == '}':
			return f.bad(i, "'}' closes no field; write }} for a literal brace")
		case p[i] == '{':
			end := strings.IndexByte(p[i:], '}')
			if end < 0 {
				return f.bad(i, "'{' is never closed; write {{ for a literal brace")
			}
			if err := f.field(i, p[i+1:i+end]); err != nil {
				return err
			}
			i += end + 1
		default:
			_, n := utf8.DecodeRuneInString(p[i:])
			f.addLit(i, p[i:i+n])
			i += n
		}
	}
	return nil
}

// addLit appends literal text s, found at byte at of the pattern, to the
// elements, joining it to literal text just before.
func (f *Format) addLit(at int, s string) {
	if n := len(f.elems); n > 0 && f.elems[n-1].kind == litElem {
		f.elems[n-1].lit += s
		return
	}
	f.elems = append(f.elems, serialElem{kind: litElem, lit: s, at: at})
}

// field reads the field {body} that starts at byte at of the pattern.
func (f *Format) field(at int, body string) error {
	name, arg, hasArg := strings.Cut(body, ":")
	switch name {
	case "time":
		switch {
		case !hasArg || arg == "":
			return f.bad(at, "{time} needs a layout, as in {time:20060102150405.000}")
		case f.firstTime() >= 0:
			return f.bad(at, "{time} appears twice")
		}
		return f.timeLayout(at+len("{time:"), arg)
	case "node", "seq":
		kind, max := nodeElem, f.layout.MaxNode()
		if name == "seq" {
			kind, max = seqElem, f.layout.MaxSequence()
		}
		for _, e := range f.elems {
			if e.kind == kind {
				return f.bad(at, "{%s} appears twice", name)
			}
		}
		digits := decimalWidth(max)
		if hasArg {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 || n > 19 {
				return f.bad(at, "{%s:%s}: want a number of digits from 1 to 19", name, arg)
			}
			digits = n
		}
		f.elems = append(f.elems, serialElem{kind: kind, digits: digits, at: at})
		return nil
	}
	return f.bad(at, "unknown field {%s}; want {time:LAYOUT}, {node}, {node:N}, {seq} or {seq:N}", body)
}

// timeLayout reads the time layout that starts at byte at of the pattern.
func (f *Format) timeLayout(at int, layout string) error {
	before := len(f.elems)
	add := func(i int, kind serialKind, digits int, sep string) {
		f.elems = append(f.elems, serialElem{kind: kind, digits: digits, lit: sep, at: at + i})
	}
	for i := 0; i < len(layout); {
		rest := layout[i:]
		if kind, n := timeToken(rest); n > 0 {
			add(i, kind, n, "")
			i += n
			continue
		}
		c := rest[0]
		if c == '0' && len(f.elems) > before && f.elems[len(f.elems)-1].kind == secondElem {
			// Zeros right after the seconds: a fraction without separator.
			n := 0
			for n < len(rest) && rest[n] == '0' {
				n++
			}
			if n == len(rest) || !isDigit(rest[n]) {
				if n > 9 {
					return f.bad(at+i, "a fraction of a second has at most 9 digits, not %d", n)
				}
				add(i, fracElem, n, "")
				i += n
				continue
			}
		}
		switch {
		case (c == '.' || c == ',') && len(rest) > 1 && rest[1] == '0':
			n := 1
			for n < len(rest) && rest[n] == '0' {
				n++
			}
			switch {
			case n-1 > 9:
				return f.bad(at+i, "a fraction of a second has at most 9 digits, not %d", n-1)
			case n < len(rest) && isDigit(rest[n]):
				return f.bad(at+i+n, "a fraction of a second is %c and zeros only, as in .000", c)
			}
			add(i, fracElem, n-1, rest[:1])
			i += n
		case (c == '.' || c == ',') && len(rest) > 1 && rest[1] == '9':
			return f.bad(at+i, "%c9… drops trailing zeros, so its width varies; use %c0…", c, c)
		case isDigit(c):
			return f.bad(at+i, "%q is not a fixed-width time element; want 2006, 06, 01, 02, 15, 04, 05 or .000", timeWord(rest))
		case isLetter(c) && c != 'T' && c != 'Z':
			return f.bad(at+i, "%q: names, AM/PM and zones are not allowed (the time is UTC in digits); letters other than T and Z cannot appear", timeWord(rest))
		default:
			_, n := utf8.DecodeRuneInString(rest)
			f.addLit(at+i, rest[:n])
			i += n
		}
	}
	if f.firstTime() < before {
		return f.bad(at, "{time:%s} shows no time; want 2006, 01, 02, 15, 04, 05 or .000 in it", layout)
	}
	return nil
}

// timeToken returns the fixed-width time element rest starts with and its
// length, or n == 0.
func timeToken(rest string) (kind serialKind, n int) {
	if strings.HasPrefix(rest, "2006") {
		return year4Elem, 4
	}
	if len(rest) >= 2 {
		switch rest[:2] {
		case "06":
			return year2Elem, 2
		case "01":
			return monthElem, 2
		case "02":
			return dayElem, 2
		case "15":
			return hourElem, 2
		case "04":
			return minuteElem, 2
		case "05":
			return secondElem, 2
		}
	}
	return 0, 0
}

// timeWord returns the run of digits or of letters (at most 8) that rest
// starts with, for error messages.
func timeWord(rest string) string {
	same := isLetter
	if isDigit(rest[0]) {
		same = isDigit
	}
	n := 1
	for n < len(rest) && n < 8 && same(rest[n]) {
		n++
	}
	return rest[:n]
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// check refuses a pattern that would lose bits of the layout's IDs or
// would not sort like them, and notes what Parse needs to know.
func (f *Format) check() error {
	l := f.layout
	first := f.firstTime()
	if first < 0 {
		return f.bad(-1, "no {time:LAYOUT}; a serial number needs the ID's time")
	}
	// The time's elements are those of one field, in pattern order.
	var finest serialElem
	next := 0 // the timeRank the next time element must have
	for _, e := range f.elems[first:] {
		if e.kind == litElem {
			continue
		}
		if e.kind == nodeElem || e.kind == seqElem {
			break
		}
		switch r := timeRank(e.kind); {
		case r < next:
			return f.bad(e.at, "the %s appears twice", elemName(e.kind))
		case r > next && next == 0:
			return f.bad(e.at, "the time must start with the year (2006 or 06), not the %s", elemName(e.kind))
		case r > next:
			return f.bad(e.at, "the %s after the %s: the time must run from the year down without gaps, so that it sorts; want the %s",
				elemName(e.kind), elemName(finest.kind), timeElems[next].name)
		}
		next++
		finest = e
		f.year2 = f.year2 || e.kind == year2Elem
		if e.kind == fracElem {
			f.fracDigits = e.digits
		}
	}
	if next <= timeRank(dayElem) {
		return f.bad(finest.at, "the time must show at least the day; it ends with the %s", elemName(finest.kind))
	}
	if err := f.checkTime(finest); err != nil {
		return err
	}
	// time (at its field's brace), node, seq in pattern order
	fields := []serialElem{{kind: f.elems[first].kind, at: strings.LastIndexByte(f.pattern[:f.elems[first].at], '{')}}
	for _, c := range []struct {
		kind serialKind
		max  int64
		name string
	}{{nodeElem, l.MaxNode(), "node"}, {seqElem, l.MaxSequence(), "seq"}} {
		i := slices.IndexFunc(f.elems, func(e serialElem) bool { return e.kind == c.kind })
		if i < 0 {
			if c.max > 0 {
				return f.bad(-1, "no {%s}; the layout's %s numbers go up to %d, and without them the serial numbers of different IDs would be the same",
					c.name, elemName(c.kind), c.max)
			}
			continue
		}
		e := f.elems[i]
		if need := decimalWidth(c.max); e.digits < need {
			return f.bad(e.at, "{%s:%d} is too narrow: the layout's largest %s number, %d, takes %d digits", c.name, e.digits, elemName(c.kind), c.max, need)
		}
		fields = append(fields, e)
	}
	slices.SortFunc(fields, func(a, b serialElem) int { return a.at - b.at })
	return f.checkOrder(fields)
}

// firstTime returns the index in f.elems of the first time element, or -1.
func (f *Format) firstTime() int {
	return slices.IndexFunc(f.elems, func(e serialElem) bool {
		return e.kind != litElem && e.kind != nodeElem && e.kind != seqElem
	})
}

// checkTime refuses a time whose finest element does not fit the layout's
// unit and epoch, or whose years cannot show the layout's lifetime.
func (f *Format) checkTime(finest serialElem) error {
	l := f.layout
	var res time.Duration
	switch finest.kind {
	case dayElem:
		res = 24 * time.Hour
	case hourElem:
		res = time.Hour
	case minuteElem:
		res = time.Minute
	case secondElem:
		res = time.Second
	case fracElem:
		res = time.Duration(pow10(9 - finest.digits))
	}
	switch {
	case l.Spec().Unit%res != 0:
		return f.bad(finest.at, "the time shows %v steps (its %s), coarser than the layout's %v ticks: IDs of different ticks would show the same time",
			res, elemName(finest.kind), l.Spec().Unit)
	case !l.Spec().Epoch.Truncate(res).Equal(l.Spec().Epoch):
		return f.bad(finest.at, "the layout's epoch %s is not a whole %v (the step of its %s), so the ticks' times cannot be shown exactly",
			l.Spec().Epoch.UTC().Format(time.RFC3339Nano), res, elemName(finest.kind))
	}
	first, last := l.Spec().Epoch.UTC().Year(), l.Last().UTC().Year()
	for _, e := range f.elems {
		switch {
		case e.kind == year4Elem && last > 9999:
			return f.bad(e.at, "the layout's ticks run to the year %d, which 4 digits cannot show", last)
		case e.kind == year2Elem && first/100 != last/100:
			return f.bad(e.at, "06 shows two digits of the year, but the layout's ticks run from %d to %d, beyond one century; use 2006", first, last)
		}
	}
	return nil
}

// checkOrder refuses fields (time, node and sequence in pattern order)
// that do not follow the order of their bits in the layout's IDs, found
// by composing an ID with each field set to one alone; a field the layout
// gives no bits may stand anywhere.
func (f *Format) checkOrder(fields []serialElem) error {
	l := f.layout
	weight := func(e serialElem) ringflake.ID {
		var t time.Time
		var node, seq int64
		switch e.kind {
		case nodeElem:
			t, node = l.TickTime(0), min(1, l.MaxNode())
		case seqElem:
			t, seq = l.TickTime(0), min(1, l.MaxSequence())
		default:
			t = l.TickTime(1)
		}
		id, err := l.Compose(t, node, seq)
		if err != nil { // every layout can compose tick 1, node 1 and sequence 1 where it has bits
			return 0
		}
		return id
	}
	var prev serialElem
	var prevWeight ringflake.ID
	for _, e := range fields {
		w := weight(e)
		if w == 0 {
			continue
		}
		if prevWeight != 0 && prevWeight < w {
			return f.bad(e.at, "%s must come before %s: the layout's IDs keep it in higher bits, and the serial numbers must sort like the IDs",
				fieldName(e.kind), fieldName(prev.kind))
		}
		prev, prevWeight = e, w
	}
	return nil
}

// elemName names an element kind in messages.
func elemName(k serialKind) string {
	switch k {
	case year4Elem, year2Elem:
		return "year"
	case monthElem:
		return "month"
	case dayElem:
		return "day"
	case hourElem:
		return "hour"
	case minuteElem:
		return "minute"
	case secondElem:
		return "second"
	case fracElem:
		return "fraction of a second"
	case nodeElem:
		return "node"
	case seqElem:
		return "sequence"
	}
	return "text"
}

// fieldName names the field an element belongs to.
func fieldName(k serialKind) string {
	switch k {
	case nodeElem:
		return "{node}"
	case seqElem:
		return "{seq}"
	}
	return "{time}"
}

// decimalWidth returns the number of decimal digits of v ≥ 0.
func decimalWidth(v int64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}
