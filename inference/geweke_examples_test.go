package inference

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// The examples' own priors (alpha ~ Gamma(2, 0.5), beta ~ Beta(1, 1),
// c ~ Gamma(1, 1), prec ~ Gamma(1, 1)) put many divergence times beyond the
// float64 range of 1-t: with a large alpha and a small c, s = -log(1-t) of
// the root is E/(c h_1), h_1 = Γ(1-β)/Γ(2+α), often in the hundreds or
// thousands. These Geweke tests run the samplers with those priors, on the
// examples' model files, and compare, besides the usual statistics, two in
// the coordinate s that Time keeps: the fraction of states whose root is
// beyond 1-t = 5e-324 (s > 745), and the mean of log(1 + s_root) (s_root
// itself has no finite mean: 1/c does not under c ~ Gamma(1, 1)).
//
// Data drawn on such trees can hold bitwise identical rows: two leaves whose
// paths meet at s beyond about 2 log(scale/ulp) ≈ 75 differ by less than
// float64 resolves. Under the noise-free model (examples/gaussian.pydt) the
// posterior given identical rows can be improper (their split runs to t = 1;
// see spec.md, "Duplicated rows without noise"), and a successive-
// conditional chain that redraws such rows is drawn into that state: the
// noise-free model's test (TestGewekeExamplePriorsNoiseFree) therefore
// reports the fraction of draws with identical rows, and is run on the
// Normal noise model (examples/gaussian-noise.pydt, where identical rows
// are harmless) for the comparison; the Probit model's auxiliaries carry
// noise as well.

// sStats returns the statistics in s of a tree: 1{s_root > 745} and
// log(1 + s_root).
func sStats(tr *pydt.Tree) []float64 {
	s := tr.Time(tr.Root()).S()
	beyond := 0.0
	if s > 745 {
		beyond = 1
	}
	return []float64{beyond, math.Log1p(s)}
}

var sStatNames = []string{"P(root s > 745)", "E log(1+s_root)"}

// compileExample compiles the model file examples/name with a data
// variable of n×d zeros bound.
func compileExample(t testing.TB, name, data string, n, d int) *Model {
	t.Helper()
	src, err := os.ReadFile("../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := lang.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	x := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}
	g, err := graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{data: x}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gewekeRun compares draws of the prior (sample) with successive-
// conditional chains (a sweep, then redraw) on the statistics stats.
func gewekeRun(t *testing.T, m *Model, names []string, stats func(*graph.Env, *pydt.Tree) []float64,
	sample func(*rand.Rand) (*State, error), redraw func(*Chain), nchains, burn, iters int) {
	t.Helper()
	gewekeRunEdit(t, m, names, stats, sample, redraw, nchains, burn, iters, nil)
}

// gewekeRunEdit is gewekeRun with the schedule changed by edit (nil for
// none) before the chains start.
func gewekeRunEdit(t *testing.T, m *Model, names []string, stats func(*graph.Env, *pydt.Tree) []float64,
	sample func(*rand.Rand) (*State, error), redraw func(*Chain), nchains, burn, iters int, edit func(*Schedule)) {
	t.Helper()
	setup := gewekeSetup{priorSeed: [2]uint64{31, 32}, chainSeed: 41, firstStream: 300, chains: nchains, burn: burn, iters: iters, edit: edit}
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, sample, redraw)
	chainSEs := compareMeans(t, names, prior, chains)
	// A chain that ran away (a non-finite or huge mean) can pass the
	// comparison by its huge standard error: require the chains' standard
	// error to be a small fraction of the prior's spread.
	for i, name := range names {
		_, pse := meanSE(prior[i])
		cse := chainSEs[i]
		if sd := pse * math.Sqrt(gewekeDraws); !(cse <= 0.25*sd) {
			t.Errorf("%s: the chains' mean has standard error %g, the prior's spread is %g: the chains did not mix", name, cse, sd)
		}
	}
}

func baseNames(m *Model) []string {
	return append(treeStatNames(m), sStatNames...)
}

// TestGewekeExamplePriors is the joint-distribution test of the sampler on
// examples/gaussian-noise.pydt, the examples' priors with a Normal noise
// model, at N = 4, D = 1.
func TestGewekeExamplePriors(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	m := compileExample(t, "gaussian-noise.pydt", "X", 4, 1)
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		return append(treeStats(m, env, tr), sStats(tr)...)
	}
	gewekeRun(t, m, baseNames(m), stats, m.SamplePrior, func(ch *Chain) { redrawNoisy(t, ch) }, 8, 500, 3000)
}

