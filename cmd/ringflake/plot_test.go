package main

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgPanel is what a plot shows for one strategy.
type svgPanel struct {
	strategy string
	series   map[string]int64 // data-series → data-count
	paths    map[string]string
}

// readPlot parses a plot strictly as XML (SVG, or XHTML holding the SVG)
// and returns its panels in order.
func readPlot(t *testing.T, path string) (root string, panels []svgPanel) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec := xml.NewDecoder(f)
	dec.Strict = true
	sawSVG := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "%s is well-formed XML", path)
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		attr := map[string]string{}
		for _, a := range se.Attr {
			attr[a.Name.Local] = a.Value
		}
		switch {
		case se.Name.Local == "svg":
			sawSVG = true
			assert.Equal(t, "http://www.w3.org/2000/svg", se.Name.Space)
		case se.Name.Local == "g" && attr["class"] == "panel":
			panels = append(panels, svgPanel{strategy: attr["data-strategy"], series: map[string]int64{}, paths: map[string]string{}})
		}
		if s := attr["data-series"]; s != "" {
			require.NotEmpty(t, panels, "series %s outside a panel", s)
			n, err := strconv.ParseInt(attr["data-count"], 10, 64)
			require.NoError(t, err)
			panels[len(panels)-1].series[s] = n
			panels[len(panels)-1].paths[s] = attr["d"]
		}
	}
	require.True(t, sawSVG)
	return root, panels
}

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
		assert.Equal(t, r.Issued, p.series["ids"], "%s: every ID issued is drawn", p.strategy)
		assert.Equal(t, r.Errors["rollback"], p.series["errors"], p.strategy)
		assert.Equal(t, int64(1), p.series["events"], "the step")
		assert.GreaterOrEqual(t, p.series["wall"], int64(3), "the wall clock, with its step")
		assert.True(t, strings.HasPrefix(p.paths["wall"], "M"), p.paths["wall"])
		assert.NotEmpty(t, p.paths["ids"])
	}
	assert.Empty(t, panels[3].paths["errors"], "the ring fails no call")
	assert.NotEmpty(t, panels[0].paths["errors"], "the error strategy does")
}

func TestPlotHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "small.html")
	code, _, errOut := runCLI("replay", "-strategy", "ring", "-plot", out, "../../scenarios/leap-second.yaml")
	require.Equal(t, 0, code, errOut)
	root, panels := readPlot(t, out)
	assert.Equal(t, "html", root, "XHTML that browsers and XML parsers both read")
	require.Len(t, panels, 1)
	assert.Equal(t, "ring", panels[0].strategy)
	assert.Positive(t, panels[0].series["ids"])
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
}
