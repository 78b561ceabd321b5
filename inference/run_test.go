package inference

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

const gaussianModel = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 2)
beta ~ Beta(2, 3)
c ~ Gamma(3, 2)
prec ~ Gamma(3, 3)
X ~ PYDT(alpha, beta, c, 1 / prec)
`

// compileWithData compiles src with X bound to the given rows.
func compileWithData(t testing.TB, src string, rows [][]float64, sets map[string]float64) *Model {
	t.Helper()
	m := &dataset.Matrix{Rows: len(rows), Cols: len(rows[0]), Source: "x.csv"}
	for _, r := range rows {
		m.Data = append(m.Data, r...)
	}
	f, err := lang.Parse("test.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{"X": m}, Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	model, err := NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	return model
}

func readAll(t *testing.T, dir string, names ...string) string {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		x, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(n + "\n")
		b.Write(x)
	}
	return b.String()
}

var smallData = [][]float64{{0.1, -0.3}, {0.2, -0.1}, {-1, 0.8}, {-1.1, 0.9}, {1.5, math.NaN()}}

// TestRunIsDeterministicAndResumesExactly runs the same seed twice, and a
// third time interrupted twice and resumed; all outputs must agree byte for
// byte.
func TestRunIsDeterministicAndResumesExactly(t *testing.T) {
	checkDeterministicAndResumable(t, compileWithData(t, gaussianModel, smallData, nil))
}

// TestProbitRunResumesExactly checks the same for the Probit model, whose
// checkpoints also carry the auxiliary variables (and a missing cell).
func TestProbitRunResumesExactly(t *testing.T) {
	y := &dataset.Matrix{Rows: 4, Cols: 2, Data: []float64{1, 0, 1, math.NaN(), 0, 0, 0, 1}, Source: "y.csv"}
	checkDeterministicAndResumable(t, compileProbit(t, y))
}

// checkDeterministicAndResumable runs the same seed twice, and a third time
// interrupted twice and resumed; all outputs must agree byte for byte.
func checkDeterministicAndResumable(t *testing.T, m *Model) {
	t.Helper()
	cfg := Config{Iters: 60, Burn: 20, Thin: 2, Chains: 2, Seed: 5, CheckpointEvery: 7, Impute: true}
	// The tree summaries are made from the tree files at the end, so a
	// resumed run summarises exactly the trees of an uninterrupted one.
	outputs := []string{TraceFile, TreesFile(1), TreesFile(2), SummaryTreeFile, MEAFile, ConsensusFile, CoclustFile}
	if m.Data != nil { // no data at the leaves (latent softmax logits): nothing to impute
		outputs = append(outputs, ImputeFile)
	}
	if m.Trees[0].Augmented() == nil {
		outputs = append(outputs, MapFile)
	}
	for _, z := range labelArrays(m.TraceColumns()) {
		outputs = append(outputs, DrawsFileOf(z.Name, 1), DrawsFileOf(z.Name, 2), StatesFileOf(z.Name))
	}
	var runs []string
	for range 2 {
		cfg.Out = t.TempDir()
		if _, err := Run(context.Background(), m, cfg); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, readAll(t, cfg.Out, outputs...))
	}
	if runs[0] != runs[1] {
		t.Fatal("two runs with the same seed differ")
	}
	// Interrupt at sweeps 13 (mid burn-in) and 41, then resume.
	cfg.Out = t.TempDir()
	for _, stopAt := range []int{13, 41} {
		ctx, cancel := context.WithCancel(context.Background())
		c := cfg
		c.Progress = func(done, total int, _ float64) {
			if done == stopAt {
				cancel()
			}
		}
		var err error
		if stopAt == 13 {
			_, err = Run(ctx, m, c)
		} else {
			_, err = Resume(ctx, m, cfg.Out, c.Progress)
		}
		cancel()
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("stop at %d: %v, want ErrInterrupted", stopAt, err)
		}
		// Everything written so far is valid: the summary parses.
		if _, err := os.Stat(filepath.Join(cfg.Out, SummaryFile)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Resume(context.Background(), m, cfg.Out, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, cfg.Out, outputs...); got != runs[0] {
		t.Fatalf("interrupted and resumed run differs from the uninterrupted one:\n%s\n---\n%s", got[:min(len(got), 2000)], runs[0][:min(len(runs[0]), 2000)])
	}
}

// TestScalarUpdatesAtOneLeaf checks the Gibbs and slice updates against
// closed forms on a one-point model, where the tree is a single leaf: c has
// no internal node to learn from (posterior = prior), alpha and beta do not
// enter the density (posterior = prior), and the precision is conjugate to
// x ~ Normal(0, 1/prec) per dimension: Gamma(a + D/2, b + |x|²/2).
func TestScalarUpdatesAtOneLeaf(t *testing.T) {
	x := []float64{0.7, -1.3}
	m := compileWithData(t, gaussianModel, [][]float64{x}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	const iters = 20000
	draws := map[string][]float64{}
	for range iters {
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
		for _, v := range m.Scalars() {
			draws[v.Name] = append(draws[v.Name], ch.get(v))
		}
	}
	want := map[string]float64{
		"alpha": 2.0 / 2, "beta": 2.0 / 5, "c": 3.0 / 2,
		"prec": (3 + 1.0) / (3 + (x[0]*x[0]+x[1]*x[1])/2),
	}
	for name, w := range want {
		got, _ := meanSE(draws[name])
		se := batchSE(draws[name])
		if !(math.Abs(got-w) <= 4*se) {
			t.Errorf("%s: posterior mean %.4f ± %.4f, closed form %.4f", name, got, se, w)
		}
	}
}

// TestSliceOnVarianceMatchesQuadrature uses a non-conjugate prior on the
// precision, so the engine slice samples it against the marginal
// likelihood; at one leaf the posterior mean is a one-dimensional integral.
func TestSliceOnVarianceMatchesQuadrature(t *testing.T) {
	const model = `
