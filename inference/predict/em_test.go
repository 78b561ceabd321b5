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

// TestPredictRunEM checks PredictRun on an EM run, asked for one tree,
// against the predictive density computed by hand from map.nwk and
// summary.json, read without the package's own readers: the best tree with
// c and prec at the means of their variational posteriors and alpha, beta
// at their point estimates.
func TestPredictRunEM(t *testing.T) {
	x := toyData(8, 2, 4)
	raw := append([]float64(nil), x.Data...)
	m := compile(t, gaussianSrc, x)
	dir := t.TempDir()
	if _, err := inference.RunEM(context.Background(), m, inference.EMConfig{Rounds: 3, Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	test := [][]float64{{0.1, 3.2}, {2.3, math.NaN()}, {-1, 5}}
	res, err := PredictRun(m, dir, test, RunOptions{Trees: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trees != 1 {
		t.Fatalf("averaged %d trees, want the best one", res.Trees)
	}
	sum, nwk := emRunByHand(t, dir)
	lik := observedTree(t, string(nwk), raw)
	p := Params{Alpha: sum.Point["alpha"], Beta: sum.Point["beta"], Div: pydt.DivInv{C: sum.Gamma["c"].Mean}, Variance: 1 / sum.Gamma["prec"].Mean}
	if !(p.Variance > 0) || !(p.Div.(pydt.DivInv).C > 0) {
		t.Fatalf("summary.json lacks the estimates: %+v", sum)
	}
	mx, err := Tree(lik, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkByHand(t, res, test, mx)
}

// TestPredictRunEMPerDim checks PredictRun on an EM run of
// examples/gaussian-perdim.pydt (a variance per column), asked for one
// tree, against the predictive density computed by hand from map.nwk and
// summary.json, read without the package's own readers: column d at the
// variance 1/E[prec[d]] of its own Gamma posterior (not one shared
// variance), c at its posterior mean, alpha and beta at their point
// estimates.
func TestPredictRunEMPerDim(t *testing.T) {
	x := toyData(8, 2, 4)
	raw := append([]float64(nil), x.Data...)
	m := compile(t, perdimSrc, x)
	dir := t.TempDir()
	if _, err := inference.RunEM(context.Background(), m, inference.EMConfig{Rounds: 3, Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	test := [][]float64{{0.1, 3.2}, {2.3, math.NaN()}, {math.NaN(), 5}}
	res, err := PredictRun(m, dir, test, RunOptions{Trees: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum, nwk := emRunByHand(t, dir)
	s2 := []float64{1 / sum.Gamma["prec[1]"].Mean, 1 / sum.Gamma["prec[2]"].Mean}
	if !(s2[0] > 0) || !(s2[1] > 0) || s2[0] == s2[1] {
		t.Fatalf("summary.json lacks two distinct per-column estimates: %+v", sum)
	}
	p := Params{Alpha: sum.Point["alpha"], Beta: sum.Point["beta"], Div: pydt.DivInv{C: sum.Gamma["c"].Mean}, Variances: s2}
	mx, err := Tree(observedTree(t, string(nwk), raw), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkByHand(t, res, test, mx)
}

// emSummaryByHand is what the by-hand checks read of an EM run's
// summary.json: the Gamma posteriors' means and the point estimates.
type emSummaryByHand struct {
	Gamma map[string]struct{ Mean float64 } `json:"gamma_posteriors"`
	Point map[string]float64                `json:"point_estimates"`
}

// emRunByHand reads the EM run in dir without the package's readers: its
// summary.json and its map.nwk.
func emRunByHand(t *testing.T, dir string) (emSummaryByHand, []byte) {
	t.Helper()
	var sum emSummaryByHand
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
	return sum, nwk
}

// checkByHand checks PredictRun's result for each test row against the
// mixture mx computed by hand: the log density of the observed entries
// and the imputed values of the missing ones (NaN fails).
func checkByHand(t *testing.T, res *RunResult, test [][]float64, mx *Mixture) {
	t.Helper()
	for i, row := range test {
		dst := make([]float64, len(row))
		want := mx.Conditional(row, dst)
		if !(math.Abs(res.LogDensity[i]-want) <= 1e-9*(1+math.Abs(want))) {
			t.Errorf("row %d: log density %v, by hand %v", i, res.LogDensity[i], want)
		}
		for k, v := range row {
			if math.IsNaN(v) && !(math.Abs(res.Imputed[i][k]-dst[k]) <= 1e-9) {
				t.Errorf("row %d: imputed column %d %v, by hand %v", i, k+1, res.Imputed[i][k], dst[k])
			}
		}
	}
}

// TestPredictRunEMTreeMissesRows checks that PredictRun refuses an EM run
// whose kbest.nwk (or, for a summary.json without kbest_estimates, as
// written before them, map.nwk) lacks some of the model's data rows (here
// the model is given one row more than the run was fitted to) instead of
// predicting with a tree of other data.
func TestPredictRunEMTreeMissesRows(t *testing.T) {
	dir := t.TempDir()
	m := compile(t, gaussianSrc, toyData(8, 2, 4))
	if _, err := inference.RunEM(context.Background(), m, inference.EMConfig{Rounds: 2, Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	bigger := compile(t, gaussianSrc, toyData(9, 2, 4))
	_, err := PredictRun(bigger, dir, [][]float64{{0.1, 3.2}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "kbest.nwk") {
		t.Fatalf("PredictRun with a tree missing row 9: error %v, want one naming kbest.nwk", err)
	}
	editSummary(t, dir, func(sum map[string]any) { delete(sum, "kbest_estimates") })
	_, err = PredictRun(bigger, dir, [][]float64{{0.1, 3.2}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "map.nwk") {
		t.Fatalf("PredictRun of an older EM run with a tree missing row 9: error %v, want one naming map.nwk", err)
	}
	if res, err := PredictRun(m, dir, [][]float64{{0.1, 3.2}}, RunOptions{}); err != nil || res.Trees != 1 {
		t.Fatalf("PredictRun of an older EM run: %v, %v; want its best tree alone", res, err)
	}
}

// editSummary rewrites the summary.json of the run in dir with edit
// applied to its fields and returns the new file's bytes.
func editSummary(t *testing.T, dir string, edit func(map[string]any)) []byte {
	t.Helper()
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	edit(sum)
	if b, err = json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPredictRunEMKBest checks PredictRun on an EM run against the
// two-tree mixture computed by hand from kbest.nwk and summary.json (read
// without the package's readers): each tree with its own hyperparameters
// (kbest_estimates), the trees weighted by exp(bound) normalised. The
// bounds in summary.json are set to −10 and −11 first, so that both trees
// weigh (1/(1+e^−1) and e^−1/(1+e^−1)); the predictive must then differ
// from the best tree's alone.
func TestPredictRunEMKBest(t *testing.T) {
	m, raw, dir, b := emRunBounds(t, []float64{-10, -11}, nil)
	w1 := 1 / (1 + math.Exp(-1))
	weights := []float64{w1, 1 - w1}
	test := [][]float64{{0.1, 3.2}, {2.3, math.NaN()}, {-1, 5}, {math.NaN(), 0.4}}
	dens, means := kbestByHand(t, dir, b, raw, test, 2)
	res, err := PredictRun(m, dir, test, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trees != 2 {
		t.Fatalf("averaged %d trees, want 2", res.Trees)
	}
	best, err := PredictRun(m, dir, test, RunOptions{Trees: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range test {
		mix := weights[0]*dens[i][0] + weights[1]*dens[i][1]
		want := math.Log(mix)
		if !(math.Abs(res.LogDensity[i]-want) <= 1e-9*(1+math.Abs(want))) { // NaN fails
			t.Errorf("row %d: log density %v, two-tree mixture by hand %v", i, res.LogDensity[i], want)
		}
		if !(math.Abs(best.LogDensity[i]-math.Log(dens[i][0])) <= 1e-9*(1+math.Abs(want))) {
			t.Errorf("row %d: best tree alone %v, by hand %v", i, best.LogDensity[i], math.Log(dens[i][0]))
		}
		if math.Abs(res.LogDensity[i]-best.LogDensity[i]) < 1e-6 {
			t.Errorf("row %d: the mixture equals the best tree's density %v: the second tree is not in it", i, want)
		}
		for k := range 2 {
			if !math.IsNaN(row[k]) {
				continue
			}
			wantM := (weights[0]*dens[i][0]*means[i][k] + weights[1]*dens[i][1]*means[i][2+k]) / mix
			if !(math.Abs(res.Imputed[i][k]-wantM) <= 1e-9*(1+math.Abs(wantM))) {
				t.Errorf("row %d, column %d: imputed %v, by hand %v", i, k, res.Imputed[i][k], wantM)
			}
		}
	}
}

// emRunBounds runs EM with a K-best list of len(bounds) trees on 8 rows of
// toy data, sets the trees' bounds in summary.json's kbest_estimates to
// bounds and applies edit (nil: none) to the estimates, and returns the
// model, the raw data (8×2, row-major), the run directory and the new
// summary.json's bytes.
func emRunBounds(t *testing.T, bounds []float64, edit func(ests []any)) (*inference.Model, []float64, string, []byte) {
	t.Helper()
	x := toyData(8, 2, 4)
	raw := append([]float64(nil), x.Data...)
	m := compile(t, gaussianSrc, x)
	dir := t.TempDir()
	if _, err := inference.RunEM(context.Background(), m, inference.EMConfig{Rounds: 4, K: len(bounds), Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	b := editSummary(t, dir, func(sum map[string]any) {
		ests, _ := sum["kbest_estimates"].([]any)
		if len(ests) != len(bounds) {
			t.Fatalf("summary.json has %d kbest_estimates, want %d", len(ests), len(bounds))
		}
		for j, e := range ests {
			e.(map[string]any)["bound"] = bounds[j]
		}
		if edit != nil {
			edit(ests)
		}
	})
	return m, raw, dir, b
}

// kbestByHand returns, for each test row and each of the k trees of the
// EM run in dir (kbest.nwk, its summary.json's bytes b), the tree's
// predictive density p_j(x_obs) of the row's observed entries, dens[i][j],
// and its conditional means of the row's entries given them,
// means[i][2j+k], computed by hand: read without the package's readers,
// each tree with its own estimates (kbest_estimates: c and prec at their
// variational posterior means, alpha and beta at their point estimates).
func kbestByHand(t *testing.T, dir string, b []byte, raw []float64, test [][]float64, k int) (dens, means [][]float64) {
	t.Helper()
	var sum struct {
		KBest []struct {
			Gamma map[string]struct{ Mean float64 } `json:"gamma_posteriors"`
			Point map[string]float64                `json:"point_estimates"`
		} `json:"kbest_estimates"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	nwk, err := os.ReadFile(filepath.Join(dir, "kbest.nwk"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(nwk)), "\n")
	if len(lines) != k || len(sum.KBest) != k {
		t.Fatalf("kbest.nwk has %d lines and summary.json %d kbest_estimates, want %d", len(lines), len(sum.KBest), k)
	}
	dens = make([][]float64, len(test))
	means = make([][]float64, len(test))
	for j, line := range lines {
		lik := observedTree(t, line, raw)
		e := sum.KBest[j]
		p := Params{Alpha: e.Point["alpha"], Beta: e.Point["beta"], Div: pydt.DivInv{C: e.Gamma["c"].Mean}, Variance: 1 / e.Gamma["prec"].Mean}
		if !(p.Variance > 0) {
			t.Fatalf("tree %d: no estimates in summary.json", j+1)
		}
		mx, err := Tree(lik, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range test {
			dst := make([]float64, 2)
			dens[i] = append(dens[i], math.Exp(mx.Conditional(row, dst)))
			means[i] = append(means[i], dst[0], dst[1])
		}
	}
	return dens, means
}

// TestPredictRunEMWeightZero checks PredictRun on an EM run whose K-best
// list holds trees of weight 0, against the mixture computed by hand
// (kbestByHand) over the trees that weigh: the best-ranked tree marked
// laplace_unavailable (its correction failed, so it is ranked by its bound
// alone, here far above the others) is left out, however high its bound;
// a tree with the correction whose bound is so far below the others' that
// its weight underflows to 0 is averaged in with weight 0 and changes
// nothing (no NaN from its log weight of -Inf).
func TestPredictRunEMWeightZero(t *testing.T) {
	m, raw, dir, b := emRunBounds(t, []float64{50, -10, -11, -5000}, func(ests []any) {
		ests[0].(map[string]any)["laplace_unavailable"] = true
	})
	test := [][]float64{{0.1, 3.2}, {2.3, math.NaN()}, {-1, 5}, {math.NaN(), 0.4}}
	dens, means := kbestByHand(t, dir, b, raw, test, 4)
	w1 := 1 / (1 + math.Exp(-1))
	weights := []float64{0, w1, 1 - w1, 0}
	res, err := PredictRun(m, dir, test, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trees != 3 {
		t.Errorf("averaged %d trees, want 3 (the tree without the correction left out)", res.Trees)
	}
	for i, row := range test {
		var mix float64
		for j, w := range weights {
			mix += w * dens[i][j]
		}
		want := math.Log(mix)
		if !(math.Abs(res.LogDensity[i]-want) <= 1e-9*(1+math.Abs(want))) { // NaN fails
			t.Errorf("row %d: log density %v, mixture of trees 2 and 3 by hand %v", i, res.LogDensity[i], want)
		}
		for k := range 2 {
			if !math.IsNaN(row[k]) {
				continue
			}
			var wantM float64
			for j, w := range weights {
				wantM += w * dens[i][j] * means[i][2*j+k]
			}
			wantM /= mix
			if !(math.Abs(res.Imputed[i][k]-wantM) <= 1e-9*(1+math.Abs(wantM))) {
				t.Errorf("row %d, column %d: imputed %v, by hand %v", i, k, res.Imputed[i][k], wantM)
			}
		}
	}
}

// observedTree returns the likelihood on the tree nwk (8 leaves) with the
// leaves observing the rows of raw (8×2, row-major).
func observedTree(t *testing.T, nwk string, raw []float64) *bp.Model {
	t.Helper()
	tr, err := pydt.ParseNewick(nwk, nil)
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
	return lik
}
