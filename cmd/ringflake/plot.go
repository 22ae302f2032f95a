package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ringflake/ringflake/scenario"
)

// The geometry of a plot, in SVG user units (pixels).
const (
	plotWidth    = 960
	plotLeft     = 84 // room for the offset labels
	plotRight    = 24
	offsetHeight = 170 // the offset view of a panel
	countGap     = 6   // between the offset view and the strip of calls
	countHeight  = 44  // the strip of calls per bucket
	laneHeight   = 14  // one row of event labels
	maxLanes     = 4   // rows of event labels before the events are numbered instead
	charWidth    = 6.2 // about the width of a character at font-size 11
	ticksPerAxis = 5

	wallColour    = "#9ecae1" // a wide, light line: IDs drawn on it leave it showing
	jitterColour  = "#deebf7"
	idColour      = "#e6550d"
	issuedColour  = "#bdbdbd"
	errorColour   = "#d62728"
	eventColour   = "#636363"
	restartColour = "#7b3294"
	behindColour  = "#e7d4e8" // behind the mark's Since: a rollback
	reservColour  = "#f4ecf5" // behind the mark, past Since: the reservation
)

// writePlotFile draws the reports of one scenario into path: SVG, or an
// HTML page holding the SVG when path ends in .html.
func writePlotFile(path string, s *scenario.Scenario, reports []*scenario.Report) error {
	var buf bytes.Buffer
	if err := writePlot(&buf, s, reports, strings.EqualFold(filepath.Ext(path), ".html")); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// writePlot draws the reports of one scenario (each should carry a trace)
// as one panel per strategy, on one axis of true time shared by the
// panels.
//
// A panel's main view plots offsets from true time, in the layout's time
// units: the wall clock minus true time (a light blue line; a band around
// it while the clock jitters), and per bucket of true time the range of
// the IDs' times minus true time (orange). A clock that runs true sits at
// 0; a step back of 3 ms drops the wall clock to -3ms; IDs that follow it
// drop with it, IDs of a strategy that borrows stay above it (their lead),
// and the ring's reused ticks spread below. The y axis is shared by the
// panels, so strategies compare at a glance. Below it, a strip counts the
// calls per bucket: IDs issued (grey) and failed calls (red), so stalls
// show as gaps and failures as red. Clock events are dashed lines, labelled
// above the panel; restarts are purple, with the time the new run spent
// behind the mark the old one left shaded.
func writePlot(w io.Writer, s *scenario.Scenario, reports []*scenario.Report, asHTML bool) error {
	p := newPlot(s, reports)
	var b strings.Builder
	height := p.headerHeight() + len(reports)*p.panelHeight() + p.footerHeight()
	if asHTML {
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"+
			"<title>%s</title>\n<style>body{margin:16px;font-family:sans-serif;background:#fff}</style>\n</head>\n<body>\n", esc(p.title()))
	} else {
		b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	}
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "+
		"font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n", plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(p.title()))
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", plotWidth, height)
	p.header(&b)
	for i, r := range reports {
		p.panel(&b, p.headerHeight()+i*p.panelHeight(), i, r)
	}
	p.footer(&b, p.headerHeight()+len(reports)*p.panelHeight())
	b.WriteString("</svg>\n")
	if asHTML {
		b.WriteString("</body>\n</html>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type plot struct {
	s       *scenario.Scenario
	reports []*scenario.Report
	unit    time.Duration // the layout's tick
	xmax    time.Duration // true time at the right edge, shared by the panels

	// The offset range of the views, shared by the panels: offsets from
	// true time at their bottom and top.
	ymin, ymax time.Duration
	// symlog: the offsets span more than linearTicks ticks, and the y axis
	// is a symmetric log scale (see scale); lo and hi are the scaled
	// bottom and top, margins included.
	symlog bool
	lo, hi float64
	// peak is the most calls of one bucket in any panel: the calls'
	// strips of all panels share it as their scale.
	peak int64
	// summaries are the panels' summary lines, wrapped to fit the width.
	summaries [][]string

	events   []eventLabel // the scenario's events in time order, with their labels placed
	lanes    int          // rows of labels above each panel
	numbered bool         // the labels are numbers; the footer lists the events
	jitter   bool         // some event jitters the clock
	comment  []string     // the comment's lines, as drawn
}

func newPlot(s *scenario.Scenario, reports []*scenario.Report) *plot {
	p := &plot{s: s, reports: reports, xmax: s.Duration, unit: time.Millisecond}
	first := true
	see := func(d time.Duration) {
		if first {
			p.ymin, p.ymax, first = d, d, false
		}
		p.ymin, p.ymax = min(p.ymin, d), max(p.ymax, d)
	}
	see(0)
	p.peak = 1
	for _, r := range reports {
		p.summaries = append(p.summaries, wrap(summaryParts(r), plotWidth-plotLeft-plotRight))
		tr := r.Trace
		if tr == nil {
			continue
		}
		p.peak = max(p.peak, peakCalls(tr))
		p.unit = tr.Unit
		jitter := jitterAt(tr.Events)
		for _, pt := range tr.Wall {
			p.xmax = max(p.xmax, pt.At)
			j := jitter(pt.At)
			see(pt.T - pt.At - j)
			see(pt.T - pt.At + j)
		}
		for _, b := range tr.IDs {
			p.xmax = max(p.xmax, b.At+tr.Bucket)
			see(b.MinOffset)
			see(b.MaxOffset)
		}
		for _, pt := range tr.Errors {
			p.xmax = max(p.xmax, pt.At+tr.Bucket)
		}
	}
	if p.xmax <= 0 {
		p.xmax = time.Millisecond
	}
	// At least four ticks tall, so that a clock running true is a line in
	// the middle rather than a panel full of noise; then a margin.
	if span := p.ymax - p.ymin; span < 4*p.unit {
		mid := p.ymin + span/2
		p.ymin, p.ymax = mid-2*p.unit, mid+2*p.unit
	}
	if max(p.ymax, -p.ymin) > linearTicks*p.unit {
		// A linear scale would squash a step of a few ticks next to one
		// of seconds into a line.
		p.symlog = true
		lo, hi := p.scale(p.ymin), p.scale(p.ymax)
		pad := (hi - lo) / 12
		p.lo, p.hi = lo-pad, hi+pad
	} else {
		pad := (p.ymax - p.ymin) / 12
		p.ymin, p.ymax = p.ymin-pad, p.ymax+pad
		p.lo, p.hi = p.scale(p.ymin), p.scale(p.ymax)
	}

	for _, ev := range sortedEvents(s.Events) {
		_, text, _ := strings.Cut(ev.String(), ": ")
		if ev.Kind == scenario.Restart {
			text = strings.Replace(text, "restart ", "", 1) + " restart"
		}
		p.jitter = p.jitter || ev.Kind == scenario.Jitter && ev.D > 0
		p.events = append(p.events, eventLabel{ev: ev, text: text})
	}
	if !p.placeLabels() {
		p.numbered = true
		for i := range p.events {
			p.events[i].text = strconv.Itoa(i + 1)
		}
		p.placeLabels()
	}
	for _, line := range strings.Split(s.Comment, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			p.comment = append(p.comment, line)
		}
	}
	return p
}

