package main

import (
	"context"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// svgPanel is what a plot shows for one strategy: its series by name, each
// with its data-count and its data-points (one []int64 per point, the
// numbers of "a:b:c" in nanoseconds or counts).
type svgPanel struct {
	strategy string
	count    map[string]int64
	points   map[string][][]int64
	paths    map[string]string
	labels   []string // the texts of the event labels
	peak     int64    // the scale of the strip of calls: its data-peak
}

// readPlot parses a plot strictly as XML (SVG, or XHTML holding the SVG)
// and returns its root element and its panels in order.
func readPlot(t *testing.T, path string) (root string, panels []svgPanel) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := xml.NewDecoder(f)
	dec.Strict = true
	sawSVG := false
	var stack []string // classes of the open elements
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "%s is well-formed XML", path)
		switch tok := tok.(type) {
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if n := len(stack); n > 0 && stack[n-1] == "label" && len(panels) > 0 {
				p := &panels[len(panels)-1]
				p.labels = append(p.labels, string(tok))
			}
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			class := attr["class"]
			if tok.Name.Local == "text" && len(stack) > 0 && (stack[len(stack)-1] == "events") {
				class = "label"
			}
			stack = append(stack, class)
			switch {
			case tok.Name.Local == "svg":
				sawSVG = true
				assert.Equal(t, "http://www.w3.org/2000/svg", tok.Name.Space)
			case tok.Name.Local == "g" && class == "panel":
				panels = append(panels, svgPanel{strategy: attr["data-strategy"], count: map[string]int64{},
					points: map[string][][]int64{}, paths: map[string]string{}})
			}
			s := attr["data-series"]
			if s == "" {
				continue
			}
			require.NotEmpty(t, panels, "series %s outside a panel", s)
			p := &panels[len(panels)-1]
			n, err := strconv.ParseInt(attr["data-count"], 10, 64)
			require.NoError(t, err)
			p.count[s] = n
			p.paths[s] = attr["d"]
			if v, ok := attr["data-peak"]; ok {
				p.peak, err = strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
			}
			for _, pt := range strings.Fields(attr["data-points"]) {
				var nums []int64
				for _, f := range strings.Split(pt, ":") {
					v, err := strconv.ParseInt(f, 10, 64)
					require.NoError(t, err, "%s: %q", s, pt)
					nums = append(nums, v)
				}
				p.points[s] = append(p.points[s], nums)
			}
		}
	}
	require.True(t, sawSVG)
	return root, panels
}

// sum adds up field i of a series' points.
func sum(points [][]int64, i int) int64 {
	n := int64(0)
	for _, p := range points {
		n += p[i]
	}
	return n
}

const ms = int64(time.Millisecond)

