package inference

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// denseLogLikAt is log p(X | tree, 1/prec) over the columns cols by
// gonum's multivariate normal on the dense covariance of the observed
// entries of each column: every leaf location is Gaussian with
// Cov(x_i, x_j) = t(lca(i, j))/prec.
func denseLogLikAt(t *testing.T, tr *pydt.Tree, x []float64, n, d int, cols []int, prec float64) float64 {
	t.Helper()
	ll := 0.0
	for _, k := range cols {
		var rows []pydt.NodeID
		var y []float64
		for i := range n {
			if v := x[i*d+k]; !math.IsNaN(v) {
				rows = append(rows, pydt.NodeID(i))
				y = append(y, v)
			}
		}
		if len(rows) == 0 {
			continue
		}
		cov := mat.NewSymDense(len(rows), nil)
		for i := range rows {
			for j := i; j < len(rows); j++ {
				cov.SetSym(i, j, densetest.LCATime(tr, rows[i], rows[j]).T()/prec)
			}
		}
		nrm, ok := distmv.NewNormal(make([]float64, len(y)), cov, nil)
		if !ok {
			t.Fatal("dense covariance not positive definite")
		}
		ll += nrm.LogProb(y)
	}
	return ll
}

// collapsedPrecModel is the model of the quadrature test: the data at the
// leaves, a shared precision (or, with "param prec : pos[D]" declared, one
// per column) under a Gamma(2.5, 1.5) prior.
const collapsedPrecModel = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 4)
beta ~ Beta(2, 3)
c ~ Gamma(4, 2)
prec ~ Gamma(2.5, 1.5)
X ~ PYDT(alpha, beta, c, 1 / prec)
`

// collapsedPrecStep compiles collapsedPrecModel, with decl added after the
// data declaration, on the n×d data x and returns the model, its default
// schedule and the schedule's step named step.
func collapsedPrecStep(t *testing.T, x []float64, n, d int, decl, step string) (*Model, *Schedule, Updater) {
	t.Helper()
	data := &dataset.Matrix{Rows: n, Cols: d, Data: x, Source: "x.csv"}
	src := strings.Replace(collapsedPrecModel, "data X : real[N, D]\n", "data X : real[N, D]\n"+decl, 1)
	m := compileSource(t, "prec.pydt", []byte(src), map[string]*dataset.Matrix{"X": data}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sched.Steps {
		if s.Name() == step {
			return m, sched, s
		}
	}
	t.Fatalf("no %s in\n%s", step, sched.Explain())
	return nil, nil, nil
}

// precQuadrature returns the mean, the second moment and the quartiles of
// the conditional of a precision with a Gamma(shape, rate) prior given the
// tree and the columns cols of x, by quadrature on a grid in log prec of
// the prior times denseLogLikAt.
func precQuadrature(t *testing.T, tr *pydt.Tree, x []float64, n, d int, cols []int, shape, rate float64) (m1, m2 float64, quartiles []float64) {
	t.Helper()
	const grid = 4000
	lo, hi := math.Log(1e-4), math.Log(1e3)
	h := (hi - lo) / grid
	logw := make([]float64, grid+1)
	ps := make([]float64, grid+1)
	maxw := math.Inf(-1)
	for i := range logw {
		p := math.Exp(lo + float64(i)*h)
		ps[i] = p
		// The prior times p, the Jacobian of log p.
		logw[i] = shape*math.Log(p) - rate*p + denseLogLikAt(t, tr, x, n, d, cols, p)
		maxw = math.Max(maxw, logw[i])
	}
	var z float64
	cdf := make([]float64, grid+1)
	for i := range logw {
		w := math.Exp(logw[i] - maxw)
		if i == 0 || i == grid {
			w /= 2
		}
		z += w
		m1 += w * ps[i]
		m2 += w * ps[i] * ps[i]
		cdf[i] = z
	}
	m1, m2 = m1/z, m2/z
	for i := range cdf {
		cdf[i] /= z
	}
	if cdf[0] > 1e-9 || 1-cdf[grid-1] > 1e-9 {
		t.Fatalf("quadrature grid does not cover the conditional: mass %g below, %g above", cdf[0], 1-cdf[grid-1])
	}
	for _, q := range []float64{0.25, 0.5, 0.75} {
		quartiles = append(quartiles, ps[sort.SearchFloat64s(cdf, q)])
	}
	return m1, m2, quartiles
}

// TestPrecisionGivenTreeMatchesQuadrature checks the draws of gibbs(prec)
// and of gibbs(prec[d]) (a precision per column) with a fixed tree
// against the exact conditional of the precision given the tree and the
// data, the locations integrated out: the Gamma(2.5, 1.5) prior times the
// dense Gaussian likelihood of the observed entries (missing ones left
// out; of its own column for prec[d]), normalised by quadrature over the
// precision. The mean, the second moment and the distribution function at
// the conditional's quartiles are compared within 4 Monte Carlo standard
// errors. Counting one entry more, or a rate b + q instead of b + q/2,
// fails it by 20 standard errors or more.
func TestPrecisionGivenTreeMatchesQuadrature(t *testing.T) {
	const n, d = 6, 2
	const shape, rate = 2.5, 1.5
	x := []float64{0.3, -1.2, 0.5, math.NaN(), 1.7, 0.9, math.NaN(), math.NaN(), -0.4, 0.2, 2.1, -0.8}
	for _, tc := range []struct {
		name, decl, step string
	}{{"shared", "", "gibbs(prec)"}, {"per-dimension", "param prec : pos[D]\n", "gibbs(prec[d])"}} {
		t.Run(tc.name, func(t *testing.T) {
			m, sched, step := collapsedPrecStep(t, x, n, d, tc.decl, tc.step)
			for _, s := range sched.Steps {
				if s.Name() == "locations" {
					t.Errorf("the schedule samples locations, which no step needs:\n%s", sched.Explain())
				}
			}
			if ex := step.Explain(); !strings.Contains(ex, "locations integrated out") {
				t.Errorf("%s explains %q", tc.step, ex)
			}
			prec, _ := m.G.Lookup("prec")
			for _, seed := range []uint64{1, 2} {
				ch, err := NewChain(m, sched, seed, 0)
				if err != nil {
					t.Fatal(err)
				}
				tr := ch.Tree(0)
				const draws = 20000
				got := make([][]float64, prec.Len())
				for range draws {
					if err := step.update(ch); err != nil {
						t.Fatal(err)
					}
					for k, p := range ch.Values(prec) {
						got[k] = append(got[k], p)
					}
				}
				if ch.Tree(0) != tr {
					t.Fatal("the tree changed")
				}
				for k := range got {
					cols := []int{0, 1}
					if prec.Len() > 1 {
						cols = []int{k}
					}
					m1, m2, qs := precQuadrature(t, tr, x, n, d, cols, shape, rate)
					check := func(name string, f func(p float64) float64, want float64) {
						vals := make([]float64, draws)
						for i, p := range got[k] {
							vals[i] = f(p)
						}
						mean, se := meanSE(vals)
						if math.Abs(mean-want) > 4*se {
							t.Errorf("seed %d, element %d: %s: draws %.5g ± %.2g, quadrature %.5g (z = %.1f)", seed, k+1, name, mean, se, want, (mean-want)/se)
						}
					}
					check("E prec", func(p float64) float64 { return p }, m1)
					check("E prec²", func(p float64) float64 { return p * p }, m2)
					for i, q := range qs {
						check(fmt.Sprintf("P(prec ≤ %.4g)", q), func(p float64) float64 {
							if p <= q {
								return 1
							}
							return 0
						}, []float64{0.25, 0.5, 0.75}[i])
					}
				}
			}
		})
	}
}

// missingMask marks, for the missing-value Geweke test, the entries of
// a 5×2 data matrix that are missing: all of leaf 2, and leaf 4's second
// dimension.
var missingMask = []bool{false, false, true, true, false, false, false, true, false, false}

// redrawMasked draws X given the tree and the variance, as redrawData,
// with the entries of missingMask missing.
func redrawMasked(t testing.TB, ch *Chain) {
	locs := sampleLeafLocations(t, ch)
	x := ch.st.Env.Values[ch.m.Leaves.ID]
	for k := range x {
		x[k] = locs[k]
		if missingMask[k] {
			x[k] = math.NaN()
		}
	}
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// TestGewekeCollapsedPrecision is the joint-distribution test of the
// schedule with prec drawn given the tree (the locations integrated out)
// when some data are missing: the missing entries must not count in the
// conditional's shape. The statistics include prec and prec².
func TestGewekeCollapsedPrecision(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	const n, d = 5, 2
	m := compileModel(t, `