func (p *plot) title() string {
	return fmt.Sprintf("ringflake replay: %s", p.s.Name)
}

func (p *plot) x(at time.Duration) float64 {
	return plotLeft + float64(at)/float64(p.xmax)*(plotWidth-plotLeft-plotRight)
}

// linearTicks is the largest offset, in ticks of the layout, that the y
// axis shows on a linear scale.
const linearTicks = 20

// scale maps an offset to the y axis' scale: itself, or on a symmetric
// log scale, sign(off) × ln(1 + |off|/tick), linear within a tick of 0
// and logarithmic beyond, so that a step of 80 ms and a freeze of 3 s
// are both seen.
func (p *plot) scale(off time.Duration) float64 {
	if !p.symlog {
		return float64(off)
	}
	v := math.Log1p(math.Abs(float64(off)) / float64(p.unit))
	if off < 0 {
		return -v
	}
	return v
}

// y maps an offset to the offset view whose top is at top.
func (p *plot) y(top float64, off time.Duration) float64 {
	return top + (p.hi-p.scale(off))/(p.hi-p.lo)*offsetHeight
}

// yTicks returns the offsets the y axis marks: steps of a nice size on a
// linear scale; 0 and ± a tick times the powers of ten on a log one.
func (p *plot) yTicks() []time.Duration {
	var out []time.Duration
	if !p.symlog {
		ystep := niceStep(p.ymax - p.ymin)
		for off := ceilTo(p.ymin, ystep); off <= p.ymax; off += ystep {
			out = append(out, off)
		}
		return out
	}
	out = append(out, 0)
	for d := p.unit; d > 0 && d <= max(p.ymax, -p.ymin); d *= 10 {
		if d <= p.ymax {
			out = append(out, d)
		}
		if -d >= p.ymin {
			out = append(out, -d)
		}
		if d > math.MaxInt64/10 {
			break
		}
	}
	return out
}

