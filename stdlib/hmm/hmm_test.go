package hmm

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pydtlang/pydtlang/internal/cputime"
)

// brute enumerates all K^T paths: it returns log p(y) and the log joint
// log p(z, y) of every path (path index in base K, z_1 most significant).
func brute(c *Chain, logEmit []float64, T int) (float64, []float64) {
	K := c.K
	n := 1
	for t := 0; t < T; t++ {
		n *= K
	}
	lj := make([]float64, n)
	z := make([]int, T)
	for p := 0; p < n; p++ {
		decode(p, K, z)
		v := c.LogInit[z[0]] + logEmit[z[0]]
		for t := 1; t < T; t++ {
			v += c.LogTrans[z[t-1]*K+z[t]] + logEmit[t*K+z[t]]
		}
		lj[p] = v
	}
	return floats.LogSumExp(lj), lj
}

func decode(p, K int, z []int) {
	for t := len(z) - 1; t >= 0; t-- {
		z[t] = p % K
		p /= K
	}
}

func encode(z []int, K int) int {
	p := 0
	for _, s := range z {
		p = p*K + s
	}
	return p
}

// randomChain draws a chain with Dirichlet(conc) rows and Normal(0, scale)
// emissions.
func randomChain(rng *rand.Rand, K, T int, conc, scale float64) (*Chain, []float64) {
	c := &Chain{K: K, LogInit: make([]float64, K), LogTrans: make([]float64, K*K)}
	a := make([]float64, K)
	for k := range a {
		a[k] = conc
	}
	if err := LogDirichlet(rng, a, c.LogInit); err != nil {
		panic(err)
	}
	for i := 0; i < K; i++ {
		if err := LogDirichlet(rng, a, c.LogTrans[i*K:(i+1)*K]); err != nil {
			panic(err)
		}
	}
	e := make([]float64, T*K)
	for i := range e {
		e[i] = scale * rng.NormFloat64()
	}
	return c, e
}

type bfCase struct {
	name  string
	c     *Chain
	emit  []float64
	T     int
	isLog bool // the fast path must fall back to log space by itself
}

func bfCases() []bfCase {
	rng := rand.New(rand.NewPCG(1, 2))
	var cs []bfCase
	c, e := randomChain(rng, 3, 5, 1, 1)
	cs = append(cs, bfCase{"random K3 T5", c, e, 5, false})
	c, e = randomChain(rng, 3, 5, 0.3, 2)
	cs = append(cs, bfCase{"sparse rows K3 T5", c, e, 5, false})
	c, e = randomChain(rng, 2, 7, 1, 1)
	cs = append(cs, bfCase{"K2 T7", c, e, 7, false})
	c, e = randomChain(rng, 1, 4, 1, 1)
	cs = append(cs, bfCase{"K1", c, e, 4, false})
	c, e = randomChain(rng, 4, 1, 1, 1)
	cs = append(cs, bfCase{"T1", c, e, 1, false})
	// Emissions differing by thousands of nats.
	c, e = randomChain(rng, 3, 5, 1, 3000)
	cs = append(cs, bfCase{"emissions thousands of nats apart", c, e, 5, false})
	// Forbidden moves (-Inf) and a forbidden start.
	ninf := math.Inf(-1)
	c = &Chain{K: 3,
		LogInit: []float64{math.Log(0.5), math.Log(0.5), ninf},
		LogTrans: []float64{
			ninf, math.Log(0.3), math.Log(0.7),
			math.Log(0.5), ninf, math.Log(0.5),
			math.Log(0.2), math.Log(0.8), ninf,
		}}
	_, e = randomChain(rng, 3, 5, 1, 1)
	cs = append(cs, bfCase{"forbidden moves", c, e, 5, false})
	// Some states impossible at some times.
	e2 := append([]float64(nil), e...)
	e2[0*3+0], e2[2*3+1], e2[2*3+2], e2[4*3+2] = ninf, ninf, ninf, ninf
	cs = append(cs, bfCase{"impossible emissions", c, e2, 5, false})
	// A transition probability that underflows in exp: log path.
	c = &Chain{K: 3,
		LogInit: []float64{0, ninf, ninf},
		LogTrans: []float64{
			math.Log1p(-2 * math.Exp(-1000)), -1000, -1000,
			math.Log(0.5), math.Log(0.5), ninf,
			math.Log(0.5), ninf, math.Log(0.5),
		}}
	e3 := []float64{0, 0, 0, -2000, 0, 0, -2000, 0, -5, 1, 2, 3, 0, 0, 0}
	cs = append(cs, bfCase{"underflowing transition", c, e3, 5, true})
	// The same chain with emissions that do not need the rare moves: the
	// fast path is exact.
	e5 := []float64{0, -1, -2, -1, 0, 0, 0, -3, -1, 1, 2, 3, 0, 0, -1}
	cs = append(cs, bfCase{"underflowing transition, fast", c, e5, 5, false})
	// All mass on a state whose emission is 2000 nats below one reachable
	// only with probability e^-600: the scaling constant underflows.
	c = &Chain{K: 2,
		LogInit: []float64{0, ninf},
		LogTrans: []float64{
			math.Log1p(-math.Exp(-600)), -600,
			ninf, 0,
		}}
	e4 := []float64{0, 0, -2000, 0, 0, 0, 3, 1, 0, -7}
	cs = append(cs, bfCase{"scaling constant underflows", c, e4, 5, true})
	return cs
}

