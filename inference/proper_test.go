package inference

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// denseLogLik is the log density of the rows x (N×D, σ² = 1) given the
// tree by the dense form of NOTES.md: each column is N(0, C) with C_ii = 1
// and C_ij = t(lca(i, j)). It shares no code with belief propagation. The
// covariance is factorised as C = 1 1ᵀ·0 + ... directly by Cholesky; its
// small eigenvalues (of the order of 1-t) are resolved because 1 - C_ij is
// formed from 1-t exactly.
func denseLogLik(t *testing.T, tr *pydt.Tree, x [][]float64) float64 {
	n, d := len(x), len(x[0])
	c := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := 1.0
			if i != j {
				v = densetest.LCATime(tr, pydt.NodeID(i), pydt.NodeID(j)).T()
			}
			c.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("covariance not positive definite")
	}
	ll := 0.0
	for k := range d {
		col := mat.NewVecDense(n, nil)
		for i := range n {
			col.SetVec(i, x[i][k])
		}
		var z mat.VecDense
		if err := ch.SolveVecTo(&z, col); err != nil {
			t.Fatal(err)
		}
		ll += -0.5*mat.Dot(col, &z) - 0.5*ch.LogDet() - float64(n)/2*math.Log(2*math.Pi)
	}
	return ll
}

// collapsedTree returns the tree (((0, 1):t1, 2):t2, (3, 4):0.4):0.2 in
// which leaves 0, 1 (and 2, when triple) carry identical rows: t1 = 1 - λ/2
// and, for a triple, t2 = 1 - λ (else t2 = 0.5).
func collapsedTree(lambda float64, triple bool) *pydt.Tree {
	tr := pydt.New(5)
	root := tr.NewInternal(pydt.TimeAt(0.2))
	t2 := pydt.TimeAt(0.5)
	if triple {
		t2 = pydt.TimeFromOneMinus(lambda)
	}
	b2 := tr.NewInternal(t2)
	b1 := tr.NewInternal(pydt.TimeFromOneMinus(lambda / 2))
	b3 := tr.NewInternal(pydt.TimeAt(0.4))
	tr.AddChild(b1, 0)
	tr.AddChild(b1, 1)
	tr.AddChild(b2, b1)
	tr.AddChild(b2, 2)
	tr.AddChild(b3, 3)
	tr.AddChild(b3, 4)
	tr.AddChild(root, b2)
	tr.AddChild(root, b3)
	tr.SetRoot(root)
	tr.Recount()
	return tr
}

// TestImproperExponent checks the exponent CheckProper relies on by an
// independent calculation: the log density of the tree (pydt.LogPrior) and
// of the data given the tree (the dense Gaussian form, not belief
// propagation) as the identical rows' divergence times go to t = 1 at the
// scale λ. For a pair the slope of the log density in log λ must be
// c·k - 1 - D/2 with k = Γ(1-β)/Γ(2+α); for three identical rows whose two
// branch points scale together it must be c·H_2 - 2 - D (two branch points,
// (r-1)·D/2 = D), H_2 = k + Γ(2-β)/Γ(3+α).
func TestImproperExponent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	cases := []struct {
		name           string
		alpha, beta, c float64
		d              int
		triple         bool
	}{
		{"pair", 0.5, 0.3, 1.7, 3, false},
		{"pair DDT", 0, 0, 0.4, 2, false},
		{"pair large alpha", 4, 0.1, 2.5, 1, false},
		{"triple", 0.5, 0.3, 1.7, 3, true},
		{"triple DDT", 0, 0, 0.8, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := make([][]float64, 5)
			for i := range x {
				x[i] = make([]float64, tc.d)
				for k := range x[i] {
					x[i][k] = rng.NormFloat64()
				}
			}
			copy(x[1], x[0])
			if tc.triple {
				copy(x[2], x[0])
			}
			h, err := pydt.NewHarmonic(tc.alpha, tc.beta)
			if err != nil {
				t.Fatal(err)
			}
			logDensity := func(lambda float64) float64 {
				tr := collapsedTree(lambda, tc.triple)
				return pydt.LogPrior(tr, tc.alpha, tc.beta, pydt.DivInv{C: tc.c}, h) + denseLogLik(t, tr, x)
			}
			l1, l2 := 1e-5, 1e-7
			slope := (logDensity(l2) - logDensity(l1)) / math.Log(l2/l1)
			lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
			k := math.Exp(lg(1-tc.beta) - lg(2+tc.alpha))
			want := tc.c*k - 1 - float64(tc.d)/2
			if tc.triple {
				h2 := k + math.Exp(lg(2-tc.beta)-lg(3+tc.alpha))
				want = tc.c*h2 - 2 - float64(tc.d)
				if got := harmonicH(2, tc.alpha, tc.beta); !(math.Abs(got-h2) <= 1e-12) {
					t.Errorf("harmonicH(2) = %v, want %v", got, h2)
				}
			} else if got := harmonicH(1, tc.alpha, tc.beta); !(math.Abs(got-k) <= 1e-12) {
				t.Errorf("harmonicH(1) = %v, want %v", got, k)
			}
			if !(math.Abs(slope-want) <= 1e-3) {
				t.Errorf("slope %.6f, want %.6f", slope, want)
			}
		})
	}
}

