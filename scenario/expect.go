package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// Expectation is what a scenario expects of the replay of one strategy,
// or of every strategy.
type Expectation struct {
	// Strategy is the strategy the bounds apply to, in strategies.Parse
	// syntax, or "" for every strategy replayed (written "all" in files).
	Strategy string
	// Key is the expectation's key as the file wrote it, such as "all",
	// "wait" or "ring,wait:5ms,error", for messages that point into the
	// file; empty for expectations built in code, which messages name by
	// Strategy.
	Key string
	// Bounds are the checks, each on one field of the [Report].
	Bounds []Bound
}

// Bound is one expectation: a field of the [Report] compared with a value.
//
// Fields and how files write them (a plain value means "exactly" for
// counts and "at most" for durations; counts and durations may be prefixed
// by one of ==, <, <=, >, >=):
//
//	issued, duplicates, out_of_order, errors   counts: 0, ">0", "<= 10"
//	errors.rollback, errors.frozen,            counts of errors of one kind
//	errors.expired, errors.before_epoch,       (files nest them: errors: {rollback: ">0"})
//	errors.crash, errors.other
//	available                                  true (no errors) or false (some errors)
//	max_stall, max_lead, max_lag, borrowed,    durations: 5ms, "<1s", ">0"
//	max_strategy_wait, max_queue,              (the parts of max_stall: see Report)
//	max_reservation_wait
type Bound struct {
	Field string // one of the fields above
	Op    Op
	Value int64 // a count, nanoseconds for a duration, 1 or 0 for available true or false
	Line  int   // line of the bound in its file, or 0
}

// Op is a comparison of a [Bound].
type Op string

// The comparisons.
const (
	Equal   Op = "=="
	Below   Op = "<"
	AtMost  Op = "<="
	Above   Op = ">"
	AtLeast Op = ">="
)

func (o Op) valid() bool {
	switch o {
	case Equal, Below, AtMost, Above, AtLeast:
		return true
	}
	return false
}

// holds reports whether got o want.
func (o Op) holds(got, want int64) bool {
	switch o {
	case Equal:
		return got == want
	case Below:
		return got < want
	case AtMost:
		return got <= want
	case Above:
		return got > want
	case AtLeast:
		return got >= want
	}
	return false
}

type fieldKind int

const (
	countField fieldKind = iota + 1
	durationField
	boolField
)

// errorKinds are the kinds of errors a report counts, in report order.
var errorKinds = [...]string{"rollback", "frozen", "expired", "before_epoch", "crash", "other"}

// fieldKindOf returns the kind of a report field an expectation can name.
func fieldKindOf(name string) (fieldKind, bool) {
	switch name {
	case "issued", "duplicates", "out_of_order", "errors",
		"errors.rollback", "errors.frozen", "errors.expired", "errors.before_epoch", "errors.crash", "errors.other":
		return countField, true
	case "max_stall", "max_strategy_wait", "max_queue", "max_reservation_wait", "max_lead", "max_lag", "borrowed":
		return durationField, true
	case "available":
		return boolField, true
	}
	return 0, false
}

func fieldList() string {
	return "issued, duplicates, out_of_order, errors (or errors: {rollback, frozen, expired, before_epoch, crash, other}), " +
		"available, max_stall, max_strategy_wait, max_queue, max_reservation_wait, max_lead, max_lag, borrowed"
}

// parseBound reads the value of field as written in a file (the scalar's
// text). It returns a reason when the value does not fit the field.
func parseBound(field, text string) (Op, int64, string) {
	kind, ok := fieldKindOf(field)
	if !ok {
		return "", 0, "unknown field; want one of " + fieldList()
	}
	text = strings.TrimSpace(text)
	if kind == boolField {
		switch text {
		case "true":
			return Equal, 1, ""
		case "false":
			return Equal, 0, ""
		}
		return "", 0, fmt.Sprintf("%q: want true or false", text)
	}
	op := Equal
	if kind == durationField {
		op = AtMost
	}
	for _, o := range []Op{AtMost, AtLeast, Equal, Below, Above} { // two-character operators first
		if rest, ok := strings.CutPrefix(text, string(o)); ok {
			op, text = o, strings.TrimSpace(rest)
			break
		}
	}
	if kind == countField {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n < 0 {
			return "", 0, fmt.Sprintf("%q: want a count such as 0, \">0\" or \"<=10\"", text)
		}
		return op, n, ""
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return "", 0, fmt.Sprintf("%q: want a duration such as 5ms, \"<1s\" or \">0\"", text)
	}
	return op, int64(d), ""
}

