package em

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// noiseFixture draws a tree from the PYDT (c = 1) with diffusion variance
// s2[d] in dimension d, leaf locations z along it, and observations
// y = z + N(0, 1/prec[d]) (about a sixth missing with missingValues). It
// returns the bp.Model of the tree (no evidence set: the fit enters it)
// and the LeafNoise of y with unit precisions 1.
func noiseFixture(t testing.TB, seed uint64, n int, s2, prec []float64, missingValues bool) (*bp.Model, *LeafNoise) {
	t.Helper()
	d := len(s2)
	rng := rand.New(rand.NewPCG(seed, 93))
	tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variances: s2, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	ln := &LeafNoise{Mean: make([]float64, n*d), Unit: make([]float64, n*d)}
	for k := range n * d {
		if missingValues && rng.IntN(6) == 0 && k != 0 {
			continue
		}
		ln.Mean[k] = x[k] + rng.NormFloat64()/math.Sqrt(prec[k%d])
		ln.Unit[k] = 1
	}
	return bp.New(tr, d), ln
}

// withNoise returns opt with a latent noise of ln: one shared precision
// (shared) or one per column, priors Gamma(1, 1), starts 1.
func withNoise(opt Options, ln *LeafNoise, d int, shared bool) Options {
	g := d
	if shared {
		g = 1
	}
	c := *ln
	c.Priors, c.Starts = make([]Gamma, g), make([]float64, g)
	for j := range g {
		c.Priors[j], c.Starts[j] = Gamma{1, 1}, 1
	}
	opt.Noise = &c
	return opt
}

// leafCov returns C, C_ij = t of the most recent common ancestor of leaves
// i and j (C_ii = 1): the covariance of Brownian motion from the origin
// at unit variance.
func leafCov(tr *pydt.Tree) *mat.SymDense {
	n := tr.NumLeaves()
	anc := make([]map[pydt.NodeID]bool, n)
	for i := range n {
		anc[i] = map[pydt.NodeID]bool{}
		for v := pydt.NodeID(i); v != pydt.NoNode; v = tr.Parent(v) {
			anc[i][v] = true
		}
	}
	c := mat.NewSymDense(n, nil)
	for i := range n {
		c.SetSym(i, i, 1)
		for j := range i {
			v := pydt.NodeID(j)
			for !anc[i][v] {
				v = tr.Parent(v)
			}
			c.SetSym(i, j, tr.Time(v).T())
		}
	}
	return c
}

