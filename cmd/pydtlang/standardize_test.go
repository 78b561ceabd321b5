package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStandardizeFlag: run warns about a column far from unit scale, and
// with --standardize does not, records the scaling in run.json, and
// resumes; check --standardize prints the scaling; score takes the flag.
func TestStandardizeFlag(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "x.csv")
	os.WriteFile(data, []byte("a,b\n100,0.1\n250,-0.3\n-80,0.9\n40,0.2\n"), 0o644)
	code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+data, "--iters", "4", "--chains", "1", "--out", filepath.Join(dir, "raw"))
	if code != 0 || !strings.Contains(errOut, "columns of X far from unit scale: a (mean 77.5, sd 137)") {
		t.Fatalf("run: status %d, no scale warning:\n%s", code, errOut)
	}
	out := filepath.Join(dir, "std")
	code, _, errOut = runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+data, "--iters", "30", "--chains", "1",
		"--checkpoint-every", "10", "--standardize", "--out", out)
	if code != 0 || strings.Contains(errOut, "far from unit scale") {
		t.Fatalf("run --standardize: status %d\n%s", code, errOut)
	}
	var rf struct {
		Standardize struct {
			Var  string
			Mean []float64
			SD   []float64
		}
	}
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(out, "run.json"))), &rf); err != nil {
		t.Fatal(err)
	}
	if s := rf.Standardize; s.Var != "X" || len(s.Mean) != 2 || s.Mean[0] != 77.5 {
		t.Errorf("run.json standardize: %+v", s)
	}
	code, stdout, errOut := runCmd(t, "check", "../../examples/gaussian.pydt", "--data", "X="+data, "--standardize")
	if code != 0 || !strings.Contains(stdout, "--standardize divides out, per column of X:") || !strings.Contains(stdout, "1\t77.5\t") {
		t.Errorf("check --standardize: status %d\n%s%s", code, stdout, errOut)
	}
	if code, _, errOut = runCmd(t, "run", "--resume", out, "--standardize"); code != 2 {
		t.Errorf("run --resume with --standardize: status %d\n%s", code, errOut)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
