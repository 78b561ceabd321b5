package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// runCmd runs the command line and returns status, stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCheckExamples(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "../../examples/gaussian.pydt"}, "X ~ PYDT(alpha, beta, DivInv(c), 1 / prec)"},
		{[]string{"check", "../../examples/binary.pydt", "--data", "Y=../../examples/data/animals.csv"}, "from ../../examples/data/animals.csv, 0 missing"},
		{[]string{"check", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv"}, "dimensions: N = 100, D = 2"},
	}
	for _, c := range cases {
		code, out, errOut := runCmd(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: status %d\n%s", c.args, code, errOut)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%v: output lacks %q:\n%s", c.args, c.want, out)
		}
	}
}

func TestCheckReportsDiagnostics(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "bad.pydt")
	os.WriteFile(model, []byte("dim N, D\ndata X : real[N, D]\nalpha ~ Gama(1, 1)\nX ~ PYDT(alpah, 0, 1, 1)\n"), 0o644)
	code, _, errOut := runCmd(t, "check", model)
	if code != 1 {
		t.Fatalf("status %d, want 1", code)
	}
	for _, want := range []string{
		model + ":3:9: unknown distribution Gama\nalpha ~ Gama(1, 1)\n        ^\nhint: did you mean \"Gamma\"?",
		model + ":4:10: undefined: alpah",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// A probit likelihood on non-binary data names the row and column.
	data := filepath.Join(dir, "y.csv")
	os.WriteFile(data, []byte("0,1\n1,2\n"), 0o644)
	code, _, errOut = runCmd(t, "check", "../../examples/binary.pydt", "--data", "Y="+data)
	if code != 1 || !strings.Contains(errOut, "y.csv: row 2, column 2 (line 2): 2 is not a valid value of Y (declared binary)") {
		t.Errorf("status %d, stderr:\n%s", code, errOut)
	}
}

func TestFmt(t *testing.T) {
	src, _ := os.ReadFile("../../examples/gaussian.pydt")
	code, out, errOut := runCmd(t, "fmt", "../../examples/gaussian.pydt")
	if code != 0 || out != string(src) {
		t.Fatalf("status %d, stderr %s; fmt changed a canonical file:\n%s", code, errOut, out)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.pydt")
	os.WriteFile(path, []byte("alpha~Gamma( 2,0.5 )\n"), 0o644)
	if code, out, _ := runCmd(t, "fmt", "-l", path); code != 0 || strings.TrimSpace(out) != path {
		t.Errorf("fmt -l: status %d, output %q", code, out)
	}
	if code, _, errOut := runCmd(t, "fmt", "-w", path); code != 0 {
		t.Fatalf("fmt -w: %s", errOut)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "alpha ~ Gamma(2, 0.5)\n" {
		t.Errorf("fmt -w wrote %q", got)
	}
}

func TestSampleIsReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		code, _, errOut := runCmd(t, "sample", "../../examples/gaussian.pydt", "--set", "N=6,D=2", "--draws", "5", "--seed", "3", "--out", dir)
		if code != 0 {
			t.Fatalf("sample: %s", errOut)
		}
	}
	for _, name := range []string{"trees.nwk", "X.csv", "params.csv"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between runs with the same seed (or is empty)", name)
		}
	}
	x, _ := os.ReadFile(filepath.Join(a, "X.csv"))
	lines := strings.Split(strings.TrimSpace(string(x)), "\n")
	if lines[0] != "draw,row,X.1,X.2" || len(lines) != 1+5*6 {
		t.Errorf("X.csv: header %q, %d lines", lines[0], len(lines))
	}
	trees, _ := os.ReadFile(filepath.Join(a, "trees.nwk"))
	for _, line := range strings.Split(strings.TrimSpace(string(trees)), "\n") {
		tr, err := pydt.ParseNewick(line, nil)
		if err != nil || tr.NumLeaves() != 6 {
			t.Fatalf("trees.nwk line %q: %v", line, err)
		}
	}
}

