package softmaxleaf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// tcase is a small target whose moments are computed by integration on a
// grid, independently of the package's numerics.
type tcase struct {
	name             string
	mu, prec, counts []float64
	grid             int // points per dimension
}

func cases() []tcase {
	return []tcase{
		// Few counts, wide prior: the target is skewed and the Laplace
		// approximation poor.
		{"V2 skewed", []float64{0, 0}, []float64{0.25, 0.25}, []float64{3, 0}, 801},
		{"V2 many counts", []float64{1, -1}, []float64{0.1, 0.1}, []float64{30, 5}, 801},
		{"V2 no data", []float64{0.5, -2}, []float64{2, 0.5}, []float64{0, 0}, 401},
		{"V3", []float64{0.5, -0.3, 0}, []float64{1, 0.5, 2}, []float64{2, 0, 1}, 121},
		{"V3 skewed", []float64{0, 0, 0}, []float64{0.2, 0.2, 0.2}, []float64{1, 0, 0}, 121},
	}
}

func (tc tcase) target() *Target {
	return &Target{Mu: tc.mu, Prec: tc.prec, Counts: tc.counts}
}

// stats are the statistics compared: η_v, η_v², softmax(η)_v.
func stats(eta []float64, dst []float64) {
	V := len(eta)
	lse := LogSumExp(eta)
	for v, x := range eta {
		dst[v] = x
		dst[V+v] = x * x
		dst[2*V+v] = math.Exp(x - lse)
	}
}

func statName(i, V int) string {
	return fmt.Sprintf("%s[%d]", []string{"eta", "eta^2", "softmax"}[i/V], i%V)
}

// exactMoments integrates the statistics over a grid centred at the
// target's mode (found here by a crude coordinate search, not by the
// package) spanning ±8 prior standard deviations: the posterior of a
// Gaussian prior and a log-concave likelihood is more concentrated than
// the prior (Brascamp–Lieb), so the mass outside is below e^-30.
func exactMoments(tc tcase) []float64 {
	t := tc.target()
	V := len(tc.mu)
	c := append([]float64(nil), tc.mu...)
	for step := 1.0; step > 1e-6; step /= 2 {
		for improved := true; improved; {
			improved = false
			for v := range c {
				for _, s := range []float64{step, -step} {
					f0 := t.LogDensity(c)
					c[v] += s
					if t.LogDensity(c) > f0 {
						improved = true
					} else {
						c[v] -= s
					}
				}
			}
		}
	}
	f0 := t.LogDensity(c)
	lo, h := make([]float64, V), make([]float64, V)
	for v := range lo {
		sd := 1 / math.Sqrt(tc.prec[v])
		lo[v] = c[v] - 8*sd
		h[v] = 16 * sd / float64(tc.grid-1)
	}
	n := tc.grid
	total := 1
	for range V {
		total *= n
	}
	eta, s := make([]float64, V), make([]float64, 3*V)
	acc := make([]float64, 3*V)
	var z float64
	for i := 0; i < total; i++ {
		r := i
		for v := range eta {
			eta[v] = lo[v] + float64(r%n)*h[v]
			r /= n
		}
		w := math.Exp(t.LogDensity(eta) - f0)
		if w == 0 {
			continue
		}
		stats(eta, s)
		z += w
		for j := range acc {
			acc[j] += w * s[j]
		}
	}
	for j := range acc {
		acc[j] /= z
	}
	return acc
}

// rejection draws exactly from the target: propose from the prior, accept
// with probability Π softmax^n / its maximum Π (n/N)^n.
func rejection(rng *rand.Rand, t *Target, eta []float64) {
	var N, logMax float64
	for _, n := range t.Counts {
		N += n
	}
	for _, n := range t.Counts {
		if n > 0 {
			logMax += n * math.Log(n/N)
		}
	}
	for {
		for v := range eta {
			eta[v] = t.Mu[v] + rng.NormFloat64()/math.Sqrt(t.Prec[v])
		}
		if math.Log(rng.Float64()) < LogLik(eta, t.Counts)-logMax {
			return
		}
	}
}

// update is one step of a kernel on eta.
type update func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error