dim N, D
data X : real[N, D]
prec ~ Beta(2, 2)
X ~ PYDT(1, 0, 1, 1 / prec)
`
	x := 1.1
	m := compileWithData(t, model, [][]float64{{x}}, nil)
	sched, _ := NewSchedule(m)
	if !strings.Contains(sched.Explain(), "slice(prec)") {
		t.Fatalf("expected a slice update of prec:\n%s", sched.Explain())
	}
	ch, err := NewChain(m, sched, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var draws []float64
	for range 20000 {
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
		draws = append(draws, ch.get(m.Scalars()[0]))
	}
	post := func(p float64) float64 {
		return distuv.Beta{Alpha: 2, Beta: 2}.Prob(p) * distuv.Normal{Mu: 0, Sigma: 1 / math.Sqrt(p)}.Prob(x)
	}
	z := quad.Fixed(post, 0, 1, 200, nil, 0)
	mean := quad.Fixed(func(p float64) float64 { return p * post(p) }, 0, 1, 200, nil, 0) / z
	got, _ := meanSE(draws)
	if se := batchSE(draws); !(math.Abs(got-mean) <= 4*se) {
		t.Errorf("posterior mean of prec %.4f ± %.4f, quadrature %.4f", got, se, mean)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	for _, c := range []Config{{Iters: 10, Burn: 10, Out: "x"}, {Iters: 10, Thin: -1, Out: "x"}, {Iters: 10}} {
		if _, err := Run(context.Background(), m, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestTraceHeaderAndRows(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	dir := t.TempDir()
	res, err := Run(context.Background(), m, Config{Iters: 10, Burn: 4, Chains: 2, Seed: 1, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, TraceFile))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "chain,iteration,log_joint,log_lik,alpha,beta,c,prec" || len(lines) != 1+2*6 {
		t.Fatalf("trace: header %q, %d lines", lines[0], len(lines))
	}
	for _, l := range lines[1:] {
		for _, f := range strings.Split(l, ",") {
			if _, err := strconv.ParseFloat(f, 64); err != nil {
				t.Fatalf("trace row %q: %v", l, err)
			}
		}
	}
	trees, _ := os.ReadFile(filepath.Join(dir, TreesFile(1)))
	for _, l := range strings.Split(strings.TrimSpace(string(trees)), "\n") {
		if _, err := pydt.ParseNewick(l, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(res.Scalars) != 6 || !bytes.Contains(must(os.ReadFile(filepath.Join(dir, SummaryFile))), []byte(`"ess_bulk"`)) {
		t.Errorf("summary: %+v", res.Scalars)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestImputeDrawsTheConditional checks --impute on a one-point model where
// the missing coordinate's posterior is its prior, Normal(0, 1/prec).
func TestImputeDrawsTheConditional(t *testing.T) {
	m := compileWithData(t, gaussianModel, [][]float64{{0.7, math.NaN()}}, map[string]float64{"prec": 2})
	dir := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 8000, Burn: -1, Chains: 1, Seed: 3, Out: dir, Impute: true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ImputeFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "chain,iteration,row,column,value" {
		t.Fatalf("header %q", lines[0])
	}
	var xs []float64
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if f[2] != "1" || f[3] != "2" {
			t.Fatalf("imputed cell %s,%s, want 1,2", f[2], f[3])
		}
		x, _ := strconv.ParseFloat(f[4], 64)
		xs = append(xs, x)
	}
	mean, se := meanSE(xs)
	var v float64
	for _, x := range xs {
		v += x * x
	}
	v /= float64(len(xs))
	if !(math.Abs(mean) <= 4*se) || !(math.Abs(v-0.5) <= 4*0.5*math.Sqrt(2.0/float64(len(xs)))) {
		t.Errorf("imputed mean %.4f ± %.4f, second moment %.4f; want 0 and 0.5", mean, se, v)
	}
}

// TestSharedVarianceScalarKeepsItsPrior uses one scalar as both the
// divergence's c and the variance: no conjugate or ridge shortcut may then
// ignore the tree prior. With every value missing the posterior of c is its
// Gamma(2, 2) prior (mean 1, variance 0.5).
func TestSharedVarianceScalarKeepsItsPrior(t *testing.T) {
	const model = `
