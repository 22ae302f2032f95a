package fleetsim

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A Report is what a fleet run did and what it broke.
type Report struct {
	Scenario string
	File     string
	Nodes    int
	Server   string
	Strategy string
	Marks    string // where the nodes keep their marks: "lease" or "file"
	Duration time.Duration
	Seed     uint64

	// Counts holds the run's counts by name: ids, calls, errors.*,
	// leases, lease.*, messages, observes, requests_lost, replies_lost,
	// and one per property broken (duplicates, causal_violations, ...).
	Counts map[string]int64
	// Violations describes the first violations in full.
	Violations []Violation
	// Unmet lists the scenario's expectations the run did not meet.
	Unmet []string
	// TraceHash is the SHA-256 of the run's trace: every event, request,
	// lease change and ID in order. Two runs of one scenario give the
	// same hash.
	TraceHash string
	// Lanes are the samples a plot draws, with WithLanes.
	Lanes []Lane `json:",omitempty"`

	events []Event
}

// Count returns the count named name (0 when none).
func (r *Report) Count(name string) int64 { return r.Counts[name] }

// OK reports whether no property broke and every expectation held.
func (r *Report) OK() bool { return r.Count("violations") == 0 && len(r.Unmet) == 0 }

func (s *Sim) report() *Report {
	s.check.finish()
	r := &Report{Scenario: s.sc.Name, File: s.sc.File, Nodes: s.sc.Fleet.Nodes, Server: s.sc.Fleet.Server.Kind,
		Strategy: s.strategy.String(), Marks: cmp.Or(s.sc.Fleet.Marks, MarksLease), Duration: s.sc.Duration, Seed: s.sc.Seed,
		Counts: map[string]int64{}}
	for k, v := range s.counts {
		r.Counts[k] = v
	}
	r.Counts["calls"] = s.calls
	for k, v := range s.check.counts {
		r.Counts[k] = v
	}
	for _, f := range []string{"duplicates", "causal_violations", "order_violations", "overlaps", "mark_regressions",
		"lead_violations", "stall_violations", "liveness_violations", "violations", "ids"} {
		r.Counts[f] += 0
	}
	var errs int64
	for k, v := range r.Counts {
		if strings.HasPrefix(k, "errors.") {
			errs += v
		}
	}
	r.Counts["errors"] = errs
	r.Counts["leases"] += 0
	r.Violations = s.check.vs
	r.Lanes, r.events = s.lanes, s.sc.Events
	r.TraceHash = hex.EncodeToString(s.hash.Sum(nil))
	for _, x := range s.sc.Expect {
		got := r.Counts[x.Field]
		ok := false
		switch x.Op {
		case "==":
			ok = got == x.Value
		case "<=":
			ok = got <= x.Value
		case ">=":
			ok = got >= x.Value
		case "<":
			ok = got < x.Value
		case ">":
			ok = got > x.Value
		}
		if !ok {
			r.Unmet = append(r.Unmet, fmt.Sprintf("%s: got %d, want %s%d", x.Field, got, strings.TrimPrefix(x.Op, "=="), x.Value))
		}
	}
	return r
}

// String returns the report as text: the same bytes for the same run.
func (r *Report) String() string {
	var b strings.Builder
	name := r.Scenario
	if r.File != "" {
		name += " (" + r.File + ")"
	}
	marks := ""
	if r.Marks == MarksFile {
		marks = ", marks in files"
	}
	fmt.Fprintf(&b, "fleet %s: %d nodes on %s%s, strategy %s, %v, seed %d\n", name, r.Nodes, r.Server, marks, r.Strategy, r.Duration, r.Seed)
	keys := make([]string, 0, len(r.Counts))
	for k := range r.Counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var line []string
	for _, k := range keys {
		line = append(line, fmt.Sprintf("%s=%d", k, r.Counts[k]))
	}
	fmt.Fprintf(&b, "  %s\n", strings.Join(line, " "))
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  VIOLATION %s\n", v)
		for _, f := range v.Faults {
			fmt.Fprintf(&b, "    after event %s\n", f)
		}
		for _, t := range v.Trace {
			fmt.Fprintf(&b, "    | %s\n", t)
		}
	}
	for _, u := range r.Unmet {
		fmt.Fprintf(&b, "  UNMET %s\n", u)
	}
	verdict := "ok"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "  trace %s  %s\n", r.TraceHash, verdict)
	return b.String()
}
