package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFiniteAndStuck checks the command line's side of issue 7's item
// 1: a noise-free model with duplicated rows is refused before sampling
// with the advice of a Normal noise model (it used to run with a warning);
// --allow-stuck is documented and, like every run flag, refused with
// --resume; summary.json lists the stuck chains.
func TestRunFiniteAndStuck(t *testing.T) {
	dir := t.TempDir()
	model, _ := os.ReadFile("../../examples/gaussian.pydt")
	writeFiles(t, dir, map[string]string{"m.pydt": string(model), "x.csv": tinyData,
		"dup.csv": tinyData + "0.1,0.2\n"})
	out := filepath.Join(dir, "dup")
	code, _, errOut := runCmd(t, "run", filepath.Join(dir, "m.pydt"), "--data", "X="+filepath.Join(dir, "dup.csv"),
		"--iters", "10", "--chains", "1", "--out", out)
	for _, want := range []string{"the posterior is improper", "rows 1 and 6 of X are identical", "Normal noise model"} {
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("duplicated rows: status %d, stderr %q, want %q", code, errOut, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused run created %s", out)
	}

	code, help, _ := runCmd(t, "run", "--help")
	for _, want := range []string{"--allow-stuck", "STUCK", "improper"} {
		if code != 0 || !strings.Contains(help, want) {
			t.Errorf("run --help does not say %q", want)
		}
	}

	fit := filepath.Join(dir, "fit")
	if code, _, errOut := runCmd(t, "run", filepath.Join(dir, "m.pydt"), "--data", "X="+filepath.Join(dir, "x.csv"),
		"--iters", "10", "--chains", "2", "--out", fit); code != 0 {
		t.Fatal(errOut)
	}
	s := readSummary(t, fit)
	if stuck, ok := s["stuck_chains"].([]any); !ok || len(stuck) != 0 {
		t.Errorf("summary.json stuck_chains = %v, want []", s["stuck_chains"])
	}
	if stalls, ok := s["longest_stall_sweeps"].([]any); !ok || len(stalls) != 2 {
		t.Errorf("summary.json longest_stall_sweeps = %v, want one per chain", s["longest_stall_sweeps"])
	}
	if code, _, errOut := runCmd(t, "run", "--resume", fit, "--allow-stuck"); code != 2 || !strings.Contains(errOut, "(got --allow-stuck)") {
		t.Errorf("resume --allow-stuck: status %d, stderr %q", code, errOut)
	}
}