var (
	mhUpdate = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		_, err := ws.MH(rng, t, eta)
		return err
	}
	sliceUpdate = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		_, err := ws.Slice(rng, t, eta)
		return err
	}
	priorSliceUpdate = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		_, err := ws.PriorSlice(rng, t, eta)
		return err
	}
	auxUpdate = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		return ws.AuxGibbs(rng, t, eta)
	}
	stepUpdate = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		_, err := ws.Step(rng, t, eta)
		return err
	}
	// Broken kernels, to show that the test can fail: the Laplace draw
	// taken as it is (no correction), and MH with the ratio of a
	// symmetric proposal (the proposal densities left out).
	noCorrection = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		if err := ws.Laplace(t); err != nil {
			return err
		}
		ws.draw(rng, eta)
		for v := range eta {
			eta[v] += ws.Mode[v]
		}
		return nil
	}
	// The augmentation with the auxiliary's shape off by one.
	auxWrongShape = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		var N float64
		for _, n := range t.Counts {
			N += n
		}
		logU := math.Log(gammaRand(rng, N+1)) - LogSumExp(eta)
		for v := range eta {
			x, err := slice1(rng, eta[v], t.Mu[v], t.Prec[v], t.Counts[v], logU)
			if err != nil {
				return err
			}
			eta[v] = x
		}
		return nil
	}
	symmetricRatio = func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
		if err := ws.Laplace(t); err != nil {
			return err
		}
		ws.draw(rng, ws.prop)
		for v := range ws.prop {
			ws.prop[v] += ws.Mode[v]
		}
		if math.Log(rng.Float64()) < t.LogDensity(ws.prop)-t.LogDensity(eta) {
			copy(eta, ws.prop)
		}
		return nil
	}
)

// moments accumulates the mean and the sum of squared deviations of a
// stream of values by Welford's update, which, unlike the one-pass
// E[x²] − E[x]², does not cancel when the mean is large against the spread.
type moments struct {
	n, mean, m2 float64
}

// add adds x to the stream.
func (a *moments) add(x float64) {
	a.n++
	d := x - a.mean
	a.mean += d / a.n
	a.m2 += d * (x - a.mean)
}

// se returns the standard error of the mean, sqrt(var / n) with the
// unbiased variance (NaN for fewer than two values).
func (a *moments) se() float64 {
	if a.n < 2 {
		return math.NaN()
	}
	return math.Sqrt(a.m2 / (a.n - 1) / a.n)
}

// TestMoments: the standard error of values far from 0 with a small
// spread, 1e9 + k for k = 0..9 (variance 55/6), is exact to 1e-9, where
// the one-pass formula loses every digit to cancellation.
func TestMoments(t *testing.T) {
	var a moments
	for k := range 10 {
		a.add(1e9 + float64(k))
	}
	want := math.Sqrt(55.0 / 6 / 10)
	if a.mean != 1e9+4.5 || !(math.Abs(a.se()-want) <= 1e-9*want) {
		t.Errorf("mean %v, se %v; want %v, %v", a.mean, a.se(), 1e9+4.5, want)
	}
	var one moments
	one.add(3)
	if !math.IsNaN(one.se()) {
		t.Errorf("se of one value %v, want NaN", one.se())
	}
}

// invariance draws n exact draws, applies one update to each and returns
// the largest |z| of the statistics' means against the exact moments and
// a description of the worst.
func invariance(t *testing.T, tc tcase, exact []float64, up update, n int, seed uint64) (float64, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	tg := tc.target()
	V := len(tc.mu)
	var ws Workspace
	eta, s := make([]float64, V), make([]float64, 3*V)
	acc := make([]moments, 3*V)
	for i := 0; i < n; i++ {
		rejection(rng, tg, eta)
		if err := up(rng, &ws, tg, eta); err != nil {
			t.Fatal(err)
		}
		stats(eta, s)
		for j, x := range s {
			acc[j].add(x)
		}
	}
	worst, what := 0.0, ""
	for j := range acc {
		m, se := acc[j].mean, acc[j].se()
		z := math.Abs(m-exact[j]) / se
		if math.IsNaN(z) {
			// Not a z-score to rank: report it as the worst.
			return math.Inf(1), fmt.Sprintf("%s: mean %v, exact %v, se %v (NaN z)", statName(j, V), m, exact[j], se)
		}
		if z > worst {
			worst, what = z, fmt.Sprintf("%s: mean %.5f, exact %.5f, se %.5f", statName(j, V), m, exact[j], se)
		}
	}
	return worst, what
}

