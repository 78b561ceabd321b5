package main

import (
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
