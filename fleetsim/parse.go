package fleetsim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/scenario"
)

// IsFleet reports whether data is a fleet scenario: a file with a line
// that starts with the top-level key "fleet:". It reads no YAML, so a
// hostile file costs it one pass over the bytes. `ringflake replay` uses
// it to pick the engine.
func IsFleet(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if bytes.HasPrefix(line, []byte("fleet:")) {
			return true
		}
	}
	return false
}

// ReadFile reads and parses the fleet scenario at path.
func ReadFile(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, scenario.MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > scenario.MaxFileSize {
		return nil, &Error{File: path, Reason: fmt.Sprintf("more than %d bytes", scenario.MaxFileSize)}
	}
	return Parse(path, data)
}

type rawFile struct {
	Name     string    `yaml:"name"`
	Start    string    `yaml:"start"`
	Duration string    `yaml:"duration"`
	Seed     uint64    `yaml:"seed"`
	Layout   string    `yaml:"layout"`
	Fleet    rawFleet  `yaml:"fleet"`
	Events   []rawEv   `yaml:"events"`
	Expect   yaml.Node `yaml:"expect"`
}

type rawFleet struct {
	Nodes        int       `yaml:"nodes"`
	IDs          int       `yaml:"ids"`
	Server       rawServer `yaml:"server"`
	Strategy     string    `yaml:"strategy"`
	Load         rawRate   `yaml:"load"`
	Messages     rawMsgs   `yaml:"messages"`
	RestartAfter string    `yaml:"restart_after"`
	Marks        string    `yaml:"marks"`
	// Clocks maps a node to a single-node scenario file, such as one
	// `ringflake record` wrote: the node's clock follows its events.
	Clocks map[int]string `yaml:"clocks"`
}

type rawServer struct {
	Kind       string `yaml:"kind"`
	TTL        string `yaml:"ttl"`
	RenewEvery string `yaml:"renew_every"`
	Margin     string `yaml:"margin"`
	Timeout    string `yaml:"timeout"`
	MaxLead    string `yaml:"max_lead"`
	RTT        string `yaml:"rtt"`
	Lag        string `yaml:"lag"`
}

type rawRate struct {
	Rate string `yaml:"rate"`
}

type rawMsgs struct {
	Rate     string `yaml:"rate"`
	MinDelay string `yaml:"min_delay"`
	MaxDelay string `yaml:"max_delay"`
}

type rawEv struct {
	At        string   `yaml:"at"`
	Node      *int     `yaml:"node"`
	Server    string   `yaml:"server"`
	Partition []int    `yaml:"partition"`
	From      string   `yaml:"from"`
	For       string   `yaml:"for"`
	Delay     string   `yaml:"delay"`
	Step      string   `yaml:"step"`
	Freeze    string   `yaml:"freeze"`
	Pause     string   `yaml:"pause"`
	Jitter    string   `yaml:"jitter"`
	Seed      uint64   `yaml:"seed"`
	Drift     *float64 `yaml:"drift"`
	Crash     bool     `yaml:"crash"`
	LoseDisk  bool     `yaml:"lose-disk"`
	Restart   string   `yaml:"restart"`
}