// denseNoisy computes, independently of belief propagation, for each
// column d the marginal log likelihood of its observed entries,
// log N(y_d; 0, σ²_d C + I/θ_d) (C over the observed rows), and the
// posterior expected squared residual Σ_i E[(y_id − z_id)² | y_d] =
// Σ_i (y_id − E z_id)² + Var z_id, with z_d ~ N(0, σ²_d C): dense Gaussian
// algebra with gonum/mat.
func denseNoisy(t *testing.T, tr *pydt.Tree, ln *LeafNoise, s2, theta []float64) (ll float64, resid []float64) {
	t.Helper()
	n, d := tr.NumLeaves(), len(s2)
	full := leafCov(tr)
	resid = make([]float64, d)
	for k := range d {
		var rows []int
		for i := range n {
			if ln.Unit[i*d+k] > 0 {
				rows = append(rows, i)
			}
		}
		m := len(rows)
		kz := mat.NewSymDense(m, nil) // prior covariance of z
		ky := mat.NewSymDense(m, nil) // of y
		y := mat.NewVecDense(m, nil)
		for a, i := range rows {
			y.SetVec(a, ln.Mean[i*d+k])
			for b := 0; b <= a; b++ {
				v := s2[k] * full.At(i, rows[b])
				kz.SetSym(a, b, v)
				if a == b {
					v += 1 / (theta[k] * ln.Unit[i*d+k])
				}
				ky.SetSym(a, b, v)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(ky) {
			t.Fatal("the covariance of y is not positive definite")
		}
		al := mat.NewVecDense(m, nil)
		if err := ch.SolveVecTo(al, y); err != nil {
			t.Fatal(err)
		}
		ll += -0.5*float64(m)*log2Pi - 0.5*ch.LogDet() - 0.5*mat.Dot(y, al)
		// E z = Kz Ky⁻¹ y, Cov z = Kz − Kz Ky⁻¹ Kz.
		var ez mat.VecDense
		ez.MulVec(kz, al)
		var kinv mat.Dense
		if err := ch.SolveTo(&kinv, kz); err != nil {
			t.Fatal(err)
		}
		var cz mat.Dense
		cz.Mul(kz, &kinv)
		for a := range m {
			r := y.AtVec(a) - ez.AtVec(a)
			resid[k] += r*r + kz.At(a, a) - cz.At(a, a)
		}
	}
	return ll, resid
}

// TestNoiseBoundDense checks L right after an E-step with a latent noise
// (shared and per column) and fixed c, σ², α, β against an independent
// form: the dense marginal likelihood of each column at the E-step's noise
// precisions E[θ_d], plus n_g/2 (E log θ_g − log E θ_g) − KL(q(θ_g) ‖
// p(θ_g)) per noise precision, pydt.LogPriorS and the log-gap Jacobian
// (the bound is tight in q(x) at given q(θ)).
func TestNoiseBoundDense(t *testing.T) {
	for _, shared := range []bool{true, false} {
		for _, missingValues := range []bool{false, true} {
			for seed := uint64(1); seed <= 3; seed++ {
				label := fmt.Sprintf("shared %v missing %v seed %d", shared, missingValues, seed)
				s2 := []float64{1, 0.3, 2}
				m, ln := noiseFixture(t, seed, 5+int(seed)*3, s2, []float64{4, 20, 1}, missingValues)
				opt := fixedAll()
				opt.Variances = []float64{0.7, 0.2, 3}
				opt = withNoise(opt, ln, 3, shared)
				opt.Noise.Starts[0] = 2.5
				e, err := New(m, opt)
				if err != nil {
					t.Fatal(err)
				}
				check := func(when string) {
					if err := e.estep(); err != nil {
						t.Fatal(err)
					}
					q, ok := e.QNoise()
					if !ok {
						t.Fatal("QNoise: no latent noise")
					}
					theta := make([]float64, 3)
					for k := range theta {
						theta[k] = q[opt.Noise.group(k, 3)].Mean()
					}
					ll, _ := denseNoisy(t, e.tr, ln, opt.Variances, theta)
					h, _ := pydt.NewHarmonic(opt.Alpha, opt.Beta)
					want := ll + pydt.LogPriorS(e.tr, opt.Alpha, opt.Beta, pydt.DivInv{C: opt.C}, h) + logGapJacobian(e.tr)
					// n_g, the observed entries of group g, from the data.
					count := make([]float64, len(q))
					for k, u := range ln.Unit {
						if u > 0 {
							count[opt.Noise.group(k, 3)]++
						}
					}
					for j, g := range q {
						want += count[j]/2*(g.MeanLog()-math.Log(g.Mean())) - g.KL(opt.Noise.Priors[j])
					}
					if got := e.objective(); !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
						t.Errorf("%s %s: L = %v, dense %v", label, when, got, want)
					}
				}
				check("at the start")
				for range 4 {
					if _, err := e.Step(); err != nil {
						t.Fatal(err)
					}
				}
				check("after 4 iterations")
			}
		}
	}
}

// TestNoisePosterior checks q(θ) against the dense answer: after one EM
// iteration from the start, q(θ_g) = Gamma(a + n_g/2, b + ½ Σ E[(y − z)²])
// with the expected squared residuals of the dense Gaussian posterior at
// the start's precisions and times; and at convergence the same holds at
// the fitted times and q's own E[θ_g] (a fixed point of the update).
func TestNoisePosterior(t *testing.T) {
	for _, shared := range []bool{true, false} {
		for _, missingValues := range []bool{false, true} {
			label := fmt.Sprintf("shared %v missing %v", shared, missingValues)
			m, ln := noiseFixture(t, 7, 60, []float64{1, 1}, []float64{10, 2}, missingValues)
			opt := withNoise(learnAll(), ln, 2, shared)
			opt.Variances, opt.PrecPriors = []float64{1, 1}, []Gamma{{1, 1}, {1, 1}}
			opt.Noise.Starts[0] = 3
			e, err := New(m, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := func(theta, s2 []float64) []Gamma {
				_, resid := denseNoisy(t, e.tr, ln, s2, theta)
				g := len(opt.Noise.Priors)
				q := make([]Gamma, g)
				for j := range q {
					q[j] = opt.Noise.Priors[j]
				}
				for k, r := range resid {
					j := opt.Noise.group(k, 2)
					q[j].Rate += r / 2
				}
				for k, u := range ln.Unit {
					if u > 0 {
						q[opt.Noise.group(k, 2)].Shape += 0.5
					}
				}
				return q
			}
			compare := func(when string, got, want []Gamma) {
				for j := range want {
					if math.Abs(got[j].Shape-want[j].Shape) > 1e-12*want[j].Shape || math.Abs(got[j].Rate-want[j].Rate) > 1e-8*want[j].Rate {
						t.Errorf("%s %s: q(θ_%d) = %+v, dense %+v", label, when, j+1, got[j], want[j])
					}
				}
			}
			theta0 := make([]float64, 2)
			for k := range theta0 {
				theta0[k] = opt.Noise.Starts[opt.Noise.group(k, 2)]
			}
			w := want(theta0, opt.Variances) // the start's times, before the step moves them
			if _, err := e.Step(); err != nil {
				t.Fatal(err)
			}
			q, _ := e.QNoise()
			compare("after one iteration", q, w)
			if _, err := e.Run(); err != nil {
				t.Fatal(err)
			}
			// One more E-step and q update at the converged state.
			s2 := e.MeanVariances()
			q, _ = e.QNoise()
			theta := make([]float64, 2)
			for k := range theta {
				theta[k] = q[opt.Noise.group(k, 2)].Mean()
			}
			if err := e.estep(); err != nil {
				t.Fatal(err)
			}
			e.updateNoise()
			q2, _ := e.QNoise()
			compare("one update at convergence", q2, want(theta, s2))
			for j := range q {
				// EM converges slowly in θ: a fixed point to 1e-3.
				if math.Abs(q[j].Rate-q2[j].Rate) > 1e-3*q2[j].Rate {
					t.Errorf("%s: q(θ_%d) = %+v at convergence moves to %+v in one update", label, j+1, q[j], q2[j])
				}
			}
		}
	}
}

// TestNoiseBoundMonotone checks that no sub-step of EM lowers the bound
// with the noise learnt (shared or per column), with one diffusion variance
// or one per dimension, every other hyperparameter learnt too.
func TestNoiseBoundMonotone(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		n := 4 + int(seed)%7
		d := 1 + int(seed)%3
		s2, prec := []float64{1, 0.2, 4}[:d], []float64{5, 50, 1}[:d]
		m, ln := noiseFixture(t, seed, n, s2, prec, seed%2 == 0)
		for _, shared := range []bool{true, false} {
			for _, perDim := range []bool{false, true} {
				opt := learnAll()
				if perDim {
					opt = learnPerDim(d)
				}
				tr := m.Tree().Clone()
				e, err := New(bp.New(tr, d), withNoise(opt, ln, d, shared))
				if err != nil {
					t.Fatal(err)
				}
				checkStepsMonotone(t, e, 40, fmt.Sprintf("seed %d (N %d D %d) shared %v perDim %v", seed, n, d, shared, perDim))
			}
		}
	}
}

// TestNoiseColumn checks the per-column noise on four clusters (centres
// (±1, ±1), sd 0.1, 20 rows each) in two columns beside a third column of
// pure noise N(0, 1), fitted on the tree of the four classes (a root with
// four flat clusters): the pure-noise column gets a noise precision near 1
// (its whole variance is noise), the cluster columns large ones (about
// 30: the within-cluster spread is shared between noise and diffusion on
// the leaf edges, which it cannot tell apart), with one diffusion variance
// or one per column.
func TestNoiseColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d := 80, 3
	nw := "("
	for c := range 4 {
		if c > 0 {
			nw += ","
		}
		nw += "("
		for i := range 20 {
			if i > 0 {
				nw += ","
			}
			nw += fmt.Sprintf("r%d:0.2", 20*c+i)
		}
		nw += "):0.5"
	}
	nw += "):0.3;"
	for _, perDim := range []bool{false, true} {
		tr, err := pydt.ParseNewick(nw, nil)
		if err != nil {
			t.Fatal(err)
		}
		ln := &LeafNoise{Mean: make([]float64, n*d), Unit: make([]float64, n*d)}
		for i := range n {
			leaf := pydt.NodeID(i)
			c := 0
			fmt.Sscanf(tr.Label(leaf), "r%d", &c)
			c /= 20
			centre := []float64{float64(2*(c%2) - 1), float64(2*(c/2) - 1)}
			for k := range d {
				v := rng.NormFloat64()
				if k < 2 {
					v = centre[k] + 0.1*v
				}
				ln.Mean[i*d+k], ln.Unit[i*d+k] = v, 1
			}
		}
		opt := learnAll()
		if perDim {
			opt = learnPerDim(d)
		}
		e, err := New(bp.New(tr, d), withNoise(opt, ln, d, false))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(); err != nil {
			t.Fatal(err)
		}
		th := e.MeanNoise()
		if !(th[2] > 0.6 && th[2] < 1.6) || !(th[0] > 15) || !(th[1] > 15) {
			t.Errorf("perDim %v: noise precisions %v: want the third near 1 and the others above 15", perDim, th)
		}
		t.Logf("perDim %v: noise precisions %v, variances %v", perDim, th, e.MeanVariances())
	}
}

