package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestRunMethodEM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "em")
	code, out, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--iters", "3", "--seed", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	// What is ranked is named (issue 10): up to 2000 Gaussian rows the
	// bound plus the Laplace correction, not a bound.
	if !strings.Contains(out, "best tree's bound + Laplace correction") || !strings.Contains(out, "not a bound") {
		t.Errorf("output does not name the ranked value: %s", out)
	}
	if strings.Contains(errOut, "EM round") && !strings.Contains(errOut, "best bound + Laplace correction") {
		t.Errorf("progress lines do not name the ranked value: %s", errOut)
	}
	for _, name := range []string{"map.nwk", "kbest.nwk", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	// run --resume DIR --iters 5 continues the run: kbest.nwk is that of
	// 5 rounds in one go.
	if code, out, errOut := runCmd(t, "run", "--resume", dir, "--iters", "5"); code != 0 || !strings.Contains(out, "after 5 rounds") {
		t.Errorf("resume of an EM run: status %d, %s%s", code, out, errOut)
	}
	once := filepath.Join(t.TempDir(), "em5")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--iters", "5", "--seed", "1", "--out", once); code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "kbest.nwk"))
	b, err := os.ReadFile(filepath.Join(once, "kbest.nwk"))
	if err != nil || string(a) != string(b) {
		t.Errorf("kbest.nwk after 3 rounds and a resume to 5 differs from 5 rounds in one go (%v):\n%s\nwant\n%s", err, a, b)
	}
	if code, _, errOut := runCmd(t, "run", "--resume", dir, "--method", "em"); code != 2 || !strings.Contains(errOut, "other flags") {
		t.Errorf("resume with --method: status %d, %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "run", "../../examples/student-t.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--out", filepath.Join(t.TempDir(), "x")); code == 0 || !strings.Contains(errOut, "StudentT") {
		t.Errorf("StudentT model: status %d, %s", code, errOut)
	}
}

// TestEMRunDirectory: an EM run directory is a run directory: cut cuts its
// best tree (map.nwk) by default, plot draws it with the bound trace,
// predict places test rows with the best tree at the EM estimates, and the
// commands that need posterior samples refuse it by name.
func TestEMRunDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "em")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--iters", "2", "--seed", "1", "--out", dir); code != 0 {
		t.Fatalf("run: status %d: %s", code, errOut)
	}
	run, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil || !strings.Contains(string(run), `"method": "em"`) {
		t.Fatalf("run.json: %v\n%s", err, run)
	}
	code, out, errOut := runCmd(t, "cut", dir, "--time", "0.5")
	if code != 0 || !strings.HasPrefix(out, "row,cluster\n") {
		t.Errorf("cut: status %d\n%s%s", code, out, errOut)
	}
	plots := filepath.Join(t.TempDir(), "plots")
	if code, out, errOut := runCmd(t, "plot", dir, "--out", plots); code != 0 {
		t.Errorf("plot: status %d\n%s%s", code, out, errOut)
	}
	for _, name := range []string{"dendrogram.svg", "tree-data.svg", "bound.svg"} {
		if _, err := os.Stat(filepath.Join(plots, name)); err != nil {
			t.Error(err)
		}
	}
	// The value is named as summary.json's objective names it: this run
	// (Gaussian, under 2000 rows) ranks by the bound plus the Laplace
	// correction, an approximation of log p(Y, alpha, beta | tree), not a
	// bound (it said "a lower bound on log p(Y, u, ...)"); never in s.
	if svg, err := os.ReadFile(filepath.Join(plots, "bound.svg")); err != nil || !strings.Contains(string(svg), "p(Y, alpha, beta | tree) (not a bound)") ||
		!strings.Contains(string(svg), "best bound + Laplace correction") || strings.Contains(string(svg), "p(Y, s,") {
		t.Errorf("bound.svg does not name the value ranked by (bound + Laplace correction): %v", err)
	}
	// A summary.json written before ranked_by (times_integrated alone)
	// names it the same (it said "best bound").
	sum := filepath.Join(dir, "summary.json")
	if b, err := os.ReadFile(sum); err != nil || !strings.Contains(string(b), `"ranked_by": "bound + Laplace correction",`) {
		t.Errorf("summary.json has no ranked_by: %v", err)
	} else if err := os.WriteFile(sum, []byte(strings.Replace(string(b), `"ranked_by": "bound + Laplace correction",`, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	oldPlots := filepath.Join(t.TempDir(), "plots")
	if code, out, errOut := runCmd(t, "plot", dir, "--out", oldPlots); code != 0 {
		t.Errorf("plot of a summary without ranked_by: status %d\n%s%s", code, out, errOut)
	}
	if svg, err := os.ReadFile(filepath.Join(oldPlots, "bound.svg")); err != nil || !strings.Contains(string(svg), "best bound + Laplace correction") {
		t.Errorf("bound.svg of a summary without ranked_by does not name bound + Laplace correction: %v", err)
	}
	// A run ranked by the bound alone names the log gaps g, not u (which
	// also names a probit layer's auxiliaries), and summary.json's
	// laplace_fallbacks are counted on bound.svg (they were not shown).
	var js map[string]any
	if b, err := os.ReadFile(sum); err != nil || json.Unmarshal(b, &js) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	js["times_integrated"] = false
	js["laplace_fallbacks"] = []map[string]any{{"start": "linkage", "index": 1, "action": "correction unavailable; ranked by the bound alone, after every tree with the correction", "error": "not a maximum"}}
	if b, err := json.Marshal(js); err != nil || os.WriteFile(sum, b, 0o644) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	gapPlots := filepath.Join(t.TempDir(), "plots")
	if code, out, errOut := runCmd(t, "plot", dir, "--out", gapPlots); code != 0 {
		t.Errorf("plot of a summary ranked by the bound: status %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(gapPlots, "bound.svg")); err != nil || !strings.Contains(string(b), "g the log gaps of s") ||
		strings.Contains(string(b), "p(Y, u,") || !strings.Contains(string(b), "laplace_fallbacks") {
		t.Errorf("bound.svg of a run ranked by the bound: want the log gaps named g and the fallbacks counted: %v", err)
	}
	test := filepath.Join(t.TempDir(), "test.csv")
	if err := os.WriteFile(test, []byte("label,x,y\nnew1,1.1,0.9\nnew2,-1,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCmd(t, "predict", dir, "--test", test); code != 0 || !strings.Contains(out, "10 trees") { // the K best
		t.Errorf("predict: status %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cut", dir, "--k", "3", "--posterior"}, "EM run"},
		{[]string{"summary", dir, "--out", filepath.Join(t.TempDir(), "s")}, "EM run"},
		{[]string{"plot", dir, "--tree", "mea"}, "EM run"},
		{[]string{"cut", dir, "--k", "3", "--tree", "summary.nwk"}, "map.nwk"},
	} {
		if code, _, errOut := runCmd(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, want an error naming %q: %s", c.args, code, c.want, errOut)
		}
	}
}

// TestInitTreeFlag: --init-tree starts MCMC (and EM) from an EM run's best
// tree, with the tree copied into the run directory; a tree for an unknown
// PYDT, or with --resume, is refused.
func TestInitTreeFlag(t *testing.T) {
	em := filepath.Join(t.TempDir(), "em")
	data := "X=../../examples/data/synthetic.csv"
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", data, "--method", "em", "--iters", "1", "--out", em); code != 0 {
		t.Fatalf("em: status %d: %s", code, errOut)
	}
	start := filepath.Join(em, "map.nwk")
	mc := filepath.Join(t.TempDir(), "mc")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", data, "--init-tree", start, "--iters", "4", "--chains", "1", "--out", mc); code != 0 {
		t.Fatalf("mcmc from the EM tree: status %d: %s", code, errOut)
	}
	want, _ := os.ReadFile(start)
	got, err := os.ReadFile(filepath.Join(mc, "init-tree.nwk"))
	if err != nil || len(got) == 0 || !strings.HasSuffix(string(got), ";\n") {
		t.Errorf("init-tree.nwk: %v %q (from %q)", err, got, want)
	}
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", data, "--method", "em", "--init-tree", "X="+start, "--iters", "1", "--out", filepath.Join(t.TempDir(), "em2")); code != 0 {
		t.Errorf("em from a tree: status %d: %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "../../examples/gaussian.pydt", "--data", data, "--init-tree", "Q=" + start, "--out", filepath.Join(t.TempDir(), "x")}, "Q is not a PYDT"},
		{[]string{"run", "../../examples/gaussian.pydt", "--data", data, "--init-tree", filepath.Join(em, "nope.nwk"), "--out", filepath.Join(t.TempDir(), "x")}, "nope.nwk"},
		{[]string{"run", "--resume", mc, "--init-tree", start}, "other flags"},
	} {
		if code, _, errOut := runCmd(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, want an error naming %q: %s", c.args, code, c.want, errOut)
		}
	}
}

// TestRunEMABFlags: --ab-rows and --ab-sweeps are checked (usage errors,
// status 2), and the estimate they set is recorded in summary.json:
// "subsample MCMC" by default, "per tree" with --ab-sweeps -1, "fixed"
// when --set clamps alpha and beta. From the subsample, every tree of the
// K-best list is fitted at the held alpha and beta (its point estimates
// are those of "alpha_beta", to the bit), and a beta clamped by --set is
// held at its value with standard deviation 0.
func TestRunEMABFlags(t *testing.T) {
	base := []string{"run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv", "--method", "em", "--iters", "1", "--seed", "1"}
	for _, tc := range []struct {
		name    string
		flags   []string
		code    int
		errText string
		source  string
		beta    float64 // the held beta when clamped by --set (0: not checked)
	}{
		{"rows 1", []string{"--ab-rows", "1"}, 2, "--ab-rows must be at least 2", "", 0},
		{"sweeps 0", []string{"--ab-sweeps", "0"}, 2, "--ab-sweeps must be positive, or -1", "", 0},
		{"sweeps -2", []string{"--ab-sweeps", "-2"}, 2, "--ab-sweeps must be positive, or -1", "", 0},
		{"margin NaN", []string{"--margin", "NaN"}, 2, "--margin must be a finite number", "", 0},
		{"margin Inf", []string{"--margin", "+Inf"}, 2, "--margin must be a finite number", "", 0},
		{"subsample", []string{"--ab-rows", "40", "--ab-sweeps", "20"}, 0, "", "subsample MCMC", 0},
		{"subsample, beta clamped", []string{"--ab-rows", "40", "--ab-sweeps", "20", "--set", "beta=0.2"}, 0, "", "subsample MCMC", 0.2},
		{"per tree", []string{"--ab-sweeps", "-1"}, 0, "", "per tree", 0},
		{"fixed", []string{"--set", "alpha=0.5,beta=0.1"}, 0, "", "fixed", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "em")
			code, _, errOut := runCmd(t, append(append(slices.Clone(base), tc.flags...), "--out", dir)...)
			if code != tc.code || !strings.Contains(errOut, tc.errText) {
				t.Fatalf("status %d, want %d: %s", code, tc.code, errOut)
			}
			if tc.code != 0 {
				return
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				AB struct {
					Source string  `json:"source"`
					Rows   int     `json:"rows"`
					Sweeps int     `json:"sweeps"`
					Alpha  float64 `json:"alpha"`
					Beta   float64 `json:"beta"`
					BetaSD float64 `json:"beta_sd"`
				} `json:"alpha_beta"`
				KBest []struct {
					Point map[string]float64 `json:"point_estimates"`
				} `json:"kbest_estimates"`
			}
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			if s.AB.Source != tc.source || tc.source == "subsample MCMC" && (s.AB.Rows != 40 || s.AB.Sweeps != 20) {
				t.Errorf("alpha_beta %+v, want source %q", s.AB, tc.source)
			}
			if tc.beta != 0 && (s.AB.Beta != tc.beta || s.AB.BetaSD != 0) {
				t.Errorf("alpha_beta %+v, want beta held at the clamped %v", s.AB, tc.beta)
			}
			if tc.source != "subsample MCMC" {
				return
			}
			if len(s.KBest) == 0 {
				t.Fatal("summary.json has no kbest_estimates")
			}
			for k, e := range s.KBest {
				if e.Point["alpha"] != s.AB.Alpha || tc.beta == 0 && e.Point["beta"] != s.AB.Beta {
					t.Errorf("tree %d fitted at %v, want alpha and beta held at %+v", k+1, e.Point, s.AB)
				}
			}
		})
	}
}

