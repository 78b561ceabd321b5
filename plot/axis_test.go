package plot

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestSetAxisS checks the s axis's node positions against s = -log(1 - t)
// worked out by hand for known times, the leaves (t = 1, s = +Inf) at the
// axis's end, 1.1 times the latest branch point's s, and every position
// finite; the t axis against the times themselves.
func TestSetAxisS(t *testing.T) {
	tests := []struct {
		name   string
		newick string
		want   map[string]float64 // s by the branch point's leaves, "a,b"
		last   float64            // the latest branch point's s
	}{
		{
			// Root at t = 0.9, (a, b) at 0.99: s = ln 10 and 2 ln 10.
			name:   "decades",
			newick: "((a:0.01,b:0.01):0.09,c:0.1):0.9;",
			want:   map[string]float64{"a,b,c": math.Ln10, "a,b": 2 * math.Ln10},
			last:   2 * math.Ln10,
		},
		{
			// Root at t = 0.5 (s = ln 2), (a, b) at 1 - 1e-12: far
			// beyond what the t axis separates from the leaves.
			name:   "near one",
			newick: "((a:1e-12,b:1e-12):0.499999999999,c:0.5):0.5;",
			want:   map[string]float64{"a,b,c": math.Ln2, "a,b": 12 * math.Ln10},
			last:   12 * math.Ln10,
		},
		{
			// A multifurcation at t = 0.75 (s = 2 ln 2).
			name:   "star",
			newick: "(a:0.25,b:0.25,c:0.25):0.75;",
			want:   map[string]float64{"a,b,c": 2 * math.Ln2},
			last:   2 * math.Ln2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, lay := newickLayout(t, tc.newick)
			if lay.Axis != AxisT || lay.XMax != 1 {
				t.Errorf("NewLayout: axis %v, end %v; want t and 1", lay.Axis, lay.XMax)
			}
			for _, v := range tr.PostOrder(nil) {
				if lay.X[v] != lay.Time[v] {
					t.Errorf("t axis: node %d at %v, its time %v", v, lay.X[v], lay.Time[v])
				}
			}
			if err := lay.SetAxis(AxisS); err != nil {
				t.Fatal(err)
			}
			if lay.Axis != AxisS {
				t.Fatalf("axis %v after SetAxis(AxisS)", lay.Axis)
			}
			// Newick's lengths are in t: a time near 1 is known to
			// about 1e-16 / (1 - t) relative to 1 - t.
			tol := 1e-9
			if !(math.Abs(lay.XMax-1.1*tc.last) <= tol*tc.last*1e4) {
				t.Errorf("axis end %v, want 1.1 × %v", lay.XMax, tc.last)
			}
			for key, s := range tc.want {
				v := node(t, tr, strings.Split(key, ",")...)
				if !(math.Abs(lay.X[v]-s) <= 1e-3*s) {
					t.Errorf("%s: s %v, want %v", key, lay.X[v], s)
				}
			}
			for _, v := range tr.PostOrder(nil) {
				x := lay.X[v]
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > lay.XMax {
					t.Errorf("node %d at %v, outside [0, %v]", v, x, lay.XMax)
				}
				if tr.IsLeaf(v) && x != lay.XMax {
					t.Errorf("leaf %s at %v, not at the axis end %v", tr.Label(v), x, lay.XMax)
				}
			}
		})
	}
}

// TestSetAxisBranchAtOne: a branch point whose s is +Inf (t = 1 in
// float64) is drawn at the axis's end with the leaves, not at +Inf, and
// does not stretch the axis; the end is 1 when no branch point is past
// t = 0.
func TestSetAxisBranchAtOne(t *testing.T) {
	tr, lay := newickLayout(t, "((a:0.01,b:0.01):0.09,c:0.1):0.9;")
	ab := node(t, tr, "a", "b")
	root := node(t, tr, "a", "b", "c")
	lay.S[ab] = math.Inf(1)
	if err := lay.SetAxis(AxisS); err != nil {
		t.Fatal(err)
	}
	if want := 1.1 * lay.S[root]; lay.XMax != want || lay.X[ab] != want {
		t.Errorf("end %v, the branch point at t = 1 at %v; want both %v", lay.XMax, lay.X[ab], want)
	}
	lay.S[root] = 0
	if err := lay.SetAxis(AxisS); err != nil {
		t.Fatal(err)
	}
	if lay.XMax != 1 || lay.X[root] != 0 || lay.X[ab] != 1 {
		t.Errorf("every branch point at t = 0 or 1: end %v, root %v, (a, b) %v; want 1, 0, 1", lay.XMax, lay.X[root], lay.X[ab])
	}
	if err := lay.SetAxis(Axis(7)); err == nil {
		t.Error("no error for an unknown axis")
	}
}