dim N, D
data X : real[N, D]
c ~ Gamma(2, 2)
X ~ PYDT(1, 0.2, c, c)
`
	nan := math.NaN()
	m := compileWithData(t, model, [][]float64{{nan}, {nan}, {nan}, {nan}}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	if ex := sched.Explain(); strings.Contains(ex, "ridge") || strings.Contains(ex, "gibbs(c)") {
		t.Fatalf("c also enters the tree prior, yet the schedule is:\n%s", ex)
	}
	var draws []float64
	for k := range 4 {
		ch, err := NewChain(m, sched, 5, uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		for it := range 6000 {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
			if it >= 500 {
				draws = append(draws, ch.get(m.Scalars()[0]))
			}
		}
	}
	mean, _ := meanSE(draws)
	if se := batchSE(draws); !(math.Abs(mean-1) <= 4*se) {
		t.Errorf("posterior mean of c %.4f ± %.4f, prior mean 1", mean, se)
	}
}

func TestWarningsNameDuplicateRows(t *testing.T) {
	nan := math.NaN()
	m := compileWithData(t, gaussianModel, [][]float64{{1, 2}, {nan, nan}, {1, 2}, {nan, nan}, {3, 4}}, nil)
	w := m.Warnings(graph.NewEnv(m.G))
	if len(w) != 1 || !strings.HasPrefix(w[0], "rows 1 and 3 of X are identical") {
		t.Errorf("warnings %q", w)
	}
}
