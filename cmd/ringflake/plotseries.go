package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ringflake/ringflake/scenario"
)

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

// peakCalls returns the most calls, issued and failed, of one bucket of
// tr.
func peakCalls(tr *scenario.Trace) int64 {
	calls := map[time.Duration]int64{}
	for _, bk := range tr.IDs {
		calls[bk.At] += bk.Count
	}
	for _, pt := range tr.Errors {
		calls[pt.At] += int64(pt.T)
	}
	peak := int64(0)
	for _, n := range calls {
		peak = max(peak, n)
	}
	return peak
}

// counts draws the strip of calls per bucket: IDs issued in grey, failed
// calls in red on top of them, on the scale of the busiest bucket of
// every panel, so that panels compare.
func (p *plot) counts(b *strings.Builder, tr *scenario.Trace, cTop float64) {
	issued := map[time.Duration]int64{}
	for _, bk := range tr.IDs {
		issued[bk.At] = bk.Count
	}
	peak := p.peak
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
	fmt.Fprintf(b, "<path class=\"issued\" data-series=\"issued\" data-count=\"%d\" data-peak=\"%d\" data-points=\"%s\" d=\"%s\" fill=\"%s\"/>\n",
		total, peak, pts.String(), d.String(), issuedColour)

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