// TestSampleThreePointTopologies checks the sampled N = 3 topologies against
// the exact law of the generative process: with h1 = Γ(1-β)/Γ(2+α) and
// h2 = h1 (1-β)/(2+α) (the divergence rates of the second and third points),
// the third point diverges before the first branch point with probability
// h2/(h1+h2), and otherwise reaches it and starts a new branch with
// probability (α+2β)/(2+α). Each binary topology has probability
// (1 - P(three-way))/3 by exchangeability.
func TestSampleThreePointTopologies(t *testing.T) {
	const draws = 4000
	alpha, beta := 1.0, 0.3
	dir := t.TempDir()
	code, _, errOut := runCmd(t, "sample", "../../examples/gaussian.pydt", "--set", "N=3,D=1,alpha=1,beta=0.3,c=1,prec=1",
		"--draws", "4000", "--seed", "11", "--out", dir)
	if code != 0 {
		t.Fatal(errOut)
	}
	h1 := math.Exp(lgamma(1-beta) - lgamma(2+alpha))
	h2 := h1 * (1 - beta) / (2 + alpha)
	pThree := h1 / (h1 + h2) * (alpha + 2*beta) / (2 + alpha)
	b, _ := os.ReadFile(filepath.Join(dir, "trees.nwk"))
	var three int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		tr, err := pydt.ParseNewick(line, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr.NumInternal() == 1 {
			three++
		}
	}
	p := float64(three) / draws
	se := math.Sqrt(pThree * (1 - pThree) / draws)
	if !(math.Abs(p-pThree) <= 4*se) {
		t.Errorf("P(three-way split) = %v, want %v ± %v", p, pThree, 4*se)
	}
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }

