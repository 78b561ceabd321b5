package inference

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// compileModel compiles src with an all-zero N×D data matrix bound to X.
func compileModel(t testing.TB, src string, n, d int, sets map[string]float64) *Model {
	t.Helper()
	x := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}
	return compileData(t, src, x, sets)
}

// compileSource compiles the model source src (called name in messages)
// with the data matrices bound by variable name; a compile error is
// reported with its source context.
func compileSource(t testing.TB, name string, src []byte, data map[string]*dataset.Matrix, sets map[string]float64) *Model {
	t.Helper()
	f, err := lang.Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Data: data, Set: sets})
	if err != nil {
		if el, ok := err.(lang.ErrorList); ok {
			var b strings.Builder
			el.Format(&b, src)
			t.Fatal(b.String())
		}
		t.Fatal(err)
	}
	m, err := NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// compileExampleFile compiles the model file examples/name with the data
// matrices bound by variable name.
func compileExampleFile(t testing.TB, name string, data map[string]*dataset.Matrix) *Model {
	t.Helper()
	src, err := os.ReadFile("../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return compileSource(t, name, src, data, nil)
}

// stats are the Geweke test statistics of a state.
func treeStats(m *Model, env *graph.Env, tr *pydt.Tree) []float64 {
	root := tr.Root()
	var sumT float64
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) {
			sumT += tr.Time(v).T()
		}
	}
	out := []float64{float64(tr.NumInternal()), tr.Time(root).T(), float64(tr.Degree(root)), sumT}
	for _, v := range m.Scalars() {
		out = append(out, env.Values[v.ID][0])
	}
	return out
}

// sampleLeafLocations draws the locations of the diffusion on the chain's
// current tree at its current variance (Tree.Cap()×D values; the leaves
// come first).
func sampleLeafLocations(t testing.TB, ch *Chain) []float64 {
	free := bp.New(ch.trees[0].Tree, ch.m.D)
	if err := free.SetVariances(ch.trees[0].lik.Variances()); err != nil {
		t.Fatal(err)
	}
	if err := free.Recompute(); err != nil {
		t.Fatal(err)
	}
	locs := make([]float64, ch.trees[0].Tree.Cap()*ch.m.D)
	if err := free.SampleLocations(ch.rng, locs); err != nil {
		t.Fatal(err)
	}
	return locs
}

