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

// TestResumeBeforeFirstCheckpoint resumes a run that stopped before its
// first checkpoint (as a kill -9 leaves it: run.json and partial outputs,
// no checkpoint.json): it starts again from sweep 1, says so, and ends as
// the uninterrupted run did.
func TestResumeBeforeFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "x.csv")
	out := filepath.Join(dir, "fit")
	writeFiles(t, dir, map[string]string{"x.csv": tinyData})
	args := []string{"run", "../../examples/gaussian.pydt", "--data", "X=" + data, "--iters", "8", "--chains", "2", "--out", out}
	if code, _, errOut := runCmd(t, args...); code != 0 {
		t.Fatal(errOut)
	}
	want, _ := os.ReadFile(filepath.Join(out, "trace.csv"))
	os.Remove(filepath.Join(out, "checkpoint.json"))
	os.WriteFile(filepath.Join(out, "trace.csv"), want[:len(want)/2], 0o644)
	os.WriteFile(filepath.Join(out, ".checkpoint.json.tmp42"), []byte("{"), 0o644)
	code, _, errOut := runCmd(t, "run", "--resume", out)
	if code != 0 || !strings.Contains(errOut, "starting it again from sweep 1") {
		t.Fatalf("status %d, stderr %q", code, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "trace.csv")); string(got) != string(want) {
		t.Errorf("resumed trace.csv differs from the uninterrupted one:\n%s\n---\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(out, ".checkpoint.json.tmp42")); err == nil {
		t.Error("resume left a temporary file of a killed run")
	}
}
