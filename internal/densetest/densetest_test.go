package densetest

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestHandWorked checks the helpers on the tree ((1, 2), 3) with the root
// at t = 0.4 and the branch point of 1 and 2 at t = 0.8, worked by hand:
// with σ² = 2 the leaves' covariance is
//
//	2    1.6  0.8
//	1.6  2    0.8
//	0.8  0.8  2
//
// (2·0.8 for the pair below t = 0.8, 2·0.4 for pairs meeting at the root),
// plus the noise on the diagonal; the branch point b of 1 and 2 has
// Cov(x_b, x_1) = Cov(x_b, x_2) = 2·0.8, Cov(x_b, x_3) = 2·0.4 and
// Var x_b = 2·0.8, and the root r has Cov(x_r, x_i) = 2·0.4 for each leaf.
func TestHandWorked(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.2,2:0.2):0.4,3:0.6):0.4;", nil)
	if err != nil {
		t.Fatal(err)
	}
	l1, l2, l3 := pydt.NodeID(0), pydt.NodeID(1), pydt.NodeID(2)
	b, r := tr.Parent(l1), tr.Root()
	if tr.Parent(l2) != b || tr.Parent(l3) != r || tr.Parent(b) != r {
		t.Fatalf("unexpected tree %s", tr.Newick())
	}
	lcas := []struct {
		u, v, want pydt.NodeID
	}{
		{l1, l2, b}, {l2, l1, b}, {l1, l3, r}, {l3, l2, r}, {l1, l1, l1}, {l1, b, b}, {b, l3, r}, {r, l2, r},
	}
	for _, c := range lcas {
		if got := LCA(tr, c.u, c.v); got != c.want {
			t.Errorf("LCA(%d, %d) = %d, want %d", c.u, c.v, got, c.want)
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
	if got := LCATime(tr, l1, l2).T(); !near(got, 0.8) {
		t.Errorf("LCATime(1, 2) = %v, want 0.8", got)
	}
	if got := LCATime(tr, l3, l3).T(); got != 1 {
		t.Errorf("LCATime(3, 3) = %v, want 1", got)
	}
	leaves := []pydt.NodeID{l1, l2, l3}
	want := mat.NewSymDense(3, []float64{
		2, 1.6, 0.8,
		1.6, 2, 0.8,
		0.8, 0.8, 2,
	})
	if got := Cov(tr, 2, leaves, nil); !mat.EqualApprox(got, want, 1e-12) {
		t.Errorf("Cov =\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(want))
	}
	noisy := mat.NewSymDense(3, nil)
	noisy.CopySym(want)
	noisy.SetSym(0, 0, 2.5)
	noisy.SetSym(2, 2, 2.25)
	if got := Cov(tr, 2, leaves, []float64{0.5, 0, 0.25}); !mat.EqualApprox(got, noisy, 1e-12) {
		t.Errorf("Cov with noise =\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(noisy))
	}
	cross := mat.NewDense(2, 3, []float64{
		1.6, 1.6, 0.8,
		0.8, 0.8, 0.8,
	})
	if got := CrossCov(tr, 2, []pydt.NodeID{b, r}, leaves); !mat.EqualApprox(got, cross, 1e-12) {
		t.Errorf("CrossCov =\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(cross))
	}
	if got := Cov(tr, 2, []pydt.NodeID{b}, nil).At(0, 0); !near(got, 1.6) {
		t.Errorf("Var x_b = %v, want 1.6", got)
	}
}

// TestLCAPanicsAcrossTrees: nodes of two separate trees (a leaf not yet
// attached) have no common ancestor, which is a bug of the calling test.
func TestLCAPanicsAcrossTrees(t *testing.T) {
	tr := pydt.New(2)
	defer func() {
		if recover() == nil {
			t.Error("LCA of two unattached leaves did not panic")
		}
	}()
	LCA(tr, 0, 1)
}
