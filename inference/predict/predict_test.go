package predict

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// fixture draws a tree with n leaves and d dimensions from the prior and
// returns it with a bp.Model observing its leaves: exactly (noise nil) or
// with Normal noise of the given variances (the observed values drawn
// accordingly); entries listed in missing are left unobserved.
func fixture(t *testing.T, seed uint64, n, d int, p Params, noise []float64, missing [][2]int) *bp.Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	tr, x, err := sim.Draw(rng, n, sim.Params{Alpha: p.Alpha, Beta: p.Beta, Div: p.Div, Variance: p.Variance, Variances: p.Variances, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	lik := bp.New(tr, d)
	if err := lik.SetVariances(dimVariances(p, d)); err != nil {
		t.Fatal(err)
	}
	skip := map[[2]int]bool{}
	for _, m := range missing {
		skip[m] = true
	}
	for i := range n {
		for k := range d {
			if skip[[2]int{i, k}] {
				continue
			}
			v := x[i*d+k]
			if noise == nil {
				err = lik.Observe(pydt.NodeID(i), k, v)
			} else {
				err = lik.SetEvidence(pydt.NodeID(i), k, v+math.Sqrt(noise[k])*rng.NormFloat64(), 1/noise[k])
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return lik
}

// dimVariances returns the diffusion variance of each of d dimensions.
func dimVariances(p Params, d int) []float64 {
	if p.Variances != nil {
		return p.Variances
	}
	s2 := make([]float64, d)
	for k := range s2 {
		s2[k] = p.Variance
	}
	return s2
}

// monteCarlo estimates the predictive density at each query point by the
// generative process given the tree: draw every location jointly from its
// posterior given the data (bp.SampleLocations), walk a new point down the
// tree drawing its divergence time exactly (inverse cumulative hazard), put
// its divergence location on the Brownian bridge between the drawn
// locations of the edge's ends, and average the Gaussian density of the
// diffusion (plus noise) from there to t = 1. It returns the estimates and
// their standard errors.
func monteCarlo(lik *bp.Model, p Params, queries [][]float64, draws int, seed uint64) (est, se []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	tr := lik.Tree()
	d := lik.Dims()
	x := make([]float64, tr.Cap()*d)
	sum := make([]float64, len(queries))
	sum2 := make([]float64, len(queries))
	y := make([]float64, d)
	s2 := dimVariances(p, d)
	for range draws {
		if err := lik.SampleLocations(rng, x); err != nil {
			panic(err)
		}
		t := newPoint(rng, tr, p, x, y)
		for q, xq := range queries {
			var l float64
			for k := range d {
				v := s2[k] * t.OneMinus()
				if p.Noise != nil {
					v += p.Noise[k]
				}
				l += logNormal(xq[k], y[k], v)
			}
			f := math.Exp(l)
			sum[q] += f
			sum2[q] += f * f
		}
	}
	est, se = make([]float64, len(queries)), make([]float64, len(queries))
	for q := range queries {
		m := sum[q] / float64(draws)
		est[q] = m
		se[q] = math.Sqrt((sum2[q]/float64(draws) - m*m) / float64(draws))
	}
	return est, se
}

func TestTreeAgainstMonteCarlo(t *testing.T) {
	cases := []struct {
		name    string
		p       Params
		n, d    int
		noise   []float64
		missing [][2]int
	}{
		{"direct 2-D", Params{Alpha: 0.5, Beta: 0.3, Div: pydt.DivInv{C: 1.5}, Variance: 1}, 7, 2, nil, nil},
		{"DDT 1-D", Params{Alpha: 0, Beta: 0, Div: pydt.DivInv{C: 1}, Variance: 2}, 6, 1, nil, nil},
		{"noise, missing, 2-D", Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variance: 0.7}, 6, 2, []float64{0.09, 0.25}, [][2]int{{0, 1}, {3, 0}}},
		{"binary PY, c/(1-t)^2", Params{Alpha: -0.4, Beta: 0.2, Div: pydt.DivInvSq{C: 0.8}, Variance: 1}, 6, 2, nil, nil},
		{"Neal's a(t)", Params{Alpha: 2, Beta: 0.5, Div: pydt.DivNeal{C0: 0.2, C1: 0.5, C2: 0.3}, Variance: 1.3}, 5, 1, []float64{0.04}, nil},
		{"variance per dimension, noise, missing, 3-D", Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variances: []float64{0.1, 1, 4}}, 6, 3, []float64{0.09, 0.25, 0.04}, [][2]int{{0, 1}, {3, 2}}},
	}
	draws := 100000
	if testing.Short() {
		draws = 40000
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lik := fixture(t, uint64(ci+1), c.n, c.d, c.p, c.noise, c.missing)
			p := c.p
			p.Noise = c.noise
			mx, err := Tree(lik, p, Options{Nodes: 48})
			if err != nil {
				t.Fatal(err)
			}
			// Query points: near data and away from it.
			qrng := rand.New(rand.NewPCG(99, uint64(ci)))
			var queries [][]float64
			for range 6 {
				q := make([]float64, c.d)
				for k := range q {
					q[k] = 1.5 * qrng.NormFloat64()
				}
				queries = append(queries, q)
			}
			est, se := monteCarlo(lik, p, queries, draws, uint64(ci+100))
			for q, x := range queries {
				got := math.Exp(mx.LogDensity(x))
				if d := math.Abs(got - est[q]); !(d <= 4*se[q]+1e-4*got) {
					t.Errorf("query %v: quadrature %.6g, Monte Carlo %.6g ± %.2g (%.1f se)", x, got, est[q], se[q], d/se[q])
				}
			}
		})
	}
}

