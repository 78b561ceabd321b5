package plot

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference"
)

// TestBoundPlotWallTime: with the wall times of the bound trace (the
// summary.json's bound_time_seconds, recorded but not drawn before),
// bound.svg has a second panel, the bound against wall time; without them
// (or of another length) it has the one against the round.
func TestBoundPlotWallTime(t *testing.T) {
	trace := []float64{-120, -110, -105, -104}
	for _, tc := range []struct {
		times []float64
		wall  bool
	}{
		{[]float64{0.5, 1.5, 2.5, 4}, true},
		{nil, false},
		{[]float64{1}, false},
	} {
		f, err := BoundPlot(trace, tc.times, "title", "lower bound", "best bound + Laplace correction", nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f.Write(&buf, "svg"); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		if got := strings.Contains(svg, "wall time (s)"); got != tc.wall {
			t.Errorf("times %v: wall-time panel %v, want %v", tc.times, got, tc.wall)
		}
		if !strings.Contains(svg, "best bound + Laplace correction") {
			t.Errorf("times %v: the y axis does not name the value", tc.times)
		}
		if !strings.Contains(svg, "search round") {
			t.Errorf("times %v: no panel against the round", tc.times)
		}
	}
}

// TestBoundPlotFallbacks: the trees whose Laplace correction failed at
// first (summary.json's laplace_fallbacks, not shown before) are counted
// in the subtitle and marked at their round, refitted and kept without the
// correction apart; a fallback past the trace is counted but not drawn,
// and a run without fallbacks has neither.
func TestBoundPlotFallbacks(t *testing.T) {
	trace := []float64{-120, -110, -105, -104}
	render := func(fb []inference.LaplaceFallback) string {
		t.Helper()
		f, err := BoundPlot(trace, nil, "title", "lower bound", "best bound", fb)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f.Write(&buf, "svg"); err != nil {
			t.Fatal(err)
		}
		// The text, its wrapped lines joined by spaces.
		var text []string
		for _, m := range regexp.MustCompile(`>([^<]+)<`).FindAllStringSubmatch(buf.String(), -1) {
			text = append(text, strings.TrimSpace(m[1]))
		}
		return strings.Join(strings.Fields(strings.Join(text, " ")), " ")
	}
	refit := inference.LaplaceFallback{Start: "candidate", Round: 2, Action: "refitted from perturbed times; the correction at the new fit"}
	kept := inference.LaplaceFallback{Start: "linkage", Index: 1, Action: "correction unavailable; ranked by the bound alone, after every tree with the correction"}
	late := inference.LaplaceFallback{Start: "candidate", Round: 9, Action: kept.Action}
	if !refit.Refitted() || kept.Refitted() {
		t.Fatalf("Refitted: %v for the refit, %v for the kept tree", refit.Refitted(), kept.Refitted())
	}
	svg := render([]inference.LaplaceFallback{refit, kept, late})
	for _, want := range []string{
		"failed at first for 3 trees (summary.json laplace_fallbacks): 1 refitted from perturbed times, 2 kept without it",
		"Laplace correction failed, tree refitted",
		"Laplace correction unavailable, ranked by bound",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("bound.svg with fallbacks lacks %q:\n%s", want, svg)
		}
	}
	svg = render([]inference.LaplaceFallback{refit})
	if !strings.Contains(svg, "for 1 tree (") || strings.Contains(svg, "ranked by bound") {
		t.Errorf("bound.svg with one refit: the count or the legend is wrong")
	}
	if svg := render(nil); strings.Contains(svg, "laplace_fallbacks") || strings.Contains(svg, "Laplace correction failed") {
		t.Errorf("bound.svg without fallbacks mentions them")
	}
}
