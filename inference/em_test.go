package inference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// fourClusters returns n rows (D = 2) around (±1, ±1), each coordinate
// off its centre by a uniform draw on [-w, w] (bounded, so that no row is
// an outlier the tree would rather join at the root), the cluster of row i
// being i % 4.
func fourClusters(n int, w float64, seed uint64) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := &dataset.Matrix{Rows: n, Cols: 2, Data: make([]float64, 2*n), Source: "x.csv"}
	for i := range n {
		cx, cy := float64(2*(i%2)-1), float64(2*((i/2)%2)-1)
		x.Data[2*i] = cx + w*(2*rng.Float64()-1)
		x.Data[2*i+1] = cy + w*(2*rng.Float64()-1)
	}
	return x
}

// hasClade reports whether some node of tr has exactly the leaves in want
// below it.
func hasClade(tr *pydt.Tree, want map[int]bool) bool {
	var found bool
	var rec func(v pydt.NodeID) map[int]bool
	rec = func(v pydt.NodeID) map[int]bool {
		if tr.IsLeaf(v) {
			return map[int]bool{int(v): true}
		}
		s := map[int]bool{}
		for c := range tr.Children(v) {
			for k := range rec(c) {
				s[k] = true
			}
		}
		if len(s) == len(want) {
			same := true
			for k := range s {
				same = same && want[k]
			}
			found = found || same
		}
		return s
	}
	rec(tr.Root())
	return found
}

func TestRunEMFourClusters(t *testing.T) {
	x := fourClusters(40, 0.25, 3)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	dir := t.TempDir()
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 20, Patience: -1, Seed: 1, Out: dir, EMIters: 30})
	if err != nil {
		t.Fatal(err)
	}
	// The best bound never decreases across rounds.
	for i := 1; i < len(res.BoundTrace); i++ {
		if res.BoundTrace[i] < res.BoundTrace[i-1] {
			t.Fatalf("best bound decreased at round %d: %v -> %v", i, res.BoundTrace[i-1], res.BoundTrace[i])
		}
	}
	for i := 1; i < len(res.KBest); i++ {
		if res.KBest[i] > res.KBest[i-1] {
			t.Fatalf("K-best list not sorted: %v", res.KBest)
		}
	}
	for _, name := range []string{MapFile, KBestFile, SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	var sum map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum["method"] != "em" {
		t.Errorf("summary.json method %v", sum["method"])
	}
	g := sum["gamma_posteriors"].(map[string]any)
	for _, v := range []string{"c", "prec"} {
		if _, ok := g[v]; !ok {
			t.Errorf("summary.json has no Gamma posterior of %s: %s", v, b)
		}
	}
	kb, _ := os.ReadFile(filepath.Join(dir, KBestFile))
	if n := strings.Count(string(kb), "[bound="); n != len(res.Trees) {
		t.Errorf("kbest.nwk has %d trees, want %d", n, len(res.Trees))
	}
	best := res.Trees[0].Tree
	for k := range 4 {
		want := map[int]bool{}
		for i := k; i < 40; i += 4 {
			want[i] = true
		}
		if !hasClade(best, want) {
			t.Errorf("cluster %d is not a clade of the best tree %s", k, best.Newick())
		}
	}
}

func TestRunEMDeterministic(t *testing.T) {
	x := fourClusters(16, 0.3, 5)
	var got [2]string
	for k := range got {
		m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
		dir := t.TempDir()
		if _, err := RunEM(context.Background(), m, EMConfig{Rounds: 5, Seed: 7, Out: dir, EMIters: 10}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, KBestFile))
		got[k] = string(b)
	}
	if got[0] != got[1] {
		t.Errorf("same seed, different K-best lists:\n%s\n%s", got[0], got[1])
	}
}

