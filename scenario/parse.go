package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// ReadFile reads and validates the scenario file at path (see the package
// documentation for the format). Errors: those of [os.ReadFile], and those
// of [Parse].
func ReadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads and validates a scenario in the file format (see the package
// documentation); file names it in errors and becomes Scenario.File.
// Errors match [ErrInvalid] and are [*Error] values naming the file, line
// and field: YAML that does not parse, more than one YAML document (empty
// ones aside), an unknown field or event, a value of the wrong type, a bad
// time, duration, rate or layout, an unknown strategy (also matching
// strategies.ErrInvalidStrategy), and everything [Scenario.Validate]
// rejects.
func Parse(file string, data []byte) (*Scenario, error) {
	p := &parser{s: &Scenario{File: file, lines: map[string]int{}}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
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
		if len(more.Content) > 0 && more.Content[0].ShortTag() != "!!null" {
			return nil, &Error{File: file, Line: more.Line,
				Reason: "a second YAML document; a scenario file holds one scenario (put each in a file of its own)"}
		}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: file, Reason: "empty file; want a mapping with at least start and duration"}
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "", nil, "want a mapping of fields such as start, duration, load, events; got %s", describe(root))
	}
	p.s.Comment = comment(doc.HeadComment)
	if p.s.Comment == "" && len(root.Content) > 0 {
		p.s.Comment = comment(root.Content[0].HeadComment)
	}
	if err := p.top(root); err != nil {
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

type parser struct{ s *Scenario }

// comment turns a YAML head comment into plain text.
func comment(c string) string {
	lines := strings.Split(c, "\n")
	for i, l := range lines {
		l = strings.TrimPrefix(strings.TrimSpace(l), "#")
		lines[i] = strings.TrimPrefix(l, " ")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// yamlError turns a YAML syntax error into an *Error with its line.
func (p *parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line, msg = l, after
			}
		}
	}
	return &Error{File: p.s.File, Line: line, Reason: "not valid YAML: " + msg, Err: err}
}

func (p *parser) errf(n *yaml.Node, path string, cause error, format string, args ...any) *Error {
	return &Error{File: p.s.File, Line: n.Line, Field: path, Reason: fmt.Sprintf(format, args...), Err: cause}
}

// resolve follows an alias to its node.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// describe names what a node holds, for errors about wrong types.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "the boolean " + n.Value
		case "!!int", "!!float":
			return "the number " + n.Value
		}
		return strconv.Quote(n.Value)
	}
	return "an unsupported YAML node"
}

// fields walks a mapping node, calling f for each key with its value, and
// rejects keys that are not in known and keys given twice.
func (p *parser) fields(m *yaml.Node, path string, known []string, f func(key string, v *yaml.Node, path string) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, path, nil, "a key must be a plain name, got %s", describe(k))
		}
		if known != nil && !contains(known, k.Value) {
			return p.errf(k, sub, nil, "unknown field; want one of %s", strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return p.errf(k, sub, nil, "given twice")
		}
		seen[k.Value] = true
		p.s.lines[sub] = k.Line
		if err := f(k.Value, v, sub); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) top(root *yaml.Node) error {
	var layout string
	var layoutNode *yaml.Node
	err := p.fields(root, "", []string{"name", "start", "layout", "node", "duration", "mark_ahead", "load", "events", "expect"},
		func(key string, v *yaml.Node, path string) error {
			var err error
			switch key {
			case "name":
				p.s.Name, err = p.text(v, path)
			case "start":
				p.s.Start, err = p.time(v, path)
			case "layout":
				layout, err = p.text(v, path)
				layoutNode = v
			case "node":
				p.s.Node, err = p.int(v, path)
			case "duration":
				p.s.Duration, err = p.duration(v, path)
			case "mark_ahead":
				p.s.MarkAhead, err = p.duration(v, path)
			case "load":
				err = p.load(v, path)
			case "events":
				err = p.events(v, path)
			case "expect":
				err = p.expect(v, path)
			}
			return err
		})
	if err != nil {
		return err
	}
	if layoutNode != nil {
		l, err := ringflake.ParseLayout(layout)
		if err != nil {
			return p.errf(layoutNode, "layout", err, "%s", trimPrefix(err))
		}
		p.s.Layout = l
	}
	if _, ok := p.s.lines["start"]; !ok {
		return p.errf(root, "start", nil, "missing; want an RFC 3339 time such as 2026-01-02T15:04:05Z")
	}
	if _, ok := p.s.lines["duration"]; !ok {
		return p.errf(root, "duration", nil, "missing; want a duration such as 100ms")
	}
	return nil
}