// The plot of a −3 ms step carries every series, with the replay's values:
// the wall clock 3 ms behind true time after the step, the IDs with it or
// above it, every ID issued and every failed call counted.
func TestPlotSVG(t *testing.T) {
	file := "../../scenarios/small-step-back.yaml"
	out := filepath.Join(t.TempDir(), "small.svg")
	code, _, errOut := runCLI("replay", "-all-strategies", "-plot", out, file)
	require.Equal(t, 0, code, errOut)
	reports := replayJSON(t, "-all-strategies", file)

	root, panels := readPlot(t, out)
	assert.Equal(t, "svg", root)
	require.Len(t, panels, len(reports))
	for i, p := range panels {
		r := reports[i]
		assert.Equal(t, r.Strategy, p.strategy)
		for _, series := range []string{"wall-offset", "id-offset", "issued", "errors", "events", "restarts"} {
			assert.Contains(t, p.count, series, "%s: the %s series", p.strategy, series)
		}
		assert.NotContains(t, p.count, "jitter", "no jitter here")
		assert.Equal(t, r.Issued, p.count["id-offset"], "%s: every ID issued is drawn", p.strategy)
		assert.Equal(t, r.Issued, sum(p.points["id-offset"], 3))
		assert.Equal(t, r.Issued, p.count["issued"])
		assert.Equal(t, r.Issued, sum(p.points["issued"], 1))
		assert.Equal(t, r.Calls-r.Issued, p.count["errors"], p.strategy)
		assert.Equal(t, r.Calls-r.Issued, sum(p.points["errors"], 1))
		assert.Equal(t, int64(1), p.count["events"], "the step")
		assert.Equal(t, []string{"step -3ms"}, p.labels)
		assert.Zero(t, p.count["restarts"])
		assert.True(t, strings.HasPrefix(p.paths["wall-offset"], "M"), p.paths["wall-offset"])

		// The wall clock runs true, then 3 ms behind true time.
		require.GreaterOrEqual(t, len(p.points["wall-offset"]), 3)
		for _, pt := range p.points["wall-offset"] {
			switch at, off := pt[0], pt[1]; {
			case at < 50*ms:
				assert.Zero(t, off, "at %d", at)
			case at > 50*ms:
				assert.Equal(t, -3*ms, off, "at %d", at)
			}
		}
		// The IDs: on true time before the step; never more than 3 ms
		// behind it, nor ahead of it.
		for _, pt := range p.points["id-offset"] {
			at, lo, hi := pt[0], pt[1], pt[2]
			assert.LessOrEqual(t, lo, hi)
			if at < 50*ms {
				assert.Equal(t, []int64{0, 0}, []int64{lo, hi}, "%s at %d", p.strategy, at)
			}
			assert.GreaterOrEqual(t, lo, -3*ms, "%s at %d", p.strategy, at)
			assert.LessOrEqual(t, hi, int64(0), "%s at %d", p.strategy, at)
		}
	}
	offsetAt := func(p svgPanel, at int64) []int64 {
		for _, pt := range p.points["id-offset"] {
			if pt[0] == at {
				return pt[1:3]
			}
		}
		return nil
	}
	// The error strategy fails for a while, then stamps IDs on the wall
	// clock, 3 ms behind true time; the ring does at once, without failing.
	assert.Positive(t, panels[0].count["errors"])
	assert.Equal(t, []int64{-3 * ms, -3 * ms}, offsetAt(panels[0], 60*ms))
	assert.Zero(t, panels[3].count["errors"], "the ring fails no call")
	assert.Equal(t, []int64{-3 * ms, -3 * ms}, offsetAt(panels[3], 50*ms), "the ring stamps the ticks the wall clock reads")
	// logical:1s borrows: right after the step its IDs are stamped ahead
	// of the wall clock, less than 3 ms behind true time.
	assert.Greater(t, offsetAt(panels[2], 51*ms)[1], -3*ms)
}

// A jitter band is drawn while the clock jitters, and the IDs scatter
// within it.
func TestPlotJitter(t *testing.T) {
	out := filepath.Join(t.TempDir(), "jitter.svg")
	code, _, errOut := runCLI("replay", "-strategy", "ring", "-plot", out, "../../scenarios/jitter.yaml")
	require.Equal(t, 0, code, errOut)
	_, panels := readPlot(t, out)
	require.Len(t, panels, 1)
	p := panels[0]
	assert.Equal(t, int64(1), p.count["jitter"])
	assert.NotEmpty(t, p.paths["jitter"])
	var below, above bool
	for _, pt := range p.points["id-offset"] {
		assert.GreaterOrEqual(t, pt[1], -2*ms)
		assert.LessOrEqual(t, pt[2], 2*ms)
		below, above = below || pt[1] < 0, above || pt[2] > 0
	}
	assert.True(t, below && above, "the IDs scatter both ways")
}

// Restarts are their own series, labelled, with what each did.
func TestPlotRestarts(t *testing.T) {
	file := "../../scenarios/crash-restart-during-rollback.yaml"
	out := filepath.Join(t.TempDir(), "crash.svg")
	code, _, errOut := runCLI("replay", "-strategy", "error", "-plot", out, file)
	require.Equal(t, 0, code, errOut)
	reports := replayJSON(t, "-strategy", "error", file)
	require.Len(t, reports, 1)
	require.Len(t, reports[0].Restarts, 1)
	re := reports[0].Restarts[0]

	_, panels := readPlot(t, out)
	require.Len(t, panels, 1)
	p := panels[0]
	assert.Equal(t, int64(1), p.count["restarts"])
	assert.Equal(t, [][]int64{{re.At, re.At, re.Behind, re.Rollback, re.Reservation}}, p.points["restarts"])
	assert.Equal(t, 310*ms, re.At)
	assert.Equal(t, []int64{95 * ms, 0, 95 * ms}, []int64{re.Behind, re.Rollback, re.Reservation},
		"the clock at the restart is past the mark's Since: the lead of the mark is a reservation")
	assert.Equal(t, int64(1), p.count["events"], "the step; the restart is not a clock event")
	assert.Equal(t, []string{"step -50ms", "crash restart"}, p.labels, "both labelled, though 10 ms apart")
}

func TestPlotHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "small.html")
	code, _, errOut := runCLI("replay", "-strategy", "ring", "-plot", out, "../../scenarios/leap-second.yaml")
	require.Equal(t, 0, code, errOut)
	root, panels := readPlot(t, out)
	assert.Equal(t, "html", root, "XHTML that browsers and XML parsers both read")
	require.Len(t, panels, 1)
	assert.Equal(t, "ring", panels[0].strategy)
	assert.Positive(t, panels[0].count["id-offset"])
	content, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(content), "<!DOCTYPE html>"))
}

func TestPlotDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	files := shippedScenarios(t)
	code, _, errOut := runCLI(append([]string{"replay", "-plot", dir}, files...)...)
	require.Equal(t, 0, code, errOut)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml") + ".svg"
		_, panels := readPlot(t, filepath.Join(dir, name))
		require.Len(t, panels, 1, name)
		assert.Equal(t, "ring,wait:5ms,error", panels[0].strategy)
	}
}

// Two scenario files of the same name in different directories get plots
// of different names, in the order given.
func TestPlotDirectoryUniqueNames(t *testing.T) {
	tmp := t.TempDir()
	a := writeScenario(t, mkdir(t, tmp, "a"), "step.yaml", stepBack)
	b := writeScenario(t, mkdir(t, tmp, "b"), "step.yaml", strings.Replace(stepBack, "-3ms", "-7ms", 1))
	c := writeScenario(t, mkdir(t, tmp, "c"), "STEP.yml", stepBack)
	out := filepath.Join(tmp, "plots")
	code, _, errOut := runCLI("replay", "-strategy", "error", "-plot", out, a, b, c)
	require.Equal(t, 0, code, errOut)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"step.svg", "step-2.svg", "STEP-3.svg"}, names)
	_, panels := readPlot(t, filepath.Join(out, "step-2.svg"))
	require.Len(t, panels, 1)
	assert.Contains(t, panels[0].labels, "step -7ms", "the second file's plot")
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	require.NoError(t, os.Mkdir(dir, 0o755))
	return dir
}

