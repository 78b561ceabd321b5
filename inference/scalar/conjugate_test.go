package scalar

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// divergenceData draws the divergence times of |I| = len(js) internal nodes
// given c from the generative process: node i with coefficient J_i diverges
// at t_i with density c J_i (1 − t_i)^(c J_i − 1), i.e. −log(1 − t_i) is
// Exponential with rate c J_i. It writes 1 − t_i to oneMinus (t itself can
// round to 1 for small c: NOTES.md, Numerics) and returns the statistic
// S = Σ J_i (−log(1 − t_i)) computed from them.
func divergenceData(rng *rand.Rand, c float64, js, oneMinus []float64) float64 {
	s := 0.0
	for i, j := range js {
		oneMinus[i] = math.Exp(-rng.ExpFloat64() / (c * j))
		s += j * -math.Log(oneMinus[i])
	}
	return s
}

// logLikC is the log density of the times given c (from 1 − t), summed node
// by node from the per-node density c J (1−t)^(cJ−1) of the paper's Equation
// (tprior).
func logLikC(c float64, js, oneMinus []float64) float64 {
	l := 0.0
	for i, j := range js {
		l += math.Log(c*j) + (c*j-1)*math.Log(oneMinus[i])
	}
	return l
}

// posteriorMoments integrates prior × likelihood by quadrature on (0, hi) and
// returns the posterior mean and variance.
func posteriorMoments(prior Gamma, logLik func(float64) float64, hi float64) (mean, variance float64) {
	p := distuv.Gamma{Alpha: prior.Shape, Beta: prior.Rate}
	// Scale by the likelihood at the prior mean to keep exp in range.
	ref := logLik(prior.Mean())
	w := func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return math.Exp(p.LogProb(x) + logLik(x) - ref)
	}
	const n = 4000
	z := quad.Fixed(w, 0, hi, n, nil, 0)
	m1 := quad.Fixed(func(x float64) float64 { return x * w(x) }, 0, hi, n, nil, 0) / z
	m2 := quad.Fixed(func(x float64) float64 { return x * x * w(x) }, 0, hi, n, nil, 0) / z
	return m1, m2 - m1*m1
}

// TestPosteriorCQuadrature compares PosteriorC with the posterior computed by
// quadrature from the node-by-node likelihood of synthetic times, and the
// mean of SampleC draws with both.
func TestPosteriorCQuadrature(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	js := []float64{0.4, 1.1, 2.0, 3.3, 0.8, 1.7, 5.2}
	ts := make([]float64, len(js))
	for _, cTrue := range []float64{0.3, 1, 4} {
		prior := Gamma{Shape: 2, Rate: 1.5}
		s := divergenceData(rng, cTrue, js, ts)
		post, err := PosteriorC(prior, len(js), s)
		if err != nil {
			t.Fatal(err)
		}
		mean, variance := posteriorMoments(prior, func(c float64) float64 { return logLikC(c, js, ts) }, 60)
		if !(math.Abs(post.Mean()-mean) <= 1e-8*mean) || !(math.Abs(post.Variance()-variance) <= 1e-7*variance) {
			t.Errorf("c = %v: posterior mean, variance %.10g, %.10g; quadrature %.10g, %.10g",
				cTrue, post.Mean(), post.Variance(), mean, variance)
		}
		const n = 100000
		draws := make([]float64, n)
		for k := range draws {
			if draws[k], err = SampleC(rng, prior, len(js), s); err != nil {
				t.Fatal(err)
			}
		}
		checkMoments(t, "SampleC", draws, 50, mean, variance, mean, distuv.Gamma{Alpha: post.Shape, Beta: post.Rate}.CDF(mean))
	}
}