// Parse reads a fleet scenario from data; file names it in errors.
// Unknown keys are errors. Errors match [ErrInvalid].
func Parse(file string, data []byte) (*Scenario, error) {
	var raw rawFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, &Error{File: file, Reason: strings.TrimPrefix(err.Error(), "yaml: "), Err: err}
	}
	p := parser{file: file}
	s := &Scenario{Name: raw.Name, File: file, Seed: raw.Seed, Comment: comment(data)}
	if s.Name == "" && file != "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if raw.Start == "" {
		return nil, p.bad("start", "missing")
	}
	t, err := time.Parse(time.RFC3339Nano, raw.Start)
	if err != nil {
		return nil, p.bad("start", "%q is not an RFC 3339 time", raw.Start)
	}
	s.Start = t
	s.Duration = p.dur("duration", raw.Duration)
	if raw.Layout != "" {
		l, err := ringflake.ParseLayout(raw.Layout)
		if err != nil {
			return nil, p.bad("layout", "%v", err)
		}
		s.Layout = l
	}
	f := raw.Fleet
	s.Fleet = Fleet{Nodes: f.Nodes, IDs: f.IDs, Strategy: f.Strategy, Marks: f.Marks,
		RestartAfter: p.dur("fleet.restart_after", f.RestartAfter),
		Server: Server{Kind: f.Server.Kind, TTL: p.dur("fleet.server.ttl", f.Server.TTL),
			RenewEvery: p.dur("fleet.server.renew_every", f.Server.RenewEvery), Margin: p.dur("fleet.server.margin", f.Server.Margin),
			Timeout: p.dur("fleet.server.timeout", f.Server.Timeout), MaxLead: p.dur("fleet.server.max_lead", f.Server.MaxLead),
			RTT: p.dur("fleet.server.rtt", f.Server.RTT), Lag: p.dur("fleet.server.lag", f.Server.Lag)},
		Load:     p.rate("fleet.load.rate", f.Load.Rate),
		Messages: Messages{Rate: p.rate("fleet.messages.rate", f.Messages.Rate), MinDelay: p.dur("fleet.messages.min_delay", f.Messages.MinDelay), MaxDelay: p.dur("fleet.messages.max_delay", f.Messages.MaxDelay)},
	}
	if f.Messages.MinDelay == "" && f.Messages.MaxDelay == "" {
		s.Fleet.Messages.MinDelay, s.Fleet.Messages.MaxDelay = 100*time.Microsecond, 5*time.Millisecond
	}
	for i, r := range raw.Events {
		s.Events = append(s.Events, p.event(fmt.Sprintf("events[%d]", i), r))
	}
	nodes := make([]int, 0, len(f.Clocks))
	for n := range f.Clocks {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		s.Events = append(s.Events, p.clock(file, n, f.Clocks[n])...)
	}
	if p.err != nil {
		return nil, p.err
	}
	x, err := parseExpect(file, &raw.Expect, f.Strategy)
	if err != nil {
		return nil, err
	}
	s.Expect = x
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	file string
	err  error
}

func (p *parser) bad(field, format string, args ...any) error {
	err := &Error{File: p.file, Field: field, Reason: fmt.Sprintf(format, args...)}
	if p.err == nil {
		p.err = err
	}
	return p.err
}

func (p *parser) dur(field, v string) time.Duration {
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		p.bad(field, "%q is not a duration such as 1.5s or -200ms", v)
	}
	return d
}

func (p *parser) rate(field, v string) scenario.Rate {
	if v == "" {
		return scenario.Rate{}
	}
	r, err := scenario.ParseRate(v)
	if err != nil {
		p.bad(field, "%q is not a rate such as 2/ms or 500/s", v)
	}
	return r
}

// clock returns the clock events of the single-node scenario at path
// (relative to the fleet file's directory) as events of node n: its
// steps, freezes, drifts and jitters, and its pauses as freezes.
func (p *parser) clock(file string, n int, path string) []Event {
	field := fmt.Sprintf("fleet.clocks.%d", n)
	if !filepath.IsAbs(path) && file != "" {
		path = filepath.Join(filepath.Dir(file), path)
	}
	rec, err := scenario.ReadFile(path)
	if err != nil {
		p.bad(field, "%v", err)
		return nil
	}
	var out []Event
	for _, e := range rec.Events {
		ev := Event{At: e.At, Node: n, D: e.D, Rate: e.Rate, Seed: e.Seed}
		switch e.Kind {
		case scenario.Step:
			ev.Kind = Step
		case scenario.Freeze, scenario.Pause:
			ev.Kind = Freeze
		case scenario.Drift:
			ev.Kind = Drift
		case scenario.Jitter:
			ev.Kind = Jitter
		default:
			continue // restarts and observations are not the clock's
		}
		out = append(out, ev)
	}
	return out
}

