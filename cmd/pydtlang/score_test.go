package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScoreValues checks score --values on a model with a latent array
// (a precision per column): sample's output round-trips into score with
// --draw K and --values params.csv, and the errors name what is wrong.
func TestScoreValues(t *testing.T) {
	dir := t.TempDir()
	const model = "../../examples/gaussian-perdim.pydt"
	if code, out, errOut := runCmd(t, "sample", model, "--set", "N=6,D=3", "--draws", "3", "--seed", "1", "--out", dir); code != 0 {
		t.Fatalf("sample: status %d\n%s%s", code, out, errOut)
	}
	base := []string{"score", model, "--data", "X=" + filepath.Join(dir, "X.csv"), "--tree", filepath.Join(dir, "trees.nwk")}
	params := filepath.Join(dir, "params.csv")
	code, out, errOut := runCmd(t, append(base, "--draw", "2", "--values", params)...)
	if code != 0 || !strings.Contains(out, "log_joint ") {
		t.Fatalf("score --values: status %d\n%s%s", code, out, errOut)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--draw", "2", "--set", "alpha=1,beta=0.2,c=1"}, 1, "score needs a value for every element of the latent array prec (shape [3]): give them with --values FILE.csv"},
		{[]string{"--values", params}, 2, "holds 3 draws: choose one with --draw K"},
		{[]string{"--draw", "2", "--values", params, "--set", "alpha=1"}, 2, "alpha is given both by --set and by the values file"},
		{[]string{"--draw", "2", "--values", filepath.Join(dir, "nope.csv")}, 1, "nope.csv"},
	} {
		code, out, errOut := runCmd(t, append(base, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: status %d, want %d and %q\n%s%s", tt.args, code, tt.code, tt.want, out, errOut)
		}
	}
}

// TestScoreHMM: score evaluates an HMM whose state means are the tree's
// leaves (the data reach the leaves through z) at values from sample,
// z included; the same values with z changed give another log_lik, and a
// state outside 1..K is an error naming z. (score refused such models.)
func TestScoreHMM(t *testing.T) {
	dir := t.TempDir()
	const model = "../../examples/hmm-gaussian.pydt"
	if code, out, errOut := runCmd(t, "sample", model, "--set", "T=12,K=3,D=2", "--draws", "2", "--seed", "1", "--out", dir); code != 0 {
		t.Fatalf("sample: status %d\n%s%s", code, out, errOut)
	}
	base := []string{"score", model, "--data", "y=" + filepath.Join(dir, "y.csv"), "--draw", "1", "--tree", filepath.Join(dir, "trees.nwk"), "--set", "K=3"}
	params := filepath.Join(dir, "params.csv")
	code, out, errOut := runCmd(t, append(base, "--values", params)...)
	if code != 0 || !strings.Contains(out, "log_lik ") || !strings.Contains(out, "log_joint ") {
		t.Fatalf("score: status %d\n%s%s", code, out, errOut)
	}
	// z[1] set to another state: log_lik changes.
	text := string(mustRead(t, params))
	lines := strings.Split(text, "\n")
	head := strings.Split(lines[0], ",")
	row := strings.Split(lines[1], ",")
	for i, h := range head {
		if h == "z[1]" {
			row[i] = map[string]string{"1": "2", "2": "3", "3": "1"}[row[i]]
		}
	}
	lines[1] = strings.Join(row, ",")
	moved := filepath.Join(dir, "moved.csv")
	mustWrite(t, moved, strings.Join(lines[:2], "\n")+"\n")
	code, out2, errOut := runCmd(t, append(base, "--values", moved)...)
	if code != 0 || out2 == out {
		t.Errorf("score with z[1] moved: status %d, same output %v\n%s%s", code, out2 == out, out2, errOut)
	}
	for i, h := range head {
		if h == "z[1]" {
			row[i] = "4"
		}
	}
	lines[1] = strings.Join(row, ",")
	mustWrite(t, moved, strings.Join(lines[:2], "\n")+"\n")
	if code, _, errOut := runCmd(t, append(base, "--values", moved)...); code == 0 || !strings.Contains(errOut, "index 4 of mu is outside 1..3") {
		t.Errorf("score with z[1] = 4 of 3 states: status %d\n%s", code, errOut)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
