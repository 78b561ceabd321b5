package inference

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestInitTree: with Config.InitTrees every chain starts from the given
// tree (checked on the chains as Run builds them), run.json and
// init-tree.nwk record it, and a resume before the first checkpoint
// starts from it again, giving the same trace byte for byte.
func TestInitTree(t *testing.T) {
	x := fourClusters(12, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	// A binary tree with the clusters as clades, made by EM from the data.
	emDir := t.TempDir()
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 2, Seed: 1, Out: emDir})
	if err != nil {
		t.Fatal(err)
	}
	init := res.Trees[0].Tree
	want := init.Newick()

	var started []string
	chainHook = func(ch *Chain) { started = append(started, ch.st.Trees[0].Newick()) }
	defer func() { chainHook = nil }()
	dir := t.TempDir()
	cfg := Config{Iters: 6, Chains: 2, Seed: 4, Out: dir, CheckpointEvery: 1000, InitTrees: map[string]*pydt.Tree{"": init}}
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	if len(started) != 2 || started[0] != want || started[1] != want {
		t.Fatalf("chains started from\n%q\nwant\n%q", started, want)
	}
	ri, err := ReadRun(dir)
	if err != nil || len(ri.InitTrees) != 1 || ri.InitTrees[0] != "X" {
		t.Fatalf("run.json init_trees: %v, %v", ri.InitTrees, err)
	}
	trace, err := os.ReadFile(filepath.Join(dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}

	// Resume from run.json alone (a run killed before its first checkpoint).
	for _, name := range []string{CheckpointFile, TraceFile, TreesFile(1), TreesFile(2)} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	started = nil
	if _, err := Resume(context.Background(), m, dir, nil); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(trace, again) || len(started) != 2 || started[0] != want {
		t.Errorf("resumed run differs: started %q\n%s\nwant\n%s", started, again, trace)
	}

	// Without the start tree the chains start elsewhere (the test can fail).
	started = nil
	cfg.InitTrees, cfg.Out = nil, t.TempDir()
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	if started[0] == want {
		t.Error("a run without InitTrees started from the same tree")
	}
}

// TestInitTreeRefused: a start tree of the wrong rows, of an unknown PYDT,
// or of zero prior density (a multifurcation under alpha = beta = 0) is
// refused with an error that says so, before any file is written.
func TestInitTreeRefused(t *testing.T) {
	x := fourClusters(4, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	star, err := pydt.ParseNewick("(1:0.5,2:0.5,3:0.5,4:0.5):0.5;", nil)
	if err != nil {
		t.Fatal(err)
	}
	three, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,3:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	ddt := compileSource(t, "gaussian.pydt", src, map[string]*dataset.Matrix{"X": x}, map[string]float64{"alpha": 0, "beta": 0})
	for _, c := range []struct {
		name  string
		m     *Model
		trees map[string]*pydt.Tree
		want  string
	}{
		{"three leaves", m, map[string]*pydt.Tree{"": three}, "rows"},
		{"unknown PYDT", m, map[string]*pydt.Tree{"Q": star}, "not a PYDT"},
		{"multifurcation under the DDT", ddt, map[string]*pydt.Tree{"X": star}, "prior log density is -Inf"},
	} {
		dir := t.TempDir()
		_, err := Run(context.Background(), c.m, Config{Iters: 2, Chains: 1, Out: dir, InitTrees: c.trees})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 1 { // the lock file only
			t.Errorf("%s: files left: %v", c.name, entries)
		}
	}
}

// TestEMInitTree: the EM search starts from EMConfig.InitTree (its fitted
// copy is the initial list, so a caterpillar no search would build stays
// in the K-best list after one round) and leaves the given tree alone.
func TestEMInitTree(t *testing.T) {
	x := fourClusters(12, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	// Branch point j (1 the innermost) at t = 0.95 − 0.08(j−1).
	tj := func(j int) float64 { return 0.95 - 0.08*float64(j-1) }
	nwk := "1:" + strconv.FormatFloat(1-tj(1), 'g', -1, 64)
	for j := 1; j <= 11; j++ {
		up := 0.08
		if j == 11 {
			up = tj(11)
		}
		nwk = "(" + nwk + "," + strconv.Itoa(j+1) + ":" + strconv.FormatFloat(1-tj(j), 'g', -1, 64) + "):" + strconv.FormatFloat(up, 'g', -1, 64)
	}
	init, err := pydt.ParseNewick(nwk+";", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := init.Newick()
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Patience: -1, Seed: 1, Out: t.TempDir(), InitTree: init})
	if err != nil {
		t.Fatal(err)
	}
	key := topologyKey(init)
	found := false
	for _, tr := range res.Trees {
		found = found || topologyKey(tr.Tree) == key
	}
	if !found {
		t.Errorf("the start tree's topology is not in the K-best list")
	}
	if init.Newick() != before {
		t.Errorf("RunEM changed the given tree")
	}
	def, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Patience: -1, Seed: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range def.Trees {
		if topologyKey(tr.Tree) == key {
			t.Fatal("the default search also holds the caterpillar: the test cannot tell")
		}
	}
}

// TestReadTreeFirstOnly: ReadTree reads the first tree of a file and no
// further, so that a file whose later line is cut short (a tree file of a
// killed run) or not a tree gives its first tree; it read and parsed the
// whole file before, and failed. A file of no tree, or whose first tree is
// bad, is still an error.
func TestReadTreeFirstOnly(t *testing.T) {
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": fourClusters(4, 0.25, 5)})
	good := "((1:0.5,2:0.5):0.3,(3:0.4,4:0.4):0.4):0.2;"
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"one tree", good + "\n", true},
		{"cut short after", good + "\n((r1:0.5,r2", true},
		{"garbage after", good + "\nnot a tree at all)\n", true},
		{"bad first", "((1:0.5,2\n" + good + "\n", false},
		{"no tree", "\n", false},
	} {
		path := filepath.Join(t.TempDir(), "t.nwk")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := m.ReadTree(path, "")
		if tc.ok && (err != nil || tr == nil || tr.NumLeaves() != 4) {
			t.Errorf("%s: %v, %v", tc.name, tr, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestNewChainAt: a chain made by NewChainAt starts from the given tree
// (a caterpillar, which a prior draw of 8 leaves is unlikely to be, and
// which differs from NewChain's start with the same seed), keeps it
// through the checks, and a tree of the wrong rows is refused.
func TestNewChainAt(t *testing.T) {
	x := fourClusters(8, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := pydt.ParseNewick("(((((((1:0.1,2:0.1):0.1,3:0.2):0.1,4:0.3):0.1,5:0.4):0.1,6:0.5):0.1,7:0.6):0.1,8:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := cat.Newick()
	ch, err := NewChainAt(m, sched, 3, 1, map[string]*pydt.Tree{"": cat})
	if err != nil {
		t.Fatal(err)
	}
	if got := ch.Tree(0).Newick(); got != want {
		t.Errorf("NewChainAt started from\n%s\nwant\n%s", got, want)
	}
	if err := ch.Sweep(); err != nil {
		t.Fatal(err)
	}
	drawn, err := NewChain(m, sched, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if drawn.Tree(0).Newick() == want {
		t.Error("NewChain drew the caterpillar: the test cannot tell the starts apart")
	}
	three, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,3:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewChainAt(m, sched, 3, 1, map[string]*pydt.Tree{"": three}); err == nil || !strings.Contains(err.Error(), "initial tree of X: has 3 leaves but the data X has 8 rows") {
		t.Errorf("a tree of 3 leaves for 8 rows: error %v", err)
	}
}