// gewekeC runs the successive-conditional simulator of Geweke (2004) for c:
// alternately draw the times given c from the generative process and c given
// the times with update, and returns the chain of c and of c·S, where S is
// the statistic of the times from which c was drawn.
func gewekeC(rng *rand.Rand, prior Gamma, js []float64, n int, update func(Gamma, int, float64) (Gamma, error)) (cs, cS []float64, err error) {
	ts := make([]float64, len(js))
	c := prior.Rand(rng)
	cs, cS = make([]float64, n), make([]float64, n)
	for k := range n {
		s := divergenceData(rng, c, js, ts)
		post, err := update(prior, len(js), s)
		if err != nil {
			return nil, nil, err
		}
		c = post.Rand(rng)
		cs[k], cS[k] = c, c*s
	}
	return cs, cS, nil
}

// TestGewekeC checks that "draw times given c, draw c given times" keeps the
// prior as the marginal of c, and the joint moment E[c·S] = |I| (each
// c J_i (−log(1−t_i)) is Exponential(1) given c). A deliberately wrong update
// must fail the same test, so the test has power.
func TestGewekeC(t *testing.T) {
	prior := Gamma{Shape: 3, Rate: 2}
	js := []float64{0.5, 1.2, 2.0, 3.1, 0.8}
	p := distuv.Gamma{Alpha: prior.Shape, Beta: prior.Rate}
	q := p.Quantile(0.3)
	const n = 200000

	cs, cS, err := gewekeC(rand.New(rand.NewPCG(31, 32)), prior, js, n, PosteriorC)
	if err != nil {
		t.Fatal(err)
	}
	checkMoments(t, "Geweke c", cs, 50, prior.Mean(), prior.Variance(), q, 0.3)
	if m, se := batchMeans(cS, 50); !(math.Abs(m-float64(len(js))) <= 4*se) {
		t.Errorf("Geweke E[c·S] = %.5g ± %.2g, want %d", m, se, len(js))
	}

	// The printed sign (rate b_c + Σ J log(1−t), clamped to stay valid) and a
	// shape that forgets |I| must both be detected.
	wrong := map[string]func(Gamma, int, float64) (Gamma, error){
		"printed sign": func(g Gamma, n int, s float64) (Gamma, error) {
			return Gamma{Shape: g.Shape + float64(n), Rate: math.Max(g.Rate-s, 1e-3)}, nil
		},
		"shape without |I|": func(g Gamma, n int, s float64) (Gamma, error) {
			return Gamma{Shape: g.Shape + float64(n) - 1, Rate: g.Rate + s}, nil
		},
	}
	for name, update := range wrong {
		cs, _, _ := gewekeC(rand.New(rand.NewPCG(33, 34)), prior, js, 20000, update)
		m, se := batchMeans(cs, 20)
		if math.Abs(m-prior.Mean()) < 4*se {
			t.Errorf("%s: Geweke mean %.4g ± %.2g not distinguished from the prior mean %.4g", name, m, se, prior.Mean())
		}
		t.Logf("%s: Geweke mean %.4g ± %.2g against the prior mean %.4g", name, m, se, prior.Mean())
	}
}

// precisionData draws the increments of a diffusion with precision tau over
// edges of the given lengths in d dimensions, x_v − x_p ~ N(0, Δt/tau), and
// returns them with ss = Σ Δx² / (2 Δt) and the number of terms.
func precisionData(rng *rand.Rand, tau float64, lengths []float64, d int, dx []float64) (ss float64, n int) {
	for e, dt := range lengths {
		for k := range d {
			v := rng.NormFloat64() * math.Sqrt(dt/tau)
			dx[e*d+k] = v
			ss += v * v / (2 * dt)
		}
	}
	return ss, len(lengths) * d
}

