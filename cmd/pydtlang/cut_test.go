package main

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cutRunDir writes a hand-made run directory: a summary tree whose root
// splits three ways, row names in coclust.csv's header, and two chains of
// kept trees.
func cutRunDir(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"summary.nwk": "((a:0.5,b:0.5)0.9:0.2,(c:0.6,d:0.6)1:0.1,e:0.7)1:0.3;\n",
		"coclust.csv": ",e,d,c,b,a\ne,1,0,0,0,0\n", // the data's order is e, d, c, b, a
		// Cut at K = 2: {a,b,c}{d,e} twice, {a,b}{c,d,e} once.
		"trees-1.nwk": "(((a:0.2,b:0.2):0.3,c:0.5):0.3,(d:0.4,e:0.4):0.4):0.2;\n(((a:0.2,b:0.2):0.3,c:0.5):0.3,(d:0.4,e:0.4):0.4):0.2;\n",
		"trees-2.nwk": "((a:0.5,b:0.5):0.3,(c:0.6,(d:0.3,e:0.3):0.3):0.2):0.2;\n",
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCutCommand(t *testing.T) {
	dir := cutRunDir(t)
	for _, c := range []struct {
		args       []string
		out, note  string
		noNoteWant bool
	}{
		// Rows in the data's order (e, d, c, b, a), clusters numbered by
		// first row.
		{[]string{"--k", "3"}, "row,cluster\ne,1\nd,2\nc,2\nb,3\na,3\n", "", true},
		{[]string{"--k", "2"}, "row,cluster\ne,1\nd,2\nc,2\nb,3\na,3\n", "no cut with exactly 2 clusters", false},
		{[]string{"--k", "4"}, "row,cluster\ne,1\nd,2\nc,3\nb,4\na,4\n", "", true},
		{[]string{"--time", "0.2"}, "row,cluster\ne,1\nd,1\nc,1\nb,1\na,1\n", "", true},
		{[]string{"--time", "0.55"}, "row,cluster\ne,1\nd,2\nc,3\nb,4\na,5\n", "", true},
		// P(d,e) = 1, P(a,b) = 1, P(a,c) = P(b,c) = 2/3, P(c,d) = P(c,e) =
		// 1/3, other pairs 0: {a,b,c}{d,e} disagrees on (1/3·2 + 1/3·2)/10 =
		// 2/15 of the pairs, {a,b}{c,d,e} on (2/3·2 + 2/3·2)/10 = 4/15, the
		// summary's {a,b}{c,d}{e} on (2/3 + 2/3·2 + 1/3 + 1)/10 = 1/3. ARI of
		// {a,b,c}{d,e} against {a,b}{c,d,e}: (2 − 4·4/10)/(4 − 1.6) = 1/6, so
		// its expected ARI is (1 + 1 + 1/6)/3 = 13/18.
		{[]string{"--k", "2", "--posterior"}, "row,cluster\ne,1\nd,1\nc,2\nb,2\na,2\n", "expected Binder loss 0.1333 per pair, expected ARI 0.7222; the summary.nwk cut (3 clusters): 0.3333", false},
		{[]string{"--k", "2", "--posterior", "--loss", "ari"}, "row,cluster\ne,1\nd,1\nc,2\nb,2\na,2\n", "by ari loss", false},
	} {
		args := append([]string{"cut", dir}, c.args...)
		code, out, errOut := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: status %d: %s", c.args, code, errOut)
		}
		if out != c.out {
			t.Errorf("%v: got\n%swant\n%s", c.args, out, c.out)
		}
		if c.noNoteWant && errOut != "" {
			t.Errorf("%v: unexpected stderr %q", c.args, errOut)
		}
		if c.note != "" && !strings.Contains(errOut, c.note) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errOut, c.note)
		}
	}
	// --out writes the file.
	outFile := filepath.Join(dir, "c.csv")
	if code, _, errOut := runCmd(t, "cut", dir, "--k", "3", "--out", outFile); code != 0 {
		t.Fatalf("--out: %s", errOut)
	}
	if b, _ := os.ReadFile(outFile); string(b) != "row,cluster\ne,1\nd,2\nc,2\nb,3\na,3\n" {
		t.Errorf("--out wrote %q", b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cut", dir}, "exactly one of --k K and --time T"},
		{[]string{"cut", dir, "--k", "2", "--time", "0.5"}, "exactly one of"},
		{[]string{"cut", dir, "--k", "0"}, "at least one cluster"},
		{[]string{"cut", dir, "--k", "6"}, "6 clusters asked for a tree of 5 leaves"},
		{[]string{"cut", dir, "--time", "1.5"}, "not in [0, 1]"},
		{[]string{"cut", dir, "--k", "2", "--loss", "foo"}, "unknown loss"},
		{[]string{"cut", dir, "--k", "2", "--tree", "mea.nwk"}, "mea.nwk"},
		{[]string{"cut", t.TempDir(), "--k", "2", "--posterior"}, "summary.nwk"},
	} {
		if code, _, errOut := runCmd(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, %q", c.args, code, errOut)
		}
	}
}

