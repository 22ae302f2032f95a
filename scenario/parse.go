package scenario

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// ReadFile reads and validates the scenario file at path (see the package
// documentation for the format). It reads at most [MaxFileSize] bytes: a
// larger file, or an endless stream such as /dev/zero, is an [*Error]
// naming the file and the limit. Errors: those of [os.Open] and of
// reading, and those of [Parse].
func ReadFile(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path, fmt.Sprintf("more than %d bytes", MaxFileSize))
	}
	return Parse(path, data)
}

// tooLarge is the error about a file over MaxFileSize.
func tooLarge(file, size string) *Error {
	return &Error{File: file, Reason: fmt.Sprintf("%s; a scenario file holds at most %d bytes (1 MiB)", size, MaxFileSize)}
}

// Parse reads and validates a scenario in the file format (see the package
// documentation); file names it in errors and becomes Scenario.File.
// Errors match [ErrInvalid] and are [*Error] values naming the file, line
// and field: data longer than [MaxFileSize]; YAML that does not parse,
// more than one YAML document (empty ones aside); more events, bursts or
// expectations than [MaxEvents], [MaxBursts] or [MaxExpectations], a YAML
// alias counting as often as it is used; an unknown field or event, a
// field given twice, a value of the wrong type, a bad time, duration, rate
// or layout, an unknown strategy (also matching
// strategies.ErrInvalidStrategy), and everything [Scenario.Validate]
// rejects.
//
// The limits are checked on the YAML document before anything is decoded
// from it, so Parse takes time and memory in proportion to the size of
// data.
func Parse(file string, data []byte) (*Scenario, error) {
	if len(data) > MaxFileSize {
		return nil, tooLarge(file, fmt.Sprintf("%d bytes", len(data)))
	}
	p := &parser{s: &Scenario{File: file, Comment: headComment(data), lines: map[string]int{}}}
	doc := fileDoc{p: p}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(&doc)
	var te *yaml.TypeError
	switch {
	case errors.Is(err, io.EOF):
		return nil, &Error{File: file, Reason: "empty file; want a mapping with at least start and duration"}
	case errors.As(err, &te):
		return nil, p.typeError(te)
	case err != nil:
		var se *Error
		if errors.As(err, &se) {
			return nil, se
		}
		return nil, p.yamlError(err)
	case p.rootLine == 0: // a document of nothing
		return nil, &Error{File: file, Line: 1, Reason: "want a mapping of fields such as start, duration, load, events; got nothing"}
	}
	// A file is one scenario: a second YAML document (after "---") would
	// otherwise be ignored without a word. Empty ones, as a trailing
	// "---" makes, are harmless.
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, p.yamlError(err)
		}
		if len(more.Content) > 0 && more.Content[0].ShortTag() != "!!null" {
			return nil, &Error{File: file, Line: more.Line,
				Reason: "a second YAML document; a scenario file holds one scenario (put each in a file of its own)"}
		}
	}
	f := &doc.f
	if err := p.build(f); err != nil {
		return nil, err
	}
	if p.s.Name == "" {
		base := filepath.Base(file)
		p.s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if err := p.s.Validate(); err != nil {
		return nil, err
	}
	return p.s, nil
}