func (p *parser) scalar(n *yaml.Node, path, want string) (*yaml.Node, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return nil, p.errf(n, path, nil, "want %s, got %s", want, describe(n))
	}
	return n, nil
}

func (p *parser) text(n *yaml.Node, path string) (string, error) {
	n, err := p.scalar(n, path, "text")
	if err != nil {
		return "", err
	}
	return n.Value, nil
}

func (p *parser) int(n *yaml.Node, path string) (int64, error) {
	n, err := p.scalar(n, path, "a whole number")
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseInt(n.Value, 10, 64)
	if n.ShortTag() != "!!int" || perr != nil {
		return 0, p.errf(n, path, nil, "want a whole number, got %s", describe(n))
	}
	return v, nil
}

func (p *parser) time(n *yaml.Node, path string) (time.Time, error) {
	const want = "an RFC 3339 time such as 2026-01-02T15:04:05Z"
	n, err := p.scalar(n, path, want)
	if err != nil {
		return time.Time{}, err
	}
	t, perr := time.Parse(time.RFC3339Nano, n.Value)
	if perr != nil {
		return time.Time{}, p.errf(n, path, nil, "%q is not %s", n.Value, want)
	}
	return t, nil
}

func (p *parser) duration(n *yaml.Node, path string) (time.Duration, error) {
	const want = "a duration such as 3ms, -2s or 1m30s"
	n, err := p.scalar(n, path, want)
	if err != nil {
		return 0, err
	}
	d, perr := time.ParseDuration(n.Value)
	if perr != nil {
		return 0, p.errf(n, path, nil, "%s is not %s", describe(n), want)
	}
	return d, nil
}

// rate reads a drift rate: a number (-0.005), a percentage ("-0.5%") or
// parts per million ("-5000ppm").
func (p *parser) rate(n *yaml.Node, path string) (float64, error) {
	const want = "a rate such as -0.5%, -5000ppm or -0.005"
	n, err := p.scalar(n, path, want)
	if err != nil {
		return 0, err
	}
	s, per := strings.TrimSpace(n.Value), 1.0
	switch {
	case strings.HasSuffix(s, "%"):
		s, per = strings.TrimSuffix(s, "%"), 100
	case strings.HasSuffix(s, "ppm"):
		s, per = strings.TrimSuffix(s, "ppm"), 1e6
	}
	v, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, p.errf(n, path, nil, "%s is not %s", describe(n), want)
	}
	return v / per, nil // a division, so that 200ppm reads as 0.0002 exactly
}

func (p *parser) mapping(n *yaml.Node, path string) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, path, nil, "want a mapping, got %s", describe(n))
	}
	return nil
}

func (p *parser) list(n *yaml.Node, path string) error {
	if n.Kind != yaml.SequenceNode {
		return p.errf(n, path, nil, "want a list, got %s", describe(n))
	}
	return nil
}

func (p *parser) load(n *yaml.Node, path string) error {
	if err := p.mapping(n, path); err != nil {
		return err
	}
	return p.fields(n, path, []string{"rate", "goroutines", "bursts"}, func(key string, v *yaml.Node, path string) error {
		switch key {
		case "rate":
			r, err := p.loadRate(v, path)
			p.s.Load.Rate = r
			return err
		case "goroutines":
			g, err := p.int(v, path)
			if err == nil && (g < 1 || g > MaxGoroutines) {
				err = p.errf(v, path, nil, "%d: want 1 to %d", g, MaxGoroutines)
			}
			p.s.Load.Goroutines = int(g)
			return err
		default: // bursts
			if err := p.list(v, path); err != nil {
				return err
			}
			for i, b := range v.Content {
				b = resolve(b)
				bp := fmt.Sprintf("%s[%d]", path, i)
				p.s.lines[bp] = b.Line
				if err := p.mapping(b, bp); err != nil {
					return err
				}
				var burst Burst
				err := p.fields(b, bp, []string{"at", "count", "over"}, func(key string, v *yaml.Node, path string) error {
					var err error
					switch key {
					case "at":
						burst.At, err = p.duration(v, path)
					case "count":
						burst.Count, err = p.int(v, path)
					case "over":
						burst.Over, err = p.duration(v, path)
					}
					return err
				})
				if err != nil {
					return err
				}
				for _, need := range []string{"at", "count"} {
					if _, ok := p.s.lines[bp+"."+need]; !ok {
						return p.errf(b, bp+"."+need, nil, "missing")
					}
				}
				p.s.Load.Bursts = append(p.s.Load.Bursts, burst)
			}
			return nil
		}
	})
}

