package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDDTByClampingCommands: run, sample and score accept alpha = beta = 0
// (Neal's DDT) although 0 lies outside the Gamma and Beta priors'
// supports, and say that those priors are left out; a value that the PYDT
// itself rejects is still refused.
func TestDDTByClampingCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "fit")
	code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--set", "alpha=0,beta=0", "--iters", "20", "--chains", "1", "--seed", "2", "--out", out)
	if code != 0 {
		t.Fatalf("run: status %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "alpha = 0, beta = 0 lie outside the supports of their distributions") {
		t.Errorf("run: no note about the left-out priors:\n%s", errOut)
	}

	code, _, errOut = runCmd(t, "sample", "../../examples/gaussian.pydt", "--set", "N=6,D=2,alpha=0,beta=0",
		"--draws", "3", "--seed", "1", "--out", filepath.Join(dir, "draws"))
	if code != 0 {
		t.Fatalf("sample: status %d\n%s", code, errOut)
	}
	params, err := os.ReadFile(filepath.Join(dir, "draws", "params.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(params)), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[1], "1,0,0,") {
		t.Errorf("sample: params.csv\n%s", params)
	}

	// A binary tree of the synthetic data: the first kept tree of the run.
	trees, err := os.ReadFile(filepath.Join(out, "trees-1.nwk"))
	if err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "t.nwk")
	os.WriteFile(tree, []byte(strings.SplitN(string(trees), "\n", 2)[0]+"\n"), 0o644)
	code, stdout, errOut := runCmd(t, "score", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--tree", tree, "--set", "alpha=0,beta=0,c=1,prec=2", "--json")
	if code != 0 {
		t.Fatalf("score: status %d\n%s", code, errOut)
	}
	var s struct {
		LogHyper float64  `json:"log_hyper"`
		Omitted  []string `json:"omitted"`
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	// c ~ Gamma(1, 1) at 1 and prec ~ Gamma(1, 1) at 2: -1 - 2.
	if s.LogHyper != -3 || strings.Join(s.Omitted, "; ") != "alpha ~ Gamma(2, 0.5); beta ~ Beta(1, 1)" {
		t.Errorf("score: log_hyper %v, omitted %q", s.LogHyper, s.Omitted)
	}
	if !strings.Contains(errOut, "log_hyper sums prec ~ Gamma(1, 1); c ~ Gamma(1, 1)") {
		t.Errorf("score: stderr does not say which terms log_hyper sums:\n%s", errOut)
	}

	code, _, errOut = runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--set", "beta=1", "--iters", "2", "--out", filepath.Join(dir, "bad"))
	if code != 1 || !strings.Contains(errOut, "--set beta: value 1: with it, PYDT parameter beta = 1") {
		t.Errorf("run --set beta=1: status %d\n%s", code, errOut)
	}
}

// TestScoreJSONZeroDensity: a multifurcating tree has zero density under
// the DDT (alpha = beta = 0); score --json says so with "-Inf" instead of
// failing to encode the number.
func TestScoreJSONZeroDensity(t *testing.T) {
	code, stdout, errOut := runCmd(t, "score", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--tree", "../../examples/data/synthetic-tree.nwk", "--set", "alpha=0,beta=0,c=1,prec=2", "--json")
	if code != 0 {
		t.Fatalf("status %d\n%s", code, errOut)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s["log_tree"] != "-Inf" || s["log_joint"] != "-Inf" {
		t.Errorf("log_tree %v, log_joint %v, want \"-Inf\"", s["log_tree"], s["log_joint"])
	}
	if _, ok := s["log_lik"].(float64); !ok {
		t.Errorf("log_lik %v is not a number", s["log_lik"])
	}
}
