package em

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/optimize"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// evidence kinds of the fixtures.
const (
	exact   = iota // every leaf observed exactly
	noisy          // Gaussian evidence of precision 4
	missing        // exact, a quarter of the values missing
)

// fixture draws a tree and leaf values from the PYDT (c = 1, σ² = 1) and
// returns its bp.Model with evidence of the given kind.
func fixture(t testing.TB, seed uint64, n, d int, alpha, beta float64, kind int) *bp.Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 77))
	tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: alpha, Beta: beta, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	m := bp.New(tr, d)
	for i := range n {
		for k := range d {
			v := x[i*d+k]
			switch kind {
			case exact:
				err = m.Observe(pydt.NodeID(i), k, v)
			case noisy:
				err = m.SetEvidence(pydt.NodeID(i), k, v+0.5*rng.NormFloat64(), 4)
			case missing:
				if rng.IntN(4) == 0 && !(i == 0 && k == 0) {
					v = math.NaN()
				}
				err = m.Observe(pydt.NodeID(i), k, v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// brownian returns a bp.Model for the tree given in Newick, with leaf
// values drawn by Brownian motion (σ² = 1) from the origin along its edges
// in d dimensions, observed with evidence of the given kind. With many
// dimensions the times that maximise the likelihood lie near the tree's
// own, away from the boundaries (t = 0, merged branch points).
func brownian(t testing.TB, newick string, seed uint64, d, kind int) *bp.Model {
	t.Helper()
	tr, err := pydt.ParseNewick(newick, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 78))
	x := make([]float64, tr.Cap()*d)
	for _, v := range tr.PreOrder(nil) {
		sd := math.Sqrt(tr.BranchLength(v))
		for k := range d {
			base := 0.0
			if p := tr.Parent(v); p != pydt.NoNode {
				base = x[int(p)*d+k]
			}
			x[int(v)*d+k] = base + sd*rng.NormFloat64()
		}
	}
	m := bp.New(tr, d)
	for i := range tr.NumLeaves() {
		for k := range d {
			v := x[i*d+k]
			switch kind {
			case noisy:
				err = m.SetEvidence(pydt.NodeID(i), k, v+0.1*rng.NormFloat64(), 100)
			case missing:
				if rng.IntN(6) == 0 {
					v = math.NaN()
				}
				err = m.Observe(pydt.NodeID(i), k, v)
			default:
				err = m.Observe(pydt.NodeID(i), k, v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

func learnAll() Options {
	return Options{
		CPrior: &Gamma{1, 1}, Variance: 1, PrecPrior: &Gamma{1, 1},
		Alpha: 0.5, Beta: 0.2, LearnAlpha: true, LearnBeta: true,
		AlphaPrior: &Gamma{2, 0.5}, BetaPrior: &BetaDist{1, 1},
	}
}

func fixedAll() Options {
	return Options{C: 1.3, Variance: 0.8, Alpha: 0.7, Beta: 0.3}
}

func TestGoldenMax(t *testing.T) {
	cases := []struct {
		name   string
		f      func(float64) float64
		lo, hi float64
		want   float64
	}{
		{"quadratic", func(x float64) float64 { return -(x - 0.3) * (x - 0.3) }, -2, 5, 0.3},
		{"left end", func(x float64) float64 { return -x }, 1, 4, 1},
		{"right end", func(x float64) float64 { return x }, 1, 4, 4},
		{"log-concave", func(x float64) float64 { return 3*math.Log(x) - 2*x }, 0, 10, 1.5},
		{"-Inf outside", func(x float64) float64 {
			if x < 1 {
				return math.Inf(-1)
			}
			return -(x - 2) * (x - 2)
		}, 0, 3, 2},
		{"NaN outside", func(x float64) float64 {
			if x > 2.5 {
				return math.NaN()
			}
			return math.Sin(x)
		}, 0, 3, math.Pi / 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, fx, err := GoldenMax(c.f, c.lo, c.hi, 1e-9)
			if err != nil {
				t.Fatal(err)
			}
			if !(math.Abs(x-c.want) <= 1e-6) || fx != c.f(x) {
				t.Errorf("GoldenMax = %v (f %v), want %v", x, fx, c.want)
			}
		})
	}
	for _, bad := range [][3]float64{{1, 0, 1e-3}, {0, math.Inf(1), 1e-3}, {0, 1, 0}, {math.NaN(), 1, 1e-3}} {
		if _, _, err := GoldenMax(math.Sin, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("GoldenMax(%v) gave no error", bad)
		}
	}
}

// TestGamma checks E[log x] and KL against quadrature of the densities.
func TestGamma(t *testing.T) {
	for _, g := range []Gamma{{1, 1}, {3.5, 0.7}, {40, 12}} {
		lo, hi := 1e-12, g.Mean()+40*math.Sqrt(g.Shape)/g.Rate
		integ := func(f func(float64) float64) float64 {
			// Substitute x = e^y to resolve the mass near 0.
			return quad.Fixed(func(y float64) float64 { x := math.Exp(y); return f(x) * x },
				math.Log(lo), math.Log(hi), 2000, nil, 0)
		}
		p := func(x float64) float64 { return math.Exp(g.LogProb(x)) }
		if got, want := g.MeanLog(), integ(func(x float64) float64 { return p(x) * math.Log(x) }); !(math.Abs(got-want) <= 1e-7) {
			t.Errorf("%v: MeanLog %v, quadrature %v", g, got, want)
		}
		q := Gamma{2, 0.5}
		want := integ(func(x float64) float64 { return p(x) * (g.LogProb(x) - q.LogProb(x)) })
		if got := g.KL(q); !(math.Abs(got-want) <= 1e-7*(1+math.Abs(want))) {
			t.Errorf("KL(%v || %v) = %v, quadrature %v", g, q, got, want)
		}
	}
}

// estepped returns an EM whose E-step has been done.
func estepped(t testing.TB, m *bp.Model, opt Options) *EM {
	t.Helper()
	e, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.estep(); err != nil {
		t.Fatal(err)
	}
	return e
}

// checkGradient checks e's analytic gradient of the M-step objective in
// the free coordinates u (gradU) at the current times against central
// finite differences of timeTerms.
func checkGradient(t *testing.T, e *EM) {
	t.Helper()
	k := len(e.internal)
	u := make([]float64, k)
	e.uFromS(u, e.currentS(nil))
	s, gs, got := make([]float64, k), make([]float64, k), make([]float64, k)
	f := func(u []float64) float64 {
		ss := make([]float64, k)
		e.sFromU(ss, u)
		return e.timeTerms(ss)
	}
	e.sFromU(s, u)
	e.gradU(got, u, s, gs)
	want := fd.Gradient(nil, f, u, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= 1e-5*(1+math.Abs(want[i]))) {
			t.Errorf("dL/du[%d] = %v, finite differences %v", i, got[i], want[i])
		}
	}
}

// TestGradient checks the analytic gradient of the M-step objective in the
// free coordinates u against central finite differences.
func TestGradient(t *testing.T) {
	for _, c := range []struct {
		n, d, kind int
		seed       uint64
	}{{2, 1, exact, 1}, {5, 2, exact, 2}, {9, 3, noisy, 3}, {12, 2, missing, 4}, {20, 1, exact, 5}} {
		t.Run(fmt.Sprintf("N%d_D%d_kind%d", c.n, c.d, c.kind), func(t *testing.T) {
			e := estepped(t, fixture(t, c.seed, c.n, c.d, 1, 0.2, c.kind), learnAll())
			checkGradient(t, e)
		})
	}
}

// independentBound returns L right after an E-step from bp's LogLik and
// pydt's LogPrior, without the E-step statistics: with q(x) the exact
// posterior at σ̄² = 1/E[τ],
//
//	L = LogLik(σ̄²) + |S| D/2 (E log τ - log E τ)
//	    + LogPriorS(s; α, β, c̄) + |I| (E log c - log c̄) - KL(q(c)) - KL(q(τ)) + log p(α) + log p(β)
//	    + Σ_b log(s_b - s_parent(b)).
func independentBound(t *testing.T, e *EM) float64 {
	t.Helper()
	et, elt := e.meanPrec()
	ec, elc := e.meanC()
	tr := e.tr
	m2 := evidenceModel(t, e, tr, 1/et)
	h, _ := pydt.NewHarmonic(e.alpha, e.beta)
	edges := float64(len(tr.PreOrder(nil)))
	l := m2.LogLik() + edges*float64(e.d)/2*(elt-math.Log(et))
	l += pydt.LogPriorS(tr, e.alpha, e.beta, pydt.DivInv{C: ec}, h)
	l += float64(tr.NumInternal()) * (elc - math.Log(ec))
	if e.opt.CPrior != nil {
		l -= e.qc.KL(*e.opt.CPrior)
	}
	if e.opt.PrecPrior != nil {
		l -= e.qt.KL(*e.opt.PrecPrior)
	}
	return l + e.abPrior(e.alpha, e.beta) + logGapJacobian(tr)
}

// logGapJacobian is Σ over branch points b of log(s_b - s_parent(b)) (the
// origin's s = 0 for the root), read from the tree's times: the log
// Jacobian that turns the density of the times in s into their density in
// the log gaps u_b, the coordinates whose density EM's bound is on.
func logGapJacobian(tr *pydt.Tree) float64 {
	l := 0.0
	for _, v := range tr.PreOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		l += math.Log(tr.Time(v).S() - tr.ParentTime(v).S())
	}
	return l
}

// TestBoundAfterEStep checks the E-step statistics (entropy, expected edge
// terms, evidence terms) through L, against an independent form of L.
func TestBoundAfterEStep(t *testing.T) {
	for _, kind := range []int{exact, noisy, missing} {
		for _, opt := range []Options{learnAll(), fixedAll()} {
			for seed := uint64(1); seed <= 4; seed++ {
				m := fixture(t, seed, 3+int(seed)*3, 2, 1, 0.2, kind)
				e := estepped(t, m, opt)
				got, want := e.objective(), independentBound(t, e)
				if !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
					t.Errorf("kind %d seed %d learned %v: L = %v, independent %v", kind, seed, opt.CPrior != nil, got, want)
				}
				// And after a few iterations (other times, α, β, q's).
				for range 3 {
					if _, err := e.Step(); err != nil {
						t.Fatal(err)
					}
				}
				if err := e.estep(); err != nil {
					t.Fatal(err)
				}
				got, want = e.objective(), independentBound(t, e)
				if !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
					t.Errorf("kind %d seed %d after steps: L = %v, independent %v", kind, seed, got, want)
				}
			}
		}
	}
}

// TestBoundMonotone runs EM on random trees and checks that no sub-step
// (E-step, q(τ), times, q(c), α and β) lowers the bound.
func TestBoundMonotone(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		n := 2 + int(seed)%7
		d := 1 + int(seed)%3
		kind := int(seed) % 3
		opt := learnAll()
		if seed%4 == 0 {
			opt.AlphaPrior, opt.BetaPrior = nil, nil
		}
		m := fixture(t, seed, n, d, 1, 0.2, kind)
		e, err := New(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkStepsMonotone(t, e, 40, fmt.Sprintf("seed %d (N %d D %d kind %d)", seed, n, d, kind))
		if err := e.tr.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkStepsMonotone runs iters EM iterations of e and fails the test at
// the first sub-step whose L is NaN or below the one before (1e-9
// relative slack for rounding).
func checkStepsMonotone(t *testing.T, e *EM, iters int, label string) {
	t.Helper()
	prev := math.Inf(-1)
	for it := range iters {
		if _, err := e.Step(); err != nil {
			t.Fatal(err)
		}
		for j, l := range e.steps {
			if math.IsNaN(l) || l < prev-1e-9*(1+math.Abs(prev)) {
				t.Fatalf("%s iteration %d step %d: L fell from %v to %v", label, it, j, prev, l)
			}
			prev = l
		}
	}
}

// evidenceModel returns a belief-propagation model of tr (e's tree or a
// clone of it) with e's leaf evidence, at variance s2: the tests'
// independent evaluation of what EM computes from its own statistics.
func evidenceModel(t *testing.T, e *EM, tr *pydt.Tree, s2 float64) *bp.Model {
	t.Helper()
	m := bp.New(tr, e.d)
	for i := range tr.NumLeaves() {
		for k := range e.d {
			mu, prec := e.m.Evidence(pydt.NodeID(i), k)
			if err := m.SetEvidence(pydt.NodeID(i), k, mu, prec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.SetVariance(s2); err != nil {
		t.Fatal(err)
	}
	return m
}

// directMax maximises G(u) = bp LogLik at variance s2 + logGapJacobian + pydt.LogPriorS(s(u);
// α, β, c) over the free time coordinates by Nelder-Mead, from the times in
// the tree, and returns the maximising s coordinates (pre-order) and G.
func directMax(t *testing.T, e *EM, c, s2, alpha, beta float64, start []float64) ([]float64, float64) {
	t.Helper()
	tr := e.tr.Clone()
	m := evidenceModel(t, e, tr, s2)
	h, _ := pydt.NewHarmonic(alpha, beta)
	k := len(e.internal)
	s := make([]float64, k)
	g := func(u []float64) float64 {
		e.sFromU(s, u)
		for i, v := range e.internal {
			tr.SetTime(v, pydt.TimeFromS(s[i]))
		}
		if err := m.Recompute(); err != nil {
			return math.Inf(1)
		}
		return -(m.LogLik() + pydt.LogPriorS(tr, alpha, beta, pydt.DivInv{C: c}, h) + logGapJacobian(tr))
	}
	u0 := make([]float64, k)
	e.uFromS(u0, start)
	res, err := optimize.Minimize(optimize.Problem{Func: g}, u0, &optimize.Settings{
		Converger:       &optimize.FunctionConverge{Absolute: 1e-13, Relative: 1e-13, Iterations: 200},
		MajorIterations: 200000,
	}, &optimize.NelderMead{})
	if err != nil {
		t.Fatalf("Nelder-Mead: %v", err)
	}
	// Polish: restart once from the result.
	res, err = optimize.Minimize(optimize.Problem{Func: g}, res.X, &optimize.Settings{
		Converger:       &optimize.FunctionConverge{Absolute: 1e-13, Relative: 1e-13, Iterations: 200},
		MajorIterations: 200000,
	}, &optimize.NelderMead{})
	if err != nil {
		t.Fatalf("Nelder-Mead: %v", err)
	}
	out := make([]float64, k)
	e.sFromU(out, res.X)
	return out, -res.F
}

// TestFixedPoint checks that EM's times maximise the marginal likelihood
// p(Y, s | T) (fixed hyperparameters) or, with learned ones, bp's LogLik at
// σ² = 1/E[τ] plus the log prior (in s) at c = E[c] (the objective that L is at
// fixed q(c), q(τ), α, β), found independently by Nelder-Mead on LogLik and
// LogPrior from the tree's initial times.
func TestFixedPoint(t *testing.T) {
	const (
		tree5 = "((1:0.3,2:0.3):0.4,(3:0.2,(4:0.1,5:0.1):0.1):0.5):0.3;"
		tree4 = "(1:0.6,(2:0.3,(3:0.1,4:0.1):0.2):0.3):0.4;"
		tree3 = "((1:0.2,2:0.2):0.4,3:0.6):0.4;"
	)
	for _, c := range []struct {
		newick  string
		seed    uint64
		d, kind int
		learned bool
	}{{tree3, 1, 8, exact, false}, {tree4, 2, 10, exact, false}, {tree5, 9, 12, noisy, false},
		{tree5, 4, 12, missing, false}, {tree3, 9, 10, exact, true}, {tree4, 6, 12, noisy, true},
		{tree5, 9, 12, exact, true}} {
		t.Run(fmt.Sprintf("%s_seed%d_learned%v", c.newick, c.seed, c.learned), func(t *testing.T) {
			m := brownian(t, c.newick, c.seed, c.d, c.kind)
			opt := fixedAll()
			if c.learned {
				opt = learnAll()
			}
			opt.MaxIter, opt.Tol = 5000, 1e-14
			e, err := New(m, opt)
			if err != nil {
				t.Fatal(err)
			}
			start := e.currentS(nil)
			if _, err := e.Run(); err != nil {
				t.Fatal(err)
			}
			got := e.currentS(nil)
			cc, s2 := e.MeanC(), e.MeanVariance()
			want, gmax := directMax(t, e, cc, s2, e.alpha, e.beta, start)
			// The cases are chosen so that the maximum is interior: every
			// gap in s at least 1e-2. (At a boundary, a root at t = 0 or two
			// branch points merging, EM converges, but sublinearly.)
			for i := range want {
				sp := 0.0
				if e.par[i] >= 0 {
					sp = want[e.par[i]]
				}
				if want[i]-sp < 1e-2 {
					t.Fatalf("test case has its maximum at a boundary: s = %v", want)
				}
			}
			for i := range got {
				if !(math.Abs(got[i]-want[i]) <= 1e-5*(1+want[i])) {
					t.Errorf("s[%d]: EM %v, direct maximisation %v", i, got[i], want[i])
				}
			}
			// The bound is tight at fixed hyperparameters: L = max G.
			if !c.learned {
				if err := e.estep(); err != nil {
					t.Fatal(err)
				}
				if l := e.objective(); !(math.Abs(l-gmax) <= 1e-7*(1+math.Abs(gmax))) {
					t.Errorf("L at the fixed point %v, direct maximum %v", l, gmax)
				}
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	m := fixture(t, 1, 4, 1, 1, 0, exact)
	bad := []Options{
		{C: 0, Variance: 1},
		{C: 1, Variance: -1},
		{C: 1, Variance: 1, Alpha: -1, Beta: 0},
		{C: 1, Variance: 1, CPrior: &Gamma{0, 1}},
		{C: 1, Variance: 1, PrecPrior: &Gamma{1, math.Inf(1)}},
		{C: 1, Variance: 1, Beta: 1},
	}
	for i, o := range bad {
		if _, err := New(m, o); err == nil {
			t.Errorf("options %d (%+v): no error", i, o)
		}
	}
}

// TestRunUntil checks RunUntil's stops and log against Run and the trace:
// without a stop it runs exactly as Run (same iterations and bound), each
// sees every iteration's bound as the trace records it, and a stop that is
// always true ends the run after one iteration.
func TestRunUntil(t *testing.T) {
	tests := []struct {
		name     string
		stop     func() bool
		wantIter int // 0: as many as Run
	}{
		{"no stop", nil, 0},
		{"never", func() bool { return false }, 0},
		{"always", func() bool { return true }, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := learnAll()
			opt.MaxIter = 60
			ref, err := New(fixture(t, 5, 6, 2, 1, 0.2, 0), opt)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ref.Run(); err != nil {
				t.Fatal(err)
			}
			e, err := New(fixture(t, 5, 6, 2, 1, 0.2, 0), opt)
			if err != nil {
				t.Fatal(err)
			}
			var seen []float64
			_, err = e.RunUntil(tc.stop, func(iter int, l float64) {
				if iter != len(seen)+1 {
					t.Errorf("iteration %d reported after %d", iter, len(seen))
				}
				seen = append(seen, l)
			})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.wantIter
			if want == 0 {
				want = ref.Iterations()
				if want < 2 {
					t.Fatalf("Run converged in %d iterations: the test needs more", want)
				}
				if e.Bound() != ref.Bound() {
					t.Errorf("bound %v, Run's %v", e.Bound(), ref.Bound())
				}
			}
			if e.Iterations() != want || !slices.Equal(seen, e.Trace()) {
				t.Errorf("%d iterations (want %d), reported %v, trace %v", e.Iterations(), want, seen, e.Trace())
			}
		})
	}
}

// TestNewPullsBackStartNearOne checks that New moves branch points that
// start within about 1e-13 of t = 1 back to where the bound is finite: from
// a tree whose inner branch points sit at s = 3000 and 3200 (an MCMC chain's
// last tree can be there), the first Step used to give a bound of -Inf or
// NaN (e^s overflows). The times after New must keep their order and lie
// in (sStartMax, sStartMax + H_depth]; a tree with every s <= sStartMax
// keeps its times exactly, also one with branch points at s = 343 and 350,
// where EM's own fit puts duplicate rows (a refit must start there).
func TestNewPullsBackStartNearOne(t *testing.T) {
	const tree5 = "((1:0.3,2:0.3):0.4,(3:0.2,(4:0.1,5:0.1):0.1):0.5):0.3;"
	for _, learned := range []bool{false, true} {
		m := brownian(t, tree5, 3, 4, noisy)
		tr := m.Tree()
		inner := tr.PreOrder(nil)
		var deep []pydt.NodeID
		for _, v := range inner {
			if !tr.IsLeaf(v) && tr.Parent(v) != pydt.NoNode {
				deep = append(deep, v)
			}
		}
		// Preorder: parents first, so each gets a later time than its parent.
		for i, v := range deep {
			tr.SetTime(v, pydt.TimeFromS(3000+100*float64(i)))
		}
		if err := m.Recompute(); err != nil {
			t.Fatal(err)
		}
		opt := fixedAll()
		if learned {
			opt = learnAll()
		}
		e, err := New(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range deep {
			s, sp := tr.Time(v).S(), tr.Time(tr.Parent(v)).S()
			if !(s > sStartMax && s <= sStartMax+1+math.Log(float64(len(deep)))+1 && s > sp) {
				t.Errorf("learned %v: node %d at s = %v after New (parent %v)", learned, v, s, sp)
			}
		}
		for range 3 {
			b, err := e.Step()
			if err != nil || math.IsNaN(b) || math.IsInf(b, 0) {
				t.Fatalf("learned %v: Step = %v, %v", learned, b, err)
			}
		}
	}
	for _, deepS := range []float64{0, 343} {
		m := brownian(t, tree5, 3, 4, noisy)
		if deepS > 0 {
			i := 0
			for _, v := range m.Tree().PreOrder(nil) {
				if !m.Tree().IsLeaf(v) && m.Tree().Parent(v) != pydt.NoNode {
					m.Tree().SetTime(v, pydt.TimeFromS(deepS+7*float64(i)))
					i++
				}
			}
			if err := m.Recompute(); err != nil {
				t.Fatal(err)
			}
		}
		before := m.Tree().Clone()
		if _, err := New(m, fixedAll()); err != nil {
			t.Fatal(err)
		}
		for _, v := range m.Tree().PreOrder(nil) {
			if m.Tree().Time(v) != before.Time(v) {
				t.Errorf("deep s %v: node %d: time %v changed to %v by New", deepS, v, before.Time(v), m.Tree().Time(v))
			}
		}
	}
}
