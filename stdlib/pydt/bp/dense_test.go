package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The reference answers here come from dense linear algebra on the
// covariance implied by the generative process: every location is Gaussian
// with Cov(x_a, x_b) = σ² t(lca(a, b)) per dimension (the lca of a node and
// its ancestor being the ancestor), and evidence with precision p adds
// independent noise of variance 1/p.

// lcaTime returns the time of the lowest common ancestor of a and b.
func lcaTime(tr *pydt.Tree, a, b pydt.NodeID) pydt.Time {
	da, db := tr.Depth(a), tr.Depth(b)
	for da > db {
		a, da = tr.Parent(a), da-1
	}
	for db > da {
		b, db = tr.Parent(b), db-1
	}
	for a != b {
		a, b = tr.Parent(a), tr.Parent(b)
	}
	return tr.Time(a)
}

// observedRows returns the leaves with evidence in dimension d, their
// evidence means, and noise variances (0 for observed values).
func observedRows(m *Model, d int) (rows []pydt.NodeID, y, noise []float64) {
	for i := range m.Tree().NumLeaves() {
		mean, prec := m.Evidence(pydt.NodeID(i), d)
		if prec == 0 {
			continue
		}
		rows = append(rows, pydt.NodeID(i))
		y = append(y, mean)
		noise = append(noise, 1/prec)
	}
	return rows, y, noise
}

