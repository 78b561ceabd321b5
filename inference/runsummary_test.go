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
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestMapTreeFollowsTheChain checks, for the Gaussian model, that map.nwk
// is the tree of the highest log_joint of the trace (every sweep kept, so
// the trace holds every state the run saw) and that it moves on from the
// early sweeps' tree.
func TestMapTreeFollowsTheChain(t *testing.T) {
	m := compileWithData(t, gaussianModel, [][]float64{{0.1, -0.3}, {0.2, -0.1}, {-1, 0.8}, {-1.1, 0.9}, {1.5, 0.2}, {1.4, 0.1}}, nil)
	maps := map[int]string{}
	for _, iters := range []int{2, 300} {
		dir := t.TempDir()
		res, err := Run(context.Background(), m, Config{Iters: iters, Burn: -1, Chains: 2, Seed: 7, Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		rows := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, TraceFile))))), "\n")[1:]
		best, bestRow := math.Inf(-1), ""
		for _, r := range rows {
			lj, _ := strconv.ParseFloat(strings.Split(r, ",")[2], 64)
			if lj > best {
				best, bestRow = lj, r
			}
		}
		if res.MapLogJoint != best {
			t.Errorf("%d sweeps: map_log_joint %v, the trace's largest log_joint %v", iters, res.MapLogJoint, best)
		}
		f := strings.Split(bestRow, ",")
		k, _ := strconv.Atoi(f[0])
		it, _ := strconv.Atoi(f[1])
		trees := strings.Split(string(must(os.ReadFile(filepath.Join(dir, TreesFile(k))))), "\n")
		maps[iters] = string(must(os.ReadFile(filepath.Join(dir, MapFile))))
		if want := trees[it-1] + "\n"; maps[iters] != want {
			t.Errorf("%d sweeps: map.nwk is %s, want the tree of chain %d, sweep %d: %s", iters, maps[iters], k, it, want)
		}
	}
	if maps[2] == maps[300] {
		t.Errorf("map.nwk after 300 sweeps is the tree of the first two: %s", maps[2])
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
