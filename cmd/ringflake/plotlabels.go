package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ringflake/ringflake/scenario"
)

// eventLabel is an event with where its label goes.
type eventLabel struct {
	ev     scenario.Event
	text   string // "step -3ms", or its number
	lane   int    // row, from the top
	anchor string // "start": right of the line; "end": left of it
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
	line := " · the wall clock reads " + p.s.Start.UTC().Format(time.RFC3339Nano) + " at the start"
	for r := []rune(file); textWidth(file+line) > plotWidth-plotLeft-plotRight && len(r) > 1; {
		r = r[1:] // a long path loses its start
		file = "…" + string(r)
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"42\" fill=\"#444\">%s</text>\n", plotLeft, esc(file+line))
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

// summaryLine is the height of a line of a panel's summary.
const summaryLine = 15

// summaryWidth is the width of a character of a panel's summary (font
// size 12), about, erring wide: what wrap measures lines with.
const summaryWidth = 7.0

// summaryParts returns the parts of a panel's summary line: the strategy
// and its result, then the report's figures.
func summaryParts(r *scenario.Report) []string {
	result := "OK"
	if !r.OK() {
		result = "FAIL"
	}
	return []string{cell(r.Strategy) + " " + result, fmt.Sprintf("issued %d", r.Issued), "failed " + r.Errors.String(),
		fmt.Sprintf("out of order %d", r.OutOfOrder),
		fmt.Sprintf("stall %s (waits: strategy %s, queue %s, reservation %s)", short(r.MaxStall), short(r.MaxStrategyWait),
			short(r.MaxQueue), short(r.MaxReservationWait)),
		"lead " + short(r.MaxLead), "lag " + short(r.MaxLag), "borrowed " + short(r.Borrowed)}
}

// wrap joins parts with " · " into lines no wider than width, breaking
// between parts only.
func wrap(parts []string, width float64) []string {
	var lines []string
	line := ""
	for _, part := range parts {
		next := part
		if line != "" {
			next = line + " · " + part
		}
		if line != "" && textWidth(next) > width {
			lines = append(lines, line)
			next = part
		}
		line = next
	}
	return append(lines, line)
}

// textWidth is the width of a summary's text, about.
func textWidth(s string) float64 { return summaryWidth * float64(len([]rune(s))) }

// summary draws panel i's summary lines from top on: the strategy in bold
// and its result in colour, then its figures.
func (p *plot) summary(b *strings.Builder, top, i int, r *scenario.Report) {
	colour := "#1a7f37"
	if !r.OK() {
		colour = errorColour
	}
	for j, line := range p.summaries[i] {
		y := top + 14 + j*summaryLine
		fmt.Fprintf(b, "<text class=\"summary\" x=\"%d\" y=\"%d\">", plotLeft, y)
		if j == 0 {
			name, rest, _ := strings.Cut(line, " ")
			result, rest, _ := strings.Cut(rest, " · ")
			fmt.Fprintf(b, "<tspan font-weight=\"bold\">%s</tspan> <tspan font-weight=\"bold\" fill=\"%s\">%s</tspan>", esc(name), colour, esc(result))
			if rest != "" {
				b.WriteString(" · " + esc(rest))
			}
		} else {
			b.WriteString(esc(line))
		}
		b.WriteString("</text>\n")
	}
}
