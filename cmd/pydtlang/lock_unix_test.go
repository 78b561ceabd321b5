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
