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
	if math.Abs(s/3-got.Mean) > 1e-9 {
		t.Errorf("mean %v, rows average %v", got.Mean, s/3)
	}
	im := got.Rows[1].Imputed
	if len(im) != 1 || im[0].Column != 2 || math.Abs(math.Abs(im[0].Value-0.25)-got.RMSE) > 1e-12 {
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