func (p *parser) event(field string, r rawEv) Event {
	e := Event{At: p.dur(field+".at", r.At), Nodes: r.Partition, From: r.From, Seed: r.Seed}
	if r.At == "" {
		p.bad(field+".at", "missing")
	}
	if r.Node != nil {
		e.Node = *r.Node
	}
	var kinds []Kind
	if r.Step != "" {
		kinds, e.D = append(kinds, Step), p.dur(field+".step", r.Step)
	}
	if r.Freeze != "" {
		kinds, e.D = append(kinds, Freeze), p.dur(field+".freeze", r.Freeze)
	}
	if r.Pause != "" {
		kinds, e.D = append(kinds, Pause), p.dur(field+".pause", r.Pause)
	}
	if r.Jitter != "" {
		kinds, e.D = append(kinds, Jitter), p.dur(field+".jitter", r.Jitter)
	}
	if r.Drift != nil {
		kinds, e.Rate = append(kinds, Drift), *r.Drift
	}
	if r.Crash {
		kinds = append(kinds, Crash)
	}
	if r.LoseDisk {
		kinds = append(kinds, LoseDisk)
	}
	switch r.Restart {
	case "":
	case "clean", "true":
		kinds = append(kinds, Restart)
	case "crash":
		kinds = append(kinds, Crash)
	default:
		p.bad(field+".restart", "%q: want clean or crash", r.Restart)
	}
	if r.For != "" {
		e.D = p.dur(field+".for", r.For)
	}
	e.Delay = p.dur(field+".delay", r.Delay)
	switch {
	case r.Server != "" && r.Server != "clock":
		if len(kinds) > 0 || r.Node != nil || r.Partition != nil {
			p.bad(field, "a server event has no node, partition, step, pause, crash or restart")
		}
		e.Server, e.Kind = true, Kind(r.Server)
		switch e.Kind {
		case LoseData, Failover, Down, Slow, DropReplies, ServerRestart:
		default:
			p.bad(field+".server", "%q: want lose-data, restart, failover, down, slow, drop-replies or clock", r.Server)
		}
		return e
	case r.Partition != nil:
		if len(kinds) > 0 || r.Node != nil {
			p.bad(field, "a partition has no node, step, pause, crash or restart")
		}
		e.Kind = Partition
		return e
	case r.Server == "clock":
		e.Server = true
		if r.Node != nil {
			p.bad(field, "the server's clock event has no node")
		}
	case r.Node == nil:
		p.bad(field, "want node: N, server: or partition:")
	}
	if len(kinds) != 1 {
		p.bad(field, "want exactly one of step, freeze, drift, jitter, pause, crash, lose-disk, restart")
		return e
	}
	e.Kind = kinds[0]
	if e.Server && (e.Kind == Pause || e.Kind == Crash || e.Kind == Restart || e.Kind == LoseDisk) {
		p.bad(field, "the server's clock may step, freeze, drift or jitter")
	}
	return e
}

var expectFields = []string{"duplicates", "causal_violations", "order_violations", "overlaps", "mark_regressions",
	"lead_violations", "stall_violations", "liveness_violations", "violations", "ids", "calls", "errors", "errors.lease_not_held",
	"errors.mark_not_saved", "errors.rollback", "errors.closed", "errors.other", "leases", "lease.lost", "lease.retaken",
	"lease.renewed", "lease.renew_failed", "messages", "messages_lost", "observes", "observes_refused", "requests_lost", "replies_lost"}

func parseExpect(file string, n *yaml.Node, strategy string) ([]Expectation, error) {
	if n.Kind == 0 {
		return nil, nil
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return &Error{File: file, Line: n.Line, Field: "expect", Reason: fmt.Sprintf(format, args...)}
	}
	if n.Kind != yaml.MappingNode {
		return nil, bad(n, "want a mapping such as all: {duplicates: 0}")
	}
	var out []Expectation
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "all" && k.Value != strategy {
			return nil, bad(k, "%q: a fleet scenario expects of all (or of its strategy %q)", k.Value, strategy)
		}
		if v.Kind != yaml.MappingNode {
			return nil, bad(v, "want a mapping such as {duplicates: 0}")
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			known := false
			for _, f := range expectFields {
				known = known || f == fk.Value
			}
			if !known {
				return nil, bad(fk, "unknown field %q: want one of %s", fk.Value, strings.Join(expectFields, ", "))
			}
			x := Expectation{Field: fk.Value, Op: "=="}
			val := strings.TrimSpace(fv.Value)
			for _, op := range []string{"<=", ">=", "==", "<", ">", "="} {
				if strings.HasPrefix(val, op) {
					x.Op, val = op, strings.TrimSpace(val[len(op):])
					if op == "=" {
						x.Op = "=="
					}
					break
				}
			}
			num, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, bad(fv, "%s: %q is not a count such as 0, \">0\" or \"<=3\"", fk.Value, fv.Value)
			}
			x.Value = num
			out = append(out, x)
		}
	}
	return out, nil
}

// comment returns the comment lines at the top of data.
func comment(data []byte) string {
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		lines = append(lines, strings.TrimSpace(strings.TrimPrefix(l, "#")))
	}
	return strings.Join(lines, "\n")
}

