package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPredictCommand fits a short run and predicts held-out rows, one with
// a missing entry whose truth is given.
func TestPredictCommand(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd(t, "run", "../../examples/gaussian.pydt", "--data", "X=../../examples/data/synthetic.csv",
		"--iters", "20", "--chains", "2", "--seed", "3", "--out", filepath.Join(dir, "fit"))
	if code != 0 {
		t.Fatalf("run: status %d\n%s", code, errOut)
	}
	test := filepath.Join(dir, "test.csv")
	truth := filepath.Join(dir, "truth.csv")
	os.WriteFile(test, []byte("0.5,1\n-1,NA\n3,-2\n"), 0o644)
	os.WriteFile(truth, []byte("0.5,1\n-1,0.25\n3,-2\n"), 0o644)
	code, out, errOut := runCmd(t, "predict", filepath.Join(dir, "fit"), "--test", test, "--truth", truth, "--trees", "5", "--json")
	if code != 0 {
		t.Fatalf("predict: status %d\n%s", code, errOut)
	}
	var got struct {
		Rows []struct {
			Row        string
			LogDensity float64 `json:"log_density"`
			Imputed    []struct {
				Column int
				Value  float64
			}
		}
		Mean    float64 `json:"mean_log_density"`
		SE      float64 `json:"se"`
		N       int
		Trees   int
		RMSE    float64 `json:"imputation_rmse"`
		Entries int     `json:"imputation_rmse_entries"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.N != 3 || got.Trees != 5 || len(got.Rows) != 3 || got.Entries != 1 {
		t.Fatalf("unexpected output:\n%s", out)
	}
	var s float64
	for _, r := range got.Rows {
		s += r.LogDensity
	}
	if !(math.Abs(s/3-got.Mean) <= 1e-9) {
		t.Errorf("mean %v, rows average %v", got.Mean, s/3)
	}
	im := got.Rows[1].Imputed
	if len(im) != 1 || im[0].Column != 2 || !(math.Abs(math.Abs(im[0].Value-0.25)-got.RMSE) <= 1e-12) {
		t.Errorf("imputed %+v, rmse %v", im, got.RMSE)
	}
	// Text output.
	code, out, errOut = runCmd(t, "predict", filepath.Join(dir, "fit"), "--test", test, "--trees", "3")
	if code != 0 || !strings.Contains(out, "mean log predictive density") || !strings.Contains(out, "2=") {
		t.Errorf("text: status %d\n%s%s", code, out, errOut)
	}
	// Errors: no --test, wrong width, not a run.
	os.WriteFile(filepath.Join(dir, "wide.csv"), []byte("1,2,3\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", filepath.Join(dir, "fit")}, "--test FILE is required"},
		{[]string{"predict", filepath.Join(dir, "fit"), "--test", filepath.Join(dir, "wide.csv")}, "has 3 columns, the training data 2"},
		{[]string{"predict", dir, "--test", test}, "run.json"},
	} {
		if code, _, errOut := runCmd(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: status %d, %q", c.args, code, errOut)
		}
	}
}

// TestPredictCommandProbit fits a short run of the Probit model and
// predicts binary rows: log probabilities, a missing entry's probability
// and the imputation accuracy against --truth.
func TestPredictCommandProbit(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train.csv")
	os.WriteFile(train, []byte("a,b,c\n1,1,0\n1,1,1\n0,0,1\n0,0,0\n1,0,0\n0,1,1\n"), 0o644)
	code, _, errOut := runCmd(t, "run", "../../examples/binary.pydt", "--data", "Y="+train,
		"--iters", "20", "--chains", "2", "--seed", "3", "--out", filepath.Join(dir, "fit"))
	if code != 0 {
		t.Fatalf("run: status %d\n%s", code, errOut)
	}
	test := filepath.Join(dir, "test.csv")
	truth := filepath.Join(dir, "truth.csv")
	os.WriteFile(test, []byte("a,b,c\n1,NA,0\n0,0,1\n"), 0o644)
	os.WriteFile(truth, []byte("a,b,c\n1,1,0\n0,0,1\n"), 0o644)
	args := []string{"predict", filepath.Join(dir, "fit"), "--test", test, "--truth", truth, "--trees", "4", "--probit-draws", "3", "--json"}
	code, out, errOut := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("predict: status %d\n%s", code, errOut)
	}
	var got struct {
		Rows []struct {
			LogDensity float64 `json:"log_density"`
			Imputed    []struct {
				Column int
				Value  float64
			}
		}
		Binary  bool
		Acc     float64 `json:"imputation_accuracy"`
		Entries int     `json:"imputation_accuracy_entries"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !got.Binary || len(got.Rows) != 2 || got.Entries != 1 || len(got.Rows[0].Imputed) != 1 {
		t.Fatalf("unexpected output:\n%s", out)
	}
	p := got.Rows[0].Imputed[0].Value
	want := 0.0
	if p > 0.5 {
		want = 1
	}
	if got.Acc != want || !(p > 0 && p < 1) || !(got.Rows[1].LogDensity < 0) {
		t.Errorf("P(b = 1) = %v, accuracy %v\n%s", p, got.Acc, out)
	}
	// The same seed gives the same output.
	if _, again, _ := runCmd(t, args...); again != out {
		t.Errorf("a second call differs:\n%s\n%s", out, again)
	}
	// Text output; a non-binary row is refused.
	code, out, errOut = runCmd(t, "predict", filepath.Join(dir, "fit"), "--test", test, "--trees", "2")
	if code != 0 || !strings.Contains(out, "mean log predictive probability") || !strings.Contains(out, "2=") {
		t.Errorf("text: status %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(test, []byte("a,b,c\n1,0.5,0\n"), 0o644)
	if code, _, errOut := runCmd(t, "predict", filepath.Join(dir, "fit"), "--test", test); code == 0 || !strings.Contains(errOut, "0 or 1") {
		t.Errorf("non-binary row: status %d, %q", code, errOut)
	}
}
