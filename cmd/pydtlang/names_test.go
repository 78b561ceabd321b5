package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesFile checks cut --names and plot --names: a run made on a data
// file without row names (as animals_33x102.txt) gets its rows named from
// a file of one name a line (as animal_names.txt) in cut's CSV and on the
// dendrogram's leaves; a file with another count of names is an error
// naming the file and both counts, and a run that names its rows otherwise
// is refused. Neither command had a way to name such a run's rows.
func TestNamesFile(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := write("x.txt", "0.1 0.2\n0.3 -0.1\n1.5 1.0\n1.2 0.7\n-1.0 0.4\n-1.2 0.3\n")
	names := write("names.txt", "Ant\nBee\nCat\nDog\nEel\nFox\n")
	short := write("short.txt", "Ant\nBee\nCat\n")
	dir := filepath.Join(tmp, "fit")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+data,
		"--iters", "20", "--chains", "1", "--seed", "3", "--out", dir); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	code, out, errOut := runCmd(t, "cut", dir, "--k", "2", "--names", names)
	if code != 0 {
		t.Fatalf("cut --names: status %d: %s", code, errOut)
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		rows = append(rows, strings.Split(l, ",")[0])
	}
	if got := strings.Join(rows, " "); got != "Ant Bee Cat Dog Eel Fox" {
		t.Errorf("cut --names: rows %q", got)
	}
	if code, out, _ := runCmd(t, "cut", dir, "--k", "2", "--posterior", "--names", names); code != 0 || !strings.Contains(out, "\nFox,") {
		t.Errorf("cut --posterior --names: status %d, %q", code, out)
	}
	pics := filepath.Join(tmp, "pics")
	if code, _, errOut := runCmd(t, "plot", dir, "--names", names, "--out", pics); code != 0 {
		t.Fatalf("plot --names: status %d: %s", code, errOut)
	}
	svg, err := os.ReadFile(filepath.Join(pics, "dendrogram.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"Ant", "Fox"} {
		if !strings.Contains(string(svg), ">"+n+"<") {
			t.Errorf("the dendrogram has no leaf %s", n)
		}
	}
	for _, args := range [][]string{
		{"cut", dir, "--k", "2", "--names", short},
		{"plot", dir, "--names", short, "--out", pics},
	} {
		code, _, errOut := runCmd(t, args...)
		if code != 1 || !strings.Contains(errOut, "3 row names for the 6") || !strings.Contains(errOut, "short.txt") {
			t.Errorf("%s with 3 names for 6 rows: status %d, %q", args[0], code, errOut)
		}
	}
	// A run whose rows are named by --labels: other names are refused.
	named := filepath.Join(tmp, "named")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X="+data, "--labels", names,
		"--iters", "20", "--chains", "1", "--seed", "3", "--out", named); code != 0 {
		t.Fatalf("run --labels: %s", errOut)
	}
	other := write("other.txt", "a\nb\nc\nd\ne\nf\n")
	for _, args := range [][]string{
		{"cut", named, "--k", "2", "--names", other},
		{"plot", named, "--names", other, "--out", pics},
	} {
		if code, _, errOut := runCmd(t, args...); code != 1 || !strings.Contains(errOut, "already names its rows") {
			t.Errorf("%s of a named run: status %d, %q", args[0], code, errOut)
		}
	}
}