// TestNoiseErrors checks that New refuses invalid latent noise options.
func TestNoiseErrors(t *testing.T) {
	m, ln := noiseFixture(t, 1, 5, []float64{1, 1}, []float64{1, 1}, false)
	for _, c := range []struct {
		name string
		edit func(o *Options)
	}{
		{"three priors", func(o *Options) { o.Noise.Priors = append(o.Noise.Priors, Gamma{1, 1}) }},
		{"bad prior", func(o *Options) { o.Noise.Priors[0] = Gamma{0, 1} }},
		{"zero start", func(o *Options) { o.Noise.Starts[0] = 0 }},
		{"short data", func(o *Options) { o.Noise.Mean = o.Noise.Mean[:3] }},
		{"negative unit", func(o *Options) { o.Noise.Unit[2] = -1 }},
		{"infinite mean", func(o *Options) { o.Noise.Mean[1] = math.Inf(1) }},
		{"with EP", func(o *Options) { o.EP = &EP{} }},
	} {
		o := withNoise(fixedAll(), ln, 2, false)
		nc := *o.Noise
		nc.Mean, nc.Unit = append([]float64(nil), ln.Mean...), append([]float64(nil), ln.Unit...)
		nc.Priors, nc.Starts = append([]Gamma(nil), nc.Priors...), append([]float64(nil), nc.Starts...)
		o.Noise = &nc
		c.edit(&o)
		if _, err := New(m, o); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestNoiseLaplace checks the Laplace correction with a latent noise: q(θ)
// is held like q(τ), so the collapsed objective is bp's LogLik with the
// leaf evidence at E[θ_g] plus the prior, whose Hessian by second
// differences (collapsedLaplace) the correction must match.
func TestNoiseLaplace(t *testing.T) {
	for _, shared := range []bool{true, false} {
		for seed := uint64(1); seed <= 2; seed++ {
			m, ln := noiseFixture(t, seed, 6+2*int(seed), []float64{1, 0.5}, []float64{20, 5}, seed == 2)
			opt := withNoise(learnAll(), ln, 2, shared)
			checkLaplaceAtFixedPoint(t, m, opt, true, fmt.Sprintf("shared %v seed %d", shared, seed))
		}
	}
}

// TestLeafNoiseSetEvidence checks the evidence LeafNoise.SetEvidence
// enters, shared and per column, missing entries none, and its refusal of
// a wrong count of precisions or a model of another size.
func TestLeafNoiseSetEvidence(t *testing.T) {
	m, ln := noiseFixture(t, 2, 6, []float64{1, 1}, []float64{4, 9}, true)
	for _, theta := range [][]float64{{2.5}, {2.5, 0.5}} {
		c := *ln
		c.Priors = make([]Gamma, len(theta))
		if err := c.SetEvidence(m, theta); err != nil {
			t.Fatal(err)
		}
		for k, u := range ln.Unit {
			mu, prec := m.Evidence(pydt.NodeID(k/2), k%2)
			want := u * theta[min(k%2, len(theta)-1)]
			if !(math.Abs(prec-want) <= 1e-12*want) || (u > 0 && mu != ln.Mean[k]) {
				t.Errorf("θ %v: entry %d: evidence (%v, %v), want (%v, %v)", theta, k, mu, prec, ln.Mean[k], want)
			}
		}
		if err := c.SetEvidence(m, append(theta, 1)); err == nil {
			t.Errorf("θ %v: no error for %d precisions", theta, len(theta)+1)
		}
		if err := c.SetEvidence(bp.New(m.Tree(), 3), theta); err == nil {
			t.Errorf("θ %v: no error for a model of 3 dimensions", theta)
		}
	}
}
