package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
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

	events   []eventLabel // the scenario's events in time order, with their labels placed
	lanes    int          // rows of labels above each panel
	numbered bool         // the labels are numbers; the footer lists the events
	jitter   bool         // some event jitters the clock
	comment  []string     // the comment's lines, as drawn
}

// eventLabel is an event with where its label goes.
type eventLabel struct {
	ev     scenario.Event
	text   string // "step -3ms", or its number
	lane   int    // row, from the top
	anchor string // "start": right of the line; "end": left of it
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
	for _, r := range reports {
		tr := r.Trace
		if tr == nil {
			continue
		}
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
	pad := (p.ymax - p.ymin) / 12
	p.ymin, p.ymax = p.ymin-pad, p.ymax+pad

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

// sortedEvents returns the events in time order (in file order at one
// instant).
func sortedEvents(events []scenario.Event) []scenario.Event {
	out := append([]scenario.Event(nil), events...)
	for i := 1; i < len(out); i++ { // insertion sort: stable, and lists are short
		for j := i; j > 0 && out[j].At < out[j-1].At; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// jitterAt returns a function giving the jitter bound in force at a true
// time.
func jitterAt(events []scenario.Event) func(time.Duration) time.Duration {
	sorted := sortedEvents(events)
	return func(at time.Duration) time.Duration {
		j := time.Duration(0)
		for _, ev := range sorted {
			if ev.At > at {
				break
			}
			if ev.Kind == scenario.Jitter {
				j = ev.D
			}
		}
		return j
	}
}

// placeLabels puts each event's label in the first row where it clears
// the labels already placed, right of its line (left of it near the right
// edge). It reports false when more than maxLanes rows would be needed,
// unless the labels are numbers, which take as many rows as they need.
func (p *plot) placeLabels() bool {
	var ends []float64 // per row, the right end of its last label
	p.lanes = 0
	for i := range p.events {
		l := &p.events[i]
		l.anchor = "start"
		from, to := p.labelSpan(*l)
		if to > plotWidth-4 {
			l.anchor = "end"
			from, to = p.labelSpan(*l)
		}
		lane := -1
		for j, end := range ends {
			if end+4 <= from {
				lane = j
				break
			}
		}
		if lane < 0 {
			if len(ends) == maxLanes && !p.numbered {
				return false
			}
			ends = append(ends, 0)
			lane = len(ends) - 1
		}
		ends[lane], l.lane = to, lane
	}
	p.lanes = len(ends)
	return true
}

// labelSpan returns the horizontal extent of an event's label, about.
func (p *plot) labelSpan(l eventLabel) (from, to float64) {
	x := p.x(l.ev.At)
	w := charWidth*float64(len([]rune(l.text))) + 4
	if l.anchor == "end" {
		return x - w, x
	}
	return x, x + w
}

func (p *plot) title() string {
	return fmt.Sprintf("ringflake replay: %s", p.s.Name)
}

func (p *plot) x(at time.Duration) float64 {
	return plotLeft + float64(at)/float64(p.xmax)*(plotWidth-plotLeft-plotRight)
}

// y maps an offset to the offset view whose top is at top.
func (p *plot) y(top float64, off time.Duration) float64 {
	return top + float64(p.ymax-off)/float64(p.ymax-p.ymin)*offsetHeight
}

// The vertical layout: a header, then per panel a summary line, the rows
// of event labels, the offset view, the strip of calls and the true-time
// labels; then a footer.
func (p *plot) headerHeight() int {
	items := p.legend()
	return 72 + 15*len(p.comment) + items[len(items)-1].row*18 + 14
}
func (p *plot) panelHeight() int {
	return 22 + p.lanes*laneHeight + offsetHeight + countGap + countHeight + 40
}
func (p *plot) footerHeight() int {
	if !p.numbered {
		return 24
	}
	return 40 + 15*((len(p.events)+2)/3)
}

// legendItem is one entry of the legend, placed in rows.
type legendItem struct {
	kind, label string
	x           float64
	row         int
}

// legend returns the legend's entries, wrapped into rows.
func (p *plot) legend() []legendItem {
	items := []legendItem{
		{kind: "wall", label: "wall clock − true time"},
		{kind: "jitter", label: "its jitter"},
		{kind: "ids", label: "IDs' time − true time (range per bucket)"},
		{kind: "issued", label: "IDs issued"},
		{kind: "errors", label: "failed calls"},
		{kind: "event", label: "clock event"},
		{kind: "restart", label: "restart; shaded: behind the mark's Since (rollback), then its reservation"},
		{kind: "ok", label: "OK: kept its promises, met the file's expectations"},
	}
	has := map[string]bool{"wall": true, "ids": true, "issued": true, "errors": true, "ok": true, "jitter": p.jitter}
	for _, l := range p.events {
		has[map[bool]string{true: "restart", false: "event"}[l.ev.Kind == scenario.Restart]] = true
	}
	items = slices.DeleteFunc(items, func(l legendItem) bool { return !has[l.kind] })
	x, row := float64(plotLeft), 0
	for i := range items {
		w := 30 + 5.8*float64(len([]rune(items[i].label)))
		if x+w > plotWidth-plotRight {
			x, row = plotLeft, row+1
		}
		items[i].x, items[i].row = x, row
		x += w
	}
	return items
}

func (p *plot) header(b *strings.Builder) {
	fmt.Fprintf(b, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">%s</text>\n", plotLeft, esc(p.title()))
	file := p.s.File
	if file == "" {
		file = p.s.Name
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"42\" fill=\"#444\">%s · the wall clock reads %s at the start</text>\n", plotLeft, esc(file),
		p.s.Start.UTC().Format(time.RFC3339Nano))
	y := 46
	for _, line := range p.comment {
		y += 15
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" fill=\"#444\" font-style=\"italic\">%s</text>\n", plotLeft, y, esc(line))
	}
	y += 26
	b.WriteString("<g class=\"legend\" font-size=\"11\">\n")
	for _, l := range p.legend() {
		x, ty := l.x, float64(y+18*l.row)
		fy := ty - 4
		switch l.kind {
		case "wall":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"6\"/>\n", x, fy, x+18, fy, wallColour)
		case "jitter":
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"12\" fill=\"%s\"/>\n", x, fy-6, jitterColour)
		case "ids":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n", x, fy, x+18, fy, idColour)
		case "issued":
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/>\n", x+3, fy-5, issuedColour)
		case "errors":
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/>\n", x+3, fy-5, errorColour)
		case "event":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n", x+9, fy-7, x+9, fy+7, eventColour)
		case "restart":
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"14\" fill=\"%s\"/>\n", x+4, fy-7, behindColour)
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"14\" fill=\"%s\"/>\n", x+14, fy-7, reservColour)
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"/>\n", x+9, fy-7, x+9, fy+7, restartColour)
		case "ok":
			fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\" fill=\"#1a7f37\">✓</text>\n", x+4, ty)
		}
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x+24, ty, esc(l.label))
	}
	b.WriteString("</g>\n")
}

