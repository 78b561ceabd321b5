package predict

import (
	"math"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestClusterProbs checks the grouping of a hand-made mixture's
// components by cluster: with equal component densities at x, each
// cluster's probability is the sum of its components' weights.
func TestClusterProbs(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,(3:0.6,4:0.6):0.1,5:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	n12, n34, root := tr.Parent(0), tr.Parent(2), tr.Root()
	part := []int{1, 1, 2, 3, 4} // the cut at t = 0.45
	cut := pydt.TimeAt(0.45)
	w := []float64{0.1, 0.2, 0.3, 0.15, 0.25}
	mx := &Mixture{D: 1}
	for j, c := range []struct {
		node pydt.NodeID
		at   pydt.Time
	}{
		{n12, pydt.TimeAt(0.48)}, // on the edge above {1,2}, after the cut: cluster 1
		{n12, pydt.TimeAt(0.40)}, // on the same edge before the cut: new
		{n34, tr.Time(n34)},      // at {3,4}'s branch point (t = 0.4), which the cut splits: new
		{4, pydt.TimeAt(0.6)},    // on the edge above leaf 5: cluster 4
		{root, tr.Time(root)},    // at the root: new
	} {
		mx.add(math.Log(w[j]), []float64{0}, []float64{1}, c.node, c.at)
	}
	want := []float64{0.75, 0.1, 0, 0, 0.15}
	for _, x := range [][]float64{{0}, {math.NaN()}} {
		got, err := ClusterProbs(mx, tr, part, cut, x)
		if err != nil {
			t.Fatal(err)
		}
		for c := range want {
			if math.Abs(got[c]-want[c]) > 1e-12 {
				t.Errorf("x = %v: P(cluster %d) = %v, want %v", x, c, got[c], want[c])
			}
		}
	}
	// Densities weigh in: with the cluster-4 component's mean moved to 3,
	// at x = 3 the other components' densities are exp(−3²/2) times its
	// own.
	mx.Mean[3] = 3
	got, err := ClusterProbs(mx, tr, part, cut, []float64{3})
	if err != nil {
		t.Fatal(err)
	}
	f := math.Exp(-4.5) // the others' density relative to the moved one
	z := 0.85*f + 0.15
	if math.Abs(got[4]-0.15/z) > 1e-12 || math.Abs(got[0]-0.75*f/z) > 1e-12 {
		t.Errorf("x = 3: %v, want P(4) = %v, P(new) = %v", got, 0.15/z, 0.75*f/z)
	}
	if _, err := ClusterProbs(mx, tr, []int{1, 1}, cut, []float64{0}); err == nil {
		t.Error("wrong number of labels: no error")
	}
	if _, err := ClusterProbs(&Mixture{D: 1, LogW: []float64{0}, Mean: []float64{0}, Var: []float64{1}}, tr, part, cut, []float64{0}); err == nil {
		t.Error("a mixture without placements: no error")
	}
}
