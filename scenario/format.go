package scenario

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteTo writes s in the file format, so that [Parse] reads back an
// equal scenario: the comment first, then the fields, events and
// expectations. Default values (the Twitter layout, node 0, the default
// mark interval, one goroutine) are left out. It implements [io.WriterTo].
func (s *Scenario) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if s.Comment != "" {
		for _, line := range strings.Split(s.Comment, "\n") {
			b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
		}
	}
	if s.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", yamlString(s.Name))
	}
	fmt.Fprintf(&b, "start: %s\n", s.Start.Format(time.RFC3339Nano))
	if !s.Layout.IsZero() {
		fmt.Fprintf(&b, "layout: %s\n", yamlString(s.Layout.String()))
	}
	if s.Node != 0 {
		fmt.Fprintf(&b, "node: %d\n", s.Node)
	}
	fmt.Fprintf(&b, "duration: %s\n", formatDuration(s.Duration))
	if s.MarkAhead != 0 {
		fmt.Fprintf(&b, "mark_ahead: %s\n", formatDuration(s.MarkAhead))
	}
	if l := s.Load; l.Rate.Count > 0 || l.Goroutines > 0 || len(l.Bursts) > 0 {
		b.WriteString("load:\n")
		if l.Rate.Count > 0 {
			fmt.Fprintf(&b, "  rate: %s\n", l.Rate)
		}
		if l.Goroutines > 0 {
			fmt.Fprintf(&b, "  goroutines: %d\n", l.Goroutines)
		}
		if len(l.Bursts) > 0 {
			b.WriteString("  bursts:\n")
			for _, x := range l.Bursts {
				fmt.Fprintf(&b, "    - {at: %s, count: %d", formatDuration(x.At), x.Count)
				if x.Over > 0 {
					fmt.Fprintf(&b, ", over: %s", formatDuration(x.Over))
				}
				b.WriteString("}\n")
			}
		}
	}
	if len(s.Events) > 0 {
		b.WriteString("events:\n")
		for _, e := range s.Events {
			fmt.Fprintf(&b, "  - {at: %s, %s: ", formatDuration(e.At), e.Kind)
			switch e.Kind {
			case Drift:
				b.WriteString(formatRate(e.Rate))
			case Jitter:
				fmt.Fprintf(&b, "%s, seed: %d", formatDuration(e.D), e.Seed)
			case Restart:
				if e.Clean {
					b.WriteString("clean")
				} else {
					b.WriteString("crash")
				}
			default:
				b.WriteString(formatDuration(e.D))
			}
			b.WriteString("}\n")
		}
	}
	if len(s.Expect) > 0 {
		b.WriteString("expect:\n")
		for _, x := range s.Expect {
			key := "all"
			if x.Strategy != "" {
				key = yamlString(x.Strategy)
			}
			parts := make([]string, 0, len(x.Bounds))
			for _, bd := range x.Bounds {
				v := bd.Want()
				if strings.ContainsAny(v[:1], "<>=") {
					v = strconv.Quote(v) // a plain > would start a folded block
				}
				parts = append(parts, bd.Field+": "+v)
			}
			fmt.Fprintf(&b, "  %s: {%s}\n", key, strings.Join(parts, ", "))
		}
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// yamlString writes s as a plain YAML scalar when that reads back as the
// same string, and quoted otherwise.
func yamlString(s string) string {
	plain := s != "" && !strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@` <=") &&
		!strings.ContainsAny(s, ",:#[]{}\"'\\\n") && strings.TrimSpace(s) == s
	if plain {
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "null", "~":
			plain = false
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			plain = false
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}