// panel draws report i, from top on.
func (p *plot) panel(b *strings.Builder, top, i int, r *scenario.Report) {
	left, right := float64(plotLeft), float64(plotWidth-plotRight)
	labelTop := float64(top + 22)
	vTop := labelTop + float64(p.lanes*laneHeight)
	vBottom := vTop + offsetHeight
	cTop := vBottom + countGap
	cBottom := cTop + countHeight
	fmt.Fprintf(b, "<g class=\"panel\" data-strategy=\"%s\">\n", esc(r.Strategy))

	result, colour := "OK", "#1a7f37"
	if !r.OK() {
		result, colour = "FAIL", errorColour
	}
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\"><tspan font-weight=\"bold\">%s</tspan> <tspan font-weight=\"bold\" fill=\"%s\">%s</tspan>"+
		" — issued %d · failed %s · out of order %d · stall %s (waits: strategy %s, queue %s, reservation %s) · lead %s · lag %s · borrowed %s</text>\n",
		left, top+14, esc(r.Strategy), colour, result, r.Issued, esc(r.Errors.String()), r.OutOfOrder, short(r.MaxStall),
		short(r.MaxStrategyWait), short(r.MaxQueue), short(r.MaxReservationWait), short(r.MaxLead), short(r.MaxLag), short(r.Borrowed))
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>\n", left, vTop, right-left, offsetHeight)
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#fcfcfc\" stroke=\"#bbb\"/>\n", left, cTop, right-left, countHeight)

	// Grid and labels: offsets up the side, true time along the bottom.
	ystep := niceStep(p.ymax - p.ymin)
	for off := ceilTo(p.ymin, ystep); off <= p.ymax; off += ystep {
		y := p.y(vTop, off)
		colour := "#e8e8e8"
		if off == 0 {
			colour = "#999"
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, y, right, y, colour)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">%s</text>\n", left-6, y+4, signed(off))
	}
	fmt.Fprintf(b, "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">offset from true time</text>\n",
		vTop+offsetHeight/2)
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