// formatValue writes a value of field as files do.
func formatValue(field string, v int64) string {
	switch kind, _ := fieldKindOf(field); kind {
	case durationField:
		return formatDuration(time.Duration(v))
	case boolField:
		return strconv.FormatBool(v != 0)
	}
	return strconv.FormatInt(v, 10)
}

// Want returns the bound as files write it: "0", ">0", "<=5ms", "true".
func (b Bound) Want() string {
	v := formatValue(b.Field, b.Value)
	switch kind, _ := fieldKindOf(b.Field); {
	case kind == boolField,
		kind == countField && b.Op == Equal,
		kind == durationField && b.Op == AtMost:
		return v
	}
	return string(b.Op) + v
}

// String returns the bound as "field: want", for example "max_stall: 5ms".
func (b Bound) String() string { return b.Field + ": " + b.Want() }

// check returns the report's value of the bound's field and whether the
// bound holds.
func (b Bound) check(r *Report) (int64, bool) {
	got := r.field(b.Field)
	return got, b.Op.holds(got, b.Value)
}

// Unmet is an expectation a replay did not meet.
type Unmet struct {
	File     string // the scenario's file
	Strategy string // the expectation's strategy, "" for every strategy
	Key      string // the expectation's key as the file wrote it (see [Expectation]), or ""
	Bound    Bound
	Got      int64 // the report's value of Bound.Field
}

// String returns a message of the form
// "scenarios/small-step-back.yaml:31: expect.error.available: want true, got false".
func (u Unmet) String() string {
	var where string
	switch {
	case u.File != "" && u.Bound.Line > 0:
		where = fmt.Sprintf("%s:%d: ", u.File, u.Bound.Line)
	case u.File != "":
		where = u.File + ": "
	}
	return fmt.Sprintf("%s%s.%s: want %s, got %s", where, Expectation{Strategy: u.Strategy, Key: u.Key}.path(), u.Bound.Field,
		u.Bound.Want(), formatValue(u.Bound.Field, u.Got))
}

// path is the field path of the expectation in messages: its key as the
// file wrote it, or its strategy.
func (x Expectation) path() string {
	if x.Key != "" {
		return expectPath(x.Key)
	}
	return expectPath(x.Strategy)
}

// expectPath is the field path of the expectations under key, a strategy
// or "all" ("" also means all).
func expectPath(strategy string) string {
	switch {
	case strategy == "" || strategy == "all":
		return "expect.all"
	case strings.ContainsAny(strategy, ",:. []"):
		return "expect[" + strconv.Quote(strategy) + "]"
	}
	return "expect." + strategy
}

// canonical returns the String form of a strategy string, or s itself when
// it does not parse.
func canonical(s string) string {
	st, err := strategies.Parse(s)
	if err != nil {
		return s
	}
	return st.String()
}

// check returns the expectations of s that the report r does not meet:
// those for every strategy and those for r's strategy.
func (s *Scenario) check(r *Report) []Unmet {
	var unmet []Unmet
	for _, x := range s.Expect {
		if x.Strategy != "" && canonical(x.Strategy) != r.Strategy {
			continue
		}
		for _, b := range x.Bounds {
			if got, ok := b.check(r); !ok {
				unmet = append(unmet, Unmet{File: s.File, Strategy: x.Strategy, Key: x.Key, Bound: b, Got: got})
			}
		}
	}
	return unmet
}

// ExpectedStrategies returns the strategies the scenario has expectations
// for, in the order the file names them, without "all".
func (s *Scenario) ExpectedStrategies() []string {
	var out []string
	for _, x := range s.Expect {
		if x.Strategy != "" {
			out = append(out, canonical(x.Strategy))
		}
	}
	return out
}
