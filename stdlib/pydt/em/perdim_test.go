package em

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// perDimFixture draws a tree from the PYDT (c = 1) with diffusion variance
// s2[d] in dimension d and returns its bp.Model with the leaves observed
// exactly (missing: about a sixth of the values NaN) and the leaf values
// (row-major, N × D).
func perDimFixture(t testing.TB, seed uint64, n int, s2 []float64, missingValues bool) (*bp.Model, []float64) {
	t.Helper()
	d := len(s2)
	rng := rand.New(rand.NewPCG(seed, 91))
	tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variances: s2, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	m := bp.New(tr, d)
	y := make([]float64, n*d)
	for i := range n {
		for k := range d {
			v := x[i*d+k]
			if missingValues && rng.IntN(6) == 0 && !(i == 0 && k == 0) {
				v = math.NaN()
			}
			y[i*d+k] = v
			if err := m.Observe(pydt.NodeID(i), k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m, y
}

// learnPerDim is learnAll with a variance per dimension (starts 1, priors
// Gamma(1, 1)).
func learnPerDim(d int) Options {
	o := learnAll()
	o.Variances = make([]float64, d)
	o.PrecPriors = make([]Gamma, d)
	for k := range d {
		o.Variances[k] = 1
		o.PrecPriors[k] = Gamma{1, 1}
	}
	return o
}

// denseLogLik returns Σ_d log N(y_d; 0, σ²_d C) for exactly observed leaf
// values y (N × D, no NaN), C_ij = t of the most recent common ancestor of
// leaves i and j (C_ii = 1): the Brownian motion from the origin, by a dense
// Cholesky factorisation (gonum/mat), independent of belief propagation.
func denseLogLik(t *testing.T, tr *pydt.Tree, y []float64, s2 []float64) float64 {
	t.Helper()
	n, d := tr.NumLeaves(), len(s2)
	c := leafCov(tr)
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("C is not positive definite")
	}
	l := 0.0
	yd := mat.NewVecDense(n, nil)
	z := mat.NewVecDense(n, nil)
	for k := range d {
		for i := range n {
			yd.SetVec(i, y[i*d+k])
		}
		if err := ch.SolveVecTo(z, yd); err != nil {
			t.Fatal(err)
		}
		q := mat.Dot(yd, z) / s2[k]
		l += -0.5*float64(n)*(log2Pi+math.Log(s2[k])) - 0.5*ch.LogDet() - 0.5*q
	}
	return l
}

// TestPerDimBoundDense checks L right after an E-step, with fixed unequal
// variances per dimension and fixed c, α, β, against log p(Y, u | T)
// computed independently: the dense Gaussian likelihood of each column
// (denseLogLik) plus pydt.LogPriorS and the Jacobian of the log gaps.
func TestPerDimBoundDense(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s2 := []float64{1, 0.2, 6.5}
		m, y := perDimFixture(t, seed, 3+int(seed)*2, s2, false)
		opt := fixedAll()
		opt.Variances = []float64{0.7, 0.1, 9}
		e := estepped(t, m, opt)
		h, _ := pydt.NewHarmonic(opt.Alpha, opt.Beta)
		want := denseLogLik(t, e.tr, y, opt.Variances) + pydt.LogPriorS(e.tr, opt.Alpha, opt.Beta, pydt.DivInv{C: opt.C}, h) + logGapJacobian(e.tr)
		if got := e.objective(); !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
			t.Errorf("seed %d: L = %v, dense log p(Y, u | T) %v", seed, got, want)
		}
		// After some iterations (other times).
		for range 4 {
			if _, err := e.Step(); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.estep(); err != nil {
			t.Fatal(err)
		}
		want = denseLogLik(t, e.tr, y, opt.Variances) + pydt.LogPriorS(e.tr, opt.Alpha, opt.Beta, pydt.DivInv{C: opt.C}, h) + logGapJacobian(e.tr)
		if got := e.objective(); !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
			t.Errorf("seed %d after steps: L = %v, dense log p(Y, u | T) %v", seed, got, want)
		}
	}
}

