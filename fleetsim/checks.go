package fleetsim

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/ringflake/ringflake"
)

// A Violation is a broken property, with the true time it was seen at
// and the events that led to it: the scenario's faults before it and the
// recent lines of the simulation's trace.
type Violation struct {
	Kind   string        // duplicates, causal_violations, order_violations, overlaps, mark_regressions, lead_violations, liveness_violations
	At     time.Duration // true time
	What   string
	Faults []string // the scenario's events before it, with their true times
	Trace  []string // the last lines of the trace before it
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at %v: %s", v.Kind, v.At, v.What)
}

// maxViolationsKept bounds the violations a report describes in full;
// the counts go on.
const maxViolationsKept = 20

type issue struct {
	holding int
	at      time.Duration
}

// issuedID is one ID issued, kept to find duplicates at the end: sorting
// the IDs once costs less than a map lookup per ID.
type issuedID struct {
	id ringflake.ID
	issue
}

type checker struct {
	sim     *Sim
	ids     []issuedID
	nids    int64
	counts  map[string]int64
	vs      []Violation
	faults  []string        // the events fired so far, for violations
	faultAt []time.Duration // when each fired

	// maxIssued is, per node id, the greatest tick issued by holdings of
	// the server's current era: the stored mark must not fall below it.
	maxIssued map[int64]int64
	// fileTop is, per node with a mark file, the greatest tick it issued
	// since its disk was last lost: its file's mark must not fall below
	// it.
	fileTop map[int]int64

	// faultsEnd is when the last fault is over; firstOK, per node, the
	// true time of its first ID from then on (-1: none yet).
	faultsEnd time.Duration
	firstOK   []time.Duration
}

func (c *checker) init(s *Sim) {
	c.sim = s
	if r := s.sc.Fleet.Load; r.Count > 0 {
		c.ids = make([]issuedID, 0, int64(s.sc.Fleet.Nodes)*min(int64(float64(s.sc.Duration)/float64(r.Per)*float64(r.Count)), MaxCallsPerNode))
	}
	c.counts = map[string]int64{}
	c.maxIssued = map[int64]int64{}
	c.fileTop = map[int]int64{}
	c.faultsEnd = faultsEnd(s.sc)
	c.firstOK = make([]time.Duration, s.sc.Fleet.Nodes)
	for i := range c.firstOK {
		c.firstOK[i] = -1
	}
}

func (c *checker) fault(e Event, at time.Duration) {
	c.faults = append(c.faults, fmt.Sprintf("%v: %s", at, e))
	c.faultAt = append(c.faultAt, at)
}

func (c *checker) newEra() { clear(c.maxIssued) }

func (c *checker) violate(kind, format string, args ...any) {
	c.violateAt(kind, -1, format, args...)
}

// violateAt records a violation seen at true time at; -1 means now, when
// the recent trace leads to it. A violation found at the end (at >= 0)
// names the faults before at, without the trace.
func (c *checker) violateAt(kind string, at time.Duration, format string, args ...any) {
	c.counts[kind]++
	c.counts["violations"]++
	if len(c.vs) >= maxViolationsKept {
		return
	}
	v := Violation{Kind: kind, At: at, What: fmt.Sprintf(format, args...)}
	if at < 0 {
		v.At, v.Faults = c.sim.w.now, lastN(c.faults, 12)
		for _, l := range c.sim.recent() {
			v.Trace = append(v.Trace, fmt.Sprintf("%v %s: %s", l.at, l.who, l.text))
		}
		v.Trace = lastN(v.Trace, 16)
	} else {
		var before []string
		for i, t := range c.faultAt {
			if t <= at {
				before = append(before, c.faults[i])
			}
		}
		v.Faults = lastN(before, 12)
	}
	c.vs = append(c.vs, v)
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return slices.Clone(s)
}

func (c *checker) describe(i issue) string {
	h := c.sim.holdings[i.holding]
	return fmt.Sprintf("node %d (process %d, id %d, token %s) at %v", h.inc.node.n, h.inc.n, h.id, h.token, i.at)
}

