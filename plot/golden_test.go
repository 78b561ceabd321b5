package plot

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var (
	tagRE  = regexp.MustCompile(`<(path|text|image|g|svg)[\s>]`)
	sizeRE = regexp.MustCompile(`<svg width="([^"]*)" height="([^"]*)"`)
)

// structure summarises an SVG by what does not move when a coordinate
// does: its size, the number of elements of each kind and its texts in
// order.
func structure(svg string) string {
	var b strings.Builder
	if m := sizeRE.FindStringSubmatch(svg); m != nil {
		fmt.Fprintf(&b, "size %s x %s\n", m[1], m[2])
	}
	counts := map[string]int{}
	for _, m := range tagRE.FindAllStringSubmatch(svg, -1) {
		counts[m[1]]++
	}
	for _, tag := range []string{"svg", "g", "path", "text", "image"} {
		fmt.Fprintf(&b, "%s %d\n", tag, counts[tag])
	}
	b.WriteString("texts:\n")
	for _, t := range texts(svg) {
		fmt.Fprintf(&b, "  %q\n", t)
	}
	return b.String()
}

// TestGoldenStructure compares the structure of each kind of picture of
// small fixed inputs with testdata/NAME.golden (go test ./plot -run
// Golden -update rewrites them).
func TestGoldenStructure(t *testing.T) {
	tr, cred, err := ParseLabeledNewick("((a:0.4,b:0.4)0.93:0.3,(c:0.2,d:0.2,e:0.2)0.5:0.5,f:0.7)1:0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	classes := Classes{"a": "odd", "c": "odd", "e": "odd", "b": "even", "d": "even"}
	loc := make([]float64, 2*tr.Cap())
	for i := range loc {
		loc[i] = float64((i*7)%5) / 4
	}
	trace, err := ReadTrace(strings.NewReader("chain,iteration,log_joint,alpha\n1,1,-10,1\n2,1,-11,2\n1,2,-9,1.5\n2,2,-12,1.2\n"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := ReadCoclust(strings.NewReader(",a,b,c\na,1,0.8,0.2\nb,0.8,1,0.3\nc,0.2,0.3,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	draws := []PriorDraw{
		{Title: "one", X: []float64{0, 0, 1, 1, 2, 0}, Group: []int{0, 0, 1}},
		{Title: "two", X: []float64{0, 1, 1, 0}},
		{Title: "three", X: []float64{3, 3, 2, 2}},
	}
	figs := map[string]func() (*Figure, error){
		"dendrogram": func() (*Figure, error) {
			return Dendrogram(tr, DendrogramOptions{Title: "Tree", Credibility: cred, Classes: classes})
		},
		"dendrogram-s": func() (*Figure, error) {
			return Dendrogram(tr, DendrogramOptions{Title: "Tree", Credibility: cred, Classes: classes, Axis: AxisS})
		},
		"tree-data": func() (*Figure, error) {
			return TreeScatter(tr, loc, ScatterOptions{Title: "Data", Subtitle: "sub", Credibility: cred, Classes: classes, XLabel: "x", YLabel: "y"})
		},
		"trace": func() (*Figure, error) { return TracePlot(trace, TraceOptions{Title: "Trace"}) },
		"coclust": func() (*Figure, error) {
			return Heatmap(cm, HeatmapOptions{Title: "Co", Label: "L", Order: []string{"c", "b", "a"}})
		},
		"prior": func() (*Figure, error) { return PriorScatter(draws, PriorOptions{Title: "Prior"}) },
	}
	for name, mk := range figs {
		t.Run(name, func(t *testing.T) {
			f, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			got := structure(svgOf(t, f))
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("structure of %s differs from %s:\n%s", name, path, got)
			}
		})
	}
}
