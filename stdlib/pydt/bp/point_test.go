package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// below reports whether a is u or hangs below it.
func below(tr *pydt.Tree, a, u pydt.NodeID) bool {
	for ; a != pydt.NoNode; a = tr.Parent(a) {
		if a == u {
			return true
		}
	}
	return false
}

// densePoint returns the posterior mean and variance, in dimension d, of
// the location at pos given the evidence of the leaves in the tree below
// the root (detached leaves left out), by conditioning the dense joint
// Gaussian: the point at time t on the edge above u has Cov(x_pt, x_i) =
// σ² t for the leaves i below u and σ² t(lca(u, i)) for the others, and
// variance σ² t; a branch point is a node like any other.
func densePoint(t *testing.T, m *Model, pos pydt.Position, d int) (mean, variance float64) {
	t.Helper()
	tr, s2 := m.Tree(), m.Variances()[d]
	var rows []pydt.NodeID
	var y, noise []float64
	for i := range tr.NumLeaves() {
		leaf := pydt.NodeID(i)
		ev, prec := m.Evidence(leaf, d)
		if prec == 0 || !inTree(tr, leaf) {
			continue
		}
		rows, y, noise = append(rows, leaf), append(y, ev), append(noise, 1/prec)
	}
	tp := pos.Time
	if pos.AtNode {
		tp = tr.Time(pos.Node)
	}
	variance = s2 * tp.T()
	if len(rows) == 0 {
		return 0, variance
	}
	cross := mat.NewVecDense(len(rows), nil)
	for j, i := range rows {
		c := densetest.LCATime(tr, pos.Node, i).T()
		if !pos.AtNode && below(tr, i, pos.Node) {
			c = tp.T()
		}
		cross.SetVec(j, s2*c)
	}
	var ch mat.Cholesky
	if !ch.Factorize(densetest.Cov(tr, s2, rows, noise)) {
		t.Fatal("dense covariance not positive definite")
	}
	var sol mat.VecDense // Σ_yy⁻¹ Σ_yx
	if err := ch.SolveVecTo(&sol, cross); err != nil {
		t.Fatal(err)
	}
	return mat.Dot(&sol, mat.NewVecDense(len(y), y)), variance - mat.Dot(&sol, cross)
}

// TestPointMarginalMatchesDense checks PointMarginal against dense Gaussian
// conditioning at every attachment point of trees with a subtree detached
// (the query softmax-leaf steps make) and of whole trees, with observed,
// noisy and missing evidence, equal and unequal variances per dimension.
func TestPointMarginalMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const D = 3
	for _, tc := range treeCases {
		for _, n := range []int{2, 5, 20} {
			for _, perDim := range []bool{false, true} {
				for _, detach := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/N=%d/perdim=%v/detach=%v", tc.name, n, perDim, detach), func(t *testing.T) {
						tr := tc.gen(rng, n)
						m := New(tr, D)
						if err := m.SetVariance(0.5 + 2*rng.Float64()); err != nil {
							t.Fatal(err)
						}
						if perDim {
							setVariances(t, m, spreadVariances(rng, D))
						}
						randomEvidence(t, rng, m, 0.25, 0.4)
						tv := pydt.Leaf
						if detach {
							v := randomTreeNode(rng, tr)
							for v == tr.Root() {
								v = randomTreeNode(rng, tr)
							}
							m.Detach(v)
							tv = tr.Time(v)
						}
						mean, vari := make([]float64, D), make([]float64, D)
						checked := 0
						for _, u := range tr.PreOrder(nil) {
							frac := func() float64 { return 0.1 + 0.8*rng.Float64() }
							for _, pos := range attachPoints(tr, u, tv, frac) {
								if err := m.PointMarginal(pos, mean, vari); err != nil {
									t.Fatal(err)
								}
								for d := range D {
									wm, wv := densePoint(t, m, pos, d)
									if !relClose(mean[d], wm, 1e-9) || !(math.Abs(vari[d]-wv) <= 1e-9*math.Max(1, wv)) {
										t.Errorf("%+v dim %d: mean %.12g var %.12g, dense %.12g %.12g", pos, d, mean[d], vari[d], wm, wv)
									}
								}
								checked++
							}
						}
						if checked == 0 {
							t.Fatal("no position checked")
						}
					})
				}
			}
		}
	}
}

// TestPointMarginalRefuses checks the errors of PointMarginal: a leaf with
// AtNode, a time outside the edge, a node in a detached subtree, slices of
// the wrong length.
func TestPointMarginalRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	tr := genPYDT(rng, 6, 1, 0.5, 0.3)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0, 0.5)
	mean, vari := make([]float64, 2), make([]float64, 2)
	leaf := pydt.NodeID(0)
	if err := m.PointMarginal(pydt.Position{Node: leaf, AtNode: true}, mean, vari); err == nil {
		t.Error("AtNode at a leaf accepted")
	}
	if err := m.PointMarginal(pydt.Position{Node: leaf, Time: tr.ParentTime(leaf)}, mean, vari); err == nil {
		t.Error("a time at the parent's accepted")
	}
	// A valid point, so that only the slice's length is wrong.
	mid := pydt.Position{Node: leaf, Time: interp(tr.ParentTime(leaf), tr.Time(leaf), 0.5)}
	if err := m.PointMarginal(mid, mean, vari); err != nil {
		t.Fatalf("a valid point refused: %v", err)
	}
	if err := m.PointMarginal(mid, mean[:1], vari); err == nil {
		t.Error("a short slice accepted")
	}
	if err := m.PointMarginal(mid, mean, vari[:1]); err == nil {
		t.Error("a short variance slice accepted")
	}
	r := tr.Root()
	k := tr.FirstChild(r)
	m.Detach(k)
	if !tr.IsLeaf(k) {
		if err := m.PointMarginal(pydt.Position{Node: k, AtNode: true}, mean, vari); err == nil {
			t.Error("a detached node accepted")
		}
	}
	if err := m.PointMarginal(pydt.Position{Node: k, Time: interp(tr.ParentTime(k), tr.Time(k), 0.5)}, mean, vari); err == nil {
		t.Error("a point above a detached node accepted")
	}
}