// denseLogLik is the log density of the evidence means under N(0, σ² C +
// noise), dimension by dimension, dropping the rows without evidence.
func denseLogLik(t *testing.T, m *Model) float64 {
	t.Helper()
	tr, s2 := m.Tree(), m.Variance()
	total := 0.0
	for d := range m.Dims() {
		rows, y, noise := observedRows(m, d)
		k := len(rows)
		if k == 0 {
			continue
		}
		cov := mat.NewSymDense(k, nil)
		for i := range k {
			for j := i; j < k; j++ {
				v := s2 * lcaTime(tr, rows[i], rows[j]).T()
				if i == j {
					v += noise[i]
				}
				cov.SetSym(i, j, v)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(cov) {
			t.Fatalf("dense covariance not positive definite")
		}
		yv := mat.NewVecDense(k, y)
		var z mat.VecDense
		if err := ch.SolveVecTo(&z, yv); err != nil {
			t.Fatal(err)
		}
		total += -0.5 * (float64(k)*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(yv, &z))
	}
	return total
}

// denseMarginals returns the posterior means and variances of every node's
// location (indexed v*D+d) by conditioning the dense joint Gaussian.
func denseMarginals(t *testing.T, m *Model) (mean, variance []float64) {
	t.Helper()
	tr, s2, D := m.Tree(), m.Variance(), m.Dims()
	nodes := tr.PreOrder(nil)
	mean = make([]float64, tr.Cap()*D)
	variance = make([]float64, tr.Cap()*D)
	for d := range D {
		rows, y, noise := observedRows(m, d)
		k := len(rows)
		if k == 0 {
			for _, v := range nodes {
				mean[int(v)*D+d], variance[int(v)*D+d] = 0, s2*tr.Time(v).T()
			}
			continue
		}
		cov := mat.NewSymDense(k, nil)
		for i := range k {
			for j := i; j < k; j++ {
				v := s2 * lcaTime(tr, rows[i], rows[j]).T()
				if i == j {
					v += noise[i]
				}
				cov.SetSym(i, j, v)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(cov) {
			t.Fatalf("dense covariance not positive definite")
		}
		cross := mat.NewDense(len(nodes), k, nil) // Cov(x_v, y_row)
		for a, v := range nodes {
			for j, r := range rows {
				cross.Set(a, j, s2*lcaTime(tr, v, r).T())
			}
		}
		var sol mat.Dense // Σ_yy⁻¹ Σ_yx
		if err := ch.SolveTo(&sol, cross.T()); err != nil {
			t.Fatal(err)
		}
		yv := mat.NewVecDense(k, y)
		for a, v := range nodes {
			col := sol.ColView(a)
			mean[int(v)*D+d] = mat.Dot(col, yv)
			variance[int(v)*D+d] = s2*tr.Time(v).T() - mat.Dot(col, cross.RowView(a))
		}
	}
	return mean, variance
}

func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

type treeCase struct {
	name string
	gen  func(rng *rand.Rand, n int) *pydt.Tree
}

var treeCases = []treeCase{
	{"ddt", func(rng *rand.Rand, n int) *pydt.Tree { return genPYDT(rng, n, 1, 0, 0) }},
	{"pydt", func(rng *rand.Rand, n int) *pydt.Tree { return genPYDT(rng, n, 1.5, 1, 0.4) }},
	{"bushy", func(rng *rand.Rand, n int) *pydt.Tree { return genPYDT(rng, n, 3, 3, 0.7) }},
}

func TestLogLikMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	evidence := []struct {
		name          string
		pMiss, pNoisy float64
	}{{"observed", 0, 0}, {"missing", 0.3, 0}, {"noisy", 0, 0.5}, {"mixed", 0.25, 0.25}}
	for _, tc := range treeCases {
		for _, n := range []int{1, 2, 3, 7, 25} {
			for _, D := range []int{1, 3, 6} {
				for _, ev := range evidence {
					name := fmt.Sprintf("%s/N=%d/D=%d/%s", tc.name, n, D, ev.name)
					t.Run(name, func(t *testing.T) {
						tr := tc.gen(rng, n)
						m := New(tr, D)
						if err := m.SetVariance(0.5 + 2*rng.Float64()); err != nil {
							t.Fatal(err)
						}
						randomEvidence(t, rng, m, ev.pMiss, ev.pNoisy)
						if err := m.Recompute(); err != nil {
							t.Fatal(err)
						}
						got, want := m.LogLik(), denseLogLik(t, m)
						if !relClose(got, want, 1e-9) {
							t.Errorf("LogLik = %.15g, dense = %.15g", got, want)
						}
					})
				}
			}
		}
	}
}

func TestMarginalsMatchDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, tc := range treeCases {
		for _, n := range []int{1, 2, 5, 20} {
			for _, pMiss := range []float64{0, 0.4, 0.9} {
				t.Run(fmt.Sprintf("%s/N=%d/miss=%v", tc.name, n, pMiss), func(t *testing.T) {
					const D = 3
					tr := tc.gen(rng, n)
					m := New(tr, D)
					if err := m.SetVariance(0.7); err != nil {
						t.Fatal(err)
					}
					randomEvidence(t, rng, m, pMiss, 0.3)
					mean := make([]float64, tr.Cap()*D)
					vari := make([]float64, tr.Cap()*D)
					if err := m.Marginals(mean, vari); err != nil {
						t.Fatal(err)
					}
					wm, wv := denseMarginals(t, m)
					for _, v := range tr.PreOrder(nil) {
						for d := range D {
							i := int(v)*D + d
							if !relClose(mean[i], wm[i], 1e-9) || math.Abs(vari[i]-wv[i]) > 1e-9*math.Max(1, wv[i]) {
								t.Errorf("node %d dim %d: mean %.12g var %.12g, dense %.12g %.12g", v, d, mean[i], vari[i], wm[i], wv[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestSuffStatsMatchesDense checks ss and n against the dense joint density
// of all locations: log p(x | σ²) = -(n/2) log(2πσ²) - (D/2) Σ_edges log L -
// ss/σ², at two values of σ².
func TestSuffStatsMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tc := range treeCases {
		for _, s2 := range []float64{1, 2.3} {
			const D, n = 2, 12
			tr := tc.gen(rng, n)
			m := New(tr, D)
			if err := m.SetVariance(s2); err != nil {
				t.Fatal(err)
			}
			randomEvidence(t, rng, m, 0.3, 0.2)
			x := make([]float64, tr.Cap()*D)
			if err := m.SampleLocations(rng, x); err != nil {
				t.Fatal(err)
			}
			ss, cnt, err := m.SuffStats(x)
			if err != nil {
				t.Fatal(err)
			}
			nodes := tr.PreOrder(nil)
			if cnt != len(nodes)*D {
				t.Errorf("%s: n = %d, want %d edges × %d", tc.name, cnt, len(nodes), D)
			}
			// Dense joint log density of all locations.
			k := len(nodes)
			cov := mat.NewSymDense(k, nil)
			for i := range k {
				for j := i; j < k; j++ {
					cov.SetSym(i, j, s2*lcaTime(tr, nodes[i], nodes[j]).T())
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(cov) {
				t.Fatal("joint covariance not positive definite")
			}
			dense := 0.0
			for d := range D {
				xv := mat.NewVecDense(k, nil)
				for i, v := range nodes {
					xv.SetVec(i, x[int(v)*D+d])
				}
				var z mat.VecDense
				if err := ch.SolveVecTo(&z, xv); err != nil {
					t.Fatal(err)
				}
				dense += -0.5 * (float64(k)*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(xv, &z))
			}
			sumLogL := 0.0
			for _, v := range nodes {
				sumLogL += math.Log(tr.BranchLength(v))
			}
			got := -0.5*float64(cnt)*math.Log(2*math.Pi*s2) - 0.5*D*sumLogL - ss/s2
			if !relClose(got, dense, 1e-8) {
				t.Errorf("%s σ²=%v: from SuffStats %.12g, dense %.12g", tc.name, s2, got, dense)
			}
		}
	}
}