// TestScoreAgreesWithIndependentFormulas scores a tree against data and
// compares log_lik with the dense Gaussian density (covariance σ² t(lca)),
// log_hyper with the closed-form prior densities, and log_tree with the
// stdlib prior.
func TestScoreAgreesWithIndependentFormulas(t *testing.T) {
	dir := t.TempDir()
	tree := "((1:0.3,2:0.3):0.2,3:0.5,4:0.5):0.5;"
	os.WriteFile(filepath.Join(dir, "t.nwk"), []byte(tree+"\n"), 0o644)
	data := [][]float64{{0.1, -0.4}, {0.3, math.NaN()}, {-1.2, 0.8}, {0.5, 0.2}}
	var csv strings.Builder
	for _, r := range data {
		for j, x := range r {
			if j > 0 {
				csv.WriteString(",")
			}
			if math.IsNaN(x) {
				csv.WriteString("NA")
			} else {
				csv.WriteString(formatFloat(x))
			}
		}
		csv.WriteString("\n")
	}
	os.WriteFile(filepath.Join(dir, "x.csv"), []byte(csv.String()), 0o644)
	alpha, beta, c, prec := 1.0, 0.2, 1.5, 2.0
	code, out, errOut := runCmd(t, "score", "../../examples/gaussian.pydt", "--data", "X="+filepath.Join(dir, "x.csv"),
		"--tree", filepath.Join(dir, "t.nwk"), "--set", "alpha=1,beta=0.2", "--set", "c=1.5,prec=2", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var got map[string]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Dense likelihood: leaves 1,2 share t=0.7; all share the root at 0.5.
	lca := [4][4]float64{{1, 0.7, 0.5, 0.5}, {0.7, 1, 0.5, 0.5}, {0.5, 0.5, 1, 0.5}, {0.5, 0.5, 0.5, 1}}
	var wantLik float64
	for d := 0; d < 2; d++ {
		var rows []int
		for i := range data {
			if !math.IsNaN(data[i][d]) {
				rows = append(rows, i)
			}
		}
		cov := mat.NewSymDense(len(rows), nil)
		x := make([]float64, len(rows))
		for a, i := range rows {
			x[a] = data[i][d]
			for b, j := range rows {
				cov.SetSym(a, b, lca[i][j]/prec)
			}
		}
		n, ok := distmv.NewNormal(make([]float64, len(rows)), cov, nil)
		if !ok {
			t.Fatal("covariance not positive definite")
		}
		wantLik += n.LogProb(x)
	}
	wantHyper := distuv.Gamma{Alpha: 2, Beta: 0.5}.LogProb(alpha) + distuv.Beta{Alpha: 1, Beta: 1}.LogProb(beta) +
		distuv.Gamma{Alpha: 1, Beta: 1}.LogProb(c) + distuv.Gamma{Alpha: 1, Beta: 1}.LogProb(prec)
	tr, err := pydt.ParseNewick(tree, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := pydt.NewHarmonic(alpha, beta)
	wantTree := pydt.LogPrior(tr, alpha, beta, pydt.DivInv{C: c}, h)
	for name, want := range map[string]float64{"log_lik": wantLik, "log_hyper": wantHyper, "log_tree": wantTree,
		"log_joint": wantLik + wantHyper + wantTree} {
		if !(math.Abs(got[name]-want) <= 1e-9*math.Max(1, math.Abs(want))) {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
}

func TestScoreErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.csv"), []byte("1,2\n3,4\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "t3.nwk"), []byte("((1:0.5,2:0.5):0.25,3:0.75):0.25;\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "t13.nwk"), []byte("(1:0.5,3:0.5):0.5;\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tcat.nwk"), []byte("(1:0.5,cat:0.5):0.5;\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "t01.nwk"), []byte("(01:0.5,2:0.5):0.5;\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--tree", filepath.Join(dir, "t3.nwk"), "--set", "alpha=1,beta=0.2,c=1,prec=1"}, "has 3 leaves but the data X has 2 rows"},
		{[]string{"--tree", filepath.Join(dir, "t3.nwk"), "--set", "alpha=1"}, "score needs a value for every stochastic scalar: --set beta=VALUE,c=VALUE,prec=VALUE"},
		{[]string{"--set", "alpha=1"}, "--tree FILE is required"},
		{[]string{"--tree", filepath.Join(dir, "t13.nwk"), "--set", "alpha=1,beta=0.2,c=1,prec=1"},
			filepath.Join(dir, "t13.nwk") + ` tree 1: has a leaf "3", but the data X has no row labels, so the leaves must be its row numbers 1..2, each once`},
		{[]string{"--tree", filepath.Join(dir, "tcat.nwk"), "--set", "alpha=1,beta=0.2,c=1,prec=1"}, `tree 1: has a leaf "cat", but`},
		{[]string{"--tree", filepath.Join(dir, "t01.nwk"), "--set", "alpha=1,beta=0.2,c=1,prec=1"}, `tree 1: has a leaf "01", but`},
	}
	for _, c := range cases {
		args := append([]string{"score", "../../examples/gaussian.pydt", "--data", "X=" + filepath.Join(dir, "x.csv")}, c.args...)
		code, _, errOut := runCmd(t, args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

func TestHelpTeaches(t *testing.T) {
	for _, cmd := range []string{"check", "fmt", "sample", "score", "run", "predict", "evaluate"} {
		code, out, _ := runCmd(t, cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: status %d:\n%s", cmd, code, out)
		}
	}
}

// FuzzParseSets feeds arbitrary --set arguments to parseSets, seeded with
// the cases of issue 13. Whatever it accepts has proper names and finite
// values written as plain decimal numbers.
func FuzzParseSets(f *testing.F) {
	for _, s := range []string{"N=3,D=1", "alpha=1, beta=0.2", "x=", "=1", "a=1,a=2", ",,", "a=1e400", "a=NaN",
		"alpha=1_0", "alpha=0x10", "alpha=0x1p-2", "alpha=1e-400", "alpha=-1e-400", "alpha=4.9e-324", "N=3,D=1e9",
		"alpha=inf", "alpha=-nan", "alpha=NA", "alpha=+.5", "alpha=1.", "a==1", "a=1=2", "a=1,,b=2", " a = 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := inference.ParseSets([]string{s})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for name, x := range got {
			if name == "" || strings.ContainsAny(name, ",=") {
				t.Fatalf("parsed a bad name %q from %q", name, s)
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("parsed %s = %v from %q", name, x, s)
			}
		}
		// Every value is written as a decimal number: no separators, no
		// hexadecimal, no value that underflowed to 0 unless written as 0.
		for _, kv := range strings.Split(s, ",") {
			name, val, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			x := got[strings.TrimSpace(name)]
			val = strings.TrimSpace(val)
			if strings.ContainsAny(val, "_xXpP") {
				t.Fatalf("accepted %q from %q", val, s)
			}
			if x == 0 && strings.ContainsAny(strings.SplitN(strings.ToLower(val), "e", 2)[0], "123456789") {
				t.Fatalf("%q read as 0 from %q", val, s)
			}
		}
	})
}

func TestRunCommand(t *testing.T) {
	code, out, errOut := runCmd(t, "run", "../../examples/binary.pydt", "--data", "Y=../../examples/data/animals.csv", "--explain")
	if code != 0 || !strings.Contains(out, "probit-aux") || !strings.Contains(out, "gibbs(c)") {
		t.Fatalf("--explain: status %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	code, out, errOut = runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--iters", "40", "--chains", "2", "--seed", "9", "--checkpoint-every", "15", "--out", dir)
	if code != 0 {
		t.Fatalf("run: status %d\n%s", code, errOut)
	}
	for _, want := range []string{"rhat", "ess_bulk", "acceptance:", "2 chains × 40 iterations"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal summary lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"trace.csv", "trees-1.nwk", "trees-2.nwk", "map.nwk", "summary.nwk", "mea.nwk", "consensus.nwk", "coclust.csv", "summary.json", "checkpoint.json", "run.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	var summary map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &summary); err != nil || summary["scalars"] == nil || summary["acceptance"] == nil || summary["wall_time_seconds"] == nil {
		t.Errorf("summary.json: %v\n%s", err, b)
	}
	// Resuming a finished run does nothing more and succeeds.
	trace, _ := os.ReadFile(filepath.Join(dir, "trace.csv"))
	if code, _, errOut := runCmd(t, "run", "--resume", dir); code != 0 {
		t.Fatalf("resume: %s", errOut)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "trace.csv"))
	if !bytes.Equal(trace, again) {
		t.Error("resuming a finished run changed its trace")
	}
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv"); code != 2 || !strings.Contains(errOut, "--out DIR is required") {
		t.Errorf("missing --out: status %d, %q", code, errOut)
	}
}

