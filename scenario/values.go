package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The values of a scenario file's fields, read from their YAML nodes.
// Every error is an *Error naming the field and its line.

// yamlError turns a YAML syntax error into an *Error with its line.
func (p *parser) yamlError(err error) error {
	line, msg := cutLine(err.Error())
	return &Error{File: p.s.File, Line: line, Reason: "not valid YAML: " + msg, Err: err}
}

func (p *parser) errf(n *yaml.Node, path string, cause error, format string, args ...any) *Error {
	return &Error{File: p.s.File, Line: n.Line, Field: path, Reason: fmt.Sprintf(format, args...), Err: cause}
}

// failLine is errf for a line without its node at hand.
func (p *parser) failLine(line int, path, reason string) *Error {
	return &Error{File: p.s.File, Line: line, Field: path, Reason: reason}
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
			return "the number " + shorten(n.Value)
		}
		return quote(n.Value)
	}
	return "an unsupported YAML node"
}

// quote returns s quoted, cut to 64 bytes, for messages: a value of a
// file can be as long as the file.
func quote(s string) string { return strconv.Quote(shorten(s)) }

// shorten cuts s to 64 bytes, marking the cut with "…".
func shorten(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	i := most
	for i > 0 && s[i]&0xc0 == 0x80 { // not inside a UTF-8 sequence
		i--
	}
	return s[:i] + "…"
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
		return time.Time{}, p.errf(n, path, nil, "%s is not %s", quote(n.Value), want)
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
// "3/10ms"; or "0" for none. A count of 0 per any unit is no calls too:
// the zero Rate. Errors match [ErrInvalid].
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
		return Rate{}, &Error{Reason: fmt.Sprintf("%s is not %s", quote(s), rateWant)}
	}
	if c == 0 {
		return Rate{}, nil // "0/s" is no calls, as "0" is
	}
	return Rate{Count: c, Per: d}, nil
}