// TestPosteriorPrecisionQuadrature compares PosteriorPrecision with the
// posterior computed by quadrature from gonum's normal log density of the
// increments.
func TestPosteriorPrecisionQuadrature(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	lengths := []float64{0.1, 0.35, 0.05, 0.5, 0.2, 0.8}
	const d = 3
	dx := make([]float64, len(lengths)*d)
	for _, tauTrue := range []float64{0.5, 2, 10} {
		prior := Gamma{Shape: 2, Rate: 1}
		ss, n := precisionData(rng, tauTrue, lengths, d, dx)
		post, err := PosteriorPrecision(prior, n, ss)
		if err != nil {
			t.Fatal(err)
		}
		logLik := func(tau float64) float64 {
			l := 0.0
			for e, dt := range lengths {
				nd := distuv.Normal{Mu: 0, Sigma: math.Sqrt(dt / tau)}
				for k := range d {
					l += nd.LogProb(dx[e*d+k])
				}
			}
			return l
		}
		mean, variance := posteriorMoments(prior, logLik, 200)
		if !(math.Abs(post.Mean()-mean) <= 1e-8*mean) || !(math.Abs(post.Variance()-variance) <= 1e-7*variance) {
			t.Errorf("tau = %v: posterior mean, variance %.10g, %.10g; quadrature %.10g, %.10g",
				tauTrue, post.Mean(), post.Variance(), mean, variance)
		}
	}
}

// TestGewekePrecision checks that "draw increments given tau, draw tau given
// increments" keeps the prior as the marginal of tau, and that
// E[tau · ss] = n/2 (each tau Δx²/Δt is χ²₁ given tau).
func TestGewekePrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	prior := Gamma{Shape: 2.5, Rate: 1.5}
	lengths := []float64{0.1, 0.35, 0.05, 0.5}
	const d, n = 2, 200000
	dx := make([]float64, len(lengths)*d)
	tau := prior.Rand(rng)
	taus, tauSS := make([]float64, n), make([]float64, n)
	terms := 0
	for k := range n {
		ss, m := precisionData(rng, tau, lengths, d, dx)
		var err error
		if tau, err = SamplePrecision(rng, prior, m, ss); err != nil {
			t.Fatal(err)
		}
		taus[k], tauSS[k], terms = tau, tau*ss, m
	}
	q := distuv.Gamma{Alpha: prior.Shape, Beta: prior.Rate}.Quantile(0.8)
	checkMoments(t, "Geweke precision", taus, 50, prior.Mean(), prior.Variance(), q, 0.8)
	if m, se := batchMeans(tauSS, 50); !(math.Abs(m-float64(terms)/2) <= 4*se) {
		t.Errorf("Geweke E[tau·ss] = %.5g ± %.2g, want %v", m, se, float64(terms)/2)
	}
}

// TestConjugateBadInput checks the errors for invalid priors and statistics.
func TestConjugateBadInput(t *testing.T) {
	good := Gamma{Shape: 1, Rate: 1}
	cases := []struct {
		name  string
		prior Gamma
		n     int
		s     float64
	}{
		{"zero shape", Gamma{Shape: 0, Rate: 1}, 1, 1},
		{"negative rate", Gamma{Shape: 1, Rate: -1}, 1, 1},
		{"NaN shape", Gamma{Shape: math.NaN(), Rate: 1}, 1, 1},
		{"infinite rate", Gamma{Shape: 1, Rate: math.Inf(1)}, 1, 1},
		{"negative count", good, -1, 1},
		{"negative statistic", good, 1, -0.5},
		{"NaN statistic", good, 1, math.NaN()},
		{"infinite statistic", good, 1, math.Inf(1)},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range cases {
		if _, err := PosteriorC(tc.prior, tc.n, tc.s); err == nil {
			t.Errorf("PosteriorC %s: no error", tc.name)
		}
		if _, err := SampleC(rng, tc.prior, tc.n, tc.s); err == nil {
			t.Errorf("SampleC %s: no error", tc.name)
		}
		if _, err := PosteriorPrecision(tc.prior, tc.n, tc.s); err == nil {
			t.Errorf("PosteriorPrecision %s: no error", tc.name)
		}
		if _, err := SamplePrecision(rng, tc.prior, tc.n, tc.s); err == nil {
			t.Errorf("SamplePrecision %s: no error", tc.name)
		}
	}
	// No data leaves the prior.
	if g, err := PosteriorC(good, 0, 0); err != nil || g != good {
		t.Errorf("PosteriorC with no data = %v, %v; want the prior", g, err)
	}
	if g, err := PosteriorPrecision(good, 0, 0); err != nil || g != good {
		t.Errorf("PosteriorPrecision with no data = %v, %v; want the prior", g, err)
	}
}