// loadRate reads the load's rate.
func (p *parser) loadRate(n *yaml.Node, path string) (Rate, error) {
	n, err := p.scalar(n, path, rateWant)
	if err != nil {
		return Rate{}, err
	}
	r, err := ParseRate(n.Value)
	if err != nil {
		return Rate{}, p.errf(n, path, nil, "%s is not %s", describe(n), rateWant)
	}
	return r, nil
}

const rateWant = "calls per time unit such as 10/ms, 2500/s or 3/10ms"

// ParseRate reads a rate as scenario files write it: COUNT/UNIT, where UNIT
// is a duration (10ms) or a unit alone (ms, s), as in "10/ms", "2500/s" or
// "3/10ms"; or "0" for none. Errors match [ErrInvalid].
func ParseRate(s string) (Rate, error) {
	s = strings.ReplaceAll(s, " ", "")
	if s == "0" {
		return Rate{}, nil
	}
	count, per, ok := strings.Cut(s, "/")
	c, cerr := strconv.ParseInt(count, 10, 64)
	if per != "" && (per[0] < '0' || per[0] > '9') {
		per = "1" + per
	}
	d, derr := time.ParseDuration(per)
	if !ok || cerr != nil || derr != nil || c < 0 || d <= 0 {
		return Rate{}, &Error{Reason: fmt.Sprintf("%q is not %s", s, rateWant)}
	}
	return Rate{Count: c, Per: d}, nil
}

func (p *parser) events(n *yaml.Node, path string) error {
	if err := p.list(n, path); err != nil {
		return err
	}
	kinds := []string{"step", "freeze", "drift", "jitter", "restart"}
	for i, en := range n.Content {
		en = resolve(en)
		ep := fmt.Sprintf("%s[%d]", path, i)
		p.s.lines[ep] = en.Line
		if err := p.mapping(en, ep); err != nil {
			return err
		}
		var ev Event
		var kindNode *yaml.Node
		known := append([]string{"at", "seed"}, kinds...)
		err := p.fields(en, ep, nil, func(key string, v *yaml.Node, path string) error {
			if !contains(known, key) {
				return p.errf(v, path, nil, "unknown event %q; want step, freeze, drift, jitter or restart, with at (and seed for jitter)", key)
			}
			var err error
			if k := kindOf(key); k != 0 {
				if ev.Kind != 0 {
					return p.errf(v, path, nil, "an event does one thing; this one is already a %v", ev.Kind)
				}
				ev.Kind, kindNode = k, v
			}
			switch key {
			case "at":
				ev.At, err = p.duration(v, path)
			case "seed":
				var s int64
				if s, err = p.int(v, path); err == nil && s < 0 {
					err = p.errf(v, path, nil, "%d: want a seed >= 0", s)
				}
				ev.Seed = uint64(s)
			case "step", "freeze", "jitter":
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
		if err != nil {
			return err
		}
		if kindNode == nil {
			return p.errf(en, ep, nil, "no event; want one of step, freeze, drift, jitter or restart")
		}
		if _, ok := p.s.lines[ep+".at"]; !ok {
			return p.errf(en, ep+".at", nil, "missing; want the true time since the start, such as 20ms")
		}
		p.s.Events = append(p.s.Events, ev)
	}
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

func (p *parser) expect(n *yaml.Node, path string) error {
	if err := p.mapping(n, path); err != nil {
		return err
	}
	return p.fields(n, path, nil, func(key string, v *yaml.Node, _ string) error {
		x := Expectation{Key: key}
		if key != "all" {
			st, err := strategies.Parse(key)
			if err != nil {
				return p.errf(v, expectPath(key), err, "%s", trimPrefix(err))
			}
			x.Strategy = st.String()
		}
		xp := x.path()
		p.s.lines[xp] = v.Line
		if err := p.mapping(v, xp); err != nil {
			return err
		}
		err := p.fields(v, xp, nil, func(field string, v *yaml.Node, fp string) error {
			if field == "errors" && v.Kind == yaml.MappingNode {
				return p.fields(v, fp, errorKinds[:], func(kind string, v *yaml.Node, _ string) error {
					return p.bound(&x, "errors."+kind, v, xp)
				})
			}
			return p.bound(&x, field, v, xp)
		})
		if err != nil {
			return err
		}
		p.s.Expect = append(p.s.Expect, x)
		return nil
	})
}

func (p *parser) bound(x *Expectation, field string, v *yaml.Node, xp string) error {
	fp := xp + "." + field
	if _, ok := fieldKindOf(field); !ok {
		return p.errf(v, fp, nil, "unknown field; want one of %s", fieldList())
	}
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