// dupRows returns an n×d matrix of distinct random rows, of which the
// first r are identical.
func dupRows(n, d, r int) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(uint64(n*d+r), 9))
	x := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "dup.csv"}
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	for i := 1; i < r; i++ {
		copy(x.Data[i*d:(i+1)*d], x.Data[:d])
	}
	return x
}

// TestCheckProper checks the refusal rule: improper exactly when the
// parameters with c·H_{r-1} (+ the shape of c2's prior for DivNeal) <=
// (r-1)·D/2 have positive prior probability.
func TestCheckProper(t *testing.T) {
	const direct = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, c, 1)
`
	const noise = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
Z ~ PYDT(alpha, beta, c, 1)
X ~ Normal(Z, 0.5)
`
	const invSq = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, DivInvSq(c), 1)
`
	const neal = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c1 ~ Gamma(1, 1)
c2 ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, DivNeal(0, c1, c2), 1)
`
	noiseSD := func(prior string) string {
		return strings.Replace(noise, "X ~ Normal(Z, 0.5)", "sd ~ "+prior+"\nX ~ Normal(Z, sd)", 1)
	}
	const noisePrec = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
noise ~ Gamma(1, 1)
Z ~ PYDT(alpha, beta, c, 1 / prec)
X ~ Normal(Z, 1 / sqrt(noise))
`
	// As "c, alpha clamped, proper" below, c = 2.5 and alpha = 1 written
	// as deterministic variables of constants.
	const detAlpha = `
