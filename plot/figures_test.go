package plot

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg/draw"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// svgOf renders f as SVG and checks that it is well-formed XML.
func svgOf(t *testing.T, f *Figure) string {
	t.Helper()
	var b bytes.Buffer
	if err := f.Write(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
	return b.String()
}

var blackDiscRE = regexp.MustCompile(`<path d="M[^"]*A[^"]*Z"\s*/>`)

var textRE = regexp.MustCompile(`(?s)<text [^>]*>([^<]*)</text>`)

// texts returns the contents of the SVG's text elements.
func texts(svg string) []string {
	var out []string
	for _, m := range textRE.FindAllStringSubmatch(svg, -1) {
		out = append(out, m[1])
	}
	return out
}

// count returns how many of xs equal x.
func count(xs []string, x string) int {
	n := 0
	for _, s := range xs {
		if s == x {
			n++
		}
	}
	return n
}

// TestDendrogramSVG checks the structure of a dendrogram: every leaf label
// once, one disc per branch point filled by its credibility (0.93 →
// #121212), class legend entries, and a height that grows with N.
func TestDendrogramSVG(t *testing.T) {
	const newick = "((a:0.4,b:0.4)0.93:0.3,(c:0.2,d:0.2,e:0.2)0.5:0.5,f:0.7)1:0.3;"
	tr, cred, err := ParseLabeledNewick(newick, nil)
	if err != nil {
		t.Fatal(err)
	}
	classes := Classes{"a": "odd", "c": "odd", "e": "odd", "b": "even", "d": "even"} // f: none
	fig, err := Dendrogram(tr, DendrogramOptions{Title: "T", Credibility: cred, Classes: classes})
	if err != nil {
		t.Fatal(err)
	}
	svg := svgOf(t, fig)
	ts := texts(svg)
	for _, l := range []string{"a", "b", "c", "d", "e", "f"} {
		if count(ts, l) != 1 {
			t.Errorf("leaf label %q appears %d times, want 1", l, count(ts, l))
		}
	}
	for _, l := range []string{"odd", "even", "(no class)", "clade credibility:", "divergence time t", "T"} {
		if count(ts, l) != 1 {
			t.Errorf("text %q appears %d times, want 1", l, count(ts, l))
		}
	}
	// Discs: 0.93 only at its branch point; 0.5 at its branch point and in
	// the legend; 1 at the root and in the legend.
	for _, c := range []struct {
		fill string
		n    int
	}{{"#121212", 1}, {"#808080", 2}} {
		if got := strings.Count(svg, "style=\"fill:"+c.fill+"\""); got != c.n {
			t.Errorf("%d discs filled %s, want %d", got, c.fill, c.n)
		}
	}
	// Black is SVG's default fill: vgsvg writes no style for it.
	if got := len(blackDiscRE.FindAllString(svg, -1)); got != 2 {
		t.Errorf("%d black discs, want 2", got)
	}

	small, _ := Dendrogram(tr, DendrogramOptions{})
	bigTree := caterpillar(t, 300)
	big, err := Dendrogram(bigTree, DendrogramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !(big.Height > 10*small.Height) {
		t.Errorf("height %v at N = 300, %v at N = 6: the layout does not grow with N", big.Height, small.Height)
	}
	ts = texts(svgOf(t, big))
	for i := range 300 {
		if count(ts, fmt.Sprintf("leaf%03d", i)) != 1 {
			t.Fatalf("leaf%03d not labelled once", i)
		}
	}
}

// caterpillar returns a caterpillar of n leaves named leaf000, ...: branch
// point k (k = 1..n-1) at time 1 - k/n joins the previous one and leaf k.
func caterpillar(t *testing.T, n int) *pydt.Tree {
	t.Helper()
	tr := pydt.New(n)
	labels := make([]string, n)
	for i := range labels {
		labels[i] = fmt.Sprintf("leaf%03d", i)
	}
	tr.Labels = labels
	prev := pydt.NodeID(0)
	for k := 1; k < n; k++ {
		v := tr.NewInternal(pydt.TimeAt(1 - float64(k)/float64(n)))
		tr.AddChild(v, prev)
		tr.AddChild(v, pydt.NodeID(k))
		prev = v
	}
	tr.SetRoot(prev)
	tr.Recount()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestTracePlotSVG(t *testing.T) {
	const csv = "chain,iteration,log_joint,log_lik,alpha\n1,1,-10,-5,1.0\n2,1,-11,-6,1.5\n1,2,-9,-4,1.1\n2,2,-12,-5,1.2\n1,3,-8,-4,0.9\n2,3,-10,-5,1.4\n"
	tr, err := ReadTrace(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := tr.Mean("alpha"); m != (1.0+1.5+1.1+1.2+0.9+1.4)/6 {
		t.Errorf("mean alpha %v", m)
	}
	fig, err := TracePlot(tr, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := texts(svgOf(t, fig))
	for _, l := range []string{"log_joint", "log_lik", "alpha", "chain 1", "chain 2", "iteration"} {
		if count(ts, l) != 1 {
			t.Errorf("text %q appears %d times, want 1", l, count(ts, l))
		}
	}
	if _, err := TracePlot(tr, TraceOptions{Names: []string{"nope"}}); err == nil {
		t.Error("no error for an unknown column")
	}
}

func TestReadTraceErrors(t *testing.T) {
	for _, tc := range []struct{ name, csv, want string }{
		{"empty", "", "no header"},
		{"bad header", "a,b,c\n", "want chain,iteration"},
		{"no rows", "chain,iteration,log_joint\n", "no rows"},
		{"not a number", "chain,iteration,log_joint\n1,1,x\n", "not a number"},
	} {
		if _, err := ReadTrace(strings.NewReader(tc.csv)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestHeatmap(t *testing.T) {
	const csv = ",a,b,c\na,1,0.8,0.2\nb,0.8,1,0.3\nc,0.2,0.3,1\n"
	m, err := ReadCoclust(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if m.At(1, 2) != 0.3 || m.At(2, 0) != 0.2 {
		t.Fatalf("read %v", m.Values)
	}
	fig, err := Heatmap(m, HeatmapOptions{Order: []string{"c", "a", "b"}, Classes: Classes{"a": "x", "b": "y"}, Label: "L"})
	if err != nil {
		t.Fatal(err)
	}
	svg := svgOf(t, fig)
	ts := texts(svg)
	// Each row named on both axes (the column names are padded).
	for _, l := range []string{"a", "b", "c"} {
		if count(ts, l) != 1 || count(ts, l+"  ") != 1 {
			t.Errorf("row %q named %d+%d times, want 1+1", l, count(ts, l), count(ts, l+"  "))
		}
	}
	// The map, the two class strips and the colour scale are images.
	if n := strings.Count(svg, "<image"); n != 4 {
		t.Errorf("%d images, want 4", n)
	}
	for _, bad := range [][]string{{"a", "b"}, {"a", "b", "x"}, {"a", "a", "b"}} {
		if _, err := Heatmap(m, HeatmapOptions{Order: bad}); err == nil {
			t.Errorf("order %v: no error", bad)
		}
	}
	for _, tc := range []struct{ name, csv string }{
		{"empty", ""},
		{"wrong row name", ",a,b\nb,1,0\na,0,1\n"},
		{"missing row", ",a,b\na,1,0\n"},
		{"extra row", ",a\na,1\nb,1\n"},
		{"not a number", ",a\na,x\n"},
	} {
		if _, err := ReadCoclust(strings.NewReader(tc.csv)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestTreeScatter(t *testing.T) {
	tr, cred, err := ParseLabeledNewick("((a:0.5,b:0.5)0.7:0.3,c:0.8)1:0.2;", nil)
	if err != nil {
		t.Fatal(err)
	}
	loc := make([]float64, 2*tr.Cap())
	for i := range loc {
		loc[i] = float64(i % 3)
	}
	fig, err := TreeScatter(tr, loc, ScatterOptions{Credibility: cred, XLabel: "x", YLabel: "y"})
	if err != nil {
		t.Fatal(err)
	}
	svg := svgOf(t, fig)
	ts := texts(svg)
	for _, l := range []string{"a", "b", "c", "x", "y", "data"} {
		if count(ts, l) != 1 {
			t.Errorf("text %q appears %d times, want 1", l, count(ts, l))
		}
	}
	// Disc for p = 0.7: #4D4D4D, once.
	if n := strings.Count(svg, `style="fill:#4D4D4D"`); n != 1 {
		t.Errorf("%d discs of credibility 0.7, want 1", n)
	}
	// Data apart from the leaves: drawn there, the leaves as small dots.
	fig, err = TreeScatter(tr, loc, ScatterOptions{Data: []float64{5, 5, 6, 6, 7, 7}})
	if err != nil {
		t.Fatal(err)
	}
	if ts := texts(svgOf(t, fig)); count(ts, "leaf (latent location)") != 1 {
		t.Errorf("no legend entry for the leaves: %q", ts)
	}
	if _, err := TreeScatter(tr, loc, ScatterOptions{Data: []float64{1, 2}}); err == nil {
		t.Error("no error for too few data values")
	}
	loc[0] = nan
	if _, err := TreeScatter(tr, loc, ScatterOptions{}); err == nil {
		t.Error("no error for a NaN location")
	}
	if _, err := TreeScatter(tr, loc[:3], ScatterOptions{}); err == nil {
		t.Error("no error for too few locations")
	}
}

func TestReadClasses(t *testing.T) {
	cl, err := ReadClasses(strings.NewReader("label,class\na, x\n\"b,c\",y\n\nd,x,extra\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cl["a"] != "x" || cl["b,c"] != "y" || cl["d"] != "x" || cl.Match([]string{"a", "z", "d"}) != 2 {
		t.Errorf("read %v", cl)
	}
	for _, tc := range []struct{ name, csv string }{
		{"empty", ""},
		{"one field", "a\n"},
		{"two classes", "a,x\na,y\n"},
		{"empty label", ",x\n"},
	} {
		if _, err := ReadClasses(strings.NewReader(tc.csv)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{{"a.svg", "svg", true}, {"b/c.PNG", "png", true}, {"x.pdf", "", false}, {"noext", "", false}} {
		got, err := FormatOf(tc.path)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("%s: %q, %v", tc.path, got, err)
		}
	}
}

// TestSavePNG checks that a PNG decodes at the figure's size.
func TestSavePNG(t *testing.T) {
	tr, _, err := ParseLabeledNewick("((a:0.5,b:0.5)0.7:0.3,c:0.8)1:0.2;", nil)
	if err != nil {
		t.Fatal(err)
	}
	fig, err := Dendrogram(tr, DendrogramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "d.png")
	if err := fig.Save(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	w := int(fig.Width.Points()*PNGDPI/72 + 0.5)
	if b := img.Bounds(); b.Dx() != w {
		t.Errorf("PNG %d pixels wide, want %d", b.Dx(), w)
	}
	huge := &Figure{Width: 10 * 72, Height: 2000 * 72, draw: func(draw.Canvas) { t.Fatal("drew a huge PNG") }}
	if err := huge.Write(io.Discard, "png"); err == nil || !strings.Contains(err.Error(), "write SVG") {
		t.Errorf("huge PNG: %v", err)
	}
	if err := fig.Save(filepath.Join(t.TempDir(), "d.gif")); err == nil {
		t.Error("no error for .gif")
	}
}

// TestRunFigures fits a tiny 2-D data set and draws every picture of the
// run directory.
func TestRunFigures(t *testing.T) {
	m := testModel(t, directModel, fiveRows)
	dir := t.TempDir()
	if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 40, Chains: 2, Seed: 3, Out: dir}); err != nil {
		t.Fatal(err)
	}
	figs, notes, err := RunFigures(dir, RunOptions{Model: m, Classes: Classes{"a": "A", "b": "A", "c": "B"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
		ts := texts(svgOf(t, f.Figure))
		if f.Name == "dendrogram" || f.Name == "tree-data" {
			for _, l := range []string{"a", "b", "c", "d", "e"} {
				if count(ts, l) != 1 {
					t.Errorf("%s: leaf %q labelled %d times", f.Name, l, count(ts, l))
				}
			}
		}
	}
	if got := strings.Join(names, ","); got != "dendrogram,tree-data,trace,coclust" {
		t.Errorf("figures %s", got)
	}
	// A model whose rows are not the tree's leaves: no tree over the
	// data, and a note.
	other := testModel(t, directModel, strings.NewReplacer("a,", "p,", "b,", "q,").Replace(fiveRows))
	figs, notes, err = RunFigures(dir, RunOptions{Model: other})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 3 || len(notes) != 1 || !strings.Contains(notes[0], "do not match") {
		t.Errorf("rows that are not the leaves: %d figures, notes %q", len(figs), notes)
	}
	// Without a model: no tree over the data; with another tree.
	figs, _, err = RunFigures(dir, RunOptions{Tree: "mea"})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 3 {
		t.Errorf("%d figures without a model, want 3", len(figs))
	}
	if _, _, err := RunFigures(dir, RunOptions{Tree: "best"}); err == nil {
		t.Error("no error for an unknown tree")
	}
	// A coclust.csv whose rows are not the tree's leaves is drawn in its
	// own order, with a note.
	cc := filepath.Join(dir, "coclust.csv")
	b, err := os.ReadFile(cc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cc, []byte(strings.ReplaceAll(string(b), "a", "z")), 0o644); err != nil {
		t.Fatal(err)
	}
	figs, notes, err = RunFigures(dir, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 3 || len(notes) != 1 || !strings.Contains(notes[0], "own row order") {
		t.Errorf("renamed coclust.csv rows: %d figures, notes %q", len(figs), notes)
	}
	// A run without summary.nwk and coclust.csv (N above 2000) falls back
	// to mea.nwk and leaves out the heat map, saying so.
	for _, f := range []string{"summary.nwk", "coclust.csv"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	figs, notes, err = RunFigures(dir, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || len(notes) != 2 {
		t.Errorf("%d figures and notes %q, want 2 and 2", len(figs), notes)
	}
	// No tree summaries at all: an error that says so.
	if err := os.Remove(filepath.Join(dir, "mea.nwk")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RunFigures(dir, RunOptions{}); err == nil || !strings.Contains(err.Error(), "no tree summaries") {
		t.Errorf("no summaries: %v", err)
	}
}

// TestRunFiguresProbit: a Probit model's data are not locations; the
// tree-over-data picture is left out with a note.
func TestRunFiguresProbit(t *testing.T) {
	const src = `
dim N, D
data Y : binary[N, D]
param Z : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
Z ~ PYDT(alpha, beta, c, 1 / prec)
for i in 1:N, d in 1:D {
  Y[i, d] ~ Probit(Z[i, d])
}
`
	m := testModelData(t, src, "Y", "n,u,v\na,1,0\nb,1,1\nc,0,1\nd,0,0\n")
	dir := t.TempDir()
	if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 20, Chains: 1, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	figs, notes, err := RunFigures(dir, RunOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 3 || len(notes) != 1 || !strings.Contains(notes[0], "Probit") {
		t.Errorf("%d figures, notes %q", len(figs), notes)
	}
	// A Probit run writes no map.nwk: --tree map says why, not that the
	// run stopped early.
	if _, _, err := RunFigures(dir, RunOptions{Tree: "map"}); err == nil || !strings.Contains(err.Error(), "Probit model's run writes none") {
		t.Errorf("--tree map of a Probit run: %v", err)
	}
}

// TestCellImage: cells of several pixels for a small matrix; block means
// for one above maxCellPixels rows.
func TestCellImage(t *testing.T) {
	grey := func(v float64) color.RGBA {
		if math.IsNaN(v) {
			return color.RGBA{0, 0, 255, 255}
		}
		return color.RGBA{uint8(v), 0, 0, 255}
	}
	small := cellImage(3, func(a, b int) float64 { return float64(10*a + b) }, grey)
	if b := small.Bounds(); b.Dx() != 3*400 || small.RGBAAt(401, 0).R != 1 || small.RGBAAt(0, 801).R != 20 {
		t.Errorf("small: %v, (401,0) %v, (0,801) %v", b, small.RGBAAt(401, 0), small.RGBAAt(0, 801))
	}
	n := 2*maxCellPixels + 1 // blocks of 3×3, the last ones 2 cells wide
	big := cellImage(n, func(a, b int) float64 {
		if a == 0 && b == 0 {
			return math.NaN()
		}
		return float64((a + b) % 2 * 90)
	}, grey)
	side := (n + 2) / 3
	if b := big.Bounds(); b.Dx() != side || b.Dy() != side {
		t.Fatalf("big: %v, want %d a side", b, side)
	}
	// Block (0,0): 8 cells without the NaN, 4 of them 90: mean 45. Block
	// (1,0), rows 3-5 and columns 0-2: a+b odd in 5 of its 9 cells.
	if got := big.RGBAAt(0, 0).R; got != 45 {
		t.Errorf("block (0,0) = %d, want 45", got)
	}
	if got := big.RGBAAt(0, 1).R; got != 50 { // 5 of 9 odd sums: 450/9
		t.Errorf("block (1,0) = %d, want 50", got)
	}
	// The last block, rows and columns n-2 and n-1: two of its four sums
	// odd.
	if got := big.RGBAAt(side-1, side-1).R; got != 45 {
		t.Errorf("last block = %d, want 45", got)
	}
}