// TestSampleTinyCScores is the regression test of issue 13's "sample --set
// c=1e-20 writes a tree that score rejects": with c = 1e-20 every
// divergence lies about s = -log(1-t) = 1e20 from the origin, far beyond
// the float64 range of 1-t. Such times are kept as s, written to Newick
// with [&s=...] annotations (their branch lengths underflow), and read
// back exactly, so that score accepts the tree: with the Normal noise model
// the scores are finite; without noise the sampled rows are bitwise equal
// (their split is 1e-(4e19) before t = 1), whose density is infinite, and
// score says so instead of rejecting the tree.
func TestSampleTinyCScores(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd(t, "sample", "../../examples/gaussian-noise.pydt", "--set", "N=6,D=2,c=1e-20", "--draws", "3", "--seed", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("sample: %s", errOut)
	}
	trees, _ := os.ReadFile(filepath.Join(dir, "trees.nwk"))
	if !strings.Contains(string(trees), "[&s=") {
		t.Errorf("trees.nwk has no [&s=...] annotation:\n%s", trees)
	}
	for _, draw := range []string{"1", "2", "3"} {
		code, out, errOut := runCmd(t, "score", "../../examples/gaussian-noise.pydt", "--data", "X="+filepath.Join(dir, "X.csv"),
			"--tree", filepath.Join(dir, "trees.nwk"), "--draw", draw, "--set", "alpha=1,beta=0.2,c=1e-20,prec=2,noise=1", "--json")
		if code != 0 {
			t.Fatalf("score draw %s: status %d: %s", draw, code, errOut)
		}
		var s map[string]any
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("score draw %s: %v\n%s", draw, err, out)
		}
		for _, k := range []string{"log_tree", "log_lik", "log_joint"} {
			if _, ok := s[k].(float64); !ok {
				t.Errorf("score draw %s: %s = %v, want a finite number", draw, k, s[k])
			}
		}
	}
	// Without noise: the rows are equal, and score says why it has no
	// finite log_lik.
	dir2 := t.TempDir()
	if code, _, errOut := runCmd(t, "sample", "../../examples/gaussian.pydt", "--set", "N=6,D=2,c=1e-20", "--draws", "1", "--seed", "1", "--out", dir2); code != 0 {
		t.Fatalf("sample: %s", errOut)
	}
	code, _, errOut = runCmd(t, "score", "../../examples/gaussian.pydt", "--data", "X="+filepath.Join(dir2, "X.csv"),
		"--tree", filepath.Join(dir2, "trees.nwk"), "--set", "alpha=1,beta=0.2,c=1e-20,prec=2")
	if code == 0 || !strings.Contains(errOut, "log likelihood +Inf") || strings.Contains(errOut, "newick") {
		t.Errorf("noise-free score: status %d, stderr %s; want the infinite density reported", code, errOut)
	}
}

