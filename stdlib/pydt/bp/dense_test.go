package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The reference answers here come from dense linear algebra on the
// covariance implied by the generative process: every location is Gaussian
// with Cov(x_a, x_b) = σ²_d t(lca(a, b)) in dimension d (the lca of a node
// and its ancestor being the ancestor), dimensions independent, and
// evidence with precision p adds independent noise of variance 1/p.

// spreadVariances returns D diffusion variances drawn log-uniformly from
// [0.05, 50], so that a dimension read with another's variance shows.
func spreadVariances(rng *rand.Rand, D int) []float64 {
	s2 := make([]float64, D)
	for d := range s2 {
		s2[d] = 0.05 * math.Pow(1000, rng.Float64())
	}
	return s2
}

// dimCase is a number of dimensions with equal or unequal (spread)
// variances.
type dimCase struct {
	D      int
	perDim bool
}

func (c dimCase) String() string {
	if c.perDim {
		return fmt.Sprintf("D=%d/perdim", c.D)
	}
	return fmt.Sprintf("D=%d", c.D)
}

// dimCases are the dimension cases of the local-update tests.
var dimCases = []dimCase{{1, false}, {4, false}, {3, true}}

// setVariances sets m's per-dimension variances, failing the test on an
// error.
func setVariances(t *testing.T, m *Model, s2 []float64) {
	t.Helper()
	if err := m.SetVariances(s2); err != nil {
		t.Fatal(err)
	}
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

// gaussLogPDF returns log N(y; 0, cov), by gonum's multivariate normal.
func gaussLogPDF(t *testing.T, cov *mat.SymDense, y []float64) float64 {
	t.Helper()
	nrm, ok := distmv.NewNormal(make([]float64, len(y)), cov, nil)
	if !ok {
		t.Fatal("dense covariance not positive definite")
	}
	return nrm.LogProb(y)
}

// denseLogLik is the log density of the evidence means under N(0, σ²_d C +
// noise), dimension by dimension, dropping the rows without evidence.
func denseLogLik(t *testing.T, m *Model) float64 {
	t.Helper()
	total := 0.0
	for d := range m.Dims() {
		rows, y, noise := observedRows(m, d)
		if len(rows) == 0 {
			continue
		}
		total += gaussLogPDF(t, densetest.Cov(m.Tree(), m.Variances()[d], rows, noise), y)
	}
	return total
}

// densePosterior returns the posterior mean and covariance, in dimension d,
// of the locations of nodes given the evidence, by conditioning the dense
// joint Gaussian: mean Σ_xy Σ_yy⁻¹ y, covariance Σ_xx - Σ_xy Σ_yy⁻¹ Σ_yx.
func densePosterior(t *testing.T, m *Model, nodes []pydt.NodeID, d int) (mean []float64, post *mat.SymDense) {
	t.Helper()
	tr, s2 := m.Tree(), m.Variances()[d]
	rows, y, noise := observedRows(m, d)
	post = densetest.Cov(tr, s2, nodes, nil)
	mean = make([]float64, len(nodes))
	if len(rows) == 0 {
		return mean, post
	}
	var ch mat.Cholesky
	if !ch.Factorize(densetest.Cov(tr, s2, rows, noise)) {
		t.Fatal("dense covariance not positive definite")
	}
	cross := densetest.CrossCov(tr, s2, nodes, rows) // Σ_xy
	var sol mat.Dense                                // Σ_yy⁻¹ Σ_yx
	if err := ch.SolveTo(&sol, cross.T()); err != nil {
		t.Fatal(err)
	}
	mat.NewVecDense(len(nodes), mean).MulVec(sol.T(), mat.NewVecDense(len(y), y))
	var red mat.Dense
	red.Mul(cross, &sol)
	for a := range nodes {
		for b := a; b < len(nodes); b++ {
			post.SetSym(a, b, post.At(a, b)-red.At(a, b))
		}
	}
	return mean, post
}

// denseMarginals returns the posterior means and variances of every node's
// location (indexed v*D+d) by conditioning the dense joint Gaussian.
func denseMarginals(t *testing.T, m *Model) (mean, variance []float64) {
	t.Helper()
	tr, D := m.Tree(), m.Dims()
	nodes := tr.PreOrder(nil)
	mean = make([]float64, tr.Cap()*D)
	variance = make([]float64, tr.Cap()*D)
	for d := range D {
		mu, post := densePosterior(t, m, nodes, d)
		for a, v := range nodes {
			mean[int(v)*D+d], variance[int(v)*D+d] = mu[a], post.At(a, a)
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
	// One stream per kind of case, so that each kind sees the draws it
	// would see alone.
	rngs := map[bool]*rand.Rand{false: rand.New(rand.NewPCG(1, 1)), true: rand.New(rand.NewPCG(1, 2))}
	evidence := []struct {
		name          string
		pMiss, pNoisy float64
	}{{"observed", 0, 0}, {"missing", 0.3, 0}, {"noisy", 0, 0.5}, {"mixed", 0.25, 0.25}}
	for _, tc := range treeCases {
		for _, n := range []int{1, 2, 3, 7, 25} {
			for _, D := range []int{1, 3, 6} {
				for _, ev := range evidence {
					for _, perDim := range []bool{false, true} {
						name := fmt.Sprintf("%s/N=%d/D=%d/%s/perdim=%v", tc.name, n, D, ev.name, perDim)
						t.Run(name, func(t *testing.T) {
							rng := rngs[perDim]
							tr := tc.gen(rng, n)
							m := New(tr, D)
							if perDim {
								setVariances(t, m, spreadVariances(rng, D))
							} else if err := m.SetVariance(0.5 + 2*rng.Float64()); err != nil {
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
}

func TestMarginalsMatchDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, tc := range treeCases {
		for _, n := range []int{1, 2, 5, 20} {
			for _, pMiss := range []float64{0, 0.4, 0.9} {
				perDim := pMiss > 0 || n > 2 // some of each, with missing values
				t.Run(fmt.Sprintf("%s/N=%d/miss=%v/perdim=%v", tc.name, n, pMiss, perDim), func(t *testing.T) {
					const D = 3
					tr := tc.gen(rng, n)
					m := New(tr, D)
					if err := m.SetVariance(0.7); err != nil {
						t.Fatal(err)
					}
					if perDim {
						setVariances(t, m, spreadVariances(rng, D))
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
							if !relClose(mean[i], wm[i], 1e-9) || !(math.Abs(vari[i]-wv[i]) <= 1e-9*math.Max(1, wv[i])) {
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
// ss/σ², at two values of σ²; and SuffStatsDims the same way per dimension,
// log p(x_d | σ²_d) = -(n_d/2) log(2πσ²_d) - (1/2) Σ_edges log L -
// ss_d/σ²_d, for locations drawn with unequal variances.
func TestSuffStatsMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tc := range treeCases {
		for _, s2 := range []float64{1, 2.3, math.NaN()} { // NaN: per dimension
			const D, n = 2, 12
			tr := tc.gen(rng, n)
			m := New(tr, D)
			vars := []float64{s2, s2}
			if math.IsNaN(s2) {
				vars = spreadVariances(rng, D)
			}
			setVariances(t, m, vars)
			randomEvidence(t, rng, m, 0.3, 0.2)
			x := make([]float64, tr.Cap()*D)
			if err := m.SampleLocations(rng, x); err != nil {
				t.Fatal(err)
			}
			ss, cnt, err := m.SuffStats(x)
			if err != nil {
				t.Fatal(err)
			}
			ssd, cntd := make([]float64, D), make([]int, D)
			if err := m.SuffStatsDims(x, ssd, cntd); err != nil {
				t.Fatal(err)
			}
			nodes := tr.PreOrder(nil)
			if cnt != len(nodes)*D {
				t.Errorf("%s: n = %d, want %d edges × %d", tc.name, cnt, len(nodes), D)
			}
			if cntd[0]+cntd[1] != cnt || !relClose(ssd[0]+ssd[1], ss, 1e-12) {
				t.Errorf("%s: SuffStatsDims %v, %v do not add up to SuffStats %v, %v", tc.name, ssd, cntd, ss, cnt)
			}
			sumLogL := 0.0
			for _, v := range nodes {
				sumLogL += math.Log(tr.BranchLength(v))
			}
			// Dense joint log density of all locations.
			dense := 0.0
			for d := range D {
				xv := make([]float64, len(nodes))
				for i, v := range nodes {
					xv[i] = x[int(v)*D+d]
				}
				dd := gaussLogPDF(t, densetest.Cov(tr, vars[d], nodes, nil), xv)
				got := -0.5*float64(cntd[d])*math.Log(2*math.Pi*vars[d]) - 0.5*sumLogL - ssd[d]/vars[d]
				if !relClose(got, dd, 1e-8) {
					t.Errorf("%s σ²=%v dim %d: from SuffStatsDims %.12g, dense %.12g", tc.name, vars, d, got, dd)
				}
				dense += dd
			}
			// Locations set to NaN (integrated out) are left out per
			// dimension: a missing leaf entry drops one term.
			miss := make([]int, D)
			for i := range n {
				for d := range D {
					if _, prec := m.Evidence(pydt.NodeID(i), d); prec == 0 {
						x[i*D+d] = math.NaN()
						miss[d]++
					}
				}
			}
			if err := m.SuffStatsDims(x, ssd, cntd); err != nil {
				t.Fatal(err)
			}
			for d := range D {
				if cntd[d] != len(nodes)-miss[d] {
					t.Errorf("%s: dimension %d with %d missing leaves: n = %d, want %d", tc.name, d, miss[d], cntd[d], len(nodes)-miss[d])
				}
			}
			if math.IsNaN(s2) {
				continue
			}
			got := -0.5*float64(cnt)*math.Log(2*math.Pi*s2) - 0.5*D*sumLogL - ss/s2
			if !relClose(got, dense, 1e-8) {
				t.Errorf("%s σ²=%v: from SuffStats %.12g, dense %.12g", tc.name, s2, got, dense)
			}
		}
	}
}