// eventLines draws the clock events as dashed lines across the views and
// their labels in rows above them. Restarts are drawn by restarts.
func (p *plot) eventLines(b *strings.Builder, labelTop, vTop, bottom float64) {
	n := 0
	for _, l := range p.events {
		if l.ev.Kind != scenario.Restart {
			n++
		}
	}
	fmt.Fprintf(b, "<g class=\"events\" data-series=\"events\" data-count=\"%d\" stroke=\"%s\" fill=\"%s\" font-size=\"11\">\n", n, eventColour, eventColour)
	for _, l := range p.events {
		x := p.x(l.ev.At)
		y := labelTop + float64(l.lane*laneHeight) + 11
		if l.ev.Kind == scenario.Restart {
			fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"%s\" font-weight=\"bold\" text-anchor=\"%s\">%s</text>\n",
				x+nudge(l.anchor), y, restartColour, l.anchor, esc(l.text))
			continue
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-dasharray=\"4 3\"/>\n", x, vTop, x, bottom)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-opacity=\"0.35\"/>\n", x, y-9, x, vTop)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" text-anchor=\"%s\">%s</text>\n", x+nudge(l.anchor), y, l.anchor, esc(l.text))
	}
	b.WriteString("</g>\n")
}

// nudge is how far a label sits from its line.
func nudge(anchor string) float64 {
	if anchor == "end" {
		return -3
	}
	return 3
}

// restarts draws each restart as a purple line and shades the time the
// new run spent behind the mark the old one left, until the wall clock
// passed it: darker while the clock was behind the mark's Since (a
// rollback), lighter through the reservation after it.
func (p *plot) restarts(b *strings.Builder, r *scenario.Report, vTop, bottom float64) {
	fmt.Fprintf(b, "<g class=\"restarts\" data-series=\"restarts\" data-count=\"%d\" data-points=\"", len(r.Restarts))
	for i, re := range r.Restarts {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(b, "%d:%d:%d:%d:%d", re.At, re.Resumed, re.Behind, re.Rollback, re.Reservation)
	}
	b.WriteString("\">\n")
	for _, re := range r.Restarts {
		if re.Behind > 0 && re.Resumed >= 0 && r.Trace != nil {
			since := passes(r.Trace, re.Since, re.Resumed)
			shade := func(from, to time.Duration, colour string) {
				if to >= from {
					x0, x1 := p.x(from), p.x(to)
					fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"0.7\"/>\n",
						x0, vTop, max(x1-x0, 1), offsetHeight, colour)
				}
			}
			if re.Rollback > 0 {
				shade(re.Resumed, since, behindColour)
			}
			if re.Reservation > 0 {
				shade(since, passes(r.Trace, re.Mark, re.Resumed), reservColour)
			}
		}
		x := p.x(re.At)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"/>\n", x, vTop, x, bottom, restartColour)
	}
	b.WriteString("</g>\n")
}