// TestInvariance: exact draws followed by one MH or slice step are still
// exact draws (every statistic's mean within 4 standard errors of its
// integral), and the broken kernels fail the same check on the skewed
// targets.
func TestInvariance(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 8000
	}
	for ci, tc := range cases() {
		exact := exactMoments(tc)
		for _, k := range []struct {
			name string
			up   update
		}{{"MH", mhUpdate}, {"Slice", sliceUpdate}, {"PriorSlice", priorSliceUpdate}, {"AuxGibbs", auxUpdate}, {"Step", stepUpdate}} {
			t.Run(tc.name+"/"+k.name, func(t *testing.T) {
				z, what := invariance(t, tc, exact, k.up, n, uint64(100+ci))
				if !(z <= 4) {
					t.Errorf("not invariant: %.1f SE off: %s", z, what)
				}
			})
		}
		if !strings.Contains(tc.name, "skewed") {
			continue
		}
		for _, k := range []struct {
			name string
			up   update
		}{{"no correction", noCorrection}, {"symmetric ratio", symmetricRatio}, {"aux shape", auxWrongShape}} {
			t.Run(tc.name+"/broken "+k.name, func(t *testing.T) {
				z, what := invariance(t, tc, exact, k.up, n, uint64(200+ci))
				t.Logf("worst %.1f SE: %s", z, what)
				if z < 6 {
					t.Errorf("a broken kernel passes the check (worst %.1f SE: %s)", z, what)
				}
			})
		}
	}
}

// TestInvarianceShortNewton: with the Newton search cut to one step from
// the prior mean, the approximation is off the mode, and the MH and slice
// steps are still exact (their correction does not assume the mode).
func TestInvarianceShortNewton(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 8000
	}
	short := func(inner update) update {
		return func(rng *rand.Rand, ws *Workspace, t *Target, eta []float64) error {
			ws.MaxNewton = 1
			ws.Mode = nil // no warm start
			return inner(rng, ws, t, eta)
		}
	}
	for ci, tc := range cases()[:2] {
		exact := exactMoments(tc)
		for _, k := range []struct {
			name string
			up   update
		}{{"MH", short(mhUpdate)}, {"Slice", short(sliceUpdate)}} {
			t.Run(tc.name+"/"+k.name, func(t *testing.T) {
				z, what := invariance(t, tc, exact, k.up, n, uint64(300+ci))
				if !(z <= 4) {
					t.Errorf("not invariant: %.1f SE off: %s", z, what)
				}
			})
		}
	}
}

// TestChainFromFarStart: many steps from a far start reach the target (the
// kernels are not only invariant but mix), on the skewed case. (MH and Slice
// alone stick there: the Laplace Gaussian is narrower than the target in
// its tails.)
func TestChainFromFarStart(t *testing.T) {
	tc := cases()[0]
	exact := exactMoments(tc)
	tg := tc.target()
	for _, k := range []struct {
		name string
		up   update
	}{{"PriorSlice", priorSliceUpdate}, {"AuxGibbs", auxUpdate}, {"Step", stepUpdate}} {
		t.Run(k.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			var ws Workspace
			const chains, steps = 4000, 30
			var mean float64
			var m2 float64
			for c := 0; c < chains; c++ {
				eta := []float64{-15, 15}
				for s := 0; s < steps; s++ {
					if err := k.up(rng, &ws, tg, eta); err != nil {
						t.Fatal(err)
					}
				}
				mean += eta[0]
				m2 += eta[0] * eta[0]
			}
			mean /= chains
			se := math.Sqrt((m2/chains - mean*mean) / chains)
			if !(math.Abs(mean-exact[0]) <= 4*se) {
				t.Errorf("E[eta_0] after %d steps from a far start %.4f, exact %.4f (se %.4f)", steps, mean, exact[0], se)
			}
		})
	}
}

// negHessian is A = diag(prec + N p) − N p pᵀ as a dense matrix, from its
// definition (the negative Hessian of the log target).
func negHessian(t *Target, eta []float64) *mat.SymDense {
	V := len(eta)
	p := make([]float64, V)
	softmax(eta, p)
	var N float64
	for _, n := range t.Counts {
		N += n
	}
	a := mat.NewSymDense(V, nil)
	for i := 0; i < V; i++ {
		for j := i; j < V; j++ {
			x := -N * p[i] * p[j]
			if i == j {
				x += t.Prec[i] + N*p[i]
			}
			a.SetSym(i, j, x)
		}
	}
	return a
}