dim N, D
data X : real[N, D]
`+gewekePriors+`X ~ PYDT(alpha, beta, c, 1 / prec)
`, n, d, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	var names0 []string
	for _, s := range sched.Steps {
		names0 = append(names0, s.Name())
	}
	if got := strings.Join(names0, " "); got != "tree slice(alpha) slice(beta) gibbs(c) gibbs(prec) ridge(prec, times)" {
		t.Fatalf("schedule %s:\n%s", got, sched.Explain())
	}
	prec, _ := m.G.Lookup("prec")
	names := append(baseNames(m), "prec²")
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		p := env.Values[prec.ID][0]
		return append(append(treeStats(m, env, tr), sStats(tr)...), p*p)
	}
	gewekeRun(t, m, names, stats, m.SamplePrior, func(ch *Chain) { redrawMasked(t, ch) }, 8, 500, 3000)
}

// TestPrecisionGivenTreeKeepsDegenerate checks gibbs(prec) and
// gibbs(prec[d]) on a tree whose first two leaves, with distinct values,
// meet at s = 900, where their edges are of length 0 in float64: the
// likelihood has no density there (bp.ErrNoDensity), so the step keeps the
// precision and counts a skipped update instead of drawing from a
// degenerate Gamma or failing the run; with the branch point back at a
// resolvable time the same step draws a new precision.
func TestPrecisionGivenTreeKeepsDegenerate(t *testing.T) {
	const n, d = 3, 2
	x := []float64{0.3, -1.2, 0.5, 0.7, 1.7, 0.9}
	for _, tc := range []struct {
		name, decl, step string
	}{{"shared", "", "gibbs(prec)"}, {"per-dimension", "param prec : pos[D]\n", "gibbs(prec[d])"}} {
		t.Run(tc.name, func(t *testing.T) {
			m, sched, step := collapsedPrecStep(t, x, n, d, tc.decl, tc.step)
			ch, err := NewChain(m, sched, 3, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Make leaves 0 and 1 a cherry at s = 900 below a root at
			// t = 0.5 that also holds leaf 2.
			tr := pydt.New(n)
			tr.Plant(0)
			tr.Attach(2, pydt.Position{Node: 0, Time: pydt.TimeAt(0.5)})
			tr.Attach(1, pydt.Position{Node: 0, Time: pydt.TimeFromS(900)})
			cherry := tr.Parent(1)
			ct := ch.trees[0].lik.Tree() // the tree the step reads
			ct.CopyFrom(tr)
			prec, _ := m.G.Lookup("prec")
			before := slices.Clone(ch.Values(prec))
			skipped := ch.Skipped
			if err := step.update(ch); err != nil {
				t.Fatalf("degenerate tree: %v", err)
			}
			if got := ch.Values(prec); !slices.Equal(got, before) || ch.Skipped == skipped {
				t.Errorf("degenerate tree: prec %v (was %v), skipped %d (was %d); want it kept and the update counted as skipped", got, before, ch.Skipped, skipped)
			}
			ct.SetTime(cherry, pydt.TimeAt(0.9))
			skipped = ch.Skipped
			if err := step.update(ch); err != nil {
				t.Fatal(err)
			}
			if got := ch.Values(prec); ch.Skipped != skipped || slices.Equal(got, before) {
				t.Errorf("cherry at t = 0.9: prec %v (was %v), skipped %d (was %d); want a new draw", got, before, ch.Skipped, skipped)
			}
		})
	}
}