// TestPerDimBoundAfterEStep checks L after an E-step with learned
// precisions per dimension (and c, α, β) against an independent form:
// bp's LogLik of a fresh model at σ²_d = 1/E[τ_d] plus, per dimension,
// |S|/2 (E log τ_d − log E τ_d) − KL(q(τ_d) ‖ p(τ_d)), and the prior terms.
func TestPerDimBoundAfterEStep(t *testing.T) {
	for _, missingValues := range []bool{false, true} {
		for seed := uint64(1); seed <= 4; seed++ {
			m, _ := perDimFixture(t, seed, 4+int(seed)*3, []float64{1, 0.05, 4}, missingValues)
			e := estepped(t, m, learnPerDim(3))
			check := func(when string) {
				tr := e.tr
				m2 := evidenceModel(t, e, tr, 1)
				if err := m2.SetVariances(e.MeanVariances()); err != nil {
					t.Fatal(err)
				}
				ec, elc := e.meanC()
				h, _ := pydt.NewHarmonic(e.alpha, e.beta)
				edges := float64(len(tr.PreOrder(nil)))
				want := m2.LogLik() + pydt.LogPriorS(tr, e.alpha, e.beta, pydt.DivInv{C: ec}, h)
				want += float64(tr.NumInternal())*(elc-math.Log(ec)) - e.qc.KL(*e.opt.CPrior)
				qs, ok := e.QPrecs()
				if !ok || len(qs) != 3 {
					t.Fatalf("QPrecs = %v, %v", qs, ok)
				}
				for k, q := range qs {
					want += edges/2*(q.MeanLog()-math.Log(q.Mean())) - q.KL(e.opt.PrecPriors[k])
				}
				want += e.abPrior(e.alpha, e.beta) + logGapJacobian(tr)
				if got := e.objective(); !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
					t.Errorf("missing %v seed %d %s: L = %v, independent %v", missingValues, seed, when, got, want)
				}
			}
			check("first E-step")
			for range 3 {
				if _, err := e.Step(); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.estep(); err != nil {
				t.Fatal(err)
			}
			check("after steps")
		}
	}
}

// TestPerDimBoundMonotone checks that no sub-step of EM lowers the bound
// with a learned precision per dimension, on data whose columns have
// different scales.
func TestPerDimBoundMonotone(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		n := 3 + int(seed)%7
		s2 := []float64{1, 0.01, 25}[:1+int(seed)%3]
		m, _ := perDimFixture(t, seed, n, s2, seed%2 == 0)
		e, err := New(m, learnPerDim(len(s2)))
		if err != nil {
			t.Fatal(err)
		}
		checkStepsMonotone(t, e, 40, fmt.Sprintf("seed %d (N %d D %d)", seed, n, len(s2)))
	}
}

// TestPerDimPrecOptimum checks the closed-form q(τ_d) update against the
// bound itself (whose terms in q(τ_d) TestPerDimBoundAfterEStep checks
// independently): after updatePrec, moving the shape or the rate of any
// one q(τ_d) by a factor 1 ± 1% or 1 ± 10%, q(x) and the times held, must
// lower L (exact and missing values, columns on different scales).
func TestPerDimPrecOptimum(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		s2 := []float64{1, 0.02, 9}
		m, _ := perDimFixture(t, seed, 4+3*int(seed), s2, seed%2 == 0)
		e := estepped(t, m, learnPerDim(len(s2)))
		e.updatePrec()
		l0 := e.objective()
		for k := range s2 {
			best := e.qts[k]
			for _, f := range []float64{0.9, 0.99, 1.01, 1.1} {
				for _, q := range []Gamma{{best.Shape * f, best.Rate}, {best.Shape, best.Rate * f}, {best.Shape * f, best.Rate * f}} {
					e.qts[k] = q
					e.weightB()
					if l := e.objective(); !(l < l0) {
						t.Errorf("seed %d dimension %d: q(τ_d) = %+v gives L = %v, the update %+v gives %v", seed, k, q, l, best, l0)
					}
				}
			}
			e.qts[k] = best
			e.weightB()
		}
	}
}

