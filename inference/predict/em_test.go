package predict

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// TestPredictRunEM checks PredictRun on an EM run against the predictive
// density computed by hand from map.nwk and summary.json, read without the
// package's own readers: the best tree with c and prec at the means of
// their variational posteriors and alpha, beta at their point estimates.
func TestPredictRunEM(t *testing.T) {
	x := toyData(8, 2, 4)
	raw := append([]float64(nil), x.Data...)
	m := compile(t, gaussianSrc, x)
	dir := t.TempDir()
	if _, err := inference.RunEM(context.Background(), m, inference.EMConfig{Rounds: 3, Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	test := [][]float64{{0.1, 3.2}, {2.3, math.NaN()}, {-1, 5}}
	res, err := PredictRun(m, dir, test, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trees != 1 {
		t.Fatalf("averaged %d trees, want the EM run's one", res.Trees)
	}
	var sum struct {
		Gamma map[string]struct{ Mean float64 } `json:"gamma_posteriors"`
		Point map[string]float64                `json:"point_estimates"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &sum)
	}
	if err != nil {
		t.Fatal(err)
	}
	nwk, err := os.ReadFile(filepath.Join(dir, "map.nwk"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := pydt.ParseNewick(string(nwk), nil)
	if err != nil {
		t.Fatal(err)
	}
	lik := bp.New(tr, 2)
	for i := range 8 {
		for k := range 2 {
			if err := lik.Observe(pydt.NodeID(i), k, raw[i*2+k]); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := Params{Alpha: sum.Point["alpha"], Beta: sum.Point["beta"], Div: pydt.DivInv{C: sum.Gamma["c"].Mean}, Variance: 1 / sum.Gamma["prec"].Mean}
	if !(p.Variance > 0) || !(p.Div.(pydt.DivInv).C > 0) {
		t.Fatalf("summary.json lacks the estimates: %+v", sum)
	}
	mx, err := Tree(lik, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range test {
		dst := make([]float64, 2)
		want := mx.Conditional(row, dst)
		if math.Abs(res.LogDensity[i]-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("row %d: log density %v, by hand %v", i, res.LogDensity[i], want)
		}
		if math.IsNaN(row[1]) && math.Abs(res.Imputed[i][1]-dst[1]) > 1e-9 {
			t.Errorf("row %d: imputed %v, by hand %v", i, res.Imputed[i][1], dst[1])
		}
	}
}

// TestPredictRunEMTreeMissesRows checks that PredictRun refuses an EM run
// whose map.nwk lacks some of the model's data rows (here the model is
// given one row more than the run was fitted to) instead of predicting
// with a tree of other data.
func TestPredictRunEMTreeMissesRows(t *testing.T) {
	dir := t.TempDir()
	m := compile(t, gaussianSrc, toyData(8, 2, 4))
	if _, err := inference.RunEM(context.Background(), m, inference.EMConfig{Rounds: 2, Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	bigger := compile(t, gaussianSrc, toyData(9, 2, 4))
	_, err := PredictRun(bigger, dir, [][]float64{{0.1, 3.2}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "map.nwk") {
		t.Fatalf("PredictRun with a tree missing row 9: error %v, want one naming map.nwk", err)
	}
}
