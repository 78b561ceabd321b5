package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusesForeignOutput puts a trace.csv that no run wrote into the
// output directory: run must refuse it, naming the file, and keep it;
// --force replaces it.
func TestRunRefusesForeignOutput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "x.csv")
	out := filepath.Join(dir, "fit")
	os.Mkdir(out, 0o755)
	writeFiles(t, dir, map[string]string{"x.csv": tinyData, "fit/trace.csv": "mine\n"})
	args := []string{"run", "../../examples/gaussian.pydt", "--data", "X=" + data, "--iters", "6", "--chains", "1", "--out", out}
	code, _, errOut := runCmd(t, args...)
	if want := filepath.Join(out, "trace.csv") + " but no run.json"; code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "--force") {
		t.Errorf("status %d, stderr %q, want a refusal containing %q", code, errOut, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "trace.csv")); string(b) != "mine\n" {
		t.Error("a refused run overwrote trace.csv")
	}
	if code, _, errOut := runCmd(t, append(args, "--force")...); code != 0 {
		t.Fatalf("--force: %s", errOut)
	}
}