// TestPerDimGradient checks the analytic gradient of the M-step objective
// with a variance per dimension against central finite differences.
func TestPerDimGradient(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m, _ := perDimFixture(t, seed, 4+3*int(seed), []float64{1, 0.03, 8}, seed%2 == 0)
			opt := learnPerDim(3)
			opt.Variances = []float64{0.5, 0.02, 10}
			e := estepped(t, m, opt)
			e.updatePrec()
			checkGradient(t, e)
		})
	}
}

// TestPerDimAgreesWithScalar fits data whose D columns are copies of one
// column by EM with one variance and with a variance per dimension. With
// the variances fixed and equal the two fits are the same computation:
// bounds and times agree to rounding. With learned precisions, priors
// Gamma(a, b) per dimension and Gamma(D a, D b) for the shared precision
// give q(τ_d) and q(τ) the same mean at every step, so the times, E[c] and
// the variances agree (the bounds differ: D posteriors against one).
func TestPerDimAgreesWithScalar(t *testing.T) {
	const d = 3
	for seed := uint64(1); seed <= 4; seed++ {
		n := 5 + 3*int(seed)
		rng := rand.New(rand.NewPCG(seed, 92))
		tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variance: 2, Dims: 1})
		if err != nil {
			t.Fatal(err)
		}
		model := func() *bp.Model {
			m := bp.New(tr.Clone(), d)
			for i := range n {
				for k := range d {
					if err := m.Observe(pydt.NodeID(i), k, x[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			return m
		}
		for _, learn := range []bool{false, true} {
			sc, pd := learnAll(), learnAll()
			sc.Variance = 1.7
			pd.Variances = []float64{1.7, 1.7, 1.7}
			if learn {
				sc.PrecPrior = &Gamma{d * 2, d * 3}
				pd.PrecPriors = []Gamma{{2, 3}, {2, 3}, {2, 3}}
			} else {
				sc.PrecPrior = nil
			}
			es, err := New(model(), sc)
			if err != nil {
				t.Fatal(err)
			}
			ep, err := New(model(), pd)
			if err != nil {
				t.Fatal(err)
			}
			for it := range 15 {
				ls, err := es.Step()
				if err != nil {
					t.Fatal(err)
				}
				lp, err := ep.Step()
				if err != nil {
					t.Fatal(err)
				}
				if !learn && !(math.Abs(ls-lp) <= 1e-7*(1+math.Abs(ls))) {
					t.Errorf("seed %d iteration %d: bound %v with one variance, %v per dimension", seed, it, ls, lp)
				}
				for k, v := range ep.MeanVariances() {
					if w := es.MeanVariance(); !(math.Abs(v-w) <= 1e-7*w) {
						t.Errorf("seed %d learn %v iteration %d: variance %d %v, shared %v", seed, learn, it, k, v, w)
					}
				}
				if a, b := es.MeanC(), ep.MeanC(); !(math.Abs(a-b) <= 1e-7*a) {
					t.Errorf("seed %d learn %v iteration %d: E[c] %v and %v", seed, learn, it, a, b)
				}
				for _, v := range es.internal {
					a, b := es.tr.Time(v).S(), ep.tr.Time(v).S()
					if !(math.Abs(a-b) <= 1e-6*(1+a)) {
						t.Errorf("seed %d learn %v iteration %d: branch point %d at s %v and %v", seed, learn, it, v, a, b)
					}
				}
			}
		}
	}
}

// TestPerDimNoiseColumn fits data with two columns drawn along the tree
// (σ² = 1) and one of pure noise, independent of the tree with variance 9,
// with vague priors on the precisions, and checks the learned variances
// against their independent maximum-likelihood values given the fitted
// tree and times, σ²_d = y_dᵀ C⁻¹ y_d / N (C as in denseLogLik), which EM's
// fixed point in τ_d is when the prior is vague: the noise column's
// precision is small (its variance large), the signal columns' near 1.
func TestPerDimNoiseColumn(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		const n = 30
		rng := rand.New(rand.NewPCG(seed, 93))
		tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: 0.5, Beta: 0.1, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: 2})
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, n*3)
		m := bp.New(tr, 3)
		for i := range n {
			y[i*3], y[i*3+1], y[i*3+2] = x[i*2], x[i*2+1], 3*rng.NormFloat64()
			for k := range 3 {
				if err := m.Observe(pydt.NodeID(i), k, y[i*3+k]); err != nil {
					t.Fatal(err)
				}
			}
		}
		opt := Options{C: 1, Alpha: 0.5, Beta: 0.1, Variances: []float64{1, 1, 1}, PrecPriors: []Gamma{{1e-6, 1e-6}, {1e-6, 1e-6}, {1e-6, 1e-6}},
			MaxIter: 5000, Tol: 1e-14}
		e, err := New(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(); err != nil {
			t.Fatal(err)
		}
		got := e.MeanVariances()
		// ML of each column's variance at the fitted times: the gradient
		// of denseLogLik in σ²_d vanishes at y_dᵀ C⁻¹ y_d / N.
		for k := range 3 {
			s2 := []float64{1}
			col := make([]float64, n)
			for i := range n {
				col[i] = y[i*3+k]
			}
			// log p(σ² = 2) - log p(σ² = 1) = q/4 - (N/2) log 2 gives
			// q = y_dᵀ C⁻¹ y_d.
			l1 := denseLogLik(t, e.tr, col, s2)
			l2 := denseLogLik(t, e.tr, col, []float64{2})
			q := 4*(l2-l1) + 2*float64(n)*math.Ln2
			want := q / float64(n)
			if !(math.Abs(got[k]-want) <= 1e-3*want) {
				t.Errorf("seed %d column %d: variance %v, ML given the times %v", seed, k, got[k], want)
			}
		}
		if !(got[2] > 3*got[0] && got[2] > 3*got[1]) {
			t.Errorf("seed %d: the noise column's variance %v is not well above the signal columns' %v, %v", seed, got[2], got[0], got[1])
		}
		t.Logf("seed %d: variances %v after %d iterations", seed, got, e.Iterations())
	}
}