func TestAgainstBruteForce(t *testing.T) {
	for _, tc := range bfCases() {
		for mode, suffix := range []string{"", "/log", "/log backward"} {
			forceLog := mode == 1
			t.Run(tc.name+suffix, func(t *testing.T) {
				want, lj := brute(tc.c, tc.emit, tc.T)
				K, T := tc.c.K, tc.T
				ws := &Workspace{forceLog: forceLog, noFastBackward: mode == 2}
				got, err := tc.c.LogLik(tc.emit, T, ws)
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(got - want); !(d <= 1e-9*math.Max(1, math.Abs(want))) {
					t.Errorf("LogLik = %.15g, brute force %.15g", got, want)
				}
				if !forceLog {
					_, usedLog, _ := tc.c.forward(tc.emit, T, ws)
					if usedLog != tc.isLog {
						t.Errorf("log path used: %v, want %v", usedLog, tc.isLog)
					}
				}
				post := make([]float64, T*K)
				ll, err := tc.c.Marginals(tc.emit, T, post, ws)
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(ll - want); !(d <= 1e-9*math.Max(1, math.Abs(want))) {
					t.Errorf("Marginals log-lik = %.15g, brute force %.15g", ll, want)
				}
				wantPost := make([]float64, T*K)
				z := make([]int, T)
				for p, v := range lj {
					decode(p, K, z)
					w := math.Exp(v - want)
					for s, k := range z {
						wantPost[s*K+k] += w
					}
				}
				for i := range post {
					if !(math.Abs(post[i]-wantPost[i]) <= 1e-9) {
						t.Errorf("post[t=%d, k=%d] = %.12g, brute force %.12g", i/K, i%K, post[i], wantPost[i])
					}
				}
			})
		}
	}
}