// TestRunExtraArgument: an output directory written as a second argument
// (run MODEL DIR) is a usage error that says where it belongs.
func TestRunExtraArgument(t *testing.T) {
	code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "fit", "--data", "X=../../examples/data/synthetic.csv")
	if code != 2 || !strings.Contains(errOut, "got 2: ../../examples/gaussian.pydt fit; the output directory is given with --out DIR") {
		t.Errorf("status %d, stderr %q", code, errOut)
	}
}

// TestRunLocalMovesFlag checks --local-moves: --explain names the number
// (none for 0), run.json records it and the acceptance table lists the local
// moves' rate when they are on, and a negative or non-numeric value is a
// usage error.
func TestRunLocalMovesFlag(t *testing.T) {
	args := []string{"run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv"}
	for _, tc := range []struct {
		flag    []string
		explain string // in --explain, "" for no local moves
		want    float64
	}{
		{nil, "local moves (1 per leaf", 1},
		{[]string{"--local-moves", "0"}, "", 0},
		{[]string{"--local-moves", "2"}, "local moves (2 per leaf", 2},
	} {
		t.Run(strings.Join(tc.flag, " "), func(t *testing.T) {
			code, out, errOut := runCmd(t, append(append(append([]string{}, args...), tc.flag...), "--explain")...)
			if code != 0 || strings.Contains(out, "local moves (") != (tc.explain != "") || !strings.Contains(out, tc.explain) {
				t.Fatalf("--explain: status %d, want %q in\n%s%s", code, tc.explain, out, errOut)
			}
			dir := t.TempDir()
			code, out, errOut = runCmd(t, append(append(append([]string{}, args...), tc.flag...), "--iters", "10", "--chains", "1", "--out", dir)...)
			if code != 0 {
				t.Fatalf("run: status %d\n%s", code, errOut)
			}
			ri, err := inference.ReadRun(dir)
			if err != nil || ri.LocalMoves == nil || *ri.LocalMoves != tc.want {
				t.Errorf("run.json local moves %v (%v), want %v", ri.LocalMoves, err, tc.want)
			}
			if strings.Contains(out, "  local ") != (tc.want > 0) {
				t.Errorf("acceptance table (local moves %v):\n%s", tc.want, out)
			}
		})
	}
	for _, bad := range []string{"-1", "x", "NaN", "+Inf"} {
		code, _, errOut := runCmd(t, append(append([]string{}, args...), "--local-moves", bad, "--explain")...)
		if code != 2 || !strings.Contains(errOut, "local-moves") {
			t.Errorf("--local-moves %s: status %d, stderr %q", bad, code, errOut)
		}
	}
}

// TestRunLocalGridFlag checks --local-grid: --explain names the informed
// proposal, run.json records the cells per edge (and omits them for the
// uniform proposal), and a negative or non-integer value is a usage error.
func TestRunLocalGridFlag(t *testing.T) {
	args := []string{"run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv"}
	for _, g := range []int{0, 3} {
		flag := []string{"--local-grid", strconv.Itoa(g)}
		code, out, errOut := runCmd(t, append(append(append([]string{}, args...), flag...), "--explain")...)
		if code != 0 || strings.Contains(out, "likelihood-informed proposal") != (g > 0) {
			t.Fatalf("--local-grid %d --explain: status %d\n%s%s", g, code, out, errOut)
		}
		dir := t.TempDir()
		code, _, errOut = runCmd(t, append(append(append([]string{}, args...), flag...), "--iters", "10", "--chains", "1", "--out", dir)...)
		if code != 0 {
			t.Fatalf("run: status %d\n%s", code, errOut)
		}
		ri, err := inference.ReadRun(dir)
		if err != nil || ri.LocalGrid != g {
			t.Errorf("run.json local grid %d (%v), want %d", ri.LocalGrid, err, g)
		}
	}
	for _, bad := range []string{"-1", "x", "1.5", "1001"} {
		code, _, errOut := runCmd(t, append(append([]string{}, args...), "--local-grid", bad, "--explain")...)
		if code != 2 || !strings.Contains(errOut, "local-grid") {
			t.Errorf("--local-grid %s: status %d, stderr %q", bad, code, errOut)
		}
	}
}