// TestPerDimOptionErrors checks the errors for per-dimension options.
func TestPerDimOptionErrors(t *testing.T) {
	m, _ := perDimFixture(t, 1, 5, []float64{1, 1}, false)
	cases := []struct {
		name string
		opt  func(*Options)
	}{
		{"length", func(o *Options) { o.Variances = []float64{1} }},
		{"zero", func(o *Options) { o.Variances = []float64{1, 0} }},
		{"NaN", func(o *Options) { o.Variances = []float64{math.NaN(), 1} }},
		{"prior length", func(o *Options) { o.PrecPriors = []Gamma{{1, 1}} }},
		{"bad prior", func(o *Options) { o.PrecPriors = []Gamma{{1, 1}, {0, 1}} }},
		{"priors without variances", func(o *Options) { o.Variances = nil }},
	}
	for _, c := range cases {
		opt := learnPerDim(2)
		c.opt(&opt)
		if _, err := New(m, opt); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestPerDimLaplace checks Laplace with a variance per dimension (fixed,
// and learned) against the log-determinant of the Hessian of the collapsed
// objective computed independently (bp's LogLik at σ²_d = 1/E[τ_d] plus
// the prior: collapsed), at EM's fixed point.
func TestPerDimLaplace(t *testing.T) {
	for _, learn := range []bool{false, true} {
		for seed := uint64(1); seed <= 2; seed++ {
			m, _ := perDimFixture(t, seed, 5+2*int(seed), []float64{1, 0.1, 5}, seed == 2)
			opt := learnPerDim(3)
			if !learn {
				opt = fixedAll()
				opt.Variances = []float64{0.8, 0.05, 4}
			}
			checkLaplaceAtFixedPoint(t, m, opt, false, fmt.Sprintf("learn %v seed %d", learn, seed))
		}
	}
}

// TestSequentialTreePerDim checks SequentialTree and ExtendTree with a
// variance per dimension against two independent answers: with every
// σ²_d equal to σ² it builds the tree of one shared variance, and scaling
// column d by k_d with σ²_d = k_d² σ² builds the tree of the unscaled data
// (the belief-propagation scores change by a constant, −Σ log k_d per
// value, the candidate times and the cheap distances not at all), in the
// beam search and the exhaustive construction alike. The beam search runs
// at the default width and at width 1, where the cheap distance to the
// children's messages (scaled per dimension) picks the one child scored.
func TestSequentialTreePerDim(t *testing.T) {
	const n, d = 60, 3
	scale := []float64{1, 30, 0.02}
	for seed := uint64(1); seed <= 3; seed++ {
		x := pydtData(seed, n, d)
		xs := make([]float64, len(x))
		for i := range x {
			xs[i] = x[i] * scale[i%d]
		}
		for _, search := range []struct {
			exh   bool
			width int
		}{{false, 0}, {false, 1}, {true, 0}} {
			exh := search.exh
			opt := InitOptions{C: 0.5, Variance: 0.7, Alpha: 0.5, Beta: 0.1, Exhaustive: exh, Width: search.width}
			want, _, err := SequentialTree(x, n, d, opt)
			if err != nil {
				t.Fatal(err)
			}
			eq := opt
			eq.Variances = []float64{0.7, 0.7, 0.7}
			sc := opt
			sc.Variances = []float64{0.7 * scale[0] * scale[0], 0.7 * scale[1] * scale[1], 0.7 * scale[2] * scale[2]}
			for _, c := range []struct {
				name string
				x    []float64
				opt  InitOptions
			}{{"equal variances", x, eq}, {"scaled columns", xs, sc}} {
				got, _, err := SequentialTree(c.x, n, d, c.opt)
				if err != nil {
					t.Fatal(err)
				}
				if !sameTree(got, want, 1e-6) {
					t.Errorf("seed %d exhaustive %v width %d %s:\n%s\nwant (one variance, unscaled)\n%s", seed, exh, search.width, c.name, got.Newick(), want.Newick())
				}
			}
			// ExtendTree from the first 20 rows' tree, likewise.
			start, _, err := SequentialTree(x[:20*d], 20, d, opt)
			if err != nil {
				t.Fatal(err)
			}
			rows := make([]int, 20)
			for i := range rows {
				rows[i] = i
			}
			wantX, _, err := ExtendTree(x, n, d, start, rows, opt)
			if err != nil {
				t.Fatal(err)
			}
			gotX, _, err := ExtendTree(xs, n, d, start, rows, sc)
			if err != nil {
				t.Fatal(err)
			}
			if !sameTree(gotX, wantX, 1e-6) {
				t.Errorf("seed %d exhaustive %v width %d: ExtendTree on scaled columns\n%s\nwant\n%s", seed, exh, search.width, gotX.Newick(), wantX.Newick())
			}
		}
	}
}

// sameTree reports whether a and b have the same structure (the same
// clades, by their leaves) with times equal to tol in s.
func sameTree(a, b *pydt.Tree, tol float64) bool {
	clades := func(tr *pydt.Tree) map[string]float64 {
		out := map[string]float64{}
		leaves := make([][]int, tr.Cap())
		for _, v := range tr.PostOrder(nil) {
			if tr.IsLeaf(v) {
				leaves[v] = []int{int(v)}
				continue
			}
			var l []int
			for c := range tr.Children(v) {
				l = append(l, leaves[c]...)
			}
			slices.Sort(l)
			leaves[v] = l
			out[fmt.Sprint(l)] = tr.Time(v).S()
		}
		return out
	}
	ca, cb := clades(a), clades(b)
	if len(ca) != len(cb) {
		return false
	}
	for k, s := range ca {
		r, ok := cb[k]
		if !ok || !(math.Abs(s-r) <= tol*(1+math.Abs(s))) {
			return false
		}
	}
	return true
}

// TestPerDimEP checks EM with EP sites and a variance per dimension. With
// every hyperparameter fixed, L after the E-step is EP's estimate of
// log p(Y | T) plus the prior terms; given the tree the dimensions are
// independent, so that estimate must be the sum over columns of EPLogLik of
// each column alone at its own variance (one-dimensional fits, independent
// of the per-dimension code). Then a fit with learned precisions runs 30
// iterations to a valid tree with a rising objective.
func TestPerDimEP(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		const n, d = 12, 3
		tr, y := probitFixture(t, seed, n, d, 2)
		s2 := []float64{0.4, 2, 7}
		ep, err := NewEP(Probit{}, y, n, d)
		if err != nil {
			t.Fatal(err)
		}
		opt := fixedAll()
		opt.Variances, opt.EP = s2, ep
		e := estepped(t, bp.New(tr, d), opt)
		want := 0.0
		for k := range d {
			col := make([]float64, n)
			for i := range n {
				col[i] = y[i*d+k]
			}
			l, err := EPLogLik(tr, s2[k], col, 1, Probit{})
			if err != nil {
				t.Fatal(err)
			}
			want += l
		}
		h, _ := pydt.NewHarmonic(opt.Alpha, opt.Beta)
		want += pydt.LogPriorS(tr, opt.Alpha, opt.Beta, pydt.DivInv{C: opt.C}, h) + logGapJacobian(tr)
		if got := e.objective(); !(math.Abs(got-want) <= 1e-6*(1+math.Abs(want))) {
			t.Errorf("seed %d: L = %v, sum of the columns' EP estimates and the prior %v", seed, got, want)
		}

		ep2, err := NewEP(Probit{}, y, n, d)
		if err != nil {
			t.Fatal(err)
		}
		lo := learnPerDim(d)
		lo.EP, lo.MaxIter = ep2, 30
		f, err := New(bp.New(tr.Clone(), d), lo)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Run(); err != nil {
			t.Fatal(err)
		}
		if err := f.Tree().Validate(); err != nil {
			t.Fatal(err)
		}
		// Step refuses a bound that is not finite, so the trace is finite
		// by construction; what can fail is that the fit did 30 recorded
		// iterations, that L rose over them (EM with EP is not monotone
		// in general, docs/em.md, but it rises here, by about 1-5 nats),
		// that the bound reported is the last of the trace, and that the
		// learned variances are positive and finite.
		tr2 := f.Trace()
		if f.Iterations() != lo.MaxIter || len(tr2) != lo.MaxIter {
			t.Fatalf("seed %d: %d iterations, trace of %d, want %d", seed, f.Iterations(), len(tr2), lo.MaxIter)
		}
		if first, last := tr2[0], tr2[len(tr2)-1]; !(last > first) || f.Bound() != last {
			t.Errorf("seed %d: L from %v to %v over the fit (reported %v), want a rise", seed, first, last, f.Bound())
		}
		for k, v := range f.MeanVariances() {
			if !(v > 0) || math.IsInf(v, 1) {
				t.Errorf("seed %d: learned variance of dimension %d is %v", seed, k, v)
			}
		}
	}
}

// TestMeanPrecPerDim checks that with a variance per dimension there is
// no shared precision: meanPrec's moments are NaN (they were dimension 0's,
// a silent wrong answer for any caller that used them), while meanPrecDim
// gives each dimension's own and edgePrec is 1; without one, meanPrecDim
// is the shared precision for every dimension.
func TestMeanPrecPerDim(t *testing.T) {
	s2 := []float64{0.5, 2, 8}
	m, _ := perDimFixture(t, 1, 6, s2, false)
	opt := fixedAll()
	opt.Variances = s2
	e := estepped(t, m, opt)
	if et, elt := e.meanPrec(); !math.IsNaN(et) || !math.IsNaN(elt) {
		t.Errorf("meanPrec with a variance per dimension = %v, %v; want NaN, NaN", et, elt)
	}
	for k, v := range s2 {
		if et, elt := e.meanPrecDim(k); et != 1/v || elt != -math.Log(v) {
			t.Errorf("meanPrecDim(%d) = %v, %v; want %v, %v", k, et, elt, 1/v, -math.Log(v))
		}
	}
	if p := e.edgePrec(); p != 1 {
		t.Errorf("edgePrec with a variance per dimension = %v, want 1", p)
	}
	if l := e.objective(); math.IsNaN(l) || math.IsInf(l, 0) {
		t.Errorf("L = %v with a variance per dimension", l)
	}
	shared := estepped(t, fixture(t, 1, 6, 3, 1, 0.2, exact), fixedAll())
	for k := range 3 {
		if et, _ := shared.meanPrecDim(k); et != 1/fixedAll().Variance {
			t.Errorf("shared variance: meanPrecDim(%d) = %v, want %v", k, et, 1/fixedAll().Variance)
		}
	}
}