// The file format as YAML decodes it, with KnownFields: an unknown field
// is YAML's error, which Parse turns into one naming the field. Every
// value is kept as its node, for its line; build reads them.
type (
	fileScenario struct {
		Name      yaml.Node             `yaml:"name"`
		Start     yaml.Node             `yaml:"start"`
		Layout    yaml.Node             `yaml:"layout"`
		Node      yaml.Node             `yaml:"node"`
		Duration  yaml.Node             `yaml:"duration"`
		MarkAhead yaml.Node             `yaml:"mark_ahead"`
		Load      fileLoad              `yaml:"load"`
		Events    []fileEvent           `yaml:"events"`
		Expect    map[string]fileBounds `yaml:"expect"`
	}
	fileLoad struct {
		Rate       yaml.Node   `yaml:"rate"`
		Goroutines yaml.Node   `yaml:"goroutines"`
		Bursts     []fileBurst `yaml:"bursts"`
	}
	fileBurst struct {
		At    yaml.Node `yaml:"at"`
		Count yaml.Node `yaml:"count"`
		Over  yaml.Node `yaml:"over"`
	}
	fileEvent struct {
		At      yaml.Node `yaml:"at"`
		Step    yaml.Node `yaml:"step"`
		Freeze  yaml.Node `yaml:"freeze"`
		Drift   yaml.Node `yaml:"drift"`
		Jitter  yaml.Node `yaml:"jitter"`
		Restart yaml.Node `yaml:"restart"`
		Seed    yaml.Node `yaml:"seed"`
	}
	// fileBounds holds the fields of [Bound]: errors is a count or a
	// mapping of counts by kind, which may also be written errors.KIND.
	fileBounds struct {
		Issued             yaml.Node `yaml:"issued"`
		Duplicates         yaml.Node `yaml:"duplicates"`
		OutOfOrder         yaml.Node `yaml:"out_of_order"`
		Errors             yaml.Node `yaml:"errors"`
		ErrorsRollback     yaml.Node `yaml:"errors.rollback"`
		ErrorsExpired      yaml.Node `yaml:"errors.expired"`
		ErrorsBeforeEpoch  yaml.Node `yaml:"errors.before_epoch"`
		ErrorsCrash        yaml.Node `yaml:"errors.crash"`
		ErrorsOther        yaml.Node `yaml:"errors.other"`
		Available          yaml.Node `yaml:"available"`
		MaxStall           yaml.Node `yaml:"max_stall"`
		MaxStrategyWait    yaml.Node `yaml:"max_strategy_wait"`
		MaxQueue           yaml.Node `yaml:"max_queue"`
		MaxReservationWait yaml.Node `yaml:"max_reservation_wait"`
		MaxLead            yaml.Node `yaml:"max_lead"`
		MaxLag             yaml.Node `yaml:"max_lag"`
		Borrowed           yaml.Node `yaml:"borrowed"`
	}
)

// limitOf returns the most items the list or mapping at path may hold.
func limitOf(path string) (limit int, what string, ok bool) {
	switch path {
	case "events":
		return MaxEvents, "events", true
	case "load.bursts":
		return MaxBursts, "bursts", true
	case "expect":
		return MaxExpectations, "expectations", true
	}
	return 0, "", false
}

type parser struct {
	s        *Scenario
	rootLine int      // the line of the document's mapping
	expect   []string // the keys of expect, in the file's order
	keys     []keyAt  // every key of the format's mappings, to name a field YAML reports
}

// keyAt is a key of the document and its field path.
type keyAt struct {
	line       int
	name, path string
}

// fileDoc is what Parse decodes a document into: its UnmarshalYAML sees
// the document's mapping before YAML decodes anything from it.
type fileDoc struct {
	p *parser
	f fileScenario
}

// UnmarshalYAML checks the document's mapping (shape), then decodes it
// into d.f. It has the signature of yaml's older Unmarshaler, which YAML
// still calls: decode decodes with the Decoder's own options, KnownFields
// included, where yaml.Node.Decode would not.
func (d *fileDoc) UnmarshalYAML(decode func(any) error) error {
	var root nodeOf
	if err := decode(&root); err != nil {
		return err
	}
	p := d.p
	if root.n.Kind != yaml.MappingNode {
		return p.errf(root.n, "", nil, "want a mapping of fields such as start, duration, load, events; got %s", describe(root.n))
	}
	p.rootLine = root.n.Line
	if err := p.shape(root.n, "", reflect.TypeFor[fileScenario]()); err != nil {
		return err
	}
	// The document has the format's shape, within the limits: decoding
	// it, aliases expanded, takes work in proportion to them.
	return decode(&d.f)
}

// nodeOf takes a node as it is.
type nodeOf struct{ n *yaml.Node }

func (c *nodeOf) UnmarshalYAML(n *yaml.Node) error {
	c.n = n
	return nil
}