// chiSquareFFBS draws n paths by FFBS and checks their frequencies against
// the exact posterior over all K^T paths (chi-square, cells with expected
// count < 5 pooled), and each path's frequency within 4.5 standard errors
// (paths with an expected count of at least 20).
func chiSquareFFBS(t *testing.T, tc bfCase, ws *Workspace, seed uint64, n int) {
	t.Helper()
	want, lj := brute(tc.c, tc.emit, tc.T)
	K, T := tc.c.K, tc.T
	rng := rand.New(rand.NewPCG(seed, 99))
	counts := make([]int, len(lj))
	z := make([]int, T)
	for i := 0; i < n; i++ {
		ll, err := tc.c.FFBS(rng, tc.emit, T, z, ws)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !(math.Abs(ll-want) <= 1e-9*math.Max(1, math.Abs(want))) {
			t.Errorf("FFBS log-lik = %.15g, brute force %.15g", ll, want)
		}
		counts[encode(z, K)]++
	}
	chi, df := 0.0, -1
	pooledE, pooledO := 0.0, 0
	for p, v := range lj {
		pr := math.Exp(v - want)
		e := pr * float64(n)
		if pr == 0 && counts[p] > 0 {
			t.Fatalf("FFBS drew path %d of probability zero %d times", p, counts[p])
		}
		if se := math.Sqrt(pr * (1 - pr) / float64(n)); e >= 20 && !(math.Abs(float64(counts[p])/float64(n)-pr) <= 4.5*se) {
			t.Errorf("path %d: frequency %v, exact %v (SE %v)", p, float64(counts[p])/float64(n), pr, se)
		}
		if e < 5 {
			pooledE += e
			pooledO += counts[p]
			continue
		}
		d := float64(counts[p]) - e
		chi += d * d / e
		df++
	}
	if pooledE > 0 {
		d := float64(pooledO) - pooledE
		chi += d * d / math.Max(pooledE, 1)
		df++
	}
	if df < 1 {
		return
	}
	crit := distuv.ChiSquared{K: float64(df)}.Quantile(1 - 1e-4)
	if chi > crit {
		t.Errorf("chi-square %.1f on %d df exceeds the 1-1e-4 quantile %.1f", chi, df, crit)
	}
}

func TestFFBSDistribution(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	for i, tc := range bfCases() {
		modes := []struct {
			name string
			ws   *Workspace
		}{
			{"fast", &Workspace{}},
			{"log", &Workspace{forceLog: true}},
			{"switch", &Workspace{switchAt: 3}},
		}
		for j, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				chiSquareFFBS(t, tc, m.ws, uint64(10*i+j+1), n)
			})
		}
	}
}

func TestDisagreementFastLog(t *testing.T) {
	// Long sequences, emissions up to thousands of nats apart, transition
	// rows from Dirichlet(0.002) (entries far below e^-700): the fast path
	// agrees with the log-space one.
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		K           int
		conc, scale float64
	}{{5, 0.5, 1}, {5, 0.5, 50}, {5, 0.5, 3000}, {8, 0.002, 1}, {8, 0.002, 30}} {
		const T = 2000
		c, e := randomChain(rng, tc.K, T, tc.conc, tc.scale)
		if tc.conc < 0.01 && slices.Min(c.LogTrans) > -700 {
			t.Fatalf("%+v: no transition log probability below -700", tc)
		}
		ws, wl := &Workspace{}, &Workspace{forceLog: true}
		if _, usedLog, err := c.forward(e, T, ws); err != nil || (usedLog && tc.scale < 100) {
			t.Fatalf("%+v: the fast path was not used (%v)", tc, err)
		}
		pf := make([]float64, len(e))
		pl := make([]float64, len(e))
		a, err := c.Marginals(e, T, pf, ws)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Marginals(e, T, pl, wl)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(a-b) <= 1e-9*math.Abs(b)) {
			t.Errorf("%+v: fast log-lik %v, log-space %v", tc, a, b)
		}
		for i := range pf {
			if !(math.Abs(pf[i]-pl[i]) <= 1e-8) {
				t.Fatalf("%+v: post[%d] fast %v, log-space %v", tc, i, pf[i], pl[i])
			}
		}
	}
}