// redrawData draws X from its conditional given the tree and the
// variance: the leaf locations of the diffusion on the current tree.
func redrawData(t testing.TB, ch *Chain) {
	locs := sampleLeafLocations(t, ch)
	copy(ch.st.Env.Values[ch.m.Leaves.ID], locs[:ch.m.N*ch.m.D])
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// redrawNoisy draws X given the tree, the variance and the noise: the leaf
// locations of the diffusion on the current tree plus Normal noise.
func redrawNoisy(t testing.TB, ch *Chain) {
	locs := sampleLeafLocations(t, ch)
	sd := ch.m.Trees[0].Leaf.Args[1].Eval(ch.st.Env)
	x := ch.st.Env.Values[ch.m.Data.ID]
	for k := range x {
		x[k] = locs[k] + sd*ch.rng.NormFloat64()
	}
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// redrawProbit draws a Probit model's (u, Y) given the tree: Z at the
// leaves from the diffusion, u = Z + ε, Y = 1 when u > 0.
func redrawProbit(t testing.TB, ch *Chain) {
	locs := sampleLeafLocations(t, ch)
	yv := ch.st.Env.Values[ch.m.Data.ID]
	for k := range ch.m.N * ch.m.D {
		u := locs[k] + ch.rng.NormFloat64()
		ch.trees[0].aux[k] = u
		yv[k] = 0
		if u > 0 {
			yv[k] = 1
		}
	}
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// batchSE is the standard error of the mean of a correlated series by
// batch means (50 batches).
func batchSE(x []float64) float64 {
	const batches = 50
	size := len(x) / batches
	means := make([]float64, batches)
	var grand float64
	for b := range batches {
		for _, v := range x[b*size : (b+1)*size] {
			means[b] += v
		}
		means[b] /= float64(size)
		grand += means[b]
	}
	grand /= batches
	var ss float64
	for _, mb := range means {
		ss += (mb - grand) * (mb - grand)
	}
	return math.Sqrt(ss / (batches - 1) / batches)
}

func meanSE(x []float64) (float64, float64) {
	var s, ss float64
	for _, v := range x {
		s += v
	}
	mean := s / float64(len(x))
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// checkMeanChanges reports each statistic's mean change over independent
// replicates (diffs[i] for names[i]) and fails the test where it exceeds 4
// standard errors: a move that leaves the posterior invariant keeps the
// law of every statistic of a state drawn from the joint.
func checkMeanChanges(t *testing.T, names []string, diffs [][]float64) {
	t.Helper()
	for i, name := range names {
		mean, se := meanSE(diffs[i])
		t.Logf("%-12s mean change %+.4f ± %.4f", name, mean, se)
		if !(math.Abs(mean) <= 4*se) {
			t.Errorf("%s: mean change %+.4f exceeds 4 standard errors (%.4f): the move does not leave the posterior invariant", name, mean, se)
		}
	}
}

// checkMutationDetected is checkMeanChanges' counterpart for a move broken
// on purpose: some statistic's mean change over the replicates must lie
// beyond 6 standard errors, or the invariance test could not see the error.
func checkMutationDetected(t *testing.T, names []string, diffs [][]float64) {
	t.Helper()
	var zs []string
	var worst float64
	for i, name := range names {
		mean, se := meanSE(diffs[i])
		z := 0.0
		if mean != 0 {
			z = mean / se
		}
		zs = append(zs, fmt.Sprintf("%s %+.1f", name, z))
		worst = max(worst, math.Abs(z))
	}
	t.Logf("z: %s", strings.Join(zs, ", "))
	if !(worst > 6) {
		t.Errorf("the mutation passes (largest |z| %.1f): %s", worst, strings.Join(zs, ", "))
	}
}

// gewekePriors are the tree priors of TestGeweke, which keep divergence
// times within float64; most of the engine's test models share them.
const gewekePriors = `alpha ~ Gamma(2, 4)
beta ~ Beta(2, 3)
c ~ Gamma(4, 2)
prec ~ Gamma(3, 3)
`

// probitModel is the paper's probit model with priors that keep divergence
// times within float64 (see TestGeweke).
const probitModel = `
dim N, D
data Y : binary[N, D]
param Z : real[N, D]
` + gewekePriors + `Z ~ PYDT(alpha, beta, c, 1 / prec)
for i in 1:N, d in 1:D {
  Y[i, d] ~ Probit(Z[i, d])
}
`

// compileProbit binds probitModel to the binary data y.
func compileProbit(t testing.TB, y *dataset.Matrix) *Model {
	t.Helper()
	return compileSource(t, "probit.pydt", []byte(probitModel), map[string]*dataset.Matrix{"Y": y}, nil)
}

// probitSetup compiles the probit test model on an n×d Y of zeros, with
// the prior of prec replaced by prior ("" keeps probitModel's
// Gamma(3, 3)), and returns it with its schedule and the variable prec.
func probitSetup(t *testing.T, prior string, n, d int) (*Model, *Schedule, *graph.Var) {
	t.Helper()
	src := probitModel
	if prior != "" {
		src = strings.Replace(src, "prec ~ Gamma(3, 3)", prior, 1)
	}
	return probitSetupSource(t, src, n, d)
}

// probitSetupSource is probitSetup for a probit model source src (probitModel
// edited by the caller).
func probitSetupSource(t *testing.T, src string, n, d int) (*Model, *Schedule, *graph.Var) {
	t.Helper()
	m := compileSource(t, "probit.pydt", []byte(src),
		map[string]*dataset.Matrix{"Y": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	pv, ok := m.G.Lookup("prec")
	if !ok {
		t.Fatal("no prec")
	}
	return m, sched, pv
}

// traceColumns reads dir's trace.csv and returns a function giving one
// named column's values in row order; a missing column or an unparsable
// value fails t.
func traceColumns(t *testing.T, dir string) func(name string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return func(name string) []float64 {
		t.Helper()
		c := slices.Index(recs[0], name)
		if c < 0 {
			t.Fatalf("trace.csv header %v has no %s", recs[0], name)
		}
		var xs []float64
		for _, r := range recs[1:] {
			x, err := strconv.ParseFloat(r[c], 64)
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, x)
		}
		return xs
	}
}

// auxMoments returns sums over the observed entries of the first tree's
// probit auxiliaries u (a missing entry's u is not in the chain's state):
// Σ u², Σ |u|, Σ over columns of (Σ u)², Σ over columns of (Σ sign u)²,
// and the number of observed entries, for the invariance tests of the moves
// that change u.
func auxMoments(ch *Chain, y []float64, n, d int) (sq, abs, sum2, agree, nobs float64) {
	for dim := range d {
		var s, sy float64
		for i := range n {
			if math.IsNaN(y[i*d+dim]) {
				continue
			}
			nobs++
			u := ch.trees[0].aux[i*d+dim]
			sq += u * u
			abs += math.Abs(u)
			s += u
			sy += math.Copysign(1, u)
		}
		sum2 += s * s
		agree += sy * sy
	}
	return sq, abs, sum2, agree, nobs
}