// passes returns the first true time, from from on, at which the wall
// clock (without jitter) reads past t, or the end of the trace.
func passes(tr *scenario.Trace, t time.Time, from time.Duration) time.Duration {
	mark := t.Sub(tr.Start)
	for i := 1; i < len(tr.Wall); i++ {
		a, c := tr.Wall[i-1], tr.Wall[i]
		if c.At < from || c.T <= mark {
			continue
		}
		if a.T >= mark || c.At == a.At {
			return max(a.At, from)
		}
		// The wall clock runs linearly between two samples.
		frac := float64(mark-a.T) / float64(c.T-a.T)
		return max(a.At+time.Duration(frac*float64(c.At-a.At)), from)
	}
	if n := len(tr.Wall); n > 0 {
		return tr.Wall[n-1].At
	}
	return from
}

// wall draws the wall clock minus true time, with a band of the jitter
// around it while the clock jitters.
func (p *plot) wall(b *strings.Builder, tr *scenario.Trace, vTop float64) {
	jitter := jitterAt(tr.Events)
	var band strings.Builder
	for i := 1; i < len(tr.Wall); i++ {
		a, c := tr.Wall[i-1], tr.Wall[i]
		j := jitter(a.At)
		if j == 0 || c.At == a.At {
			continue
		}
		fmt.Fprintf(&band, "M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ",
			p.x(a.At), p.y(vTop, a.T-a.At+j), p.x(c.At), p.y(vTop, c.T-c.At+j),
			p.x(c.At), p.y(vTop, c.T-c.At-j), p.x(a.At), p.y(vTop, a.T-a.At-j))
	}
	if band.Len() > 0 {
		fmt.Fprintf(b, "<path class=\"jitter\" data-series=\"jitter\" data-count=\"1\" d=\"%s\" fill=\"%s\" stroke=\"none\"/>\n", band.String(), jitterColour)
	}

	var d, pts strings.Builder
	for j, pt := range tr.Wall {
		cmd := "L"
		if j == 0 {
			cmd = "M"
		} else {
			pts.WriteString(" ")
		}
		fmt.Fprintf(&d, "%s%.1f %.1f", cmd, p.x(pt.At), p.y(vTop, pt.T-pt.At))
		fmt.Fprintf(&pts, "%d:%d", pt.At, pt.T-pt.At)
	}
	fmt.Fprintf(b, "<path class=\"wall\" data-series=\"wall-offset\" data-count=\"%d\" data-points=\"%s\" d=\"%s\" "+
		"fill=\"none\" stroke=\"%s\" stroke-width=\"6\" stroke-linejoin=\"round\"/>\n", len(tr.Wall), pts.String(), d.String(), wallColour)
}

// ids draws, per bucket of true time, a bar over the range of the IDs'
// times minus true time; drawn after the wall clock, so on top of it.
func (p *plot) ids(b *strings.Builder, tr *scenario.Trace, vTop float64) {
	width := max(2.5, p.x(tr.Bucket)-p.x(0))
	var d, pts strings.Builder
	var count int64
	for i, bk := range tr.IDs {
		x := p.x(bk.At + tr.Bucket/2)
		y1, y2 := p.y(vTop, bk.MaxOffset), p.y(vTop, bk.MinOffset)
		if y2-y1 < 2.5 { // a single offset: a short dash, not nothing
			y1, y2 = (y1+y2)/2-1.25, (y1+y2)/2+1.25
		}
		fmt.Fprintf(&d, "M%.1f %.1fV%.1f", x, y1, y2)
		if i > 0 {
			pts.WriteString(" ")
		}
		fmt.Fprintf(&pts, "%d:%d:%d:%d", bk.At, bk.MinOffset, bk.MaxOffset, bk.Count)
		count += bk.Count
	}
	fmt.Fprintf(b, "<path class=\"ids\" data-series=\"id-offset\" data-count=\"%d\" data-points=\"%s\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"/>\n",
		count, pts.String(), d.String(), idColour, width)
}