dim N, D
data X : real[N, D]
const two = 2
a = 0.5 * two
cc = 1.25 * two
beta ~ Beta(1, 1)
X ~ PYDT(a, beta, cc, 1)
`
	const detLatent = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
a = alpha * 1
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
X ~ PYDT(a, beta, c, 1)
`
	set := func(kv ...float64) map[string]float64 {
		names := []string{"c", "alpha", "beta"}
		m := map[string]float64{}
		for i, v := range kv {
			if !math.IsNaN(v) {
				m[names[i]] = v
			}
		}
		return m
	}
	nan := math.NaN()
	cases := []struct {
		name     string
		src      string
		x        *dataset.Matrix
		sets     map[string]float64
		improper bool
		says     string
	}{
		{"paper's priors", direct, dupRows(8, 4, 2), nil, true, "close to 0"},
		{"no duplicates", direct, dupRows(8, 4, 1), nil, false, ""},
		{"c clamped, alpha free", direct, dupRows(8, 4, 2), set(50), true, "arbitrarily large alpha"},
		// D = 2: k(β) = Γ(1-β)/Γ(3) >= 1/2 at alpha = 1, so c·k > 1 for all
		// β when c = 2.5, and c·k < 1 near β = 0 when c = 1.
		{"c, alpha clamped, proper", direct, dupRows(8, 2, 2), set(2.5, 1), false, ""},
		{"c, alpha clamped, improper near beta = 0", direct, dupRows(8, 2, 2), set(1, 1), true, "beta ~ Beta(1, 1)"},
		{"all clamped, proper", direct, dupRows(8, 2, 2), set(1, 1, 0.9), false, ""},
		{"all clamped, improper", direct, dupRows(8, 4, 2), set(1, 1, 0.5), true, "<= D/2 = 2"},
		{"all clamped at the boundary", direct, dupRows(8, 2, 2), set(1, 0, 0), true, ""},
		// Three identical rows, D = 2, c = 2.5, alpha = 1, beta = 0: the pair
		// has c·k = 1.25 > 1, the triple c·H_2 = 2.5·(1/2 + 1/6) = 1.67 <= 2.
		{"triple improper where pairs are proper", direct, dupRows(8, 2, 3), set(2.5, 1, 0), true, "rows 1, 2, 3"},
		{"triple proper", direct, dupRows(8, 2, 3), set(3.1, 1, 0), false, ""},
		{"DDT by clamping", direct, dupRows(8, 2, 2), set(nan, 0, 0), true, "close to 0"},
		{"Normal noise", noise, dupRows(8, 4, 2), nil, false, ""},
		// A latent sd ~ Gamma(a, ·) adds a/2: improper for a = 1, D = 4 with
		// c free; for a = 2, D = 4, c·k = 0.5 (c = 0.5, alpha = beta = 0):
		// 1 + 0.5 <= 2 (TestNoiseExponent checks this case numerically);
		// proper for a = 6, c·k = 0.5: 3 + 0.5 > 2.
		{"latent noise sd", noiseSD("Gamma(1, 1)"), dupRows(8, 4, 2), nil, true, "can approach 0"},
		{"latent noise sd, c clamped", noiseSD("Gamma(2, 4)"), dupRows(8, 4, 2), set(0.5, 0, 0), true, "a_sd = 2"},
		{"latent noise sd, proper", noiseSD("Gamma(6, 1)"), dupRows(8, 4, 2), set(0.5, 0, 0), false, ""},
		{"noise precision (examples/gaussian-noise.pydt)", noisePrec, dupRows(8, 4, 2), nil, false, ""},
		{"DivInvSq", invSq, dupRows(8, 4, 2), nil, false, ""},
		// DivNeal: c2 ~ Gamma(1, 1) adds 1 to the exponent: improper for
		// D = 2 (1 + c1·k <= 1 as c1 -> 0), proper for D = 1.
		{"DivNeal D = 2", neal, dupRows(8, 2, 2), nil, true, "c2"},
		{"DivNeal D = 1", neal, dupRows(8, 1, 2), nil, false, ""},
		{"DivNeal c2 clamped 0", neal, dupRows(8, 1, 2), map[string]float64{"c2": 0}, true, "c1"},
		{"DivNeal c2 clamped positive", neal, dupRows(8, 4, 2), map[string]float64{"c2": 0.01}, false, ""},
		// Fixed parameters through deterministic variables are evaluated
		// (they were read as 0, unevaluated), and a deterministic
		// variable of a latent one is not taken for a fixed value.
		{"c, alpha fixed through deterministic variables, proper", detAlpha, dupRows(8, 2, 2), nil, false, ""},
		{"alpha a deterministic variable of a latent one", detLatent, dupRows(8, 2, 2), set(2.5), false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := compileData(t, tc.src, tc.x, tc.sets)
			err := m.CheckProper(m.NewState().Env)
			if got := errors.Is(err, ErrImproper); got != tc.improper {
				t.Fatalf("improper %v, want %v (error %v)", got, tc.improper, err)
			}
			if err == nil {
				return
			}
			advice := []string{"Normal noise model", "X ~ Normal(Z, sd)"}
			if strings.Contains(tc.src, "sd ~") {
				advice = []string{"keeps sd from 0", "1 / sqrt(noise)"}
			}
			for _, want := range append(advice, tc.says) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestCheckProperUserDivergence: the propriety check reads a divergence
// function's declared tail (stdlib.DivergenceTail), not its name, so a
// user's function registered under a name of its own is checked as the
// standard one with the same tail (it was passed unchecked, a silent
// improper posterior), and the message names its own parameter.
func TestCheckProperUserDivergence(t *testing.T) {
	const src = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
k ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, MyDiv(k), 1)
`
	for _, tc := range []struct {
		name     string
		tail     *stdlib.DivergenceTail
		improper bool
	}{
		{"tail c/(1-t)", &stdlib.DivergenceTail{Inv: 0, InvSq: -1}, true},
		{"tail c/(1-t)^2", &stdlib.DivergenceTail{Inv: -1, InvSq: 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := stdlib.Default()
			if err := lib.RegisterDivergence(&stdlib.DivergenceType{
				Name: "MyDiv", Doc: "a(t) = k/(1-t)", Params: []stdlib.Param{{Name: "k", Support: stdlib.Positive}},
				New: func(p []float64) pydt.Divergence { return pydt.DivInv{C: p[0]} }, Tail: tc.tail,
			}); err != nil {
				t.Fatal(err)
			}
			f, err := lang.Parse("user.pydt", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			g, err := graph.Compile(f, graph.Options{Library: lib, Data: map[string]*dataset.Matrix{"X": dupRows(8, 4, 2)}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewModel(g)
			if err != nil {
				t.Fatal(err)
			}
			err = m.CheckProper(m.NewState().Env)
			if got := errors.Is(err, ErrImproper); got != tc.improper {
				t.Fatalf("improper %v, want %v (error %v)", got, tc.improper, err)
			}
			if tc.improper && !strings.Contains(err.Error(), "when k·k") {
				t.Errorf("the message does not name k: %v", err)
			}
		})
	}
}

// TestRunRefusesImproper is the regression test of issue 7's duplicated
// rows: Run refuses the noise-free model before sampling (it used to warn
// and run chains that drifted to t = 1) and writes nothing.
func TestRunRefusesImproper(t *testing.T) {
	m := compileData(t, paperModel, irisLike(1), nil)
	dir := t.TempDir() + "/out"
	_, err := Run(context.Background(), m, Config{Iters: 20, Chains: 1, Out: dir})
	if !errors.Is(err, ErrImproper) || !strings.Contains(err.Error(), "Normal noise model") {
		t.Fatalf("error %v, want a refusal that suggests a Normal noise model", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the refused run created %s", dir)
	}
}

// TestNoiseExponent checks the power counting of CheckProper for a latent
// noise sd numerically: for two identical rows with divergence time
// t = 1 - u, u having the prior density c·k·u^(c·k-1), and sd with density
// ∝ sd^(a-1) e^(-b·sd), the integral of the pair's density
// (2π·2(u + sd²))^(-D/2) over sd > ε and u grows as ε^(a + 2·c·k - D) as
// ε -> 0 when that exponent is negative (improper), and converges when it
// is positive.
func TestNoiseExponent(t *testing.T) {
	integral := func(eps, ck, a, b float64, d int) float64 {
		inner := func(sd float64) float64 { // ∫_0^1 ck u^(ck-1) (u + sd²)^(-D/2) du, u = e^x
			const n = 2000
			lo, h := math.Log(1e-30), -math.Log(1e-30)/n
			var sum float64
			for i := range n + 1 {
				u := math.Exp(lo + float64(i)*h)
				w := 1.0
				if i == 0 || i == n {
					w = 0.5
				}
				sum += w * ck * math.Pow(u, ck) * math.Pow(u+sd*sd, -float64(d)/2)
			}
			return sum * h
		}
		const n = 300
		lo := math.Log(eps)
		h := (math.Log(5) - lo) / n
		var sum float64
		for i := range n + 1 {
			sd := math.Exp(lo + float64(i)*h)
			w := 1.0
			if i == 0 || i == n {
				w = 0.5
			}
			sum += w * math.Pow(sd, a) * math.Exp(-b*sd) * inner(sd) // sd^(a-1)·sd from d(log sd)
		}
		return sum * h
	}
	cases := []struct {
		ck, a float64
		d     int
	}{
		{0.5, 2, 4}, // exponent -1: improper
		{0.2, 1, 2}, // exponent -0.6: improper
		{0.5, 6, 4}, // exponent 3: proper
	}
	for _, tc := range cases {
		e := tc.a + 2*tc.ck - float64(tc.d)
		i1, i2 := integral(1e-3, tc.ck, tc.a, 4, tc.d), integral(1e-4, tc.ck, tc.a, 4, tc.d)
		slope := math.Log(i2/i1) / math.Log(1e-4/1e-3)
		if e < 0 && !(math.Abs(slope-e) <= 0.05) {
			t.Errorf("c·k = %g, a = %g, D = %d: the integral grows as ε^%.3f, want ε^%g", tc.ck, tc.a, tc.d, slope, e)
		}
		if e > 0 && !(math.Abs(i2/i1-1) <= 1e-3) {
			t.Errorf("c·k = %g, a = %g, D = %d: the integral changed by %g from ε = 1e-3 to 1e-4, want convergence", tc.ck, tc.a, tc.d, i2/i1-1)
		}
	}
}