// -plot takes FILE.svg, FILE.html, a path without an extension or an
// existing directory; anything else is a usage error, and creates nothing.
func TestPlotPaths(t *testing.T) {
	tmp := t.TempDir()
	existing := mkdir(t, tmp, "plots.v2")
	files := []string{"a/x.yaml"}
	for _, tc := range []struct {
		plot string
		want []string // nil: a usage error
	}{
		{filepath.Join(tmp, "x.svg"), []string{filepath.Join(tmp, "x.svg")}},
		{filepath.Join(tmp, "x.HTML"), []string{filepath.Join(tmp, "x.HTML")}},
		{filepath.Join(tmp, "out"), []string{filepath.Join(tmp, "out", "x.svg")}},
		{existing, []string{filepath.Join(existing, "x.svg")}},
		{filepath.Join(tmp, "x.png"), nil},
		{filepath.Join(tmp, "x.svgz"), nil},
	} {
		got, err := plotPaths(tc.plot, files)
		if tc.want == nil {
			var ue *usageError
			require.ErrorAs(t, err, &ue, tc.plot)
			assert.NoFileExists(t, tc.plot)
			assert.NoDirExists(t, tc.plot)
			continue
		}
		require.NoError(t, err, tc.plot)
		assert.Equal(t, tc.want, got)
	}
	code, _, errOut := runCLI("replay", "-plot", filepath.Join(tmp, "plot.png"), "../../scenarios/small-step-back.yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "want FILE.svg or FILE.html, or a directory")
	assert.NoDirExists(t, filepath.Join(tmp, "plot.png"))

	code, _, errOut = runCLI("replay", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "a path without an extension")
}

// Event labels are staggered into rows so that none overlaps another;
// with too many for a few rows, they become numbers, listed below the
// panels, still without overlaps.
func TestPlotLabelsDoNotCollide(t *testing.T) {
	many := "start: 2026-11-22T12:00:00Z\nduration: 200ms\nload: {rate: 2/ms}\nevents:\n"
	for i := range 60 {
		many += "  - {at: " + strconv.Itoa(3*i+1) + "ms, step: 1ms}\n"
	}
	for _, tc := range []struct {
		name     string
		src      string
		numbered bool
	}{
		{"close events", "start: 2026-11-22T12:00:00Z\nduration: 100ms\nevents:\n" +
			"  - {at: 50ms, step: -3ms}\n  - {at: 50ms, freeze: 5ms}\n  - {at: 51ms, restart: crash}\n  - {at: 99ms, jitter: 1ms}\n", false},
		{"repeated steps", mustRead(t, "../../scenarios/repeated-small-steps.yaml"), false},
		{"sixty steps", many, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scenario.Parse("labels.yaml", []byte(tc.src))
			require.NoError(t, err)
			p := newPlot(s, nil)
			assert.Equal(t, tc.numbered, p.numbered)
			require.Len(t, p.events, len(s.Events), "every event is labelled")
			if !tc.numbered {
				assert.LessOrEqual(t, p.lanes, maxLanes)
			}
			for i, a := range p.events {
				af, at := p.labelSpan(a)
				assert.GreaterOrEqual(t, af, 0.0)
				assert.LessOrEqual(t, at, float64(plotWidth))
				for _, b := range p.events[i+1:] {
					if a.lane != b.lane {
						continue
					}
					bf, bt := p.labelSpan(b)
					assert.True(t, at <= bf || bt <= af, "%q and %q overlap in row %d", a.text, b.text, a.lane)
				}
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// The plot of the longest scenario a layout allows ends: it used to loop
// forever on the trace's buckets.
func TestPlotLongestScenario(t *testing.T) {
	dir := t.TempDir()
	file := writeScenario(t, dir, "long.yaml", `start: 2026-11-22T12:00:00Z
layout: epoch=1970-01-01T00:00:00Z,unit=9223372036854ms,time=1,node=0,seq=62
duration: 2562047h47m16.854775807s
load: {rate: 1/100000h}
`)
	out := filepath.Join(dir, "long.svg")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard: it takes milliseconds
	defer cancel()
	var stdout, stderr strings.Builder
	require.NoError(t, replayWith(ctx, []string{"-strategy", "ring", "-plot", out, file}, &stdout, &stderr, false), stderr.String())
	_, panels := readPlot(t, out)
	require.Len(t, panels, 1)
	assert.Positive(t, panels[0].count["id-offset"])
}

// The panels' own geometry stays finite and inside the picture for a
// replay of every shipped scenario against every strategy.
func TestPlotEveryShippedScenario(t *testing.T) {
	for _, f := range shippedScenarios(t) {
		s, err := scenario.ReadFile(f)
		require.NoError(t, err)
		var reports []*scenario.Report
		for _, st := range []strategies.Strategy{strategies.Error(), strategies.Ring()} {
			r, err := scenario.Replay(context.Background(), s, st, scenario.WithTrace())
			require.NoError(t, err)
			reports = append(reports, r)
		}
		var b strings.Builder
		require.NoError(t, writePlot(&b, s, reports, false))
		assert.NotContains(t, b.String(), "NaN", f)
		assert.NotContains(t, b.String(), "Inf", f)
		dec := xml.NewDecoder(strings.NewReader(b.String()))
		dec.Strict = true
		for {
			_, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, f)
		}
	}
}

func TestNiceStep(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct{ span, want time.Duration }{
		{100 * ms, 20 * ms},
		{40 * ms, 10 * ms},
		{3 * time.Second, time.Second},
		{30 * time.Second, 10 * time.Second},
		{7 * time.Microsecond, 2 * time.Microsecond},
		{0, 1},
	} {
		assert.Equal(t, tc.want, niceStep(tc.span), "span %v", tc.span)
	}
	assert.Equal(t, 20*ms, ceilTo(11*ms, 10*ms))
	assert.Equal(t, -10*ms, ceilTo(-11*ms, 10*ms))
	assert.Equal(t, 10*ms, ceilTo(10*ms, 10*ms))
	assert.Equal(t, "+3ms", signed(3*ms))
	assert.Equal(t, "−3ms", signed(-3*ms))
	assert.Equal(t, "0", signed(0))
}

// summaryText matches a panel's summary line in a plot.
var summaryText = regexp.MustCompile(`<text class="summary" x="(\d+)" y="\d+">(.*?)</text>`)

// Each panel's summary fits the plot's width: it wraps between its parts
// rather than running past the edge.
func TestPlotSummariesFit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "crash.svg")
	code, _, errOut := runCLI("replay", "-all-strategies", "-plot", out, "../../scenarios/crash-loop-during-rollback.yaml")
	require.Equal(t, 0, code, errOut)
	svg := mustRead(t, out)
	lines := summaryText.FindAllStringSubmatch(svg, -1)
	require.Greater(t, len(lines), 5, "more lines than panels: the summaries wrap")
	text := ""
	for _, m := range lines {
		x, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		line := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[2], ""))
		assert.LessOrEqual(t, float64(x)+textWidth(line), float64(plotWidth-plotRight), "%q fits", line)
		text += line + "\n"
	}
	for _, part := range []string{"issued ", "failed ", "out of order ", "stall ", "lead ", "lag ", "borrowed "} {
		assert.Equal(t, 5, strings.Count(text, part), "every panel's %q is shown:\n%s", part, text)
	}
	assert.Equal(t, []string{"a · b", "c"}, wrap([]string{"a", "b", "c"}, 6*summaryWidth))
	assert.Equal(t, []string{"a long part alone"}, wrap([]string{"a long part alone"}, 1), "a part wider than the line is not cut")
}