// TestGewekeDivergences is the joint-distribution test with the
// divergence functions other than DivInv, whose smoothness c is slice
// sampled (no conjugate update), at N = 4, D = 1.
func TestGewekeDivergences(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	for _, div := range []string{"DivInvSq(c)", "DivNeal(0.4, c, 0.3)"} {
		t.Run(div, func(t *testing.T) {
			model := `
dim N, D
data X : real[N, D]
` + gewekePriors + `X ~ PYDT(alpha, beta, ` + div + `, 1 / prec)
`
			m := compileModel(t, model, 4, 1, nil)
			stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
				return append(treeStats(m, env, tr), sStats(tr)...)
			}
			gewekeRun(t, m, baseNames(m), stats, m.SamplePrior, func(ch *Chain) { redrawData(t, ch) }, 8, 500, 3000)
		})
	}
}

// TestGewekeExamplePriorsProbit is the same test on examples/binary.pydt,
// the paper's Probit model with the examples' priors, at N = 4, D = 2.
func TestGewekeExamplePriorsProbit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	const n, d = 4, 2
	m := compileExample(t, "binary.pydt", "Y", n, d)
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		out := append(treeStats(m, env, tr), sStats(tr)...)
		var ones float64
		for _, v := range env.Values[m.Data.ID] {
			ones += v
		}
		return append(out, ones)
	}
	names := append(baseNames(m), "number of ones")
	gewekeRun(t, m, names, stats, m.SampleJoint, func(ch *Chain) { redrawProbit(t, ch) }, 8, 500, 3000)
}

// TestGewekeExamplePriorsNoiseFree measures, for examples/gaussian.pydt
// (no noise) with the examples' priors at N = 4, D = 1, how often data
// drawn from the prior hold bitwise identical rows (see the note above),
// and checks that every such draw is scored: the tree prior is finite
// where 1-t underflows, and the likelihood is +Inf exactly when the equal
// rows meet through edges of length 0 in float64 (a point mass), never NaN.
func TestGewekeExamplePriorsNoiseFree(t *testing.T) {
	m := compileExample(t, "gaussian.pydt", "X", 4, 1)
	rng := rand.New(rand.NewPCG(51, 52))
	const draws = 4000
	identical, beyond := 0, 0
	for range draws {
		st, err := m.SampleJoint(rng)
		if err != nil {
			t.Fatal(err)
		}
		if st.Trees[0].Time(st.Trees[0].Root()).S() > 745 {
			beyond++
		}
		x := st.Env.Values[m.Data.ID]
		same := false
		for i := range 4 {
			for j := range i {
				same = same || x[i] == x[j]
			}
		}
		if same {
			identical++
		}
		p, err := m.TreeParams(st.Env)
		if err != nil {
			t.Fatal(err)
		}
		lp := pydt.LogPrior(st.Trees[0], p.Alpha, p.Beta, p.Div, &pydt.Harmonic{})
		if math.IsInf(lp, 0) || math.IsNaN(lp) {
			t.Fatalf("log prior %v of a prior draw (root s = %v)", lp, st.Trees[0].Time(st.Trees[0].Root()).S())
		}
		lik := bp.New(st.Trees[0], 1)
		lik.SetVariance(p.Variance)
		if err := lik.ObserveMatrix(x); err != nil {
			t.Fatal(err)
		}
		err = lik.Recompute()
		ll := lik.LogLik()
		if math.IsNaN(ll) || math.IsInf(ll, -1) || (math.IsInf(ll, 1) != (err != nil)) {
			t.Fatalf("log likelihood %v (error %v) of data drawn on the tree", ll, err)
		}
	}
	t.Logf("%d of %d prior draws (N = 4, D = 1) have the root beyond 1-t = 5e-324, %d have bitwise identical rows",
		beyond, draws, identical)
	if beyond == 0 || identical == 0 {
		t.Errorf("the examples' priors should reach s > 745 and identical rows (beyond %d, identical %d)", beyond, identical)
	}
}
