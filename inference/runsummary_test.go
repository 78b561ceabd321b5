package inference

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference/cluster"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// bestStateInS recomputes, from a run's trace.csv and tree files (every
// sweep kept), the state of largest log joint density with the times in
// s = -log(1-t): log_joint - Σ_b s_b, with s_b read from the kept tree. It
// returns that tree's line, its density in s and its log_joint, and the
// tree of the largest log_joint (the density in t).
func bestStateInS(t *testing.T, dir string, chains int) (tree string, bestS, itsLJ float64, treeT string) {
	t.Helper()
	rows := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, TraceFile))))), "\n")[1:]
	trees := map[int][]string{}
	for k := 1; k <= chains; k++ {
		trees[k] = strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, TreesFile(k)))))), "\n")
	}
	bestS, bestT := math.Inf(-1), math.Inf(-1)
	for _, r := range rows {
		f := strings.Split(r, ",")
		k, _ := strconv.Atoi(f[0])
		it, _ := strconv.Atoi(f[1])
		lj, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		nwk := trees[k][it-1]
		tr, err := pydt.ParseNewick(nwk, nil)
		if err != nil {
			t.Fatal(err)
		}
		sumS := 0.0
		for _, v := range tr.PreOrder(nil) {
			if !tr.IsLeaf(v) {
				sumS += tr.Time(v).S()
			}
		}
		if ls := lj - sumS; ls > bestS {
			bestS, itsLJ, tree = ls, lj, nwk
		}
		if lj > bestT {
			bestT, treeT = lj, nwk
		}
	}
	return tree, bestS, itsLJ, treeT
}

// TestMapTreeFollowsTheChain checks, for the Gaussian model, that map.nwk
// is the tree of the state of highest log joint density in s (see
// TestMapTreeRankedInS) among every state the run saw (every sweep kept),
// that summary.json's map_log_joint and map_log_joint_s are that state's,
// and that map.nwk moves on from the early sweeps' tree.
func TestMapTreeFollowsTheChain(t *testing.T) {
	m := compileWithData(t, gaussianModel, [][]float64{{0.1, -0.3}, {0.2, -0.1}, {-1, 0.8}, {-1.1, 0.9}, {1.5, 0.2}, {1.4, 0.1}}, nil)
	maps := map[int]string{}
	for _, iters := range []int{2, 300} {
		dir := t.TempDir()
		res, err := Run(context.Background(), m, Config{Iters: iters, Burn: -1, Chains: 2, Seed: 7, Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		want, bestS, lj, _ := bestStateInS(t, dir, 2)
		if !(math.Abs(res.MapLogJointS-bestS) <= 1e-9*math.Abs(bestS)) || res.MapLogJoint != lj {
			t.Errorf("%d sweeps: map_log_joint_s %v, map_log_joint %v; the trace's largest log_joint - Σ s is %v, at log_joint %v", iters, res.MapLogJointS, res.MapLogJoint, bestS, lj)
		}
		maps[iters] = strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, MapFile)))))
		if maps[iters] != want {
			t.Errorf("%d sweeps: map.nwk is %s, want %s", iters, maps[iters], want)
		}
	}
	if maps[2] == maps[300] {
		t.Errorf("map.nwk after 300 sweeps is the tree of the first two: %s", maps[2])
	}
}

// TestMapTreeRankedInS is the regression test of a map.nwk chosen by the
// log joint density with the divergence times in t: that density carries
// the Jacobian Σ_b s_b = -Σ_b log(1-t_b), unbounded as times approach t = 1,
// and with a Normal noise model (where the data do not keep times from 1)
// the highest-log_joint state was a burn-in state with times within 1e-20
// of 1 (docs/summaries.md). map.nwk must be the tree of the state of
// largest log_joint - Σ_b s_b, recomputed here from the trace and the kept
// trees' times; on this run the two rankings choose different states.
func TestMapTreeRankedInS(t *testing.T) {
	rows := [][]float64{{0.1, -0.3}, {0.2, -0.1}, {-1, 0.8}, {-1.1, 0.9}, {1.5, 0.2}, {1.4, 0.1}, {0.1, -0.3}, {2, 2}}
	m := compileWithData(t, normalLinkModel, rows, nil)
	dir := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 200, Burn: -1, Chains: 2, Seed: 3, Out: dir}); err != nil {
		t.Fatal(err)
	}
	want, bestS, _, treeT := bestStateInS(t, dir, 2)
	if want == treeT {
		t.Fatalf("the largest log_joint and the largest log_joint - Σ s are at the same tree: the test cannot tell the rankings apart")
	}
	if got := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, MapFile))))); got != want {
		t.Errorf("map.nwk is %s,\nwant the tree of the largest log_joint - Σ s (%v): %s", got, bestS, want)
	}
}

