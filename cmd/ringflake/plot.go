package main

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringflake/ringflake/scenario"
)

// The geometry of a plot, in SVG user units (pixels).
const (
	plotWidth    = 960
	plotLeft     = 104 // room for the time-of-day labels
	plotRight    = 24
	plotHeader   = 84 // title, comment, legend
	panelHeight  = 190
	panelGap     = 52 // the panel's own summary line and the x labels of the one above
	plotFooter   = 36
	wallColour   = "#1f77b4"
	idColour     = "#ff7f0e"
	errorColour  = "#d62728"
	eventColour  = "#555555"
	ticksPerAxis = 5
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

// writePlot draws, for each report (which should carry a trace), a panel
// on one time axis of true time, shared by the panels: the wall clock, the
// times of the IDs issued, the errors and the scenario's events. The y
// axis is the time of day the wall clock and the IDs tell, scaled to each
// panel's own.
func writePlot(w io.Writer, s *scenario.Scenario, reports []*scenario.Report, asHTML bool) error {
	p := newPlot(s, reports)
	var b strings.Builder
	height := plotHeader + len(reports)*(panelHeight+panelGap) + plotFooter
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
		p.panel(&b, i, r)
	}
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
	xmax    time.Duration // true time at the right edge, shared by the panels

	// The y range of the panel being drawn: offsets from the start at its
	// bottom and top.
	ymin, ymax time.Duration
}

func newPlot(s *scenario.Scenario, reports []*scenario.Report) *plot {
	p := &plot{s: s, reports: reports, xmax: s.Duration}
	for _, r := range reports {
		if tr := r.Trace; tr != nil {
			for _, pt := range tr.Wall {
				p.xmax = max(p.xmax, pt.At)
			}
			for _, b := range tr.IDs {
				p.xmax = max(p.xmax, b.At+tr.Bucket)
			}
		}
	}
	if p.xmax <= 0 {
		p.xmax = time.Millisecond
	}
	return p
}

// scaleTo sets the y range to what the trace of one panel holds.
func (p *plot) scaleTo(tr *scenario.Trace) {
	first := true
	see := func(t time.Duration) {
		if first {
			p.ymin, p.ymax, first = t, t, false
		}
		p.ymin, p.ymax = min(p.ymin, t), max(p.ymax, t)
	}
	if tr != nil {
		for _, pt := range tr.Wall {
			see(pt.T)
		}
		for _, b := range tr.IDs {
			see(b.Min)
			see(b.Max)
		}
	}
	span := p.ymax - p.ymin
	if span <= 0 {
		span = max(p.s.Duration, time.Millisecond)
	}
	p.ymin -= span / 20
	p.ymax += span / 20
}

func (p *plot) title() string {
	return fmt.Sprintf("ringflake replay: %s", p.s.Name)
}

func (p *plot) x(at time.Duration) float64 {
	return plotLeft + float64(at)/float64(p.xmax)*(plotWidth-plotLeft-plotRight)
}

func (p *plot) y(top float64, t time.Duration) float64 {
	return top + float64(p.ymax-t)/float64(p.ymax-p.ymin)*panelHeight
}

func (p *plot) header(b *strings.Builder) {
	fmt.Fprintf(b, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">%s</text>\n", plotLeft, esc(p.title()))
	if c, _, _ := strings.Cut(p.s.Comment, "\n"); c != "" {
		if rest := strings.TrimSpace(p.s.Comment[len(c):]); rest != "" {
			c += " …"
		}
		fmt.Fprintf(b, "<text x=\"%d\" y=\"42\" fill=\"#444\">%s</text>\n", plotLeft, esc(c))
	}
	legend := []struct{ colour, label, kind string }{
		{wallColour, "wall clock (without jitter)", "line"},
		{idColour, "timestamps of the IDs issued", "dots"},
		{errorColour, "failed calls", "tick"},
		{eventColour, "clock events", "dash"},
	}
	x := float64(plotLeft)
	for _, l := range legend {
		switch l.kind {
		case "line":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"62\" x2=\"%.1f\" y2=\"62\" stroke=\"%s\" stroke-width=\"2\"/>\n", x, x+18, l.colour)
		case "dots":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"62\" x2=\"%.1f\" y2=\"62\" stroke=\"%s\" stroke-width=\"4\" stroke-linecap=\"round\" stroke-dasharray=\"0.1 6\"/>\n", x+2, x+18, l.colour)
		case "tick":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"56\" x2=\"%.1f\" y2=\"68\" stroke=\"%s\" stroke-width=\"2\"/>\n", x+9, x+9, l.colour)
		case "dash":
			fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"62\" x2=\"%.1f\" y2=\"62\" stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n", x, x+18, l.colour)
		}
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"66\">%s</text>\n", x+24, esc(l.label))
		x += 30 + 6.5*float64(len(l.label))
	}
}