// The vertical layout: a header, then per panel a summary line, the rows
// of event labels, the offset view, the strip of calls and the true-time
// labels; then a footer.
func (p *plot) headerHeight() int {
	items := p.legend()
	return 72 + 15*len(p.comment) + items[len(items)-1].row*18 + 14
}

func (p *plot) panelHeight() int {
	return p.summaryHeight() + 8 + p.lanes*laneHeight + offsetHeight + countGap + countHeight + 40
}

// summaryHeight is the height of the panels' summary lines: as many as
// the longest has.
func (p *plot) summaryHeight() int {
	n := 1
	for _, lines := range p.summaries {
		n = max(n, len(lines))
	}
	return 14 + (n-1)*summaryLine
}

func (p *plot) footerHeight() int {
	if !p.numbered {
		return 24
	}
	return 40 + 15*((len(p.events)+2)/3)
}

// panel draws report i, from top on.
func (p *plot) panel(b *strings.Builder, top, i int, r *scenario.Report) {
	left, right := float64(plotLeft), float64(plotWidth-plotRight)
	labelTop := float64(top + p.summaryHeight() + 8)
	vTop := labelTop + float64(p.lanes*laneHeight)
	vBottom := vTop + offsetHeight
	cTop := vBottom + countGap
	cBottom := cTop + countHeight
	fmt.Fprintf(b, "<g class=\"panel\" data-strategy=\"%s\">\n", esc(r.Strategy))

	p.summary(b, top, i, r)
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>\n", left, vTop, right-left, offsetHeight)
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>\n", left, cTop, right-left, countHeight)

	// Grid and labels: offsets up the side, true time along the bottom.
	for _, off := range p.yTicks() {
		y := p.y(vTop, off)
		colour := "#e8e8e8"
		if off == 0 {
			colour = "#999"
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, y, right, y, colour)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">%s</text>\n", left-6, y+4, signed(off))
	}
	axis := "offset from true time"
	if p.symlog {
		axis += " (log scale)"
	}
	fmt.Fprintf(b, "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">%s</text>\n",
		vTop+offsetHeight/2, axis)
	xstep := niceStep(p.xmax)
	for at := time.Duration(0); at <= p.xmax; at += xstep {
		x := p.x(at)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e8e8e8\"/>\n", x, vTop, x, vBottom)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">%s</text>\n", x, cBottom+14, fmtOffset(at))
		if at > p.xmax-xstep { // the last step; also stops an overflow
			break
		}
	}
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">true time since the start →</text>\n", right, cBottom+28)

	tr := r.Trace
	if tr == nil {
		b.WriteString("</g>\n")
		return
	}
	p.restarts(b, r, vTop, cBottom)
	p.eventLines(b, labelTop, vTop, cBottom)
	p.wall(b, tr, vTop)
	p.ids(b, tr, vTop)
	p.counts(b, tr, cTop)
	b.WriteString("</g>\n")
}

// niceStep returns a step of 1, 2 or 5 times a power of ten nanoseconds
// that cuts span into about ticksPerAxis parts.
func niceStep(span time.Duration) time.Duration {
	if span <= 0 {
		return 1
	}
	raw := float64(span) / ticksPerAxis
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return time.Duration(max(1, m*pow))
		}
	}
	return time.Duration(10 * pow)
}

// ceilTo rounds t up to a multiple of step.
func ceilTo(t, step time.Duration) time.Duration {
	q := t / step
	if q*step < t {
		q++
	}
	return q * step
}

// fmtOffset prints a true-time offset for an axis label.
func fmtOffset(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// signed prints an offset with its sign: "+3ms", "0", "−3ms".
func signed(d time.Duration) string {
	switch {
	case d > 0:
		return "+" + d.String()
	case d < 0:
		return "−" + (-d).String()
	}
	return "0"
}

func esc(s string) string { return html.EscapeString(s) }