// WriteTo writes s in the file format: [Parse] reads back an equal
// scenario. It implements [io.WriterTo].
func (s *Scenario) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	for _, l := range strings.Split(s.Comment, "\n") {
		if s.Comment != "" {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	if s.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", strconv.Quote(s.Name))
	}
	fmt.Fprintf(&b, "start: %s\n", s.Start.Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "duration: %v\n", s.Duration)
	fmt.Fprintf(&b, "seed: %d\n", s.Seed)
	if !s.Layout.IsZero() {
		fmt.Fprintf(&b, "layout: %q\n", s.Layout.String())
	}
	f := s.Fleet
	b.WriteString("fleet:\n")
	fmt.Fprintf(&b, "  nodes: %d\n", f.Nodes)
	if f.IDs > 0 {
		fmt.Fprintf(&b, "  ids: %d\n", f.IDs)
	}
	sv := f.Server
	fmt.Fprintf(&b, "  server: {kind: %s", sv.Kind)
	for _, d := range []struct {
		k string
		v time.Duration
	}{{"ttl", sv.TTL}, {"renew_every", sv.RenewEvery}, {"margin", sv.Margin}, {"timeout", sv.Timeout},
		{"max_lead", sv.MaxLead}, {"rtt", sv.RTT}, {"lag", sv.Lag}} {
		if d.v != 0 {
			fmt.Fprintf(&b, ", %s: %v", d.k, d.v)
		}
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "  strategy: %q\n", f.Strategy)
	if f.Load.Count > 0 {
		fmt.Fprintf(&b, "  load: {rate: %s}\n", f.Load)
	}
	if m := f.Messages; m.Rate.Count > 0 {
		fmt.Fprintf(&b, "  messages: {rate: %s, min_delay: %v, max_delay: %v}\n", m.Rate, m.MinDelay, m.MaxDelay)
	}
	if f.RestartAfter > 0 {
		fmt.Fprintf(&b, "  restart_after: %v\n", f.RestartAfter)
	}
	if f.Marks != "" {
		fmt.Fprintf(&b, "  marks: %s\n", f.Marks)
	}
	if len(s.Events) > 0 {
		b.WriteString("events:\n")
		for _, e := range s.Events {
			b.WriteString("  - " + e.String() + "\n")
		}
	}
	if len(s.Expect) > 0 {
		parts := make([]string, len(s.Expect))
		for i, x := range s.Expect {
			parts[i] = x.String()
		}
		fmt.Fprintf(&b, "expect:\n  all: {%s}\n", strings.Join(parts, ", "))
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// String returns e as a scenario file writes it, such as
// {at: 7s, node: 2, step: -2s}.
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{at: %v", e.At)
	switch {
	case e.Kind == Partition:
		ns := make([]string, len(e.Nodes))
		for i, n := range e.Nodes {
			ns[i] = strconv.Itoa(n)
		}
		fmt.Fprintf(&b, ", partition: [%s], for: %v", strings.Join(ns, ", "), e.D)
		if e.From != "" {
			fmt.Fprintf(&b, ", from: %s", e.From)
		}
	case e.Server && (e.Kind == LoseData || e.Kind == Failover || e.Kind == ServerRestart):
		fmt.Fprintf(&b, ", server: %s", e.Kind)
	case e.Server && (e.Kind == Down || e.Kind == DropReplies):
		fmt.Fprintf(&b, ", server: %s, for: %v", e.Kind, e.D)
	case e.Server && e.Kind == Slow:
		fmt.Fprintf(&b, ", server: slow, delay: %v, for: %v", e.Delay, e.D)
	default:
		if e.Server {
			b.WriteString(", server: clock")
		} else {
			fmt.Fprintf(&b, ", node: %d", e.Node)
		}
		switch e.Kind {
		case Drift:
			fmt.Fprintf(&b, ", drift: %s", strconv.FormatFloat(e.Rate, 'g', -1, 64))
		case Crash:
			b.WriteString(", crash: true")
		case LoseDisk:
			b.WriteString(", lose-disk: true")
		case Restart:
			b.WriteString(", restart: clean")
		case Jitter:
			fmt.Fprintf(&b, ", jitter: %v, seed: %d", e.D, e.Seed)
		default:
			fmt.Fprintf(&b, ", %s: %v", e.Kind, e.D)
		}
	}
	b.WriteString("}")
	return b.String()
}
