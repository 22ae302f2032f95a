package fleetsim

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// A Lane is what a plot draws for one node: samples of its clock's
// offset from true time and of the lead of its newest ID over true time.
type Lane struct {
	Node    int
	Samples []Sample
}

// A Sample is one node's state at a true time.
type Sample struct {
	At     time.Duration // true time
	Offset time.Duration // the node's wall clock minus true time
	Lead   time.Duration // the newest ID's time minus true time; 0 before any
	Up     bool          // a process runs and holds a lease
}

// sample records every node's state; scheduled every duration/400.
func (s *Sim) sample() {
	every := max(s.end/400, time.Millisecond)
	var tick func()
	tick = func() {
		for i, n := range s.nodes {
			sm := Sample{At: s.w.now, Offset: n.clk.Wall().Sub(s.sc.Start.Add(s.w.now))}
			if inc := n.inc; inc != nil && inc.hold != nil && !inc.hold.lost {
				sm.Up = true
				if h := inc.hold; h.newest >= 0 {
					if p, err := s.layout.Decompose(h.newest); err == nil {
						sm.Lead = p.Time.Sub(s.sc.Start.Add(s.w.now))
					}
				}
			}
			s.lanes[i].Samples = append(s.lanes[i].Samples, sm)
		}
		if s.w.now+every <= s.end {
			s.w.at(s.w.now+every, tick)
		}
	}
	s.w.at(0, tick)
}

// Plot writes an SVG of the report's lanes: one per node, its clock's
// offset from true time (blue) and its newest ID's lead over true time
// (orange), grey while it holds no lease; the scenario's events as ticks.
// The report must come from a run with [WithLanes].
func (r *Report) Plot(w io.Writer) error {
	const width, laneH, left, top = 900.0, 120.0, 60.0, 30.0
	if len(r.Lanes) == 0 {
		return fmt.Errorf("fleetsim: the report has no lanes: run with WithLanes")
	}
	var lo, hi time.Duration = -time.Millisecond, time.Millisecond
	for _, l := range r.Lanes {
		for _, s := range l.Samples {
			lo, hi = min(lo, s.Offset, s.Lead), max(hi, s.Offset, s.Lead)
		}
	}
	x := func(t time.Duration) float64 { return left + (width-left-10)*float64(t)/float64(max(r.Duration, 1)) }
	var b strings.Builder
	height := top + laneH*float64(len(r.Lanes)) + 20
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%.0f" y="16">fleet %s: %d nodes on %s, %s — clock offset (blue), newest ID's lead (orange), over true time; from %v to %v</text>`+"\n",
		left, esc(r.Scenario), r.Nodes, r.Server, esc(r.Strategy), lo.Round(time.Millisecond), hi.Round(time.Millisecond))
	for i, l := range r.Lanes {
		y0 := top + laneH*float64(i)
		y := func(d time.Duration) float64 { return y0 + laneH - 10 - (laneH-20)*float64(d-lo)/float64(hi-lo) }
		fmt.Fprintf(&b, `<text x="4" y="%.0f">node %d</text>`+"\n", y0+laneH/2, l.Node)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ccc"/>`+"\n", left, width-10, y(0), y(0))
		var off, lead []string
		for _, s := range l.Samples {
			if !s.Up {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="2" height="%.0f" fill="#eee"/>`+"\n", x(s.At), y0+5, laneH-10)
			}
			off = append(off, fmt.Sprintf("%.1f,%.1f", x(s.At), y(s.Offset)))
			if s.Up {
				lead = append(lead, fmt.Sprintf("%.1f,%.1f", x(s.At), y(s.Lead)))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f77b4" points="%s"/>`+"\n", strings.Join(off, " "))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="#ff7f0e" points="%s"/>`+"\n", strings.Join(lead, " "))
	}
	for _, e := range r.events {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#d62728" stroke-dasharray="2,2"><title>%s</title></line>`+"\n",
			x(e.At), x(e.At), top, height-20, esc(e.String()))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
