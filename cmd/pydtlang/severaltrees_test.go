package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

const twoTreesExample = "../../examples/two-trees.pydt"

// TestSampleSeveralTrees checks that sample writes each PYDT's trees of a
// model with several: trees.nwk for the first, trees-Z.nwk for Z's.
func TestSampleSeveralTrees(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd(t, "sample", twoTreesExample, "--set", "N=3,D=2,M=4,E=3", "--draws", "4", "--seed", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("sample: %d %s", code, errOut)
	}
	for name, leaves := range map[string]int{"trees.nwk": 3, "trees-Z.nwk": 4} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 4 {
			t.Errorf("%s: %d trees, want 4", name, len(lines))
		}
		for _, line := range lines {
			if tr, err := pydt.ParseNewick(line, nil); err != nil || tr.NumLeaves() != leaves {
				t.Fatalf("%s: %q: %v", name, line, err)
			}
		}
	}
	for _, name := range []string{"X.csv", "Y.csv", "params.csv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestScoreSeveralTrees scores a draw of examples/two-trees.pydt with a
// tree of each PYDT (--tree, --tree-of Z=FILE) and checks log_tree and
// log_lik against the sums of the scores of the two one-tree models that
// make it up, scored separately on the same trees and data.
func TestScoreSeveralTrees(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCmd(t, "sample", twoTreesExample, "--set", "N=5,D=2,M=4,E=3", "--draws", "3", "--seed", "8", "--out", dir); code != 0 {
		t.Fatalf("sample: %s", errOut)
	}
	xModel := filepath.Join(dir, "x.pydt")
	zModel := filepath.Join(dir, "z.pydt")
	if err := os.WriteFile(xModel, []byte("dim N, D\ndata X : real[N, D]\nalpha ~ Gamma(2, 0.5)\nbeta ~ Beta(1, 1)\nc ~ Gamma(1, 1)\nprec ~ Gamma(1, 1)\nX ~ PYDT(alpha, beta, c, 1 / prec)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zModel, []byte("dim M, E\ndata Y : binary[M, E]\nparam Z : real[M, E]\nalpha ~ Gamma(2, 0.5)\nbeta ~ Beta(1, 1)\nc ~ Gamma(1, 1)\nprecZ ~ Gamma(1, 1)\n"+
		"Z ~ PYDT(alpha, beta, c, 1 / precZ)\nfor i in 1:M, d in 1:E {\n  Y[i, d] ~ Probit(Z[i, d])\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const set = "alpha=0.7,beta=0.3,c=1.5,prec=2,precZ=0.8"
	score := func(args ...string) map[string]float64 {
		t.Helper()
		code, out, errOut := runCmd(t, append([]string{"score"}, args...)...)
		if code != 0 {
			t.Fatalf("score %v: %d %s", args, code, errOut)
		}
		got := map[string]float64{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var name string
			var v float64
			if _, err := fmt.Sscan(line, &name, &v); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got[name] = v
		}
		return got
	}
	x, y := "X="+filepath.Join(dir, "X.csv"), "Y="+filepath.Join(dir, "Y.csv")
	both := score(twoTreesExample, "--data", x, "--data", y, "--tree", filepath.Join(dir, "trees.nwk"),
		"--tree-of", "Z="+filepath.Join(dir, "trees-Z.nwk"), "--draw", "2", "--set", set)
	one := score(xModel, "--data", x, "--tree", filepath.Join(dir, "trees.nwk"), "--draw", "2", "--set", "alpha=0.7,beta=0.3,c=1.5,prec=2")
	two := score(zModel, "--data", y, "--tree", filepath.Join(dir, "trees-Z.nwk"), "--draw", "2", "--set", "alpha=0.7,beta=0.3,c=1.5,precZ=0.8")
	for _, part := range []string{"log_tree", "log_lik"} {
		if want := one[part] + two[part]; !(math.Abs(both[part]-want) <= 1e-9*math.Max(1, math.Abs(want))) {
			t.Errorf("%s %v, the one-tree models' sum %v", part, both[part], want)
		}
	}
	if both["log_joint"] != both["log_tree"]+both["log_lik"]+both["log_hyper"] {
		t.Errorf("log_joint %v is not the sum of its parts %v", both["log_joint"], both)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the trees of Z with --tree-of Z=FILE"},
		{[]string{"--tree-of", "Q=" + filepath.Join(dir, "trees-Z.nwk")}, "Q is not a PYDT of the model"},
		{[]string{"--tree-of", "X=" + filepath.Join(dir, "trees.nwk")}, "X is the first PYDT"},
	} {
		args := append([]string{"score", twoTreesExample, "--data", x, "--data", y, "--tree", filepath.Join(dir, "trees.nwk"), "--draw", "2", "--set", set}, tc.args...)
		if code, _, errOut := runCmd(t, args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("score %v: %d %s", tc.args, code, errOut)
		}
	}
}

// TestRunSeveralTreesImputeAndCut runs examples/two-trees.pydt on data
// with missing entries in both data sets: --impute writes each data set's
// draws (impute.csv for X, at the first PYDT's leaves; impute-Z.csv for
// Y, at Z's), and cut cuts either tree (--tree-of), saying which.
func TestRunSeveralTreesImputeAndCut(t *testing.T) {
	in := t.TempDir()
	x := filepath.Join(in, "x.csv")
	y := filepath.Join(in, "y.csv")
	if err := os.WriteFile(x, []byte("name,a,b\nr1,0.1,0.3\nr2,,1.2\nr3,-1.1,0.4\nr4,2.0,1.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(y, []byte("animal,f1,f2,f3\nant,1,0,1\nbee,1,,1\ncat,0,1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, _, errOut := runCmd(t, "run", twoTreesExample, "--data", "X="+x, "--data", "Y="+y,
		"--iters", "30", "--chains", "1", "--seed", "4", "--impute", "--out", dir)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	for name, want := range map[string]string{"impute.csv": ",r2,a,", "impute-Z.csv": ",bee,f2,"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if lines[0] != "chain,iteration,row,column,value" || len(lines) != 1+15 {
			t.Errorf("%s: header %q, %d lines", name, lines[0], len(lines))
		}
		for _, l := range lines[1:] {
			if !strings.Contains(l, want) {
				t.Errorf("%s: %q does not impute %s", name, l, want)
				break
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "impute-Z.csv")); !strings.HasSuffix(strings.TrimSpace(string(b)), ",0") && !strings.HasSuffix(strings.TrimSpace(string(b)), ",1") {
		t.Errorf("impute-Z.csv: Y's draws are not binary:\n%s", b)
	}

	code, out, errOut := runCmd(t, "cut", dir, "--k", "2", "--tree-of", "Z")
	if code != 0 || !strings.HasPrefix(out, "row,cluster\nant,") || strings.Count(out, "\n") != 4 || strings.Contains(errOut, "note: the run has") {
		t.Errorf("cut --tree-of Z: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "cut", dir, "--k", "2", "--tree-of", "Z", "--posterior")
	if code != 0 || !strings.HasPrefix(out, "row,cluster\nant,") || !strings.Contains(errOut, "summary-Z.nwk") {
		t.Errorf("cut --tree-of Z --posterior: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "cut", dir, "--k", "2")
	if code != 0 || !strings.HasPrefix(out, "row,cluster\nr1,") || !strings.Contains(errOut, "the run has the PYDTs X, Z; this cuts X's trees (--tree-of V cuts another's)") {
		t.Errorf("cut: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = runCmd(t, "cut", dir, "--k", "2", "--tree-of", "Y"); code == 0 || !strings.Contains(errOut, "Y is not a PYDT of the run") || !strings.Contains(errOut, "its PYDTs: X, Z") {
		t.Errorf("cut --tree-of Y: %d %s", code, errOut)
	}

	// The commands that handle the first PYDT only say so; those that
	// cannot serve the model refuse it with an error that says why.
	if code, _, errOut = runCmd(t, "plot", dir, "--out", t.TempDir()); code != 0 || !strings.Contains(errOut, "the run has the PYDTs X, Z: these pictures are of X's tree") {
		t.Errorf("plot: %d %s", code, errOut)
	}
	if code, _, errOut = runCmd(t, "predict", dir, "--test", x); code != 0 || !strings.Contains(errOut, "predict scores rows of X, the data of the first, X") {
		t.Errorf("predict: %d %s", code, errOut)
	}
	for _, args := range [][]string{
		{"run", twoTreesExample, "--data", "X=" + x, "--data", "Y=" + y, "--standardize", "--iters", "10", "--out", filepath.Join(t.TempDir(), "s")},
		{"summary", dir, "--out", filepath.Join(t.TempDir(), "m")},
	} {
		if code, _, errOut = runCmd(t, args...); code == 0 || !strings.Contains(errOut, "several PYDTs") {
			t.Errorf("%s: %d %s", args[0], code, errOut)
		}
	}
}
