package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotCommand fits the synthetic data briefly and draws every picture
// of the run, in SVG and PNG, with a class file; then the prior's draws.
func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "fit")
	data := filepath.Join(dir, "x.csv")
	rows := "name,x,y\na1,0.1,0.2\na2,0.2,0.1\nb1,2.0,-1.0\nb2,2.1,-0.9\nb3,1.9,-1.1\n"
	if err := os.WriteFile(data, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+data,
		"--iters", "40", "--chains", "2", "--seed", "1", "--out", run); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	classes := filepath.Join(dir, "classes.csv")
	if err := os.WriteFile(classes, []byte("a1,a\na2,a\nb1,b\nb2,b\nb3,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"svg", "png"} {
		code, stdout, stderr := runCmd(t, "plot", run, "--format", format, "--labels-file", classes)
		if code != 0 {
			t.Fatalf("plot --format %s: %d %s", format, code, stderr)
		}
		for _, name := range []string{"dendrogram", "tree-data", "trace", "coclust"} {
			path := filepath.Join(run, "plots", name+"."+format)
			if !strings.Contains(stdout, path) {
				t.Errorf("output does not name %s: %s", path, stdout)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v", path, err)
			}
		}
	}

	// --axis reaches the dendrogram: its axis label says which.
	for _, ax := range []struct{ flag, label string }{{"s", "spaced as s ="}, {"t", "divergence time t</text>"}} {
		out := filepath.Join(dir, "axis-"+ax.flag)
		if code, _, stderr := runCmd(t, "plot", run, "--axis", ax.flag, "--out", out); code != 0 {
			t.Fatalf("plot --axis %s: %d %s", ax.flag, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "dendrogram.svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ax.label) || (ax.flag == "t" && strings.Contains(string(b), "spaced as s =")) {
			t.Errorf("plot --axis %s: the dendrogram's axis is not labelled %q", ax.flag, ax.label)
		}
	}

	// The data file has changed since the run: no tree-over-data picture,
	// and a note saying why; the other pictures are drawn.
	if err := os.WriteFile(data, []byte(rows+"c1,5,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pics")
	code, stdout, stderr := runCmd(t, "plot", run, "--out", out, "--tree", "mea")
	if code != 0 || !strings.Contains(stderr, "note: no tree-over-data picture") || !strings.Contains(stderr, "has changed") {
		t.Errorf("changed data: %d %q", code, stderr)
	}
	if strings.Contains(stdout, "tree-data") || !strings.Contains(stdout, filepath.Join(out, "dendrogram.svg")) {
		t.Errorf("changed data: wrote %s", stdout)
	}

	draws := filepath.Join(dir, "draws")
	if code, _, stderr := runCmd(t, "sample", "../../examples/gaussian.pydt", "--set", "N=30,D=2", "--draws", "3", "--seed", "2", "--out", draws); code != 0 {
		t.Fatalf("sample: %s", stderr)
	}
	code, stdout, stderr = runCmd(t, "plot", "--prior", draws, "--prior", draws, "--format", "png")
	if code != 0 || !strings.Contains(stdout, filepath.Join(draws, "plots", "prior.png")) {
		t.Errorf("plot --prior: %d %s %s", code, stdout, stderr)
	}
	// A run directory given to --prior: said so, not "several data
	// variables (coclust, trace)".
	if code, _, stderr := runCmd(t, "plot", "--prior", run); code != 1 || !strings.Contains(stderr, "is a run directory") {
		t.Errorf("plot --prior RUNDIR: %d %q", code, stderr)
	}
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot"}, 2, "give a run directory"},
		{[]string{"plot", "a", "b"}, 2, "give a run directory"},
		{[]string{"plot", dir}, 1, "is not a run directory"},
		{[]string{"plot", dir, "--format", "gif"}, 2, "want svg or png"},
		{[]string{"plot", "--prior", dir, "x"}, 2, "takes no RUNDIR"},
		{[]string{"plot", "--prior", dir}, 1, "no data file"},
		{[]string{"plot", "--prior", dir, "--tree", "mea"}, 2, "neither"},
		{[]string{"plot", dir, "--var", "X"}, 2, "--var is for plot --prior"},
		{[]string{"plot", "--prior", dir, "--dpi", "5"}, 2, "want 10 to 1200"},
		{[]string{"plot", dir, "--axis", "log"}, 2, "--axis: axis \"log\": want auto, t or s"},
		{[]string{"plot", "--prior", dir, "--axis", "s"}, 2, "neither"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: %d %q, want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestPlotHelp(t *testing.T) {
	code, out, _ := runCmd(t, "plot", "--help")
	if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "--labels-file") || !strings.Contains(out, "belief") ||
		!strings.Contains(out, "--axis") || !strings.Contains(out, "t > 0.9") {
		t.Errorf("plot --help: status %d:\n%s", code, out)
	}
}