func TestErrors(t *testing.T) {
	ninf := math.Inf(-1)
	good := func() *Chain {
		return &Chain{K: 2, LogInit: []float64{math.Log(0.5), math.Log(0.5)},
			LogTrans: []float64{math.Log(0.9), math.Log(0.1), math.Log(0.2), math.Log(0.8)}}
	}
	emit := []float64{0, -1, -2, 0, 0, 0}
	cases := []struct {
		name       string
		mod        func(c *Chain, e []float64) ([]float64, int)
		want       string
		impossible bool
	}{
		{"nil chain", func(c *Chain, e []float64) ([]float64, int) { return e, 3 }, "nil chain", false},
		{"K0", func(c *Chain, e []float64) ([]float64, int) { c.K = 0; return e, 3 }, "0 states", false},
		{"T0", func(c *Chain, e []float64) ([]float64, int) { return e, 0 }, "sequence length 0", false},
		{"short emit", func(c *Chain, e []float64) ([]float64, int) { return e[:5], 3 }, "logEmit has length 5", false},
		{"short init", func(c *Chain, e []float64) ([]float64, int) { c.LogInit = c.LogInit[:1]; return e, 3 }, "LogInit has length 1", false},
		{"short trans", func(c *Chain, e []float64) ([]float64, int) { c.LogTrans = c.LogTrans[:3]; return e, 3 }, "LogTrans has length 3", false},
		{"NaN emit", func(c *Chain, e []float64) ([]float64, int) { e[3] = math.NaN(); return e, 3 }, "logEmit[3] (time 1, state 1) is NaN", false},
		{"+Inf emit", func(c *Chain, e []float64) ([]float64, int) { e[2] = math.Inf(1); return e, 3 }, "is +Inf", false},
		{"NaN trans", func(c *Chain, e []float64) ([]float64, int) { c.LogTrans[1] = math.NaN(); return e, 3 }, "LogTrans[1] is NaN", false},
		{"positive log prob", func(c *Chain, e []float64) ([]float64, int) { c.LogInit[0] = 0.5; return e, 3 }, "above 0", false},
		{"row not normalised", func(c *Chain, e []float64) ([]float64, int) { c.LogTrans[2] = math.Log(0.3); return e, 3 }, "row 1 of the transition probabilities sums to 1.1", false},
		{"init not normalised", func(c *Chain, e []float64) ([]float64, int) { c.LogInit[0] = ninf; return e, 3 }, "initial probabilities sum to 0.5", false},
		{"row not normalised, log check", func(c *Chain, e []float64) ([]float64, int) {
			c.LogTrans[0], c.LogTrans[1] = -800, math.Log(0.5)
			return e, 3
		}, "row 0 of the transition probabilities sums to 0.5", false},
		{"all -Inf at a time", func(c *Chain, e []float64) ([]float64, int) { e[2], e[3] = ninf, ninf; return e, 3 }, "at time 1 every state", true},
		{"no path", func(c *Chain, e []float64) ([]float64, int) {
			c.LogTrans = []float64{0, ninf, ninf, 0}
			e[1], e[2] = ninf, ninf
			return e, 3
		}, "no state path reaches time 1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			e, T := tc.mod(c, append([]float64(nil), emit...))
			if tc.name == "nil chain" {
				c = nil
			}
			ws := &Workspace{}
			check := func(what string, ll float64, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: error %v, want one containing %q", what, err, tc.want)
				}
				if errors.Is(err, ErrImpossible) != tc.impossible {
					t.Errorf("%s: errors.Is(ErrImpossible) = %v", what, !tc.impossible)
				}
				if tc.impossible && !math.IsInf(ll, -1) {
					t.Errorf("%s: log-lik %v, want -Inf", what, ll)
				}
			}
			ll, err := c.LogLik(e, T, ws)
			check("LogLik", ll, err)
			z := make([]int, T)
			ll, err = c.FFBS(rand.New(rand.NewPCG(1, 1)), e, T, z, ws)
			check("FFBS", ll, err)
			post := make([]float64, len(e))
			if c != nil && T > 0 && c.K > 0 && len(e) == T*c.K {
				ll, err = c.Marginals(e, T, post, ws)
				check("Marginals", ll, err)
			}
		})
	}
	c := good()
	if _, err := c.FFBS(nil, emit, 3, make([]int, 3), &Workspace{}); err == nil {
		t.Error("FFBS with nil rng: no error")
	}
	if _, err := c.FFBS(rand.New(rand.NewPCG(1, 1)), emit, 3, make([]int, 2), &Workspace{}); err == nil {
		t.Error("FFBS with short z: no error")
	}
	if _, err := c.Marginals(emit, 3, make([]float64, 5), &Workspace{}); err == nil {
		t.Error("Marginals with short post: no error")
	}
	if _, err := c.LogLik(emit, 3, nil); err == nil {
		t.Error("nil workspace: no error")
	}
}