// shape checks node n at path against type t of the file format before
// YAML decodes n into it: a struct is a mapping with plain keys, none
// given twice, and no more of them than the struct has fields (a key YAML
// does not know is its error); a slice is a list and a map a mapping,
// within the limits that make work (limitOf), a YAML alias counting as
// often as it is used. So decoding, which expands aliases and compares
// the keys of each mapping with one another, works in proportion to the
// limits, and every error names its field and line. shape records the
// line of every field.
func (p *parser) shape(n *yaml.Node, path string, t reflect.Type) error {
	n = resolve(n)
	switch {
	case t == reflect.TypeFor[yaml.Node]():
		return nil // a value: build reads it
	case t.Kind() == reflect.Slice:
		if err := p.list(n, path); err != nil {
			return err
		}
		if err := p.limit(n, path, len(n.Content)); err != nil {
			return err
		}
		for i, item := range n.Content {
			ip := fmt.Sprintf("%s[%d]", path, i)
			p.s.lines[ip] = resolve(item).Line
			if err := p.shape(item, ip, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	case t.Kind() == reflect.Map: // expect: strategies to bounds
		if err := p.mapping(n, path); err != nil {
			return err
		}
		if err := p.limit(n, path, len(n.Content)/2); err != nil {
			return err
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if err := p.key(n, i, path); err != nil {
				return err
			}
			xp := expectPath(k.Value)
			p.s.lines[xp] = resolve(v).Line
			p.expect = append(p.expect, k.Value)
			if err := p.shape(v, xp, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := p.mapping(n, path); err != nil {
		return err
	}
	if len(n.Content)/2 > t.NumField() {
		return p.errf(n, path, nil, "%d fields; want at most %d of %s", len(n.Content)/2, t.NumField(), strings.Join(namesOf(t), ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := p.key(n, i, path); err != nil {
			return err
		}
		k := n.Content[i].Value
		sub := strings.TrimPrefix(path+"."+k, ".")
		p.s.lines[sub] = n.Content[i].Line
		p.keys = append(p.keys, keyAt{line: n.Content[i].Line, name: k, path: sub})
		for j := range t.NumField() {
			if f := t.Field(j); yamlName(f) == k {
				if err := p.shape(n.Content[i+1], sub, f.Type); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// limit checks the count of items at path against its limit (limitOf).
func (p *parser) limit(n *yaml.Node, path string, count int) error {
	if limit, what, ok := limitOf(path); ok && count > limit {
		return p.errf(n, path, nil, "%d %s, more than the %d a scenario may hold", count, what, limit)
	}
	return nil
}

// key checks the key at index i of mapping m at path: a plain name, not
// given before in m.
func (p *parser) key(m *yaml.Node, i int, path string) error {
	k := m.Content[i]
	if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
		if _, err := strategies.Parse(k.Value); path == "expect" && err != nil { // not a strategy, nor all
			return p.errf(k, expectPath(k.Value), err, "%s", trimPrefix(err))
		}
		return p.errf(k, path, nil, "a key must be a plain name, got %s", describe(k))
	}
	for j := 0; j < i; j += 2 {
		if m.Content[j].Value == k.Value {
			sub := strings.TrimPrefix(path+"."+k.Value, ".")
			if path == "expect" {
				sub = expectPath(k.Value)
			}
			return p.errf(k, sub, nil, "given twice")
		}
	}
	return nil
}

// typeError turns YAML's error about decoding the document into an *Error
// naming the field. With the document's shape checked, it is about an
// unknown field.
func (p *parser) typeError(te *yaml.TypeError) error {
	line, msg := cutLine(te.Errors[0])
	rest, ok := strings.CutPrefix(msg, "field ")
	name, typ, found := strings.Cut(rest, " not found in type ")
	if !ok || !found {
		return &Error{File: p.s.File, Line: line, Reason: msg, Err: te}
	}
	e := &Error{File: p.s.File, Line: line, Field: name}
	for _, k := range p.keys {
		if k.line == line && k.name == name {
			e.Field = k.path
			break
		}
	}
	switch typ {
	case reflect.TypeFor[fileEvent]().String():
		e.Reason = "unknown event " + quote(name) + "; want step, freeze, drift, jitter or restart, with at (and seed for jitter)"
	case reflect.TypeFor[fileBounds]().String():
		e.Reason = "unknown field; want one of " + fieldList()
	default:
		for _, t := range []reflect.Type{reflect.TypeFor[fileScenario](), reflect.TypeFor[fileLoad](), reflect.TypeFor[fileBurst]()} {
			if t.String() == typ {
				e.Reason = "unknown field; want one of " + strings.Join(namesOf(t), ", ")
			}
		}
	}
	return e
}

// cutLine splits a YAML message "line 3: …" into its line and the rest.
func cutLine(msg string) (int, string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				return l, after
			}
		}
	}
	return 0, msg
}

// headComment returns the comment at the top of a file as plain text: its
// first lines that are comments, up to the first blank line or content.
func headComment(data []byte) string {
	var lines []string
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		text := strings.TrimSpace(string(line))
		switch {
		case strings.HasPrefix(text, "#"):
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(text, "#"), " "))
			continue
		case text == "" && len(lines) == 0:
			continue
		}
		break
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// field is a field of a file struct that the file sets.
type field struct {
	name string
	node *yaml.Node // resolved: never an alias
}

// fieldsOf returns the fields the file sets in the struct v points to, in
// the order the file sets them.
func fieldsOf(v any) []field {
	rv := reflect.ValueOf(v).Elem()
	var out []field
	for i := range rv.NumField() {
		if n, ok := rv.Field(i).Addr().Interface().(*yaml.Node); ok && n.Kind != 0 {
			out = append(out, field{name: yamlName(rv.Type().Field(i)), node: resolve(n)})
		}
	}
	slices.SortStableFunc(out, func(a, b field) int {
		return cmp.Or(cmp.Compare(a.node.Line, b.node.Line), cmp.Compare(a.node.Column, b.node.Column))
	})
	return out
}

// yamlName returns the name a struct field has in files.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// namesOf returns the names the fields of struct type t have in files.
func namesOf(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		out[i] = yamlName(t.Field(i))
	}
	return out
}

// build turns the decoded file into the scenario's fields.
func (p *parser) build(f *fileScenario) error {
	var layout *yaml.Node
	for _, fd := range fieldsOf(f) {
		n, path := fd.node, fd.name
		var err error
		switch fd.name {
		case "name":
			p.s.Name, err = p.text(n, path)
		case "start":
			p.s.Start, err = p.time(n, path)
		case "layout":
			layout = n
			_, err = p.text(n, path)
		case "node":
			p.s.Node, err = p.int(n, path)
		case "duration":
			p.s.Duration, err = p.duration(n, path)
		case "mark_ahead":
			p.s.MarkAhead, err = p.duration(n, path)
		}
		if err != nil {
			return err
		}
	}
	if err := p.load(&f.Load); err != nil {
		return err
	}
	for i := range f.Events {
		if err := p.event(&f.Events[i], fmt.Sprintf("events[%d]", i)); err != nil {
			return err
		}
	}
	if err := p.expectations(f.Expect); err != nil {
		return err
	}
	if layout != nil {
		l, err := ringflake.ParseLayout(layout.Value)
		if err != nil {
			return p.errf(layout, "layout", err, "%s", trimPrefix(err))
		}
		p.s.Layout = l
	}
	if _, ok := p.s.lines["start"]; !ok {
		return p.failLine(p.rootLine, "start", "missing; want an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	if _, ok := p.s.lines["duration"]; !ok {
		return p.failLine(p.rootLine, "duration", "missing; want a duration such as 100ms")
	}
	return nil
}

func (p *parser) load(l *fileLoad) error {
	for _, fd := range fieldsOf(l) {
		n, path := fd.node, "load."+fd.name
		var err error
		switch fd.name {
		case "rate":
			p.s.Load.Rate, err = p.loadRate(n, path)
		case "goroutines":
			var g int64
			if g, err = p.int(n, path); err == nil && (g < 1 || g > MaxGoroutines) {
				err = p.errf(n, path, nil, "%d: want 1 to %d", g, MaxGoroutines)
			}
			p.s.Load.Goroutines = int(g)
		}
		if err != nil {
			return err
		}
	}
	for i := range l.Bursts {
		bp := fmt.Sprintf("load.bursts[%d]", i)
		var b Burst
		fields := fieldsOf(&l.Bursts[i])
		for _, fd := range fields {
			n, path := fd.node, bp+"."+fd.name
			var err error
			switch fd.name {
			case "at":
				b.At, err = p.duration(n, path)
			case "count":
				b.Count, err = p.int(n, path)
			case "over":
				b.Over, err = p.duration(n, path)
			}
			if err != nil {
				return err
			}
		}
		for _, need := range []string{"at", "count"} {
			if !slices.ContainsFunc(fields, func(fd field) bool { return fd.name == need }) {
				return p.failLine(p.s.lines[bp], bp+"."+need, "missing")
			}
		}
		p.s.Load.Bursts = append(p.s.Load.Bursts, b)
	}
	return nil
}

func (p *parser) event(fe *fileEvent, ep string) error {
	var ev Event
	hasAt := false
	for _, fd := range fieldsOf(fe) {
		n, path := fd.node, ep+"."+fd.name
		if k := kindOf(fd.name); k != 0 {
			if ev.Kind != 0 {
				return p.errf(n, path, nil, "an event does one thing; this one is already a %v", ev.Kind)
			}
			ev.Kind = k
		}
		var err error
		switch fd.name {
		case "at":
			ev.At, err = p.duration(n, path)
			hasAt = true
		case "seed":
			var s int64
			if s, err = p.int(n, path); err == nil && s < 0 {
				err = p.errf(n, path, nil, "%d: want a seed >= 0", s)
			}
			ev.Seed = uint64(s)
		case "step", "freeze", "jitter":
			ev.D, err = p.duration(n, path)
		case "drift":
			ev.Rate, err = p.rate(n, path)
		case "restart":
			switch {
			case n.Kind == yaml.ScalarNode && (n.Value == "crash" || n.ShortTag() == "!!null" || n.Value == "true"):
			case n.Kind == yaml.ScalarNode && n.Value == "clean":
				ev.Clean = true
			default:
				err = p.errf(n, path, nil, "want crash or clean, got %s", describe(n))
			}
		}
		if err != nil {
			return err
		}
	}
	switch {
	case ev.Kind == 0:
		return p.failLine(p.s.lines[ep], ep, "no event; want one of step, freeze, drift, jitter or restart")
	case !hasAt:
		return p.failLine(p.s.lines[ep], ep+".at", "missing; want the true time since the start, such as 20ms")
	}
	p.s.Events = append(p.s.Events, ev)
	return nil
}

func kindOf(name string) Kind {
	for k := Step; k <= Restart; k++ {
		if k.String() == name {
			return k
		}
	}
	return 0
}

// expectations reads the expectations, in the order the file gives them.
func (p *parser) expectations(bounds map[string]fileBounds) error {
	for _, key := range p.expect {
		x := Expectation{Key: key}
		xp := expectPath(key)
		if key != "all" {
			st, err := strategies.Parse(key)
			if err != nil {
				e := p.failLine(p.s.lines[xp], xp, trimPrefix(err))
				e.Err = err
				return e
			}
			x.Strategy = st.String()
		}
		fb := bounds[key]
		for _, fd := range fieldsOf(&fb) {
			if fd.name != "errors" || fd.node.Kind != yaml.MappingNode {
				if err := p.bound(&x, fd.name, fd.node, xp); err != nil {
					return err
				}
				continue
			}
			kinds := fd.node.Content // errors: {rollback: …}
			for j := 0; j+1 < len(kinds); j += 2 {
				k := kinds[j]
				switch {
				case !slices.Contains(errorKinds[:], k.Value):
					return p.errf(k, xp+".errors."+k.Value, nil, "unknown field; want one of %s", strings.Join(errorKinds[:], ", "))
				case slices.ContainsFunc(x.Bounds, func(b Bound) bool { return b.Field == "errors."+k.Value }):
					return p.errf(k, xp+".errors."+k.Value, nil, "given twice")
				}
				if err := p.bound(&x, "errors."+k.Value, resolve(kinds[j+1]), xp); err != nil {
					return err
				}
			}
		}
		p.s.Expect = append(p.s.Expect, x)
	}
	return nil
}

func (p *parser) bound(x *Expectation, field string, v *yaml.Node, xp string) error {
	fp := xp + "." + field
	n, err := p.scalar(v, fp, "a value")
	if err != nil {
		return err
	}
	op, val, reason := parseBound(field, n.Value)
	if reason != "" {
		return p.errf(n, fp, nil, "%s", reason)
	}
	x.Bounds = append(x.Bounds, Bound{Field: field, Op: op, Value: val, Line: n.Line})
	return nil
}
