package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// TestLeafMessageMatchesDense checks the message into each leaf that the
// softmax-leaf step draws from (leafMessage, one walk from the root instead
// of a full Marginals pass per leaf) against the conditional of that leaf's
// location given the others', computed densely: the leaves of a Brownian
// diffusion tree are jointly Gaussian with Cov(x_i, x_j) = σ²_d · t_lca(i, j)
// (t_lca = 1 for i = j). Each dimension has its own variance and a
// multifurcation is included.
func TestLeafMessageMatchesDense(t *testing.T) {
	tr, err := pydt.ParseNewick("(((1:0.3,2:0.3,3:0.3):0.2,4:0.5):0.35,((5:0.45,6:0.45):0.25,7:0.7):0.15):0.15;", nil)
	if err != nil {
		t.Fatal(err)
	}
	n, D := tr.NumLeaves(), 2
	s2 := []float64{0.7, 2.5}
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n*D)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	lik := bp.New(tr, D)
	if err := lik.SetVariances(s2); err != nil {
		t.Fatal(err)
	}
	if err := lik.ObserveMatrix(x); err != nil {
		t.Fatal(err)
	}
	mean, prec := make([]float64, D), make([]float64, D)
	for i := range n {
		leaf := pydt.NodeID(i)
		for d := range D {
			if err := lik.SetEvidence(leaf, d, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := leafMessage(lik, leaf, mean, prec); err != nil {
			t.Fatal(err)
		}
		for d := range D {
			// x_i | x_rest ~ N(c' S⁻¹ y, σ² − c' S⁻¹ c) over the other leaves.
			var others []pydt.NodeID
			for j := range n {
				if j != i {
					others = append(others, pydt.NodeID(j))
				}
			}
			m := len(others)
			S := mat.NewSymDense(m, nil)
			c, y := mat.NewVecDense(m, nil), mat.NewVecDense(m, nil)
			for a, u := range others {
				c.SetVec(a, s2[d]*densetest.LCATime(tr, leaf, u).T())
				y.SetVec(a, x[int(u)*D+d])
				for b, w := range others[a:] {
					S.SetSym(a, a+b, s2[d]*densetest.LCATime(tr, u, w).T())
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(S) {
				t.Fatal("covariance not positive definite")
			}
			var w mat.VecDense
			if err := ch.SolveVecTo(&w, c); err != nil {
				t.Fatal(err)
			}
			wantMean := mat.Dot(&w, y)
			wantVar := s2[d] - mat.Dot(&w, c)
			if !(math.Abs(mean[d]-wantMean) <= 1e-12*(1+math.Abs(wantMean))) || !(math.Abs(1/prec[d]-wantVar) <= 1e-12*wantVar) {
				t.Errorf("leaf %d, dimension %d: message N(%.15g, %.15g), dense N(%.15g, %.15g)", i+1, d, mean[d], 1/prec[d], wantMean, wantVar)
			}
		}
		for d := range D {
			if err := lik.Observe(leaf, d, x[i*D+d]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLeafMessageSingleLeaf checks leafMessage's branch for a tree of one
// leaf, which has no parent to query: the leaf diffuses from the origin
// for time 1, so its message is the prior N(0, σ²_d) in each dimension.
func TestLeafMessageSingleLeaf(t *testing.T) {
	tr, err := pydt.ParseNewick("1:1;", nil)
	if err != nil {
		t.Fatal(err)
	}
	s2 := []float64{0.7, 2.5}
	lik := bp.New(tr, len(s2))
	if err := lik.SetVariances(s2); err != nil {
		t.Fatal(err)
	}
	mean, prec := []float64{9, 9}, make([]float64, len(s2))
	if err := leafMessage(lik, 0, mean, prec); err != nil {
		t.Fatal(err)
	}
	for d, v := range s2 {
		if mean[d] != 0 || !(math.Abs(prec[d]*v-1) <= 1e-15) {
			t.Errorf("dimension %d: message N(%g, 1/%g), want N(0, %g)", d, mean[d], prec[d], v)
		}
	}
}
