package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLineProgress drives the progress lines with a fake clock: one sweep
// every 100 ms after the first, a line every second at most, the rate and
// ETA from the sweeps since the first report.
func TestLineProgress(t *testing.T) {
	var b strings.Builder
	p := newLineProgress(&b, time.Second)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	for done := 1; done <= 25; done++ {
		p.report(done, 25, -float64(done))
		clock = clock.Add(100 * time.Millisecond)
	}
	want := "Iteration: 11 / 25 [ 44%]  10 sweeps/s  ETA 1s  log joint -11 (chain 1)\n" +
		"Iteration: 21 / 25 [ 84%]  10 sweeps/s  ETA 0s  log joint -21 (chain 1)\n" +
		"Iteration: 25 / 25 [100%]  10 sweeps/s  ETA 0s  log joint -25 (chain 1)\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
	// A run shorter than one interval prints nothing.
	b.Reset()
	p = newLineProgress(&b, time.Minute)
	p.now = func() time.Time { return clock }
	for done := 1; done <= 5; done++ {
		p.report(done, 5, 0)
	}
	if b.String() != "" {
		t.Errorf("short run printed %q", b.String())
	}
	// A run of chains 5.. (--chain-offset 4) reports its first chain as 5.
	b.Reset()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"version": 3, "chains": 1, "chain_offset": 4}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p = newLineProgress(&b, time.Second)
	p.now, p.dir = func() time.Time { return clock }, dir
	for done := 1; done <= 12; done++ {
		p.report(done, 12, 0)
		clock = clock.Add(100 * time.Millisecond)
	}
	if !strings.HasSuffix(b.String(), "(chain 5)\n") {
		t.Errorf("offset run printed %q", b.String())
	}
}

// TestRunProgressLines checks that run prints progress lines to a stderr
// that is not a terminal, and none with --progress-every 0.
func TestRunProgressLines(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--iters", "30", "--chains", "1", "--out", dir+"/a", "--progress-every", "1ns")
	if code != 0 || !strings.Contains(errOut, "Iteration: 30 / 30 [100%]") {
		t.Errorf("status %d, stderr %q", code, errOut)
	}
	code, _, errOut = runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--iters", "30", "--chains", "1", "--out", dir+"/b", "--progress-every", "0")
	if code != 0 || strings.Contains(errOut, "Iteration:") {
		t.Errorf("--progress-every 0: status %d, stderr %q", code, errOut)
	}
}

// TestLabelsFile fits data whose row names are in a file of their own.
func TestLabelsFile(t *testing.T) {
	dir := t.TempDir()
	data, names, labelled := dir+"/x.csv", dir+"/names.txt", dir+"/labelled.csv"
	os.WriteFile(data, []byte("0.1,1\n0.2,1.1\n-1,0\n-1.2,0.1\n2,2\n"), 0o644)
	os.WriteFile(names, []byte("ant\nbee\ncat\ndog\nemu\n"), 0o644)
	dup := dir + "/dup.txt"
	os.WriteFile(dup, []byte("a\nb\nc\na\nd\n"), 0o644)
	os.WriteFile(labelled, []byte("a,0.1,1\nb,0.2,1.1\nc,-1,0\nd,-1.2,0.1\ne,2,2\n"), 0o644)
	out := dir + "/fit"
	code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+data, "--labels", names,
		"--iters", "20", "--chains", "2", "--out", out)
	if code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	for _, f := range []string{"summary.nwk", "trees-1.nwk", "coclust.csv"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		for _, name := range []string{"ant", "bee", "cat", "dog", "emu"} {
			if !strings.Contains(string(b), name) {
				t.Errorf("%s lacks %s: %s", f, name, b)
			}
		}
	}
	// The labels file is part of the run: cut reads the names, and a
	// changed file stops --resume.
	if code, cut, errOut := runCmd(t, "cut", out, "--k", "1"); code != 0 || !strings.HasPrefix(cut, "row,cluster\nant,1\nbee,1\n") {
		t.Errorf("cut: status %d, %q %s", code, cut, errOut)
	}
	os.WriteFile(names, []byte("ant\nbee\ncat\ndog\nelk\n"), 0o644)
	if code, _, errOut := runCmd(t, "run", "--resume", out); code == 0 || !strings.Contains(errOut, "names.txt has changed") {
		t.Errorf("resume with a changed labels file: status %d, %q", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", "X=" + labelled, "--labels", names}, "already names its rows"},
		{[]string{"--data", "X=" + data, "--labels", dup}, "duplicate row name"},
		{[]string{"--data", "X=" + data, "--labels", dir + "/none.txt"}, "none.txt"},
	} {
		args := append([]string{"check", "../../examples/gaussian.pydt"}, c.args...)
		if code, _, errOut := runCmd(t, args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, %q", c.args, code, errOut)
		}
	}
	os.WriteFile(names, []byte("ant\nbee\n"), 0o644)
	if code, _, errOut := runCmd(t, "check", "../../examples/gaussian.pydt", "--data", "X="+data, "--labels", names); code == 0 || !strings.Contains(errOut, "has 2 names for 5 data rows") {
		t.Errorf("short labels file: status %d, %q", code, errOut)
	}
}