// TestCrowded checks the auto rule against the median branch point worked
// out by hand, and that AxisAuto follows it.
func TestCrowded(t *testing.T) {
	tests := []struct {
		name   string
		newick string
		want   bool
	}{
		// Branch points at 0.2, 0.5, 0.6: median 1 - t = 0.5.
		{"spread", "((a:0.5,b:0.5):0.3,(c:0.4,d:0.4):0.4):0.2;", false},
		// At 0.3, 0.95, 0.99: median 1 - t = 0.05.
		{"crowded", "((a:0.05,b:0.05):0.65,(c:0.01,d:0.01):0.69):0.3;", true},
		// At 0.5, 0.83, 0.95, 0.98: median (0.17 + 0.05) / 2 = 0.11.
		{"even count above", "(((a:0.02,b:0.02):0.03,c:0.05):0.45,(d:0.17,e:0.17):0.33):0.5;", false},
		// At 0.5, 0.89, 0.95, 0.98: median (0.11 + 0.05) / 2 = 0.08.
		{"even count below", "(((a:0.02,b:0.02):0.03,c:0.05):0.45,(d:0.11,e:0.11):0.39):0.5;", true},
		// One branch point at 0.99.
		{"one branch point", "(a:0.01,b:0.01):0.99;", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, lay := newickLayout(t, tc.newick)
			if got := lay.Crowded(); got != tc.want {
				t.Errorf("Crowded = %v, want %v", got, tc.want)
			}
			if err := lay.SetAxis(AxisAuto); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]Axis{false: AxisT, true: AxisS}[tc.want]; lay.Axis != want {
				t.Errorf("auto chose %v, want %v", lay.Axis, want)
			}
		})
	}
}

// tickS reads a tick label of the s axis, t as a decimal or as
// "1 − 1e-k", and returns its s = -log(1 - t).
func tickS(t *testing.T, label string) float64 {
	t.Helper()
	if rest, ok := strings.CutPrefix(label, "1 − 1e-"); ok {
		k, err := strconv.Atoi(rest)
		if err != nil {
			t.Fatalf("tick label %q: %v", label, err)
		}
		return float64(k) * math.Ln10
	}
	x, err := strconv.ParseFloat(label, 64)
	if err != nil {
		t.Fatalf("tick label %q: %v", label, err)
	}
	return -math.Log1p(-x)
}

// TestSTicks: every labelled tick of the s axis sits at -log(1 - t) of the
// t its label names, the end is labelled 1, the ticks lie in [0, end] in
// order, and there are labels enough (at least 3) and not too many (at
// most 10), from a shallow axis to one of 20 decades.
func TestSTicks(t *testing.T) {
	for _, end := range []float64{0.3, 1, 2.5, 5, 8, 12, 20, 46} {
		ticks := sTicks(end)
		var labels []string
		prev := -1.0
		for _, tk := range ticks {
			if !(tk.Value >= 0 && tk.Value <= end && tk.Value > prev) {
				t.Errorf("end %v: tick at %v after %v", end, tk.Value, prev)
			}
			prev = tk.Value
			if tk.Label == "" {
				continue
			}
			labels = append(labels, tk.Label)
			if tk.Value == end {
				if tk.Label != "1" {
					t.Errorf("end %v: end labelled %q", end, tk.Label)
				}
				continue
			}
			if s := tickS(t, tk.Label); !(math.Abs(tk.Value-s) <= 1e-9*max(1, s)) {
				t.Errorf("end %v: tick %q at s = %v, want %v", end, tk.Label, tk.Value, s)
			}
		}
		if len(labels) < 3 || len(labels) > 10 {
			t.Errorf("end %v: labels %q", end, labels)
		}
		// Up to three decades, every t of 0.5, 0.8, 0.9, 0.95, 0.98,
		// 0.99, ... short of the end's label is labelled.
		if end <= 3*math.Ln10 {
			for _, l := range []string{"0", "0.5", "0.8", "0.9", "0.95", "0.98", "0.99", "0.995", "0.998", "0.999"} {
				if tickS(t, l) < 0.9*end && !slices.Contains(labels, l) {
					t.Errorf("end %v: no tick labelled %s: %q", end, l, labels)
				}
			}
		}
	}
	if got := tLabel(1, 6); got != "1 − 1e-6" {
		t.Errorf("tLabel(1, 6) = %q", got)
	}
}

func TestParseAxis(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Axis
		ok   bool
	}{{"", AxisAuto, true}, {"auto", AxisAuto, true}, {"t", AxisT, true}, {"s", AxisS, true}, {"log", 0, false}} {
		got, err := ParseAxis(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseAxis(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

// TestDendrogramAxisSVG: a tree with branch points up to 1 - 1e-12, drawn
// on each axis, writes no NaN or Inf coordinate; AxisAuto chooses s for it
// and says so in the axis label and subtitle, with the ticks labelled by t.
func TestDendrogramAxisSVG(t *testing.T) {
	tr, err := pydt.ParseNewick("(((a:1e-12,b:1e-12):0.009999999999,c:0.01):0.89,(d:0.001,e:0.001):0.899):0.1;", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []Axis{AxisAuto, AxisT, AxisS} {
		fig, err := Dendrogram(tr, DendrogramOptions{Axis: a})
		if err != nil {
			t.Fatal(err)
		}
		svg := svgOf(t, fig)
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Errorf("axis %v: NaN or Inf in the SVG", a)
		}
		ts := texts(svg)
		onS := count(ts, axisLabel(AxisS)) == 1
		if want := a != AxisT; onS != want {
			t.Errorf("axis %v: s axis label %v, want %v", a, onS, want)
		}
		if onS {
			for _, l := range []string{"0", "0.99", "1 − 1e-6", "1"} {
				if count(ts, l) != 1 {
					t.Errorf("axis %v: tick label %q %d times, want 1: %q", a, l, count(ts, l), ts)
				}
			}
		}
	}
}