// TestResumeEMNoCheckpoint: an EM run with no checkpoint.json (stopped
// while its initial trees were fitted) is started again, and the note
// says so and that map.nwk and kbest.nwk are written anew.
func TestResumeEMNoCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "em")
	if code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--method", "em", "--iters", "1", "--seed", "1", "--out", dir); code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	if err := os.Remove(filepath.Join(dir, "checkpoint.json")); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd(t, "run", "--resume", dir)
	if code != 0 || !strings.Contains(errOut, "stopped before all its initial trees were fitted") ||
		!strings.Contains(errOut, "its map.nwk and kbest.nwk keep the earlier session's trees until the initial trees refitted are as good") {
		t.Errorf("resume without a checkpoint: status %d, %s", code, errOut)
	}
}

// TestRunMethodOnlyFlags: a flag that only the other method reads, given
// explicitly, is a usage error naming it and the method that reads it
// (before, --margin, --patience, --k and --em-iters were silently ignored
// by MCMC, and --chains, --thin, ... by EM); left at their defaults they
// are fine, and every flag of the table exists.
func TestRunMethodOnlyFlags(t *testing.T) {
	base := []string{"run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv", "--explain"}
	for _, tc := range []struct {
		method string // "" for the default
		args   []string
		want   string // "" for none
	}{
		{"", []string{"--margin", "5"}, "--margin is read only by --method em, not by --method mcmc (the default): drop it, or give --method em"},
		{"mcmc", []string{"--patience", "3"}, "--patience is read only by --method em, not by --method mcmc: drop it"},
		{"", []string{"--k", "3", "--em-iters", "5"}, "--k, --em-iters are read only by --method em"},
		{"", []string{"--time", "10s"}, "--time is read only by --method em"},
		{"", []string{"--ab-rows", "50"}, "--ab-rows is read only"},
		{"", []string{"--ab-sweeps", "-1"}, "--ab-sweeps is read only"},
		{"em", []string{"--chains", "2"}, "--chains is read only by --method mcmc, not by --method em: drop it, or give --method mcmc"},
		{"em", []string{"--thin", "2", "--tree-thin", "2"}, "--thin, --tree-thin are read only by --method mcmc"},
		{"em", []string{"--local-moves", "0"}, "--local-moves is read only by --method mcmc"},
		{"em", []string{"--local-grid", "8"}, "--local-grid is read only by --method mcmc"},
		{"em", []string{"--coclust"}, "--coclust is read only by --method mcmc"},
		{"em", []string{"--allow-stuck"}, "--allow-stuck is read only by --method mcmc"},
		{"em", []string{"--burn", "10"}, "--burn is read only by --method mcmc"},
		{"em", []string{"--impute"}, "--impute is read only by --method mcmc"},
		{"em", []string{"--chain-offset", "1"}, "--chain-offset is read only by --method mcmc"},
		{"em", []string{"--checkpoint-every", "5"}, "--checkpoint-every is read only by --method mcmc"},
		// Flags both methods read, and each method's own.
		{"em", []string{"--k", "3", "--margin", "5", "--seed", "2", "--standardize"}, ""},
		{"", []string{"--chains", "2", "--thin", "2", "--local-grid", "8", "--seed", "2"}, ""},
	} {
		args := append(slices.Clone(base), tc.args...)
		if tc.method != "" {
			args = append(args, "--method", tc.method)
		}
		code, _, errOut := runCmd(t, args...)
		switch {
		case tc.want == "" && code != 0:
			t.Errorf("%v: status %d: %s", tc.args, code, errOut)
		case tc.want != "" && (code != 2 || !strings.Contains(errOut, tc.want)):
			t.Errorf("%v: status %d, %q; want status 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	cmd := newRun()
	for _, f := range methodFlags {
		if cmd.Flags().Lookup(f.flag) == nil {
			t.Errorf("methodFlags names --%s, which run does not have", f.flag)
		}
	}
	// Every other flag of run is read by both methods (or by --resume): a
	// new flag must be put in methodFlags or here.
	both := map[string]bool{"iters": true, "seed": true, "out": true, "explain": true, "resume": true, "force": true, "standardize": true,
		"progress-every": true, "init-tree": true, "method": true, "data": true, "draw": true, "labels": true, "set": true, "help": true}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !both[f.Name] && !slices.ContainsFunc(methodFlags, func(m struct{ flag, method string }) bool { return m.flag == f.Name }) {
			t.Errorf("run's flag --%s is neither in methodFlags nor read by both methods", f.Name)
		}
	})
}