// TestLaplace: at the mode the gradient (by central differences of
// LogDensity) vanishes; solve agrees with a dense solve of the negative
// Hessian; draws have covariance A⁻¹ (within 4 SE per entry).
func TestLaplace(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	V := 6
	tg := &Target{Mu: make([]float64, V), Prec: make([]float64, V), Counts: make([]float64, V)}
	for v := 0; v < V; v++ {
		tg.Mu[v] = rng.NormFloat64()
		tg.Prec[v] = 0.2 + rng.Float64()
		tg.Counts[v] = float64(rng.IntN(20))
	}
	tg.Counts[2] = 0
	var ws Workspace
	if err := ws.Laplace(tg); err != nil {
		t.Fatal(err)
	}
	x := append([]float64(nil), ws.Mode...)
	for v := range x {
		const h = 1e-5
		x[v] += h
		fp := tg.LogDensity(x)
		x[v] -= 2 * h
		fm := tg.LogDensity(x)
		x[v] += h
		if g := (fp - fm) / (2 * h); !(math.Abs(g) <= 1e-5) {
			t.Errorf("gradient[%d] at the mode is %v", v, g)
		}
	}
	A := negHessian(tg, ws.Mode)
	g := make([]float64, V)
	for v := range g {
		g[v] = rng.NormFloat64()
	}
	got := make([]float64, V)
	dec := solve(ws.D, ws.P, ws.N, ws.R, g, got)
	var want mat.VecDense
	if err := want.SolveVec(A, mat.NewVecDense(V, g)); err != nil {
		t.Fatal(err)
	}
	var wdec float64
	for v := range got {
		if !(math.Abs(got[v]-want.AtVec(v)) <= 1e-9*(1+math.Abs(want.AtVec(v)))) {
			t.Errorf("solve[%d] = %v, dense %v", v, got[v], want.AtVec(v))
		}
		wdec += g[v] * want.AtVec(v)
	}
	if !(math.Abs(dec-wdec) <= 1e-9*(1+wdec)) {
		t.Errorf("decrement %v, dense %v", dec, wdec)
	}
	// The quadratic form of LogApprox is A's.
	d := make([]float64, V)
	for v := range d {
		d[v] = ws.Mode[v] + g[v]
	}
	wantQ := mat.Inner(mat.NewVecDense(V, g), A, mat.NewVecDense(V, g))
	if q := -2 * ws.LogApprox(d); !(math.Abs(q-wantQ) <= 1e-9*(1+wantQ)) {
		t.Errorf("quadratic form %v, dense %v", q, wantQ)
	}
	// Covariance of draws.
	var cov mat.SymDense
	var ch mat.Cholesky
	if !ch.Factorize(A) {
		t.Fatal("A is not positive definite")
	}
	if err := ch.InverseTo(&cov); err != nil {
		t.Fatal(err)
	}
	const n = 200000
	s, s2 := mat.NewDense(V, V, nil), mat.NewDense(V, V, nil)
	for i := 0; i < n; i++ {
		ws.draw(rng, d)
		for a := 0; a < V; a++ {
			for b := 0; b < V; b++ {
				x := d[a] * d[b]
				s.Set(a, b, s.At(a, b)+x)
				s2.Set(a, b, s2.At(a, b)+x*x)
			}
		}
	}
	for a := 0; a < V; a++ {
		for b := 0; b < V; b++ {
			m := s.At(a, b) / n
			se := math.Sqrt((s2.At(a, b)/n - m*m) / n)
			if !(math.Abs(m-cov.At(a, b)) <= 4*se) {
				t.Errorf("draw covariance[%d,%d] = %v, A^-1 has %v (se %v)", a, b, m, cov.At(a, b), se)
			}
		}
	}
}