// issued checks one ID a call returned: it started at start, after the
// process had observed floor; the holding's newest ID before it was prev.
func (c *checker) issued(inc *incarnation, h *holding, id ringflake.ID, start time.Duration, floor, prev ringflake.ID) {
	s := c.sim
	now := s.w.now
	c.nids++
	if now >= c.faultsEnd && c.firstOK[inc.node.n] < 0 {
		c.firstOK[inc.node.n] = now
	}
	c.ids = append(c.ids, issuedID{id: id, issue: issue{holding: h.index, at: now}})
	// The ID is the hash's: what was issued decides the trace.
	s.buf = append(s.buf[:0], byte(h.index), byte(h.index>>8))
	s.buf = binary.AppendVarint(s.buf, int64(id))
	s.hash.Write(s.buf)
	if floor >= 0 && id <= floor {
		c.violate("causal_violations", "node %d issued %d in a call that started at %v, after Observe(%d) returned", inc.node.n, id, start, floor)
	}
	if s.promise.Monotonic && prev >= 0 && id <= prev {
		c.violate("order_violations", "node %d issued %d after %d, under a monotonic strategy", inc.node.n, id, prev)
	}
	tick := int64(-1)
	if p, err := s.layout.Decompose(id); err == nil {
		tick = s.layout.Tick(p.Time)
		if p.Node != h.id {
			c.violate("duplicates", "node %d issued %d with node id %d, holding %d", inc.node.n, id, p.Node, h.id)
		}
		// The lead: the ID's time past the clock and the newest ID this
		// holding issued or observed before, beyond the lease's MaxLead.
		wall := inc.node.clk.Wall()
		base := wall
		if prev >= 0 {
			if q, err := s.layout.Decompose(prev); err == nil && q.Time.After(base) {
				base = q.Time
			}
		}
		if floor >= 0 {
			if q, err := s.layout.Decompose(floor); err == nil && q.Time.After(base) {
				base = q.Time
			}
		}
		if lead := p.Time.Sub(base); lead > s.cfg.MaxLead+2*s.layout.Spec().Unit+s.jitter(inc.node) {
			c.violate("lead_violations", "node %d issued %d stamped %v, %v ahead of its clock (%v) and newest ID: more than MaxLead %v",
				inc.node.n, id, stamp(p.Time), lead, stamp(wall), s.cfg.MaxLead)
		}
	}
	if h.first < 0 {
		h.first = now
	}
	h.last, h.newest = now, max(h.newest, id)
	h.issued++
	if s.sc.Fleet.Marks == MarksFile {
		if m, ok := c.fileTop[inc.node.n]; !ok || tick > m {
			c.fileTop[inc.node.n] = tick
		}
	}
	if h.era == s.srv.era {
		if m, ok := c.maxIssued[h.id]; !ok || tick > m {
			c.maxIssued[h.id] = tick
		}
	}
}

// jitter returns the noise a node's clock readings may carry.
func (s *Sim) jitter(n *node) time.Duration {
	var j time.Duration
	for _, e := range s.sc.Events {
		if e.Kind == Jitter && !e.Server && e.Node == n.n {
			j = max(j, e.D)
		}
	}
	return 2 * j
}

// markWrite checks a mark the server is about to store for id over the
// record r: it must not go back (but for a clean close's exact mark,
// written by the holder of the mark it replaces), and not fall below an
// ID issued under id since the server last lost data.
func (c *checker) markWrite(id int64, r nodeRecord, token string, m ringflake.Mark, closing bool) {
	s := c.sim
	if !r.mark.Limit.IsZero() && m.Limit.Before(r.mark.Limit) && !(closing && r.markToken == token) {
		c.violate("mark_regressions", "the mark of id %d goes back from %s (saved by %s, save %d) to %s (by %s)",
			id, stamp(r.mark.Limit), r.markToken, r.markSeq, stamp(m.Limit), token)
		return
	}
	if top, ok := c.maxIssued[id]; ok && s.layout.Tick(m.Limit) < top {
		c.violate("mark_regressions", "the mark of id %d, %s (by %s), is below an ID issued at %s",
			id, stamp(m.Limit), token, stamp(s.layout.TickTime(top)))
	}
}

