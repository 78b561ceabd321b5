package main

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference/predict"
)

// TestEvaluateCommand runs the held-out experiment on the synthetic data
// with very short chains and checks the report's shape, the DDT's clamped
// alpha = beta = 0 in its trace, and the bare-FILE form of --data.
func TestEvaluateCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ev")
	code, out, errOut := runCmd(t, "evaluate", "../../examples/gaussian.pydt", "--data", "../../examples/data/synthetic.csv",
		"--test-fraction", "0.1", "--seed", "4", "--iters", "20", "--trees", "4", "--out", dir, "--json")
	if code != 0 {
		t.Fatalf("evaluate: status %d\n%s", code, errOut)
	}
	var rep struct {
		Rows     int
		TestRows []string `json:"test_rows"`
		Models   []struct {
			Model string
			Mean  *float64 `json:"mean_log_density"`
			SE    *float64
			Rows  []*float64 `json:"log_density"`
			VsKDE *float64   `json:"minus_reference"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Rows != 100 || len(rep.TestRows) != 10 || len(rep.Models) != 4 {
		t.Fatalf("report:\n%s", out)
	}
	for i, want := range []string{"PYDT", "DDT", "KDE", "Gaussian"} {
		m := rep.Models[i]
		if m.Model != want || m.Mean == nil || m.SE == nil || len(m.Rows) != 10 {
			t.Errorf("model %d: %+v, want %s with 10 rows", i, m, want)
		}
	}
	// The paired difference from the KDE is the mean of the row differences.
	for _, m := range rep.Models {
		var s float64
		for j, v := range m.Rows {
			s += *v - *rep.Models[2].Rows[j]
		}
		if m.VsKDE == nil || !(math.Abs(*m.VsKDE-s/10) <= 1e-9) {
			t.Errorf("%s: minus_reference %v, rows give %v", m.Model, m.VsKDE, s/10)
		}
	}
	trace, err := os.ReadFile(filepath.Join(dir, "ddt", "trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(trace), "\n")
	if lines[0] != "chain,iteration,log_joint,log_lik,alpha,beta,c,prec" || !strings.Contains(lines[1], ",0,0,") {
		t.Errorf("DDT trace does not have alpha = beta = 0:\n%s\n%s", lines[0], lines[1])
	}
	if _, err := os.Stat(filepath.Join(dir, "evaluate.json")); err != nil {
		t.Error(err)
	}
	// The kept runs and split read back: predict repeats the PYDT's and
	// the DDT's numbers.
	for i, run := range []string{"pydt", "ddt"} {
		code, out, errOut := runCmd(t, "predict", filepath.Join(dir, run), "--test", filepath.Join(dir, "test.csv"), "--trees", "4", "--json")
		if code != 0 {
			t.Fatalf("predict %s: status %d\n%s", run, code, errOut)
		}
		var p struct {
			Mean float64 `json:"mean_log_density"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(p.Mean-*rep.Models[i].Mean) <= 1e-9) {
			t.Errorf("predict %s: mean %v, evaluate %v", run, p.Mean, *rep.Models[i].Mean)
		}
	}
	// The runs record the files' SHA-256: a changed train.csv is refused
	// (on main, evaluate's runs recorded none, and predict used it).
	train := filepath.Join(dir, "train.csv")
	b, _ := os.ReadFile(train)
	os.WriteFile(train, append(b, '\n'), 0o644)
	if code, _, errOut := runCmd(t, "predict", filepath.Join(dir, "pydt"), "--test", filepath.Join(dir, "test.csv")); code == 0 || !strings.Contains(errOut, "train.csv has changed") {
		t.Errorf("predict after train.csv changed: status %d, %q", code, errOut)
	}
	// Errors.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"evaluate", "../../examples/gaussian.pydt"}, "give the data once"},
		{[]string{"evaluate", "../../examples/gaussian.pydt", "--data", "../../examples/data/synthetic.csv", "--test-fraction", "1"}, "strictly between 0 and 1"},
		{[]string{"evaluate", "../../examples/binary.pydt", "--data", "../../examples/data/animals.csv", "--iters", "4", "--no-ddt", "--standardize"}, "only real-valued data can be standardized"},
		{[]string{"evaluate", "../../examples/student-t.pydt", "--data", "../../examples/data/synthetic.csv", "--iters", "4", "--no-ddt"}, "StudentT"},
	} {
		if code, _, errOut := runCmd(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, %q", c.args, code, errOut)
		}
	}
}