// An 80 ms step and a 3 s freeze show on one y axis, each at a height of
// its own: the axis turns to a symmetric log scale when the offsets span
// more than a few ticks.
func TestPlotShowsSmallStepsNextToLarge(t *testing.T) {
	s, err := scenario.Parse("mixed.yaml", []byte(`start: 2026-11-22T12:00:00Z
duration: 5s
load: {rate: 1/ms}
events:
  - {at: 100ms, step: -80ms}
  - {at: 1s, freeze: 3s}
`))
	require.NoError(t, err)
	r, err := scenario.Replay(context.Background(), s, strategies.Ring(), scenario.WithTrace())
	require.NoError(t, err)
	p := newPlot(s, []*scenario.Report{r})
	require.True(t, p.symlog)
	ms := time.Millisecond
	y0, y80, y3s := p.y(0, 0), p.y(0, -80*ms), p.y(0, -3080*ms)
	for _, y := range []float64{y0, y80, y3s} {
		assert.True(t, y >= 0 && y <= offsetHeight, "inside the view: %v", y)
	}
	assert.Greater(t, y80-y0, 30.0, "the 80 ms step is seen")
	assert.Greater(t, y3s-y80, 30.0, "and the 3 s freeze below it")
	assert.Greater(t, p.y(0, -3*ms)-y0, 10.0, "a step of a few ticks too")

	var b strings.Builder
	require.NoError(t, writePlot(&b, s, []*scenario.Report{r}, false))
	for _, label := range []string{">0<", ">−1ms<", ">−10ms<", ">−100ms<", ">−1s<", "(log scale)"} {
		assert.Contains(t, b.String(), label, "the axis marks the powers of ten")
	}

	small, err := scenario.ReadFile("../../scenarios/small-step-back.yaml")
	require.NoError(t, err)
	r, err = scenario.Replay(context.Background(), small, strategies.Ring(), scenario.WithTrace())
	require.NoError(t, err)
	assert.False(t, newPlot(small, []*scenario.Report{r}).symlog, "a few ticks stay on a linear scale")
}

// The panels of one plot share their scales: true time, offsets, and the
// strip of calls, whose bars all use the busiest bucket of any panel.
func TestPlotPanelsShareScales(t *testing.T) {
	out := filepath.Join(t.TempDir(), "crash-loop.svg")
	code, _, errOut := runCLI("replay", "-all-strategies", "-plot", out, "../../scenarios/crash-loop-during-rollback.yaml")
	require.Equal(t, 0, code, errOut)
	_, panels := readPlot(t, out)
	require.Len(t, panels, 5)
	own := map[int64]bool{}
	most := int64(0)
	for _, p := range panels {
		calls := map[int64]int64{}
		for _, pt := range p.points["issued"] {
			calls[pt[0]] += pt[1]
		}
		for _, pt := range p.points["errors"] {
			calls[pt[0]] += pt[1]
		}
		peak := int64(0)
		for _, n := range calls {
			peak = max(peak, n)
		}
		own[peak] = true
		most = max(most, peak)
	}
	require.Greater(t, len(own), 1, "the panels' busiest buckets differ: a test that can fail")
	for _, p := range panels {
		assert.Equal(t, most, p.peak, "%s: the strip's scale is the busiest bucket of every panel", p.strategy)
	}
	svg := mustRead(t, out)
	assert.Equal(t, 5, strings.Count(svg, ">"+strconv.FormatInt(most, 10)+"</text>"), "each strip labels the shared scale")
}
