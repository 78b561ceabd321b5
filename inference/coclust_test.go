package inference

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// bruteLCATime is the time of the lowest common ancestor of leaves i and
// j, found from i's ancestor set.
func bruteLCATime(tr *pydt.Tree, i, j int) float64 {
	anc := map[pydt.NodeID]bool{}
	for a := pydt.NodeID(i); a != pydt.NoNode; a = tr.Parent(a) {
		anc[a] = true
	}
	a := pydt.NodeID(j)
	for !anc[a] {
		a = tr.Parent(a)
	}
	return tr.Time(a).T()
}

// TestCoclustAgainstBruteForce compares the mean LCA times with those of
// a brute-force LCA search, for one accumulator and for two merged ones.
func TestCoclustAgainstBruteForce(t *testing.T) {
	const n = 7
	trees := randomSample(t, 9, n, 150)
	whole, _ := NewCoclust(n)
	a, _ := NewCoclust(n)
	b, _ := NewCoclust(n)
	for k, tr := range trees {
		if err := whole.Add(tr); err != nil {
			t.Fatal(err)
		}
		half := a
		if k%2 == 1 {
			half = b
		}
		if err := half.Add(tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for j := range n {
			want := 1.0
			if i != j {
				var sum float64
				for _, tr := range trees {
					sum += bruteLCATime(tr, i, j)
				}
				want = sum / float64(len(trees))
			}
			for name, c := range map[string]*Coclust{"whole": whole, "merged": a} {
				if got := c.MeanTime(i, j); !(math.Abs(got-want) <= 1e-6) {
					t.Errorf("%s: pair (%d, %d): mean LCA time %v, brute force %v", name, i, j, got, want)
				}
			}
		}
	}
	if a.Trees() != len(trees) {
		t.Errorf("%d trees, want %d", a.Trees(), len(trees))
	}
}

// TestCoclustCSV checks the file format on two trees.
func TestCoclustCSV(t *testing.T) {
	trees := parseTrees(t, "((1:0.5,2:0.5):0.3,3:0.8):0.2;", "((1:0.25,3:0.25):0.25,2:0.5):0.5;")
	c, _ := NewCoclust(3)
	for _, tr := range trees {
		if err := c.Add(tr); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := c.WriteCSV(&b, []string{"ant", "b,c", ""}); err != nil {
		t.Fatal(err)
	}
	// LCA(1,2): 0.5 and 0.5; LCA(1,3): 0.2 and 0.75; LCA(2,3): 0.2 and 0.5.
	want := `,ant,"b,c",3
ant,1,0.5,0.475
"b,c",0.5,1,0.35
3,0.475,0.35,1
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := c.WriteCSV(&b, []string{"x"}); err == nil {
		t.Error("no error for the wrong number of names")
	}
	if err := c.Add(parseTrees(t, "(1:0.5,2:0.5):0.5;")[0]); err == nil || !strings.Contains(err.Error(), "2 leaves, want 3") {
		t.Errorf("wrong leaf count: %v", err)
	}
	d, _ := NewCoclust(4)
	if err := c.Merge(d); err == nil {
		t.Error("no error merging different sizes")
	}
	e, _ := NewCoclust(3)
	if !math.IsNaN(e.MeanTime(0, 1)) || e.WriteCSV(&b, nil) == nil {
		t.Error("an empty accumulator gives a mean or a file")
	}
}

// BenchmarkCoclustAdd measures one tree's O(N²) pass at N = 1000.
func BenchmarkCoclustAdd(b *testing.B) {
	tr := benchTree(b, 1000)
	c, _ := NewCoclust(1000)
	for b.Loop() {
		if err := c.Add(tr); err != nil {
			b.Fatal(err)
		}
	}
}

// benchTree draws a tree with n leaves from the PYDT prior.
func benchTree(b *testing.B, n int) *pydt.Tree {
	tr, err := sim.DrawTree(rand.New(rand.NewPCG(1, 2)), n, sim.Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}})
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// BenchmarkSummarizeTrees measures the end-of-run summary of 20 trees at
// N = 1000 (both passes, with coclust).
func BenchmarkSummarizeTrees(b *testing.B) {
	var trees []*pydt.Tree
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		tr, err := sim.DrawTree(rng, 1000, sim.Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}})
		if err != nil {
			b.Fatal(err)
		}
		trees = append(trees, tr)
	}
	for b.Loop() {
		if _, err := SummarizeTrees(TreeSlice(trees), 1000, true); err != nil {
			b.Fatal(err)
		}
	}
}