// TestLaplaceExtreme: large counts, tiny and huge precisions, far means:
// Newton still converges and the steps stay finite.
func TestLaplaceExtreme(t *testing.T) {
	for _, tg := range []*Target{
		{Mu: []float64{300, -300, 0}, Prec: []float64{1e-6, 1e-6, 1e-6}, Counts: []float64{1e6, 0, 3}},
		{Mu: []float64{0, 0, 0}, Prec: []float64{1e8, 1e8, 1e8}, Counts: []float64{1e6, 0, 3}},
		{Mu: []float64{-700, 700}, Prec: []float64{1, 1}, Counts: []float64{50, 0}},
		{Mu: []float64{5}, Prec: []float64{1}, Counts: []float64{10}},
	} {
		var ws Workspace
		rng := rand.New(rand.NewPCG(1, 1))
		eta := append([]float64(nil), tg.Mu...)
		for i := 0; i < 5; i++ {
			if _, err := ws.Slice(rng, tg, eta); err != nil {
				t.Fatalf("%v: %v", tg, err)
			}
			if _, err := ws.MH(rng, tg, eta); err != nil {
				t.Fatalf("%v: %v", tg, err)
			}
		}
		for _, x := range eta {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%v: eta = %v", tg, eta)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		tg   Target
		want string
	}{
		{Target{}, "lengths"},
		{Target{Mu: []float64{0}, Prec: []float64{1, 1}, Counts: []float64{0}}, "lengths"},
		{Target{Mu: []float64{math.NaN()}, Prec: []float64{1}, Counts: []float64{0}}, "mu[0]"},
		{Target{Mu: []float64{0}, Prec: []float64{0}, Counts: []float64{0}}, "prec[0]"},
		{Target{Mu: []float64{0}, Prec: []float64{math.Inf(1)}, Counts: []float64{0}}, "prec[0]"},
		{Target{Mu: []float64{0}, Prec: []float64{1}, Counts: []float64{-1}}, "count[0]"},
		{Target{Mu: []float64{0}, Prec: []float64{1}, Counts: []float64{math.NaN()}}, "count[0]"},
	} {
		var ws Workspace
		rng := rand.New(rand.NewPCG(1, 1))
		if _, err := ws.MH(rng, &tc.tg, make([]float64, len(tc.tg.Mu))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: MH error %v, want %q", tc.tg, err, tc.want)
		}
		if _, err := ws.Slice(rng, &tc.tg, make([]float64, len(tc.tg.Mu))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Slice error %v, want %q", tc.tg, err, tc.want)
		}
		if _, err := ws.PriorSlice(rng, &tc.tg, make([]float64, len(tc.tg.Mu))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: PriorSlice error %v, want %q", tc.tg, err, tc.want)
		}
	}
	var ws Workspace
	tg := &Target{Mu: []float64{0, 0}, Prec: []float64{1, 1}, Counts: []float64{1, 1}}
	if _, err := ws.Slice(rand.New(rand.NewPCG(1, 1)), tg, []float64{0}); err == nil {
		t.Error("Slice accepted eta of the wrong length")
	}
	if _, err := ws.MH(rand.New(rand.NewPCG(1, 1)), tg, []float64{0}); err == nil {
		t.Error("MH accepted eta of the wrong length")
	}
}

func TestNoAllocations(t *testing.T) {
	V := 500
	tg := &Target{Mu: make([]float64, V), Prec: make([]float64, V), Counts: make([]float64, V)}
	for v := range V {
		tg.Prec[v] = 1
		tg.Counts[v] = float64(v % 3)
	}
	var ws Workspace
	rng := rand.New(rand.NewPCG(1, 1))
	eta := make([]float64, V)
	if _, err := ws.Slice(rng, tg, eta); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() {
		if _, err := ws.Slice(rng, tg, eta); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Step(rng, tg, eta); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per step", a)
	}
}

// BenchmarkSlice: one slice step at V = 10000 with Brown-like counts
// (a few hundred words seen, most not).
func BenchmarkSlice(b *testing.B) {
	V := 10000
	rng := rand.New(rand.NewPCG(1, 1))
	tg := &Target{Mu: make([]float64, V), Prec: make([]float64, V), Counts: make([]float64, V)}
	for v := range V {
		tg.Mu[v] = rng.NormFloat64()
		tg.Prec[v] = 0.5
		if rng.IntN(20) == 0 {
			tg.Counts[v] = float64(1 + rng.IntN(30))
		}
	}
	var ws Workspace
	eta := append([]float64(nil), tg.Mu...)
	b.ResetTimer()
	for range b.N {
		if _, err := ws.Slice(rng, tg, eta); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGammaRand: the mean and variance of Gamma(shape, 1) draws (both
// equal to shape) within 4 standard errors, below and above shape 1.
func TestGammaRand(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 100000
	for _, a := range []float64{0.3, 1, 3.5, 200} {
		var s, s2 float64
		for range n {
			x := gammaRand(rng, a)
			s += x
			s2 += x * x
		}
		m := s / n
		v := s2/n - m*m
		// SE of the mean sqrt(a/n); of the variance from the fourth
		// central moment of Gamma(a): 3a² + 6a.
		if !(math.Abs(m-a) <= 4*math.Sqrt(a/n)) {
			t.Errorf("shape %v: mean %v", a, m)
		}
		if se := math.Sqrt((3*a*a + 6*a - a*a) / n); !(math.Abs(v-a) <= 4*se) {
			t.Errorf("shape %v: variance %v (se %v)", a, v, se)
		}
	}
}
