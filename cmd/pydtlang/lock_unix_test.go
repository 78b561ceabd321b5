//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/pydtlang/pydtlang/inference"
)

// TestRunRefusesALockedDirectory holds the output directory's lock as a
// live run does; run, run --force and run --resume must all refuse it,
// naming the directory, and leave its files alone.
func TestRunRefusesALockedDirectory(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "x.csv")
	out := filepath.Join(dir, "fit")
	writeFiles(t, dir, map[string]string{"x.csv": tinyData})
	args := []string{"run", "../../examples/gaussian.pydt", "--data", "X=" + data, "--iters", "6", "--chains", "1", "--out", out}
	if code, _, errOut := runCmd(t, args...); code != 0 {
		t.Fatal(errOut)
	}
	before, _ := os.ReadFile(filepath.Join(out, "trace.csv"))
	f, err := os.OpenFile(filepath.Join(out, inference.LockFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	want := out + " is in use by another run"
	for _, a := range [][]string{append(args, "--force"), {"run", "--resume", out}} {
		code, _, errOut := runCmd(t, a...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%v: status %d, stderr %q, want %q", a[len(a)-2:], code, errOut, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(out, "trace.csv")); string(after) != string(before) {
		t.Error("a refused run changed the live run's trace")
	}
}

// TestSampleOutputDirectory: sample takes the directory's lock as run does
// (a second writer is refused), refuses a run's directory and a file of its
// output names that an earlier sample did not write, and rewrites an
// earlier sample's files (issue 13: sample --out took no lock and
// overwrote anything).
func TestSampleOutputDirectory(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"sample", "../../examples/gaussian.pydt", "--set", "N=4,D=2", "--out", filepath.Join(dir, out)}
	}
	for i := range 2 { // an earlier sample's files are rewritten
		if code, _, errOut := runCmd(t, args("prior")...); code != 0 {
			t.Fatalf("sample %d: %s", i+1, errOut)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"x.csv": tinyData, "mine/X.csv": "my,data\n1,2\n"})
	fit := filepath.Join(dir, "fit")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+filepath.Join(dir, "x.csv"),
		"--iters", "4", "--chains", "1", "--out", fit); code != 0 {
		t.Fatal(errOut)
	}
	cases := []struct{ out, want string }{
		{"fit", fit + " holds a run (run.json): sample into another directory"},
		{"mine", filepath.Join(dir, "mine") + " already holds X.csv, which sample did not write"},
	}
	for _, c := range cases {
		code, _, errOut := runCmd(t, args(c.out)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("--out %s: status %d, stderr %q, want %q", c.out, code, errOut, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine", "X.csv")); string(b) != "my,data\n1,2\n" {
		t.Errorf("a refused sample changed a foreign file: %q", b)
	}
	f, err := os.OpenFile(filepath.Join(dir, "prior", inference.LockFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "prior") + " is in use by another run"
	if code, _, errOut := runCmd(t, args("prior")...); code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("locked: status %d, stderr %q, want %q", code, errOut, want)
	}
}
