package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
// Parse takes time and memory in proportion to the size of data, and for
// a file of YAML aliases to the limits at most.
func Parse(file string, data []byte) (*Scenario, error) {
	if len(data) > MaxFileSize {
		return nil, tooLarge(file, fmt.Sprintf("%d bytes", len(data)))
	}
	p := &parser{s: &Scenario{File: file, Comment: headComment(data), lines: map[string]int{}}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return nil, &Error{File: file, Reason: "empty file; want a mapping with at least start and duration"}
	case err != nil:
		return nil, p.yamlError(err)
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
		if !isEmpty(&more) {
			return nil, &Error{File: file, Line: more.Line,
				Reason: "a second YAML document; a scenario file holds one scenario (put each in a file of its own)"}
		}
	}
	if err := p.document(&doc); err != nil {
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

// The file is read in one way: YAML parses it into a tree of nodes, which
// is never decoded into Go values; the parser walks the tree once, in the
// file's order, field by field, checking each mapping's keys against the
// names the format gives it and each value against what its field takes.
// Every error so names its field and line. Aliases are followed, never
// copied, and count as often as they are used: a list's length is checked
// against its limit before its items are read, and a mapping's keys
// against the names of its fields, so the format's depth and limits bound
// the walk whatever the aliases.

// The names of the fields of the format's mappings, in the order messages
// list them.
var (
	scenarioFields = []string{"name", "start", "layout", "node", "duration", "mark_ahead", "load", "events", "expect"}
	loadFields     = []string{"rate", "goroutines", "bursts"}
	burstFields    = []string{"at", "count", "over"}
	eventFields    = []string{"at", "step", "freeze", "drift", "jitter", "restart", "pause", "observe", "seed"}
	boundFields    = []string{"issued", "duplicates", "out_of_order", "errors",
		"errors.rollback", "errors.frozen", "errors.expired", "errors.before_epoch", "errors.crash", "errors.other",
		"available", "max_stall", "max_strategy_wait", "max_queue", "max_reservation_wait", "max_lead", "max_lag", "borrowed"}
)

type parser struct {
	s        *Scenario
	rootLine int // the line of the document's mapping
}

// isEmpty reports whether a YAML document holds nothing.
func isEmpty(doc *yaml.Node) bool {
	return len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null"
}

// document reads the scenario's mapping.
func (p *parser) document(doc *yaml.Node) error {
	if isEmpty(doc) {
		return &Error{File: p.s.File, Line: 1, Reason: "want a mapping of fields such as start, duration, load, events; got nothing"}
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return p.errf(root, "", nil, "want a mapping of fields such as start, duration, load, events; got %s", describe(root))
	}
	p.rootLine = root.Line
	err := p.fields(root, "", scenarioFields, unknownField(scenarioFields), func(name, path string, n *yaml.Node) error {
		var err error
		switch name {
		case "name":
			p.s.Name, err = p.text(n, path)
		case "start":
			p.s.Start, err = p.time(n, path)
		case "layout":
			var text string
			if text, err = p.text(n, path); err == nil {
				l, lerr := ringflake.ParseLayout(text)
				if lerr != nil {
					return p.errf(n, path, lerr, "%s", trimPrefix(lerr))
				}
				p.s.Layout = l
			}
		case "node":
			p.s.Node, err = p.int(n, path)
		case "duration":
			p.s.Duration, err = p.duration(n, path)
		case "mark_ahead":
			p.s.MarkAhead, err = p.duration(n, path)
		case "load":
			err = p.load(n)
		case "events":
			err = p.events(n)
		case "expect":
			err = p.expectations(n)
		}
		return err
	})
	if err != nil {
		return err
	}
	if _, ok := p.s.lines["start"]; !ok {
		return p.failLine(p.rootLine, "start", "missing; want an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	if _, ok := p.s.lines["duration"]; !ok {
		return p.failLine(p.rootLine, "duration", "missing; want a duration such as 100ms")
	}
	return nil
}

// fields walks mapping n at path, whose keys must be among names: it
// checks that n is a mapping of no more keys than names, each key a plain
// name given once and known (unknown tells why not, as a reason), records
// the line of each key, and calls each with the key, its field path and
// its value (an alias followed), in the file's order.
func (p *parser) fields(n *yaml.Node, path string, names []string, unknown func(key string) string, each func(name, path string, v *yaml.Node) error) error {
	if err := p.mapping(n, path); err != nil {
		return err
	}
	if len(n.Content)/2 > len(names) {
		return p.errf(n, path, nil, "%d fields; want at most %d of %s", len(n.Content)/2, len(names), strings.Join(names, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := p.key(n, i, path); err != nil {
			return err
		}
		k := n.Content[i]
		sub := strings.TrimPrefix(path+"."+k.Value, ".")
		if !slices.Contains(names, k.Value) {
			return p.errf(k, sub, nil, "%s", unknown(k.Value))
		}
		p.s.lines[sub] = k.Line
		if err := each(k.Value, sub, resolve(n.Content[i+1])); err != nil {
			return err
		}
	}
	return nil
}

// unknownField returns the reason given for a key of a mapping that is
// not among names.
func unknownField(names []string) func(string) string {
	return func(string) string { return "unknown field; want one of " + strings.Join(names, ", ") }
}

// unknownEvent is the reason given for a key of an event that is not a
// field of events.
func unknownEvent(key string) string {
	return "unknown event " + quote(key) + "; want step, freeze, drift, jitter, restart, pause or observe, with at (and seed for jitter)"
}

// unknownBound is the reason given for a key of an expectation that is
// not a field of the report.
func unknownBound(string) string { return "unknown field; want one of " + fieldList() }

// items walks list n at path, of at most limit items (what names them in
// the error): it records the line of each item and calls each with the
// item's path and node (an alias followed).
func (p *parser) items(n *yaml.Node, path string, limit int, what string, each func(path string, item *yaml.Node) error) error {
	if err := p.list(n, path); err != nil {
		return err
	}
	if len(n.Content) > limit {
		return p.errf(n, path, nil, "%d %s, more than the %d a scenario may hold", len(n.Content), what, limit)
	}
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		item = resolve(item)
		p.s.lines[ip] = item.Line
		if err := each(ip, item); err != nil {
			return err
		}
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

// load reads the load's mapping.
func (p *parser) load(n *yaml.Node) error {
	return p.fields(n, "load", loadFields, unknownField(loadFields), func(name, path string, v *yaml.Node) error {
		var err error
		switch name {
		case "rate":
			p.s.Load.Rate, err = p.loadRate(v, path)
		case "goroutines":
			var g int64
			if g, err = p.int(v, path); err == nil && (g < 1 || g > MaxGoroutines) {
				err = p.errf(v, path, nil, "%d: want 1 to %d", g, MaxGoroutines)
			}
			p.s.Load.Goroutines = int(g)
		case "bursts":
			err = p.items(v, path, MaxBursts, "bursts", p.burst)
		}
		return err
	})
}

// burst reads the burst at bp.
func (p *parser) burst(bp string, n *yaml.Node) error {
	var b Burst
	seen := map[string]bool{}
	err := p.fields(n, bp, burstFields, unknownField(burstFields), func(name, path string, v *yaml.Node) error {
		seen[name] = true
		var err error
		switch name {
		case "at":
			b.At, err = p.duration(v, path)
		case "count":
			b.Count, err = p.int(v, path)
		case "over":
			b.Over, err = p.duration(v, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, need := range []string{"at", "count"} {
		if !seen[need] {
			return p.failLine(p.s.lines[bp], bp+"."+need, "missing")
		}
	}
	p.s.Load.Bursts = append(p.s.Load.Bursts, b)
	return nil
}

// events reads the list of events.
func (p *parser) events(n *yaml.Node) error {
	return p.items(n, "events", MaxEvents, "events", p.event)
}

// event reads the event at ep.
func (p *parser) event(ep string, n *yaml.Node) error {
	var ev Event
	hasAt := false
	err := p.fields(n, ep, eventFields, unknownEvent, func(name, path string, v *yaml.Node) error {
		if k := kindOf(name); k != 0 {
			if ev.Kind != 0 {
				return p.errf(v, path, nil, "an event does one thing; this one is already a %v", ev.Kind)
			}
			ev.Kind = k
		}
		var err error
		switch name {
		case "at":
			ev.At, err = p.duration(v, path)
			hasAt = true
		case "seed":
			var s int64
			if s, err = p.int(v, path); err == nil && s < 0 {
				err = p.errf(v, path, nil, "%d: want a seed >= 0", s)
			}
			ev.Seed = uint64(s)
		case "step", "freeze", "jitter", "pause", "observe":
			ev.D, err = p.duration(v, path)
		case "drift":
			ev.Rate, err = p.rate(v, path)
		case "restart":
			switch {
			case v.Kind == yaml.ScalarNode && (v.Value == "crash" || v.ShortTag() == "!!null" || v.Value == "true"):
			case v.Kind == yaml.ScalarNode && v.Value == "clean":
				ev.Clean = true
			default:
				err = p.errf(v, path, nil, "want crash or clean, got %s", describe(v))
			}
		}
		return err
	})
	switch {
	case err != nil:
		return err
	case ev.Kind == 0:
		return p.failLine(p.s.lines[ep], ep, "no event; want one of step, freeze, drift, jitter, restart, pause or observe")
	case !hasAt:
		return p.failLine(p.s.lines[ep], ep+".at", "missing; want the true time since the start, such as 20ms")
	}
	p.s.Events = append(p.s.Events, ev)
	return nil
}

func kindOf(name string) Kind {
	for k := Step; k <= lastKind; k++ {
		if k.String() == name {
			return k
		}
	}
	return 0
}

// expectations reads the expectations, in the order the file gives them:
// a mapping of strategies (or all) to bounds.
func (p *parser) expectations(n *yaml.Node) error {
	if err := p.mapping(n, "expect"); err != nil {
		return err
	}
	if count := len(n.Content) / 2; count > MaxExpectations {
		return p.errf(n, "expect", nil, "%d expectations, more than the %d a scenario may hold", count, MaxExpectations)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := p.key(n, i, "expect"); err != nil {
			return err
		}
		key, v := n.Content[i].Value, resolve(n.Content[i+1])
		xp := expectPath(key)
		p.s.lines[xp] = v.Line
		x := Expectation{Key: key}
		if key != "all" {
			st, err := strategies.Parse(key)
			if err != nil {
				return p.errf(v, xp, err, "%s", trimPrefix(err))
			}
			x.Strategy = st.String()
		}
		err := p.fields(v, xp, boundFields, unknownBound, func(name, path string, v *yaml.Node) error {
			if name != "errors" || v.Kind != yaml.MappingNode {
				return p.bound(&x, name, v, xp)
			}
			for j := 0; j+1 < len(v.Content); j += 2 { // errors: {rollback: …}
				if err := p.key(v, j, path); err != nil {
					return err
				}
				k := v.Content[j]
				switch {
				case !slices.Contains(errorKinds[:], k.Value):
					return p.errf(k, path+"."+k.Value, nil, "unknown field; want one of %s", strings.Join(errorKinds[:], ", "))
				case slices.ContainsFunc(x.Bounds, func(b Bound) bool { return b.Field == "errors."+k.Value }):
					return p.errf(k, path+"."+k.Value, nil, "given twice")
				}
				if err := p.bound(&x, "errors."+k.Value, resolve(v.Content[j+1]), xp); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		p.s.Expect = append(p.s.Expect, x)
	}
	return nil
}

// bound reads the bound on field of expectation x at xp.
func (p *parser) bound(x *Expectation, field string, v *yaml.Node, xp string) error {
	fp := xp + "." + field
	n, err := p.scalar(v, fp, "a value")
	if err != nil {
		return err
	}
	if slices.ContainsFunc(x.Bounds, func(b Bound) bool { return b.Field == field }) {
		return p.errf(n, fp, nil, "given twice")
	}
	op, val, reason := parseBound(field, n.Value)
	if reason != "" {
		return p.errf(n, fp, nil, "%s", reason)
	}
	x.Bounds = append(x.Bounds, Bound{Field: field, Op: op, Value: val, Line: n.Line})
	return nil
}
