package inference

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// twoTreeModel has two PYDTs on two data sets sharing beta, c and the
// precision (c and prec get conjugate updates whose statistics sum over the
// trees; beta is slice sampled on both trees' priors) and a concentration
// of each.
const twoTreeModel = `
dim N, D, M, E
data X : real[N, D]
data Y : real[M, E]
alpha ~ Gamma(2, 4)
alpha2 ~ Gamma(3, 3)
beta ~ Beta(2, 3)
c ~ Gamma(4, 2)
prec ~ Gamma(3, 3)
X ~ PYDT(alpha, beta, c, 1 / prec)
Y ~ PYDT(alpha2, beta, c, 1 / prec)
`

func compileTwoTrees(t testing.TB, src string, n, d, m, e int) *Model {
	t.Helper()
	x := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}
	y := &dataset.Matrix{Rows: m, Cols: e, Data: make([]float64, m*e), Source: "y.csv"}
	return compileSource(t, "two.pydt", []byte(src), map[string]*dataset.Matrix{"X": x, "Y": y}, nil)
}

// twoTreeStats are each tree's statistics (treeStats) and the scalars.
func twoTreeStats(m *Model, st *State) []float64 {
	var out []float64
	for _, tr := range st.Trees {
		out = append(out, treeStats(m, st.Env, tr)[:4]...)
	}
	for _, v := range m.Scalars() {
		out = append(out, st.Env.Values[v.ID][0])
	}
	return out
}

func TestTwoTreesSchedule(t *testing.T) {
	m := compileTwoTrees(t, twoTreeModel, 3, 1, 4, 2)
	s, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Steps {
		names = append(names, st.Name())
	}
	got := strings.Join(names, " ")
	if want := "tree(X) tree(Y) slice(alpha) slice(alpha2) slice(beta) gibbs(c) gibbs(prec)"; got != want {
		t.Errorf("schedule %q, want %q", got, want)
	}
	ex := s.Explain()
	for _, want := range []string{"shared by the PYDTs X, Y, whose trees' statistics sum", "the tree prior of X × the tree prior of Y"} {
		if !strings.Contains(ex, want) {
			t.Errorf("--explain lacks %q:\n%s", want, ex)
		}
	}
}

// TestGewekeTwoTrees checks the joint distribution of the two trees, the
// shared and the separate hyperparameters against forward draws
// (Geweke's test, as TestGeweke).
func TestGewekeTwoTrees(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	m := compileTwoTrees(t, twoTreeModel, 4, 1, 3, 2)
	var names []string
	for _, v := range []string{"X", "Y"} {
		for _, s := range []string{"internal nodes", "root time", "root degree", "sum of times"} {
			names = append(names, v+": "+s)
		}
	}
	for _, v := range m.Scalars() {
		names = append(names, v.Name)
	}
	setup := gewekeSetup{priorSeed: [2]uint64{31, 32}, chainSeed: 33, firstStream: 200, chains: 8, burn: 1000, iters: 6000}
	stats := func(st *State) []float64 { return twoTreeStats(m, st) }
	prior, chains := gewekeStates(t, m, setup, len(names), stats, m.SamplePrior, func(ch *Chain) { redrawSeveral(t, ch) })
	compareMeans(t, names, prior, chains)
}

// TestTwoTreesResume checks that a run of a model with two PYDTs,
// interrupted and resumed, writes exactly the files of an uninterrupted
// run, the second tree's files named by its variable.
func TestTwoTreesResume(t *testing.T) {
	x := &dataset.Matrix{Rows: 5, Cols: 2, Source: "x.csv", Data: []float64{0.1, 0.2, 1.3, -0.4, 0.9, 1.1, -1.2, 0.3, 0.5, -0.7}}
	y := &dataset.Matrix{Rows: 4, Cols: 1, Source: "y.csv", Data: []float64{-1, 0.2, 1.4, 0.5}}
	m := compileSource(t, "two.pydt", []byte(twoTreeModel), map[string]*dataset.Matrix{"X": x, "Y": y}, nil)
	cfg := Config{Iters: 60, Burn: 20, Chains: 2, Seed: 5, CheckpointEvery: 10}
	full := t.TempDir()
	cfg.Out = full
	res, err := Run(context.Background(), m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{TraceFile, TreesFile(1), TreesFile(2), TreesFileOf("Y", 1), TreesFileOf("Y", 2), MapFile, FileOf(MapFile, "Y"),
		SummaryTreeFile, FileOf(SummaryTreeFile, "Y"), CoclustFile, FileOf(CoclustFile, "Y"), MEAFile, FileOf(MEAFile, "Y")}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(full, f)); err != nil {
			t.Error(err)
		}
	}
	if got := strings.Join(res.PYDTs, ","); got != "X,Y" {
		t.Errorf("PYDTs %q", got)
	}
	if res.TreeSummaries["Y"] == nil || res.SummaryTree == nil {
		t.Errorf("summaries %+v %+v", res.SummaryTree, res.TreeSummaries)
	}
	for _, k := range []string{"subtree(X)", "subtree(Y)", "time(Y)"} {
		if _, ok := res.Acceptance[k]; !ok {
			t.Errorf("acceptance lacks %s: %v", k, res.Acceptance)
		}
	}
	if b, err := os.ReadFile(filepath.Join(full, TreesFileOf("Y", 1))); err != nil || strings.Count(string(b), "\n") != 40 {
		t.Errorf("%s: %d trees, %v", TreesFileOf("Y", 1), strings.Count(string(b), "\n"), err)
	}

	part := t.TempDir()
	cfg.Out = part
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = func(done, total int, _ float64) {
		if done == 35 {
			cancel()
		}
	}
	if _, err := Run(ctx, m, cfg); err == nil {
		t.Fatal("the interrupted run did not stop")
	}
	if _, err := Resume(context.Background(), m, part, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		a, err1 := os.ReadFile(filepath.Join(full, f))
		b, err2 := os.ReadFile(filepath.Join(part, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if string(a) != string(b) {
			t.Errorf("%s differs after resuming", f)
		}
	}
}