// TestIntegratesToOne integrates the predictive density over a grid in one
// and two dimensions.
func TestIntegratesToOne(t *testing.T) {
	cases := []struct {
		name  string
		p     Params
		n, d  int
		noise []float64
	}{
		{"1-D noise", Params{Alpha: 0.5, Beta: 0.3, Div: pydt.DivInv{C: 1}, Variance: 1}, 8, 1, []float64{0.04}},
		// Direct observation: near a data point the density behaves like
		// |x − x_i|^(2rc−1) with r = Γ(1−β)/Γ(2+α); c = 3 keeps it bounded.
		{"1-D direct", Params{Alpha: 0.5, Beta: 0.3, Div: pydt.DivInv{C: 3}, Variance: 1}, 8, 1, nil},
		{"2-D noise", Params{Alpha: 1, Beta: 0.1, Div: pydt.DivInvSq{C: 1}, Variance: 1}, 6, 2, []float64{0.09, 0.04}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lik := fixture(t, uint64(ci+20), c.n, c.d, c.p, c.noise, nil)
			p := c.p
			p.Noise = c.noise
			mx, err := Tree(lik, p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var w float64
			for _, lw := range mx.LogW {
				w += math.Exp(lw)
			}
			if !(math.Abs(w-1) <= 1e-12) {
				t.Errorf("weights sum to %v", w)
			}
			const lo, hi = -12.0, 12.0
			var total float64
			switch c.d {
			case 1:
				const n = 8000
				h := (hi - lo) / n
				for i := range n {
					total += math.Exp(mx.LogDensity([]float64{lo + (float64(i)+0.5)*h})) * h
				}
			case 2:
				const n = 400
				h := (hi - lo) / n
				for i := range n {
					for j := range n {
						total += math.Exp(mx.LogDensity([]float64{lo + (float64(i)+0.5)*h, lo + (float64(j)+0.5)*h})) * h * h
					}
				}
			}
			if !(math.Abs(total-1) <= 2e-3) {
				t.Errorf("integral %v, want 1", total)
			}
		})
	}
}

