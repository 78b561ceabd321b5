package inference

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestOneRunPerDirectory holds a run in the middle of its first sweep and
// starts a second run, a --force run and a resume on the same directory:
// all three must be refused, naming the directory and the holder's pid,
// and the first run must finish unharmed, as an undisturbed run would.
func TestOneRunPerDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no flock here: the lock is documented as Unix only")
	}
	m := compileWithData(t, gaussianModel, smallData, nil)
	cfg := Config{Iters: 20, Chains: 2, Seed: 3, CheckpointEvery: 5}
	cfg.Out = t.TempDir()
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, cfg.Out, TraceFile, TreesFile(1), TreesFile(2), MapFile, SummaryTreeFile, ConsensusFile, CoclustFile)

	cfg.Out = t.TempDir()
	paused, resume := make(chan struct{}), make(chan struct{})
	first := cfg
	first.Progress = func(done, _ int, _ float64) {
		if done == 7 {
			close(paused)
			<-resume
		}
	}
	errc := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), m, first)
		errc <- err
	}()
	<-paused
	forced := cfg
	forced.Force = true
	wantMsg := cfg.Out + " is in use by another run (pid " + strconv.Itoa(os.Getpid()) + ", started "
	for name, try := range map[string]func() error{
		"run":     func() error { _, err := Run(context.Background(), m, cfg); return err },
		"--force": func() error { _, err := Run(context.Background(), m, forced); return err },
		"resume":  func() error { _, err := Resume(context.Background(), m, cfg.Out, nil); return err },
	} {
		err := try()
		if err == nil || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s on a live run: %v, want an error containing %q", name, err, wantMsg)
		}
	}
	close(resume)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, cfg.Out, TraceFile, TreesFile(1), TreesFile(2), MapFile, SummaryTreeFile, ConsensusFile, CoclustFile); got != want {
		t.Error("the first run's output was changed by the refused ones")
	}
	// The lock dies with its run: the directory can be resumed (here, a
	// finished run resumes to the same end) and replaced.
	if _, err := Resume(context.Background(), m, cfg.Out, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), m, forced); err != nil {
		t.Fatal(err)
	}
}

// TestForeignFilesAreRefused starts a run in a directory that holds a
// file of a run's name but no run.json: it must be refused, naming the
// file, and left alone; with Force it is replaced, and other files stay.
func TestForeignFilesAreRefused(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	for _, name := range []string{TraceFile, TreesFile(2), SummaryFile, MapFile} {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte("someone else's\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644)
		cfg := Config{Iters: 4, Chains: 2, Seed: 1, Out: dir}
		_, err := Run(context.Background(), m, cfg)
		if err == nil || !strings.Contains(err.Error(), "holds "+path+" but no run.json") || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s: %v, want a refusal naming %s", name, err, path)
		}
		if b, _ := os.ReadFile(path); string(b) != "someone else's\n" {
			t.Errorf("%s was overwritten by a refused run", name)
		}
		cfg.Force = true
		if _, err := Run(context.Background(), m, cfg); err != nil {
			t.Fatalf("%s with Force: %v", name, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine\n" {
			t.Error("Force removed a file of another name")
		}
	}
}

// TestTemporariesAreCleaned plants the temporary files of atomic writes
// that a kill -9 leaves behind; a resume and a forced run delete them, and
// nothing else.
func TestTemporariesAreCleaned(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	stale := []string{".checkpoint.json.tmp123", ".map.nwk.tmp4", ".summary.json.tmp99", ".run.json.tmp7"}
	kept := []string{".notes.tmp1", ".checkpoint.json.tmpx", "checkpoint.json.tmp5", LockFile}
	plant := func(dir string) {
		for _, n := range append(append([]string{}, stale...), kept...) {
			os.WriteFile(filepath.Join(dir, n), []byte("{"), 0o644)
		}
	}
	check := func(what, dir string) {
		t.Helper()
		for _, n := range stale {
			if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
				t.Errorf("%s left %s", what, n)
			}
		}
		for _, n := range kept {
			if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
				t.Errorf("%s removed %s", what, n)
			}
		}
	}
	dir := t.TempDir()
	cfg := Config{Iters: 6, Chains: 1, Seed: 1, Out: dir, CheckpointEvery: 2}
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	plant(dir)
	if _, err := Resume(context.Background(), m, dir, nil); err != nil {
		t.Fatal(err)
	}
	check("resume", dir)
	plant(dir)
	cfg.Force = true
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	check("a forced run", dir)
	// A fresh directory with only leftovers of a run killed before it
	// wrote run.json is not foreign: the temporaries go, the run starts.
	dir = t.TempDir()
	plant(dir)
	cfg.Force, cfg.Out = false, dir
	if _, err := Run(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	check("a new run", dir)
}