// fileWrite checks a mark a node's mark file is about to hold over prev:
// it must not go back (but for a clean close's exact mark), and not fall
// below an ID the node issued since its disk was last lost.
func (c *checker) fileWrite(n *node, prev, m ringflake.Mark, closing bool) {
	if !prev.Limit.IsZero() && m.Limit.Before(prev.Limit) && !closing {
		c.violate("mark_regressions", "the mark file of node %d goes back from %s to %s", n.n, stamp(prev.Limit), stamp(m.Limit))
		return
	}
	c.fileBelow(n, m, "is written with")
}

// fileKept checks what a node's mark file holds after a crash.
func (c *checker) fileKept(n *node) { c.fileBelow(n, n.disk.mark, "keeps, after the crash,") }

func (c *checker) fileBelow(n *node, m ringflake.Mark, what string) {
	top, ok := c.fileTop[n.n]
	if ok && (m.Limit.IsZero() || c.sim.layout.Tick(m.Limit) < top) {
		c.violate("mark_regressions", "the mark file of node %d %s %s, below an ID it issued at %s",
			n.n, what, stamp(m.Limit), stamp(c.sim.layout.TickTime(top)))
	}
}

// diskLost forgets what a node issued: its mark file is gone.
func (c *checker) diskLost(n *node) { delete(c.fileTop, n.n) }

// finish runs the checks that need the whole run: overlapping holders
// and liveness.
func (c *checker) finish() {
	s := c.sim
	c.counts["ids"] = c.nids
	// Duplicates: the IDs in order; each one equal to the one before was
	// issued twice.
	slices.SortStableFunc(c.ids, func(a, b issuedID) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(c.ids); i++ {
		if a, b := c.ids[i-1], c.ids[i]; a.id == b.id {
			first, second := a.issue, b.issue
			if second.at < first.at {
				first, second = second, first
			}
			c.violateAt("duplicates", second.at, "ID %d issued twice: by %s and by %s", a.id, c.describe(first), c.describe(second))
		}
	}
	byID := map[int64][]*holding{}
	var ids []int64
	for _, h := range s.holdings {
		if h.issued == 0 {
			continue
		}
		if _, ok := byID[h.id]; !ok {
			ids = append(ids, h.id)
		}
		byID[h.id] = append(byID[h.id], h)
	}
	slices.Sort(ids)
	for _, id := range ids {
		hs := byID[id]
		slices.SortStableFunc(hs, func(a, b *holding) int { return cmp.Compare(a.first, b.first) })
		for i := 1; i < len(hs); i++ {
			a, b := hs[i-1], hs[i]
			if b.first <= a.last {
				c.violate("overlaps", "id %d: %s issued from %v to %v while %s issued from %v",
					id, a.token, a.first, a.last, b.token, b.first)
			}
		}
	}
	// Liveness: after the last fault is over, every node issues again
	// within the quiet period of TTL + Margin + MaxLead (as the server
	// keeps it: etcd in whole seconds), plus a renewal and a timeout to
	// notice, and the restart.
	end := c.faultsEnd
	quiet := serverQuiet(s.srv.kind, s.cfg.Quiet())
	bound := quiet + s.cfg.RenewEvery + s.cfg.Timeout + s.sc.Fleet.restartAfter() + 100*time.Millisecond
	if s.sc.Fleet.Load.Count > 0 && end+bound+time.Second <= s.end {
		for i, first := range c.firstOK {
			if first < 0 || first > end+bound {
				s.w.now = s.end
				c.violate("liveness_violations", "node %d issued no ID in the %v after the faults ended at %v (TTL + Margin + MaxLead %v, a renewal and a timeout %v, the restart %v)",
					i, bound, end, quiet, s.cfg.RenewEvery+s.cfg.Timeout, s.sc.Fleet.restartAfter())
			}
		}
	}
}