// panel draws report i.
func (p *plot) panel(b *strings.Builder, i int, r *scenario.Report) {
	top := float64(plotHeader + i*(panelHeight+panelGap) + panelGap - 16)
	left, right, bottom := float64(plotLeft), float64(plotWidth-plotRight), top+panelHeight
	fmt.Fprintf(b, "<g class=\"panel\" data-strategy=\"%s\">\n", esc(r.Strategy))
	p.scaleTo(r.Trace)

	result := "ok"
	if !r.OK() {
		result = "FAIL"
	}
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"bold\">%s</tspan> — issued %d · errors %s · out of order %d · max stall %s · max lead %s · max lag %s · borrowed %s · %s</text>\n",
		left, top-8, esc(r.Strategy), r.Issued, esc(r.Errors.String()), r.OutOfOrder, short(r.MaxStall), short(r.MaxLead), short(r.MaxLag), short(r.Borrowed), result)
	fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#fafafa\" stroke=\"#bbb\"/>\n", left, top, right-left, panelHeight)

	// Grid and labels: time of day up the side, true time along the bottom.
	ystep := niceStep(p.ymax - p.ymin)
	layout := "15:04:05"
	switch {
	case ystep < time.Millisecond:
		layout = "15:04:05.000000"
	case ystep < time.Second:
		layout = "15:04:05.000"
	}
	for t := ceilTo(p.ymin, ystep); t <= p.ymax; t += ystep {
		y := p.y(top, t)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", left, y, right, y)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">%s</text>\n",
			left-6, y+4, p.s.Start.Add(t).UTC().Format(layout))
	}
	xstep := niceStep(p.xmax)
	for at := time.Duration(0); at <= p.xmax; at += xstep {
		x := p.x(at)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", x, top, x, bottom)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#444\">%s</text>\n", x, bottom+14, fmtOffset(at))
	}
	if i == len(p.reports)-1 {
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"#444\">true time since the start →</text>\n", right, bottom+30)
	}

	tr := r.Trace
	if tr == nil {
		b.WriteString("</g>\n")
		return
	}
	// Events: a dashed line each, labelled where there is room.
	fmt.Fprintf(b, "<g class=\"events\" data-series=\"events\" data-count=\"%d\" stroke=\"%s\" fill=\"%s\" font-size=\"11\">\n", len(tr.Events), eventColour, eventColour)
	lastLabel := math.Inf(-1)
	for _, ev := range tr.Events {
		x := p.x(ev.At)
		fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-dasharray=\"4 3\"/>\n", x, top, x, bottom)
		_, label, _ := strings.Cut(ev.String(), ": ")
		if x-lastLabel >= 70 {
			anchor := "start"
			if x > right-90 {
				anchor = "end"
			}
			fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" text-anchor=\"%s\">%s</text>\n", x+3, top+13, anchor, esc(label))
			lastLabel = x
		}
	}
	b.WriteString("</g>\n")

	// The IDs: per bucket of true time, a bar from the earliest to the
	// latest ID time (a dot when they are equal).
	var d strings.Builder
	var count int64
	for _, bk := range tr.IDs {
		x := p.x(bk.At + tr.Bucket/2)
		fmt.Fprintf(&d, "M%.1f %.1fV%.1f", x, p.y(top, bk.Max), p.y(top, bk.Min)+0.5)
		count += bk.Count
	}
	fmt.Fprintf(b, "<path class=\"ids\" data-series=\"ids\" data-count=\"%d\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"3\" stroke-linecap=\"round\"/>\n",
		count, d.String(), idColour)

	// The wall clock.
	d.Reset()
	for j, pt := range tr.Wall {
		cmd := "L"
		if j == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f", cmd, p.x(pt.At), p.y(top, pt.T))
	}
	fmt.Fprintf(b, "<path class=\"wall\" data-series=\"wall\" data-count=\"%d\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
		len(tr.Wall), d.String(), wallColour)

	// Failed calls: a tick up from the bottom per bucket, longer for more.
	d.Reset()
	var errs int64
	for _, pt := range tr.Errors {
		n := int64(pt.T)
		errs += n
		h := min(4+3*math.Log2(float64(n)), 24)
		fmt.Fprintf(&d, "M%.1f %.1fV%.1f", p.x(pt.At+tr.Bucket/2), bottom, bottom-h)
	}
	fmt.Fprintf(b, "<path class=\"errors\" data-series=\"errors\" data-count=\"%d\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
		errs, d.String(), errorColour)
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

func esc(s string) string { return html.EscapeString(s) }