func TestCounts(t *testing.T) {
	cases := []struct {
		z     []int
		K     int
		init  []int
		trans []int
		err   string
	}{
		{[]int{0, 1, 1, 2, 0, 1}, 3, []int{1, 0, 0}, []int{0, 2, 0, 0, 1, 1, 1, 0, 0}, ""},
		{[]int{2}, 3, []int{0, 0, 1}, make([]int, 9), ""},
		{nil, 2, []int{0, 0}, []int{0, 0, 0, 0}, ""},
		{[]int{0, 3}, 3, nil, nil, "z[1] = 3 is not a state in 0..2"},
		{[]int{-1}, 3, nil, nil, "z[0] = -1"},
		{[]int{0}, 0, nil, nil, "0 states"},
	}
	for _, tc := range cases {
		K := max(tc.K, 1)
		init := []int{7, 7, 7}[:K]
		trans := make([]int, K*K)
		for i := range trans {
			trans[i] = 5
		}
		err := Counts(tc.z, tc.K, init, trans)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Counts(%v): error %v, want %q", tc.z, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Counts(%v): %v", tc.z, err)
		}
		for i := range init {
			if init[i] != tc.init[i] {
				t.Errorf("Counts(%v): init %v, want %v", tc.z, init, tc.init)
				break
			}
		}
		for i := range trans {
			if trans[i] != tc.trans[i] {
				t.Errorf("Counts(%v): trans %v, want %v", tc.z, trans, tc.trans)
				break
			}
		}
	}
	if err := Counts([]int{0}, 2, make([]int, 1), make([]int, 4)); err == nil {
		t.Error("short init: no error")
	}
	if err := Counts([]int{0}, 2, make([]int, 2), make([]int, 3)); err == nil {
		t.Error("short trans: no error")
	}
}

func TestNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const K, T = 6, 200
	c, e := randomChain(rng, K, T, 1, 3)
	ws := &Workspace{}
	z := make([]int, T)
	post := make([]float64, T*K)
	if _, err := c.Marginals(e, T, post, ws); err != nil { // warm-up
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		fn   func()
	}{
		{"LogLik", func() { _, _ = c.LogLik(e, T, ws) }},
		{"FFBS", func() { _, _ = c.FFBS(rng, e, T, z, ws) }},
		{"Marginals", func() { _, _ = c.Marginals(e, T, post, ws) }},
	} {
		if n := testing.AllocsPerRun(20, f.fn); n != 0 {
			t.Errorf("%s: %v allocations per call after warm-up, want 0", f.name, n)
		}
	}
	wl := &Workspace{forceLog: true}
	_, _ = c.FFBS(rng, e, T, z, wl)
	if n := testing.AllocsPerRun(5, func() { _, _ = c.FFBS(rng, e, T, z, wl) }); n != 0 {
		t.Errorf("FFBS (log path): %v allocations per call after warm-up, want 0", n)
	}
}

// benchChain is the size of a sweep over the Brown news category: about
// 100,000 tokens and K = 30 states.
func benchChain(b *testing.B) (*Chain, []float64, int) {
	const K, T = 30, 100000
	rng := rand.New(rand.NewPCG(5, 6))
	c, e := randomChain(rng, K, T, 0.5, 4)
	return c, e, T
}