// TestCutRun cuts a short real run of the synthetic data.
func TestCutRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fit")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--iters", "20", "--chains", "2", "--seed", "3", "--out", dir); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	code, out, errOut := runCmd(t, "cut", dir, "--k", "4", "--posterior")
	if code != 0 || !strings.Contains(errOut, "the cuts of 20 kept trees") {
		t.Fatalf("status %d: %s", code, errOut)
	}
	if lines := strings.Count(out, "\n"); lines != 101 {
		t.Errorf("%d lines, want a header and 100 rows", lines)
	}
	// Held-out rows: one far from all data lands in a new cluster; each
	// row's probabilities sum to one.
	test := filepath.Join(t.TempDir(), "test.csv")
	os.WriteFile(test, []byte("name,x,y\nnear,-0.95,-1\ngap,NA,1\nfar,30,30\n"), 0o644)
	code, out, errOut = runCmd(t, "cut", dir, "--k", "4", "--test", test)
	if code != 0 {
		t.Fatalf("--test: status %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 4 || recs[0][0] != "row" || recs[0][3] != "p_new" {
		t.Fatalf("--test output %q, %v", out, err)
	}
	for _, r := range recs[1:] {
		var sum float64
		for _, f := range r[3:] {
			x, _ := strconv.ParseFloat(f, 64)
			sum += x
		}
		if !(math.Abs(sum-1) <= 1e-4) {
			t.Errorf("row %s: probabilities sum to %v", r[0], sum)
		}
	}
	if recs[3][0] != "far" || recs[3][1] != "0" {
		t.Errorf("the far row: %v, want a new cluster (0)", recs[3])
	}
	if code, _, errOut := runCmd(t, "cut", dir, "--k", "4", "--test", test, "--posterior"); code != 2 || !strings.Contains(errOut, "not with --posterior") {
		t.Errorf("--test --posterior: status %d, %q", code, errOut)
	}
}

// TestResumeIters extends a finished run of 30 sweeps to 50 with
// --resume DIR --iters 50: its files equal those of a run started with
// --iters 50 --burn 15 (the first run's burn-in).
func TestResumeIters(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv", "--chains", "2", "--seed", "4"}
	if code, _, errOut := runCmd(t, append(args, "--iters", "30", "--out", dir+"/short")...); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := runCmd(t, "run", "--resume", dir+"/short", "--iters", "50"); code != 0 {
		t.Fatalf("extend: %s", errOut)
	}
	if code, _, errOut := runCmd(t, append(args, "--iters", "50", "--burn", "15", "--out", dir+"/long")...); code != 0 {
		t.Fatal(errOut)
	}
	for _, f := range []string{"trace.csv", "trees-1.nwk", "trees-2.nwk", "summary.nwk", "coclust.csv", "map.nwk"} {
		a, _ := os.ReadFile(filepath.Join(dir, "short", f))
		b, _ := os.ReadFile(filepath.Join(dir, "long", f))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs between the extended run and the run of 50 sweeps", f)
		}
	}
	if code, _, errOut := runCmd(t, "run", "--resume", dir+"/short", "--iters", "10"); code == 0 || !strings.Contains(errOut, "must be more than the run's burn-in, 15") {
		t.Errorf("--iters 10 after a burn-in of 15: status %d, %q", code, errOut)
	}
}

// TestCutTestProbit places held-out binary rows in the clusters of a short
// Probit run of the animals data: each row's probabilities sum to one,
// and a row that is an exact copy of a training animal is most probably
// in that animal's cluster.
//
// The run starts from a fitted tree, testdata/animals-start.nwk (the
// summary.nwk of a 4 × 3000-sweep run, seed 1, of the same model and
// data), and runs 100 sweeps, so that the hyperparameters, drawn from
// their priors, have reached the posterior's region (prec ≈ 0.01 against
// a prior draw near 1) before the 50 kept ones; --test averages over 20
// kept trees. The test then does not depend on one stream: it passed for
// each of seeds 1 to 24 with local tree moves at 0, 1 or 2 per leaf
// (Elephant's cluster probability 0.55 to 1). Before, it ran 20 sweeps
// from a prior draw and relied on seed 4's stream reaching a fitted tree
// by then: with other moves in the schedule some seeds were still at prec
// ≈ 0.08 after 20 sweeps, with the copy of Elephant placed elsewhere.
func TestCutTestProbit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fit")
	if code, _, errOut := runCmd(t, "run", "../../examples/binary.pydt", "--data", "Y=../../examples/data/animals.csv",
		"--init-tree", "testdata/animals-start.nwk",
		"--iters", "100", "--chains", "1", "--seed", "4", "--out", dir); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	code, out, errOut := runCmd(t, "cut", dir, "--k", "3")
	if code != 0 {
		t.Fatalf("cut: status %d: %s", code, errOut)
	}
	train, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../examples/data/animals.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	test := filepath.Join(t.TempDir(), "test.csv")
	os.WriteFile(test, []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644) // the first animal
	code, out, errOut = runCmd(t, "cut", dir, "--k", "3", "--test", test, "--trees", "20")
	if code != 0 {
		t.Fatalf("--test: status %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("--test output %q, %v", out, err)
	}
	var sum float64
	for _, f := range recs[1][3:] {
		x, _ := strconv.ParseFloat(f, 64)
		sum += x
	}
	if !(math.Abs(sum-1) <= 1e-4) {
		t.Errorf("probabilities sum to %v", sum)
	}
	if recs[1][1] != train[1][1] {
		t.Errorf("a copy of %s placed in cluster %s (p = %s), %s's cluster is %s", train[1][0], recs[1][1], recs[1][2], train[1][0], train[1][1])
	}
}
