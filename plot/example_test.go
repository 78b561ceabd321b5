package plot_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pydtlang/pydtlang/plot"
)

// Example reads a summary tree with its clade credibilities, lays it out as
// a dendrogram and writes the picture as SVG. The branch point of b, c and
// d is a multifurcation: one vertical bar from row 1 to row 3.
func Example() {
	tr, cred, err := plot.ParseLabeledNewick("(a:0.6,(b:0.2,c:0.2,d:0.2)0.7:0.4,e:0.6)1:0.4;", nil)
	if err != nil {
		log.Fatal(err)
	}
	lay, err := plot.NewLayout(tr)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range tr.PostOrder(nil) {
		name := tr.Label(v)
		if !tr.IsLeaf(v) {
			name = fmt.Sprintf("branch point (p = %v), bar from row %v to %v", cred[v], lay.Span[v][0], lay.Span[v][1])
		}
		fmt.Printf("t = %.1f  row %.0f  %s\n", lay.Time[v], lay.Row[v], name)
	}

	fig, err := plot.Dendrogram(tr, plot.DendrogramOptions{Title: "A tree", Credibility: cred})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "plot-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := fig.Save(filepath.Join(dir, "tree.svg")); err != nil { // or tree.png
		log.Fatal(err)
	}
	// Output:
	// t = 1.0  row 0  a
	// t = 1.0  row 1  b
	// t = 1.0  row 2  c
	// t = 1.0  row 3  d
	// t = 0.8  row 2  branch point (p = 0.7), bar from row 1 to 3
	// t = 1.0  row 4  e
	// t = 0.4  row 2  branch point (p = 1), bar from row 0 to 4
}

// ExampleLayout_SetAxis places a tree whose fine structure sits near t = 1
// on the s axis, s = -log(1 - t): the branch points at t = 0.99 and 0.999
// are ln 10 apart (0.009 apart in t), and the leaves (s = +Inf) are drawn
// at the axis's end, 1.1 times the latest branch point's s. AxisAuto would
// choose s here (Crowded: the median branch point has t > 0.9).
func ExampleLayout_SetAxis() {
	tr, _, err := plot.ParseLabeledNewick("((a:0.001,b:0.001):0.009,c:0.01):0.99;", nil)
	if err != nil {
		log.Fatal(err)
	}
	lay, err := plot.NewLayout(tr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("crowded:", lay.Crowded())
	if err := lay.SetAxis(plot.AxisS); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("axis %v, end %.3f\n", lay.Axis, lay.XMax)
	for _, v := range tr.PostOrder(nil) {
		name := tr.Label(v)
		if !tr.IsLeaf(v) {
			name = "branch point"
		}
		fmt.Printf("t = %.3f  s = %.3f  x = %.3f  %s\n", lay.Time[v], lay.S[v], lay.X[v], name)
	}
	// Output:
	// crowded: true
	// axis s, end 7.599
	// t = 1.000  s = +Inf  x = 7.599  a
	// t = 1.000  s = +Inf  x = 7.599  b
	// t = 0.999  s = 6.908  x = 6.908  branch point
	// t = 1.000  s = +Inf  x = 7.599  c
	// t = 0.990  s = 4.605  x = 4.605  branch point
}