// TestMarginalAndConditional checks the marginal of one dimension (NaN
// entry) and the conditional mean of the missing entry against numerical
// integration of the joint density over that entry.
func TestMarginalAndConditional(t *testing.T) {
	p := Params{Alpha: 0.5, Beta: 0.3, Div: pydt.DivInv{C: 1}, Variance: 1, Noise: []float64{0.05, 0.05}}
	lik := fixture(t, 5, 7, 2, p, p.Noise, nil)
	mx, err := Tree(lik, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x1 := range []float64{-1.2, 0, 0.7, 2} {
		const lo, hi, n = -14.0, 14.0, 6000
		h := (hi - lo) / n
		var z, m float64
		for i := range n {
			x2 := lo + (float64(i)+0.5)*h
			f := math.Exp(mx.LogDensity([]float64{x1, x2})) * h
			z += f
			m += f * x2
		}
		dst := make([]float64, 2)
		lz := mx.Conditional([]float64{x1, math.NaN()}, dst)
		if got := math.Exp(mx.LogDensity([]float64{x1, math.NaN()})); !(math.Abs(got-z) <= 1e-6*z+1e-12) {
			t.Errorf("x1 = %v: marginal %v, integral %v", x1, got, z)
		}
		if !(math.Abs(math.Exp(lz)-z) <= 1e-6*z+1e-12) {
			t.Errorf("x1 = %v: Conditional's density %v, integral %v", x1, math.Exp(lz), z)
		}
		if want := m / z; !(math.Abs(dst[1]-want) <= 1e-6) || dst[0] != x1 {
			t.Errorf("x1 = %v: conditional mean %v, integral %v", x1, dst[1], want)
		}
	}
}

// TestProbit checks the probit probabilities against Monte Carlo draws of
// a latent location from the mixture and of y = 1{z + ε > 0}.
func TestProbit(t *testing.T) {
	mx := &Mixture{D: 2,
		LogW: []float64{math.Log(0.3), math.Log(0.7)},
		Mean: []float64{0.5, -1, -0.8, 1.5},
		Var:  []float64{0.2, 1.3, 0.5, 0.1}}
	rng := rand.New(rand.NewPCG(3, 3))
	const n = 400000
	count := map[[2]int]int{}
	for range n {
		j := 0
		if rng.Float64() >= 0.3 {
			j = 1
		}
		var y [2]int
		for k := range 2 {
			z := mx.Mean[j*2+k] + math.Sqrt(mx.Var[j*2+k])*rng.NormFloat64()
			if z+rng.NormFloat64() > 0 {
				y[k] = 1
			}
		}
		count[y]++
	}
	for y, c := range count {
		p := float64(c) / n
		se := math.Sqrt(p * (1 - p) / n)
		got := math.Exp(mx.LogProbBinary([]float64{float64(y[0]), float64(y[1])}, nil))
		if !(math.Abs(got-p) <= 4*se) {
			t.Errorf("P(y = %v) = %v, Monte Carlo %v ± %v", y, got, p, se)
		}
	}
	// P(y2 = 1 | y1 = 1) from the counts.
	p11 := float64(count[[2]int{1, 1}]) / float64(count[[2]int{1, 1}]+count[[2]int{1, 0}])
	prob := make([]float64, 2)
	mx.LogProbBinary([]float64{1, math.NaN()}, prob)
	if !(math.Abs(prob[1]-p11) <= 0.005) || prob[0] != 1 {
		t.Errorf("P(y2 = 1 | y1 = 1) = %v, Monte Carlo %v", prob[1], p11)
	}
}

// newPoint walks a new point down tr by the generative process given the
// node locations x (indexed v*D+d): its divergence time drawn exactly
// (inverse cumulative hazard), its divergence location on the Brownian
// bridge between the locations of the edge's ends (or at a branch point).
// It writes the divergence location to y and returns the time.
func newPoint(rng *rand.Rand, tr *pydt.Tree, p Params, x, y []float64) pydt.Time {
	d := len(y)
	loc := func(v pydt.NodeID) []float64 {
		if v == pydt.NoNode {
			return make([]float64, d)
		}
		return x[int(v)*d : int(v)*d+d]
	}
	b := tr.Root()
	var t pydt.Time
	for {
		a := tr.Parent(b)
		ta := tr.ParentTime(b)
		tb := tr.Time(b)
		la, _ := math.Lgamma(float64(tr.Count(b)) - p.Beta)
		lb, _ := math.Lgamma(float64(tr.Count(b)) + 1 + p.Alpha)
		r := math.Exp(la - lb)
		u := rng.ExpFloat64() / r
		Aa := p.Div.Cumulative(ta)
		if Aa+u < p.Div.Cumulative(tb) {
			t = p.Div.InverseCumulative(Aa + u)
			// Brownian bridge from x_a at t_a to x_b at t_b.
			f := t.Since(ta) / tb.Since(ta)
			bv := t.Since(ta) * tb.Since(t) / tb.Since(ta) // per unit variance
			xa, xb := loc(a), loc(b)
			s2 := dimVariances(p, d)
			for k := range d {
				y[k] = xa[k] + f*(xb[k]-xa[k]) + math.Sqrt(s2[k]*bv)*rng.NormFloat64()
			}
			return t
		}
		// Reached the branch point b: choose a child or diverge here.
		m := float64(tr.Count(b))
		K := float64(tr.Degree(b))
		uu := rng.Float64() * (m + p.Alpha)
		uu -= p.Alpha + p.Beta*K
		if uu < 0 {
			t = tb
			copy(y, loc(b))
			return t
		}
		next := pydt.NoNode
		for c := range tr.Children(b) {
			next = c
			if uu -= float64(tr.Count(c)) - p.Beta; uu < 0 {
				break
			}
		}
		b = next
	}
}
