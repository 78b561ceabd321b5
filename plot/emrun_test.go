package plot

import (
	"bytes"
	"image/png"
	"regexp"
	"slices"
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
	// A fit cut short by --time had no correction formed: counted apart
	// (it was counted among the failures of the Hessian).
	cut := inference.LaplaceFallback{Start: "candidate", Round: 3, Action: kept.Action, Error: "fit cut short by --time after 1 EM iterations, its times not at a maximum: the correction is not formed"}
	if !cut.CutShort() || kept.CutShort() {
		t.Fatalf("CutShort: %v for the cut fit, %v for the kept tree", cut.CutShort(), kept.CutShort())
	}
	svg = render([]inference.LaplaceFallback{refit, cut, cut})
	for _, want := range []string{"failed at first for 1 tree (", "2 trees cut short by --time"} {
		if !strings.Contains(svg, want) {
			t.Errorf("bound.svg with fits cut short lacks %q:\n%s", want, svg)
		}
	}
	if svg := render([]inference.LaplaceFallback{cut}); strings.Contains(svg, "failed at first") || !strings.Contains(svg, "1 tree cut short by --time") {
		t.Errorf("bound.svg with one fit cut short: %s", svg)
	}
	if svg := render(nil); strings.Contains(svg, "laplace_fallbacks") || strings.Contains(svg, "Laplace correction failed") {
		t.Errorf("bound.svg without fallbacks mentions them")
	}
}

// TestBoundPlotLayout checks the faults a new user saw in bound.png: the
// marks' legend sat in the panel over the round-0 mark (it is now drawn
// under the subtitle, before the panels), the last value was drawn on the
// panel's top edge against the subtitle (the y range is padded), and the
// wall-time ticks read "52.50" (plainTicks).
func TestBoundPlotLayout(t *testing.T) {
	trace := []float64{-16331.2, -16326.2, -16325.1}
	times := []float64{50.3, 58.6, 62.9}
	kept := inference.LaplaceFallback{Start: "sequential", Index: 2, Action: "correction unavailable; ranked by the bound alone, after every tree with the correction"}
	f, err := BoundPlot(trace, times, "Best bound + Laplace correction of the EM search (summary.json)",
		"the EM bound plus the Laplace correction for the times", "best bound + Laplace correction", []inference.LaplaceFallback{kept})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	txt := texts(buf.String())
	idx := func(s string) int { return slices.Index(txt, s) }
	if l, a := idx("Laplace correction unavailable, ranked by bound"), idx("search round (0: the initial tree)"); l < 0 || a < 0 || l > a {
		t.Errorf("the legend (text %d) is not drawn before the panels (axis label %d): %q", l, a, txt)
	}
	for _, s := range txt {
		if regexp.MustCompile(`^-?\d+\.\d*0$`).MatchString(s) {
			t.Errorf("tick label %q has trailing zeros", s)
		}
	}
	// In the PNG, the curve (blue) starts well below the subtitle (grey).
	buf.Reset()
	if err := f.Write(&buf, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	blue := func(x, y int) bool {
		cr, cg, cb, _ := img.At(x, y).RGBA()
		return cb > cr+0x5000 && cb > cg+0x1000
	}
	curveX, curveY := -1, -1
	for y := r.Min.Y; y < r.Max.Y && curveY < 0; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if blue(x, y) {
				curveX, curveY = x, y
				break
			}
		}
	}
	// The nearest ink above the curve's top, in the columns around it:
	// the subtitle's or the legend's text (or the top tick's label).
	gap := -1
	for y := curveY - 1; y >= r.Min.Y && gap < 0; y-- {
		for x := max(r.Min.X, curveX-15); x < min(r.Max.X, curveX+15); x++ {
			if cr, _, _, _ := img.At(x, y).RGBA(); cr < 0xc000 && !blue(x, y) {
				gap = curveY - y
				break
			}
		}
	}
	if curveY < 0 || gap >= 0 && gap < 16 {
		t.Errorf("the curve's top (pixel %d, %d) is %d pixels below the ink above it: the last value is drawn against the text", curveX, curveY, gap)
	}
}

// TestTrimZeros: tick labels without trailing zeros.
func TestTrimZeros(t *testing.T) {
	for in, want := range map[string]string{"25.00": "25", "2.50": "2.5", "0.250": "0.25", "-16326": "-16326", "1e-05": "1e-05", "0.0": "0", "-0.0": "0", "100": "100", "1.05": "1.05"} {
		if got := trimZeros(in); got != want {
			t.Errorf("trimZeros(%q) = %q, want %q", in, got, want)
		}
	}
	for _, r := range [][2]float64{{50.3, 62.9}, {0, 25}, {0, 0.3}, {-3, 7}} {
		for _, tk := range (plainTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" && tk.Label != trimZeros(tk.Label) {
				t.Errorf("range %v: tick %q", r, tk.Label)
			}
		}
	}
}

// TestEMValueKindWritesS: the EM pictures' subtitles write s as the
// dendrogram's axis does, "s = −log(1 − t)" with Unicode minus signs and
// spaces (they wrote "s = -log(1-t)"), for each value an EM run ranks by.
func TestEMValueKindWritesS(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    inference.EMResult
		writes bool // the value's description names s
	}{
		{"bound", inference.EMResult{}, true},
		{"EP", inference.EMResult{Approximate: true}, true},
		{"Laplace", inference.EMResult{TimesIntegrated: true}, false},
	} {
		kind := emValueKind(&tc.res)
		if strings.Contains(kind, "-log") || strings.Contains(kind, "1-t") {
			t.Errorf("%s: %q writes s in ASCII", tc.name, kind)
		}
		if got := strings.Contains(kind, "s = −log(1 − t)"); got != tc.writes {
			t.Errorf("%s: %q names s = −log(1 − t): %v, want %v", tc.name, kind, got, tc.writes)
		}
		if !strings.Contains(axisLabel(AxisS), sOfT) {
			t.Errorf("the s axis's label %q does not write %q", axisLabel(AxisS), sOfT)
		}
	}
}

// TestTickMinusSign: tick labels of negative values are written with the
// minus sign U+2212, as every other text of the pictures (the trace and
// bound panels wrote "-8000" with a hyphen-minus beside "−log(1 − t)").
func TestTickMinusSign(t *testing.T) {
	for _, r := range [][2]float64{{-3, 7}, {-20000, -8000}, {-2.5, -0.5}, {-3e-5, 1e-5}} {
		neg := 0
		for _, tk := range (plainTicks{}).Ticks(r[0], r[1]) {
			if strings.Contains(tk.Label, "-") {
				t.Errorf("range %v: tick %q has a hyphen-minus", r, tk.Label)
			}
			if tk.Label != "" && tk.Value < 0 {
				neg++
				if !strings.HasPrefix(tk.Label, "−") {
					t.Errorf("range %v: tick %q of %v has no minus sign", r, tk.Label, tk.Value)
				}
			}
		}
		if neg == 0 {
			t.Errorf("range %v: no labelled negative tick", r)
		}
	}
	for in, want := range map[string]string{"-2027.97": "−2027.97", "-3e-05": "−3e−05", "1e-05": "1e−05", "2.5e+06": "2.5e+06"} {
		if got := minusSign(in); got != want {
			t.Errorf("minusSign(%s) = %q, want %q", in, got, want)
		}
	}
}
