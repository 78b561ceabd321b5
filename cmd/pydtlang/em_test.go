package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunMethodEM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "em")
	code, out, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--iters", "3", "--seed", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	if !strings.Contains(out, "best tree's bound") {
		t.Errorf("output: %s", out)
	}
	for _, name := range []string{"map.nwk", "kbest.nwk", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	if code, _, errOut := runCmd(t, "run", "--resume", dir); code == 0 || !strings.Contains(errOut, "EM run") {
		t.Errorf("resume of an EM run: status %d, %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "run", "../../examples/student-t.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--out", filepath.Join(t.TempDir(), "x")); code == 0 || !strings.Contains(errOut, "StudentT") {
		t.Errorf("StudentT model: status %d, %s", code, errOut)
	}
}