func BenchmarkFFBS(b *testing.B) {
	c, e, T := benchChain(b)
	ws := &Workspace{}
	z := make([]int, T)
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := c.FFBS(rng, e, T, z, ws); err != nil { // warm-up: grow ws
		b.Fatal(err)
	}
	b.ReportAllocs()
	c0 := cputime.Process()
	defer func() { reportCPU(b, c0) }()
	for b.Loop() {
		if _, err := c.FFBS(rng, e, T, z, ws); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLogLik(b *testing.B) {
	c, e, T := benchChain(b)
	ws := &Workspace{}
	if _, err := c.LogLik(e, T, ws); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	c0 := cputime.Process()
	defer func() { reportCPU(b, c0) }()
	for b.Loop() {
		if _, err := c.LogLik(e, T, ws); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarginals(b *testing.B) {
	c, e, T := benchChain(b)
	ws := &Workspace{}
	post := make([]float64, len(e))
	if _, err := c.Marginals(e, T, post, ws); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	c0 := cputime.Process()
	defer func() { reportCPU(b, c0) }()
	for b.Loop() {
		if _, err := c.Marginals(e, T, post, ws); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSweepBrownNews is one Gibbs sweep of a plain Bayesian HMM at the
// size of the Brown news category (T = 100,554 tokens, V = 6,279 word ids,
// K = 30 states): emission log-likelihoods from the emission table, FFBS
// of the states, the counts, and Dirichlet draws of the K transition rows
// and the K emission rows. Synthetic words (Zipf-like), so no data file is
// needed.
func BenchmarkSweepBrownNews(b *testing.B) {
	const K, V, T = 30, 6279, 100554
	rng := rand.New(rand.NewPCG(8, 9))
	zipf := rand.NewZipf(rng, 1.1, 2, V-1)
	w := make([]int, T)
	for t := range w {
		w[t] = int(zipf.Uint64())
	}
	c := &Chain{K: K, LogInit: make([]float64, K), LogTrans: make([]float64, K*K)}
	logEmitTab := make([]float64, K*V)
	ones := make([]float64, V)
	for i := range ones {
		ones[i] = 1
	}
	for k := 0; k < K; k++ {
		c.LogInit[k] = -math.Log(K)
		if err := LogDirichlet(rng, ones[:K], c.LogTrans[k*K:(k+1)*K]); err != nil {
			b.Fatal(err)
		}
		if err := LogDirichlet(rng, ones, logEmitTab[k*V:(k+1)*V]); err != nil {
			b.Fatal(err)
		}
	}
	logEmit := make([]float64, T*K)
	z := make([]int, T)
	ws := &Workspace{}
	init, trans := make([]int, K), make([]int, K*K)
	emitCounts := make([]int, K*V)
	alpha := make([]float64, V)
	sweep := func() {
		for t, v := range w {
			row := logEmit[t*K : (t+1)*K]
			for k := range row {
				row[k] = logEmitTab[k*V+v]
			}
		}
		if _, err := c.FFBS(rng, logEmit, T, z, ws); err != nil {
			b.Fatal(err)
		}
		if err := Counts(z, K, init, trans); err != nil {
			b.Fatal(err)
		}
		clear(emitCounts)
		for t, v := range w {
			emitCounts[z[t]*V+v]++
		}
		for k := 0; k < K; k++ {
			for j := 0; j < K; j++ {
				alpha[j] = 1 + float64(trans[k*K+j])
			}
			if err := LogDirichlet(rng, alpha[:K], c.LogTrans[k*K:(k+1)*K]); err != nil {
				b.Fatal(err)
			}
			for v := 0; v < V; v++ {
				alpha[v] = 0.1 + float64(emitCounts[k*V+v])
			}
			if err := LogDirichlet(rng, alpha, logEmitTab[k*V:(k+1)*V]); err != nil {
				b.Fatal(err)
			}
		}
	}
	sweep()
	b.ReportAllocs()
	c0 := cputime.Process()
	defer func() { reportCPU(b, c0) }()
	for b.Loop() {
		sweep()
	}
}

// reportCPU reports the CPU milliseconds per operation since c0.
func reportCPU(b *testing.B, c0 time.Duration) {
	b.ReportMetric(float64(cputime.Process()-c0)/1e6/float64(b.N), "cpu-ms/op")
}