// counts draws the strip of calls per bucket: IDs issued in grey, failed
// calls in red on top of them, on a scale of the busiest bucket.
func (p *plot) counts(b *strings.Builder, tr *scenario.Trace, cTop float64) {
	issued := map[time.Duration]int64{}
	failed := map[time.Duration]int64{}
	peak := int64(1)
	for _, bk := range tr.IDs {
		issued[bk.At] = bk.Count
	}
	for _, pt := range tr.Errors {
		failed[pt.At] = int64(pt.T)
	}
	for at, n := range issued {
		peak = max(peak, n+failed[at])
	}
	for at, n := range failed {
		peak = max(peak, n+issued[at])
	}
	width := max(1, p.x(tr.Bucket)-p.x(0))
	bottom := cTop + countHeight
	// A log scale: one call in a bucket shows next to a burst of
	// thousands, and a gap (a stall) shows as nothing.
	h := func(n int64) float64 { return math.Log1p(float64(n)) / math.Log1p(float64(peak)) * (countHeight - 4) }

	var d, pts strings.Builder
	var total int64
	for i, bk := range tr.IDs {
		fmt.Fprintf(&d, "M%.1f %.1fh%.2fv%.2fh%.2fZ", p.x(bk.At), bottom, width, -h(bk.Count), -width)
		if i > 0 {
			pts.WriteString(" ")
		}
		fmt.Fprintf(&pts, "%d:%d", bk.At, bk.Count)
		total += bk.Count
	}
	fmt.Fprintf(b, "<path class=\"issued\" data-series=\"issued\" data-count=\"%d\" data-points=\"%s\" d=\"%s\" fill=\"%s\"/>\n",
		total, pts.String(), d.String(), issuedColour)

	d.Reset()
	pts.Reset()
	total = 0
	for i, pt := range tr.Errors {
		n := int64(pt.T)
		// Stacked on the IDs issued: the bar's top is the bucket's calls.
		base := bottom - h(issued[pt.At])
		fmt.Fprintf(&d, "M%.1f %.1fh%.2fv%.2fh%.2fZ", p.x(pt.At), base, width, -max(h(issued[pt.At]+n)-h(issued[pt.At]), 1.5), -width)
		if i > 0 {
			pts.WriteString(" ")
		}
		fmt.Fprintf(&pts, "%d:%d", pt.At, n)
		total += n
	}
	fmt.Fprintf(b, "<path class=\"errors\" data-series=\"errors\" data-count=\"%d\" data-points=\"%s\" d=\"%s\" fill=\"%s\"/>\n",
		total, pts.String(), d.String(), errorColour)

	fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">%d</text>\n", plotLeft-6, cTop+10, peak)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\" fill=\"#444\">calls per %s</text>\n",
		plotLeft-6, cTop+26, fmtOffset(tr.Bucket))
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\" fill=\"#444\">(log scale)</text>\n", plotLeft-6, cTop+38)
}

// footer lists the events when their labels are numbers.
func (p *plot) footer(b *strings.Builder, top int) {
	if !p.numbered {
		return
	}
	fmt.Fprintf(b, "<g class=\"event-list\" font-size=\"11\" fill=\"#444\">\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\">events</text>\n", plotLeft, top+16)
	rows := (len(p.events) + 2) / 3
	colWidth := (plotWidth - plotLeft - plotRight) / 3
	for i, l := range p.events {
		x, y := plotLeft+(i/rows)*colWidth, top+32+(i%rows)*15
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s  %s</text>\n", x, y, l.text, esc(l.ev.String()))
	}
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