func TestPlanEMRefuses(t *testing.T) {
	x := fourClusters(8, 0.3, 1)
	for _, tc := range []struct {
		name, src, want string
	}{
		{"other latent", `dim N, D
data X : real[N, D]
s ~ Gamma(2, 2)
c ~ Gamma(1, 1)
X ~ PYDT(1, 0.2, c, 1 / s + s)`, "latent variable s"},
		{"noise sd latent", `dim N, D
data X : real[N, D]
param Z : real[N, D]
sd ~ Gamma(2, 2)
Z ~ PYDT(1, 0.2, 1, 1)
for i in 1:N, d in 1:D {
  X[i, d] ~ Normal(Z[i, d], sd)
}`, "latent variable sd"},
		{"student-t", `dim N, D
data X : real[N, D]
param Z : real[N, D]
Z ~ PYDT(1, 0.2, 1, 1)
X ~ StudentT(Z, 0.1, 3)`, "StudentT"},
		{"alpha prior", `dim N, D
data X : real[N, D]
alpha ~ Beta(2, 2)
X ~ PYDT(alpha, 0.2, 1, 1)`, "alpha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := compileSource(t, tc.name, []byte(tc.src), map[string]*dataset.Matrix{"X": x}, nil)
			_, err := PlanEM(m)
			if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PlanEM: %v, want an ErrUnsupported naming %q", err, tc.want)
			}
		})
	}
}

// noisyClusters is fourClusters (bounded noise w) with a third column of
// pure noise, uniform on [-scale, scale], independent of the clusters.
func noisyClusters(n int, w, scale float64, seed uint64) *dataset.Matrix {
	x2 := fourClusters(n, w, seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	x := &dataset.Matrix{Rows: n, Cols: 3, Data: make([]float64, 3*n), Source: "x.csv"}
	for i := range n {
		x.Data[3*i], x.Data[3*i+1] = x2.Data[2*i], x2.Data[2*i+1]
		x.Data[3*i+2] = scale * (2*rng.Float64() - 1)
	}
	return x
}

// TestRunEMPerDim runs EM on examples/gaussian-perdim.pydt (a precision per
// column, prec : pos[D]) with four clusters in two columns and a third
// column of noise on a larger scale: the plan learns q(prec[d]) per
// column, summary.json reports each, the noise column gets a small
// precision (a large variance). (Before, PlanEM refused the model.)
func TestRunEMPerDim(t *testing.T) {
	const n = 32
	x := noisyClusters(n, 0.25, 4, 3)
	m := compileExampleFile(t, "gaussian-perdim.pydt", map[string]*dataset.Matrix{"X": x})
	p, err := PlanEM(m)
	if err != nil {
		t.Fatalf("PlanEM: %v", err)
	}
	if p.PrecDims == nil || p.PrecDims.Name != "prec" || len(p.Opt.Variances) != 3 || len(p.Opt.PrecPriors) != 3 {
		t.Fatalf("plan: PrecDims %v, Variances %v, PrecPriors %v", p.PrecDims, p.Opt.Variances, p.Opt.PrecPriors)
	}
	if ex := p.Explain(); !strings.Contains(ex, "q(prec[d]) Gamma for each dimension") {
		t.Errorf("Explain does not name the per-dimension posteriors:\n%s", ex)
	}
	// The initial trees the search starts from, each kind named.
	for _, want := range []string{"initial trees: sequential attachment", "average linkage and its cuts", "weighted by\n     the variances EM fits",
		"summary, consensus and last trees", "Above 2000 rows", "with --time, a start after the first is skipped"} {
		if ex := p.Explain(); !strings.Contains(ex, want) {
			t.Errorf("Explain does not say %q:\n%s", want, ex)
		}
	}
	dir := t.TempDir()
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 10, Patience: -1, Seed: 1, Out: dir, EMIters: 30})
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Gamma     map[string]GammaSummary `json:"gamma_posteriors"`
		Variance  *float64                `json:"variance_mean_field"`
		Variances []float64               `json:"variances_mean_field"`
		KBest     []EMEstimates           `json:"kbest_estimates"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Variance != nil || len(sum.Variances) != 3 {
		t.Errorf("summary.json: variance_mean_field %v, variances_mean_field %v; want three variances only", sum.Variance, sum.Variances)
	}
	var prec [3]float64
	for k := range 3 {
		g, ok := sum.Gamma[fmt.Sprintf("prec[%d]", k+1)]
		if !ok {
			t.Fatalf("summary.json has no posterior of prec[%d]: %s", k+1, b)
		}
		prec[k] = g.Mean
		if v := sum.Variances[k]; !(math.Abs(v*g.Mean-1) <= 1e-9) {
			t.Errorf("variance %d %v is not 1/E[prec[%d]] = %v", k+1, v, k+1, 1/g.Mean)
		}
	}
	if len(sum.KBest) != len(res.Trees) || len(sum.KBest[0].Variances) != 3 {
		t.Errorf("kbest_estimates: %d entries for %d trees, first %+v", len(sum.KBest), len(res.Trees), sum.KBest[0])
	}
	if !(prec[2] < prec[0]/5 && prec[2] < prec[1]/5) {
		t.Errorf("E[prec] = %v: the noise column's precision is not well below the cluster columns'", prec)
	}
	t.Logf("E[prec] %v; best tree %s", prec, res.Trees[0].Tree.Newick())
}

// TestPlanEMPerDimFixed plans EM for a variance per dimension given as
// data (observed, so fixed): the fit holds it, and no precision is learned.
func TestPlanEMPerDimFixed(t *testing.T) {
	src := `dim N, D