// TestEvaluateProbit runs the held-out experiment on the animals data with
// the Probit model and very short chains: binary baselines, the Kernel as
// the reference, log probabilities at most 0, and predict on the kept run
// (same seed) repeats the PYDT's number.
func TestEvaluateProbit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ev")
	code, out, errOut := runCmd(t, "evaluate", "../../examples/binary.pydt", "--data", "Y=../../examples/data/animals.csv",
		"--test-fraction", "0.2", "--seed", "3", "--iters", "10", "--chains", "1", "--trees", "3", "--out", dir, "--json")
	if code != 0 {
		t.Fatalf("evaluate: status %d\n%s", code, errOut)
	}
	var rep struct {
		Binary    bool
		Reference string
		TestRows  []string `json:"test_rows"`
		Models    []struct {
			Model string
			Mean  float64    `json:"mean_log_density"`
			Rows  []*float64 `json:"log_density"`
			VsRef *float64   `json:"minus_reference"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !rep.Binary || rep.Reference != "Kernel" || len(rep.TestRows) != 7 || len(rep.Models) != 4 {
		t.Fatalf("report:\n%s", out)
	}
	for i, want := range []string{"PYDT", "DDT", "Kernel", "Bernoulli"} {
		m := rep.Models[i]
		if m.Model != want || len(m.Rows) != 7 {
			t.Fatalf("model %d: %+v, want %s with 7 rows", i, m, want)
		}
		for _, v := range m.Rows {
			if v == nil || !(*v <= 0) {
				t.Errorf("%s: a log probability %v", want, v)
			}
		}
	}
	code, pout, errOut := runCmd(t, "predict", filepath.Join(dir, "pydt"), "--test", filepath.Join(dir, "test.csv"), "--trees", "3", "--seed", "3", "--json")
	if code != 0 {
		t.Fatalf("predict: status %d\n%s", code, errOut)
	}
	var p struct {
		Mean float64 `json:"mean_log_density"`
	}
	if err := json.Unmarshal([]byte(pout), &p); err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(p.Mean-rep.Models[0].Mean) <= 1e-9) {
		t.Errorf("predict: mean %v, evaluate %v", p.Mean, rep.Models[0].Mean)
	}
	code, table, _ := runCmd(t, "evaluate", "../../examples/binary.pydt", "--data", "Y=../../examples/data/animals.csv",
		"--test-fraction", "0.2", "--seed", "3", "--iters", "10", "--chains", "1", "--trees", "3", "--no-ddt")
	if code != 0 || !strings.Contains(table, "mean log prob") || !strings.Contains(table, "minus Kernel (paired)") {
		t.Errorf("table, status %d:\n%s", code, table)
	}
}

// TestEvaluateJSONDocumented checks that every key of evaluate.json, as
// writeEvalJSON writes it, is named in evaluate's --help and in README.md,
// so that a renamed field (minus_kde became minus_reference) cannot leave
// the documentation behind.
func TestEvaluateJSONDocumented(t *testing.T) {
	var sb strings.Builder
	r := evalReport{Models: []predict.EvalModel{{Name: "PYDT", Note: "n", Stuck: []int{1}, LogDensity: []float64{-1}}}, TestRows: []string{"a"}}
	if err := writeEvalJSON(&sb, r); err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(sb.String()), &top); err != nil {
		t.Fatal(err)
	}
	var models []map[string]json.RawMessage
	if err := json.Unmarshal(top["models"], &models); err != nil {
		t.Fatal(err)
	}
	keys := slices.Collect(maps.Keys(top))
	keys = append(keys, slices.Collect(maps.Keys(models[0]))...)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	help := newEvaluate().Long
	for _, k := range keys {
		if !regexp.MustCompile(`\b` + k + `\b`).MatchString(help) {
			t.Errorf("evaluate --help does not name the evaluate.json key %s", k)
		}
		if !strings.Contains(string(readme), "`"+k+"`") {
			t.Errorf("README.md does not name the evaluate.json key %s", k)
		}
	}
}