// TestProbitRunWritesNoMapTree is the regression test of a map.nwk that,
// for a Probit model, stayed the tree of the first sweeps: the augmented
// log joint is not comparable across states, so no map.nwk is written.
func TestProbitRunWritesNoMapTree(t *testing.T) {
	y := &dataset.Matrix{Rows: 5, Cols: 3, Data: []float64{1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1}, Source: "y.csv"}
	dir := t.TempDir()
	res, err := Run(context.Background(), compileProbit(t, y), Config{Iters: 20, Chains: 1, Seed: 1, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, MapFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("map.nwk written for a Probit model: %v", err)
	}
	if res.SummaryTree == nil || res.SummaryTree.Trees != 10 {
		t.Errorf("summary tree info %+v, want 10 trees", res.SummaryTree)
	}
	if res.SummaryTree != nil && res.SummaryTree.ASDSF != nil {
		t.Errorf("one chain has an ASDSF: %v", *res.SummaryTree.ASDSF)
	}
	if _, err := os.Stat(filepath.Join(dir, SummaryTreeFile)); err != nil {
		t.Error(err)
	}
}

// TestRunWritesTreeSummaries checks the summary files of a run: the
// summary, MEA and consensus trees read back with the data's labels, their
// branch points carry credibilities in [0, 1], coclust.csv is N×N, and
// RemoveRunFiles removes them all (the old mcc.nwk included).
func TestRunWritesTreeSummaries(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	dir := t.TempDir()
	res, err := Run(context.Background(), m, Config{Iters: 40, Chains: 2, Seed: 3, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := res.SummaryTree
	if s == nil || s.Trees != 40 || !s.Summary || s.MEABranchPoints < 1 || s.ConsensusBranchPoints < 1 || s.DistinctClades < s.MEABranchPoints {
		t.Fatalf("summary tree info %+v", s)
	}
	checkRunASDSF(t, dir, 2, m.Labels, s)
	for _, name := range []string{SummaryTreeFile, MEAFile, ConsensusFile} {
		text := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, name)))))
		if _, err := pydt.ParseNewick(text, m.Labels); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.HasSuffix(text, ";") || !strings.Contains(text, ")1:") {
			t.Errorf("%s: %s has no root credibility", name, text)
		}
	}
	rows := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, CoclustFile))))), "\n")
	if len(rows) != 1+m.N || len(strings.Split(rows[1], ",")) != 1+m.N {
		t.Errorf("coclust.csv has %d lines, want %d", len(rows), 1+m.N)
	}
	if err := os.WriteFile(filepath.Join(dir, legacyMCCFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemoveRunFiles(dir); err != nil {
		t.Fatal(err)
	}
	// The run's lock file stays: deleting it could let two runs hold
	// "the" lock at once.
	if left, _ := os.ReadDir(dir); len(left) != 1 || left[0].Name() != LockFile {
		t.Errorf("RemoveRunFiles left %v, want only %s", left, LockFile)
	}
}

func TestWantCoclust(t *testing.T) {
	for _, tc := range []struct {
		n     int
		asked bool
		want  bool
	}{{1, false, true}, {2000, false, true}, {2001, false, false}, {2001, true, true}, {100000, true, true}} {
		if got := wantCoclust(tc.n, tc.asked); got != tc.want {
			t.Errorf("wantCoclust(%d, %v) = %v, want %v", tc.n, tc.asked, got, tc.want)
		}
	}
}

// animalGroup is the paper's five groups of the animals data (as in
// internal/clusterstudy): land mammals, aquatic animals, reptiles, birds
// and insects.
var animalGroup = map[string]int{
	"Elephant": 0, "Rhino": 0, "Horse": 0, "Cow": 0, "Camel": 0, "Giraffe": 0, "Chimp": 0, "Gorilla": 0,
	"Mouse": 0, "Squirrel": 0, "Tiger": 0, "Lion": 0, "Cat": 0, "Dog": 0, "Wolf": 0, "Deer": 0,
	"Seal": 1, "Dolphin": 1, "Whale": 1, "Salmon": 1, "Trout": 1,
	"Iguana": 2, "Alligator": 2,
	"Robin": 3, "Eagle": 3, "Chicken": 3, "Finch": 3, "Penguin": 3, "Ostrich": 3,
	"Bee": 4, "Butterfly": 4, "Ant": 4, "Cockroach": 4,
}

// TestAnimalsSummaryIsResolved fits the paper's probit model to the
// animals data briefly and checks that the summary tree is resolved (the
// maximum clade credibility tree of earlier versions was a star) and
// recovers the paper's five groups as well as the posterior trees do.
func TestAnimalsSummaryIsResolved(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a probit run on the animals data")
	}
	y, err := dataset.ReadFile("../examples/data/animals.csv")
	if err != nil {
		t.Fatal(err)
	}
	m := compileExampleFile(t, "binary.pydt", map[string]*dataset.Matrix{"Y": y})
	dir := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 300, Chains: 2, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	class := make([]int, len(y.RowLabels))
	for i, l := range y.RowLabels {
		c, ok := animalGroup[l]
		if !ok {
			t.Fatalf("no group for %q", l)
		}
		class[i] = c
	}
	var mean float64
	var kept int
	for k := 1; k <= 2; k++ {
		err := NewickFiles(y.Rows, y.RowLabels, filepath.Join(dir, TreesFile(k)))(func(tr *pydt.Tree) error {
			p, err := cluster.DendrogramPurity(tr, class)
			mean += p
			kept++
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	mean /= float64(kept)
	for _, name := range []string{SummaryTreeFile, MEAFile, ConsensusFile} {
		tr, err := pydt.ParseNewick(string(must(os.ReadFile(filepath.Join(dir, name)))), y.RowLabels)
		if err != nil {
			t.Fatal(err)
		}
		p, err := cluster.DendrogramPurity(tr, class)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d branch points, dendrogram purity %.3f (posterior mean %.3f)", name, tr.NumInternal(), p, mean)
		if name == SummaryTreeFile && (tr.NumInternal() < 25 || p < 0.9 || p < mean-0.02) {
			t.Errorf("%s: %d branch points, dendrogram purity %.3f (posterior mean %.3f)", name, tr.NumInternal(), p, mean)
		}
	}
}