data X : real[N, D]
data v : pos[D]
v ~ Gamma(1, 1)
X ~ PYDT(1, 0.2, 1, v)`
	x := noisyClusters(8, 0.3, 4, 1)
	v := &dataset.Matrix{Rows: 3, Cols: 1, Data: []float64{0.5, 0.5, 8}, Source: "v.csv"}
	m := compileSource(t, "fixed", []byte(src), map[string]*dataset.Matrix{"X": x, "v": v}, nil)
	p, err := PlanEM(m)
	if err != nil {
		t.Fatalf("PlanEM: %v", err)
	}
	want := []float64{0.5, 0.5, 8}
	if p.PrecDims != nil || p.Opt.PrecPriors != nil || !slices.Equal(p.Opt.Variances, want) {
		t.Errorf("plan: PrecDims %v, PrecPriors %v, Variances %v", p.PrecDims, p.Opt.PrecPriors, p.Opt.Variances)
	}
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 2, Seed: 1, Out: t.TempDir(), EMIters: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Variances, want) {
		t.Errorf("variances %v, want the fixed %v", res.Variances, want)
	}
}

// TestInitOptionsPerDim checks the options of the initial trees' sequential
// construction: with a variance per dimension, f times each column's own
// sample variance (gonum's stat.Variance of its observed values), and f·v0
// for a column with fewer than two values or a variance of 0; with one
// variance, f·v0 and no variances per dimension.
func TestInitOptionsPerDim(t *testing.T) {
	const n, f, v0 = 8, 0.3, 2.5
	nan := math.NaN()
	// Column 1 with a missing value, column 2 constant, column 3 observed
	// once.
	x := []float64{
		0.1, 5, nan,
		-2, 5, nan,
		nan, 5, 7,
		3.5, 5, nan,
		0.7, 5, nan,
		-1.2, 5, nan,
		9, 5, nan,
		0.25, 5, nan,
	}
	var col []float64
	for i := range n {
		if v := x[3*i]; !math.IsNaN(v) {
			col = append(col, v)
		}
	}
	want := []float64{f * stat.Variance(col, nil), f * v0, f * v0}
	xm := noisyClusters(n, 0.3, 4, 1)
	p, err := PlanEM(compileExampleFile(t, "gaussian-perdim.pydt", map[string]*dataset.Matrix{"X": xm}))
	if err != nil {
		t.Fatal(err)
	}
	io := p.initOptions(f, columnVariances(x, n, 3), v0)
	if len(io.Variances) != 3 {
		t.Fatalf("variances %v, want %v", io.Variances, want)
	}
	for k := range want {
		if !(math.Abs(io.Variances[k]-want[k]) <= 1e-12*want[k]) {
			t.Errorf("variance of column %d: %v, want %v", k+1, io.Variances[k], want[k])
		}
	}
	p, err = PlanEM(compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": fourClusters(n, 0.3, 1)}))
	if err != nil {
		t.Fatal(err)
	}
	if io := p.initOptions(f, columnVariances(x[:2*n], n, 2), v0); io.Variances != nil || io.Variance != f*v0 {
		t.Errorf("one variance: Variance %v, Variances %v; want %v and none per dimension", io.Variance, io.Variances, f*v0)
	}
}

// TestColumnVariances checks the column variances the initial trees are
// built at against exact values: a column 1e8 + {0.5, -0.5, 1.5, -1.5}
// (every value exact in float64) has variance 5/3, which the one-pass
// Σx² − k·mean² lost to cancellation (Σx² ≈ 4e16 is rounded to a
// multiple of 8); NaN entries are skipped, a column with one value is
// NaN, and the average skips it.
func TestColumnVariances(t *testing.T) {
	nan := math.NaN()
	x := []float64{
		1e8 + 0.5, 2, nan,
		1e8 - 0.5, nan, nan,
		nan, 4, 7,
		1e8 + 1.5, 6, nan,
		1e8 - 1.5, 8, nan,
	}
	got := columnVariances(x, 5, 3)
	want := []float64{5.0 / 3, 20.0 / 3, nan}
	for j := range want {
		if math.IsNaN(want[j]) {
			if !math.IsNaN(got[j]) {
				t.Errorf("column %d: variance %v, want NaN (one value)", j+1, got[j])
			}
			continue
		}
		if !(math.Abs(got[j]-want[j]) <= 1e-12*want[j]) {
			t.Errorf("column %d: variance %v, want %v", j+1, got[j], want[j])
		}
	}
	if v, w := averageVariance(got), (want[0]+want[1])/2; !(math.Abs(v-w) <= 1e-12*w) {
		t.Errorf("average variance %v, want %v", v, w)
	}
	if v := averageVariance([]float64{nan, nan}); v != 1 {
		t.Errorf("average variance with no column of two values %v, want 1", v)
	}
}

func TestInsertKBest(t *testing.T) {
	tr := func(key string, b float64) EMTree { return EMTree{Bound: b, key: key} }
	var list []EMTree
	steps := []kbestStep[float64]{
		{tr("a", -10), true, []float64{-10}},
		{tr("b", -12), false, []float64{-10, -12}},
		{tr("c", -5), true, []float64{-5, -10, -12}},
		{tr("b", -13), false, []float64{-5, -10, -12}}, // same topology, worse: ignored
		{tr("b", -7), false, []float64{-5, -7, -10}},   // same topology, better: replaced
		{tr("d", -20), false, []float64{-5, -7, -10}},  // below the K = 3 best
		{tr("e", -5), false, []float64{-5, -5, -7}},    // a tie is not better
	}
	checkKBestSteps(t, list, 3, steps, func(u EMTree) float64 { return u.Bound })
}

// kbestStep is one insertion into a K-best list: the tree inserted,
// whether it must be the new best, and what the list must then hold (one
// value a tree, best first).
type kbestStep[T comparable] struct {
	t      EMTree
	better bool
	want   []T
}

// checkKBestSteps inserts the steps' trees into list (at most k trees) in
// turn, checking after each that insertKBest reports a new best as the
// step says and that the list holds the step's values (of each tree,
// value), and returns the list.
func checkKBestSteps[T comparable](t *testing.T, list []EMTree, k int, steps []kbestStep[T], value func(EMTree) T) []EMTree {
	t.Helper()
	for i, s := range steps {
		var better bool
		list, better = insertKBest(list, s.t, k)
		var got []T
		for _, u := range list {
			got = append(got, value(u))
		}
		if better != s.better || !slices.Equal(got, s.want) {
			t.Fatalf("step %d: got %v (better %v), want %v (better %v)", i, got, better, s.want, s.better)
		}
	}
	return list
}

// gaussianLinkage compiles examples/gaussian.pydt on four clusters of
// n/4 rows each in two dimensions (fourClusters(n, 0.3, 2)) and returns
// the model and the average-linkage tree the EM search starts from (on the
// plan's initial data, with its column variance).
func gaussianLinkage(t *testing.T, n int) (*Model, *pydt.Tree) {
	t.Helper()
	x := fourClusters(n, 0.3, 2)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Trees[0]
	xd := p.initialData()
	lt, err := linkageTree(xd, b.N, b.D, columnVariance(xd, b.N, b.D))
	if err != nil {
		t.Fatal(err)
	}
	return m, lt
}

// TestRunEMPerDimProbitHeld runs EM on the probit model with a precision
// per column (examples/binary.pydt with param prec : pos[D]): as the
// shared σ² of probit data, each column's variance is held at 1 / the
// posterior mean of prec[d] in the subsample's MCMC run (EP's value drifts
// with the variances: docs/em.md), so every kept tree has those variances,
// summary.json reports them as point estimates prec[d] and in alpha_beta,
// and a resume keeps them; a damaged held variance is refused.
func TestRunEMPerDimProbitHeld(t *testing.T) {
	src, err := os.ReadFile("../examples/binary.pydt")
	if err != nil {
		t.Fatal(err)
	}
	model := strings.Replace(string(src), "param Z : real[N, D]\n", "param Z : real[N, D]\nparam prec : pos[D]\n", 1)
	y := binaryRows(10, 4, 1)
	m := compileSource(t, "binary-perdim", []byte(model), map[string]*dataset.Matrix{"Y": y}, nil)
	dir := t.TempDir()
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 2, Patience: -1, Seed: 1, Out: dir, EMIters: 5, ABSweeps: 40})
	if err != nil {
		t.Fatal(err)
	}
	ab := res.AlphaBeta
	if ab == nil || len(ab.Variances) != 4 || len(ab.Precisions) != 4 || ab.Variance != 0 {
		t.Fatalf("alpha_beta %+v: want four held variances", ab)
	}
	for i, est := range res.KBestEstimates {
		if !slices.Equal(est.Variances, ab.Variances) {
			t.Errorf("tree %d: variances %v, want the held %v", i+1, est.Variances, ab.Variances)
		}
		for k, v := range ab.Variances {
			name := fmt.Sprintf("prec[%d]", k+1)
			if got, ok := est.Value(name); !ok || !(math.Abs(got*v-1) <= 1e-12) {
				t.Errorf("tree %d: %s = %v, %v; want 1/%v", i+1, name, got, ok, v)
			}
			if _, ok := est.Gamma[name]; ok {
				t.Errorf("tree %d: %s has a Gamma posterior, but it is held", i+1, name)
			}
		}
	}
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	if ex := p.Explain(); !strings.Contains(ex, "prec[d] (the diffusion precision of dimension d): with EP sites, each held") {
		t.Errorf("Explain does not say the precisions are held:\n%s", ex)
	}
	path := filepath.Join(dir, CheckpointFile)
	for _, tc := range []struct {
		field  string
		damage func(cp *emCheckpoint)
	}{
		{"alpha_beta: 3 variances", func(cp *emCheckpoint) { cp.AlphaBeta.Variances = cp.AlphaBeta.Variances[:3] }},
		{"alpha_beta: variances[2] is NaN", func(cp *emCheckpoint) { cp.AlphaBeta.Variances[2] = math.NaN() }},
		{"alpha_beta: variances[0] is 0", func(cp *emCheckpoint) { cp.AlphaBeta.Variances[0] = 0 }},
		{"trees[0].hyperparameters: variances[1] ", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variances[1] *= 1.01 }},
		{"trees[1].hyperparameters: variances[3] ", func(cp *emCheckpoint) { cp.Trees[1].Hyper.Variances[3] = cp.AlphaBeta.Variances[3] / 2 }},
	} {
		cp, err := readEMCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		tc.damage(cp)
		if _, err := p.restore(cp, path); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v", tc.field, err)
		}
	}
	res2, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res2.AlphaBeta.Variances, ab.Variances) || !slices.Equal(res2.KBestEstimates[0].Variances, ab.Variances) {
		t.Errorf("resumed: alpha_beta variances %v, best tree's %v; want %v", res2.AlphaBeta.Variances, res2.KBestEstimates[0].Variances, ab.Variances)
	}
}
