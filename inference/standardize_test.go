package inference

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
)

// wideData has a first column of scale 100 around 1000, a missing entry in
// it, and a unit-scale second column.
var wideData = [][]float64{{1010, 0.3}, {1150, -0.2}, {math.NaN(), 1.1}, {870, -0.9}, {990, 0.4}, {1060, 0.1}}

func TestStandardizeColumns(t *testing.T) {
	m := compileWithData(t, gaussianModel, wideData, nil)
	w := m.Warnings(graph.NewEnv(m.G))
	if len(w) != 1 || !strings.Contains(w[0], "column 1 (mean 1.02e+03, sd 102)") || !strings.Contains(w[0], "--standardize") {
		t.Fatalf("warnings before standardizing: %q", w)
	}
	sc, err := m.Standardize()
	if err != nil {
		t.Fatal(err)
	}
	// Independent: column 1 over its five observed values.
	obs := []float64{1010, 1150, 870, 990, 1060}
	var mean, ss float64
	for _, x := range obs {
		mean += x / 5
	}
	for _, x := range obs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / 4)
	if !(math.Abs(sc.Mean[0]-mean) <= 1e-9) || !(math.Abs(sc.SD[0]-sd) <= 1e-9) {
		t.Errorf("column 1: mean %v sd %v, want %v %v", sc.Mean[0], sc.SD[0], mean, sd)
	}
	x := m.Data.Value
	for j := range 2 {
		var s, s2 float64
		n := 0
		for i := range 6 {
			if v := x[i*2+j]; !math.IsNaN(v) {
				s, s2, n = s+v, s2+v*v, n+1
			}
		}
		if m := s / float64(n); !(math.Abs(m) <= 1e-12) || !(math.Abs((s2-float64(n)*m*m)/float64(n-1)-1) <= 1e-12) {
			t.Errorf("column %d after standardizing: mean %v, variance %v", j+1, m, (s2-float64(n)*m*m)/float64(n-1))
		}
	}
	if !math.IsNaN(x[4]) {
		t.Errorf("the missing entry became %v", x[4])
	}
	if got := sc.Unscale(0, sc.Scale(0, 1234.5)); !(math.Abs(got-1234.5) <= 1e-9) {
		t.Errorf("Unscale(Scale(1234.5)) = %v", got)
	}
	if w := m.Warnings(graph.NewEnv(m.G)); len(w) != 0 {
		t.Errorf("warnings after standardizing: %q", w)
	}
	if _, err := m.Standardize(); err == nil {
		t.Error("standardizing twice: no error")
	}
	y := &dataset.Matrix{Rows: 3, Cols: 1, Data: []float64{1, 0, 1}, Source: "y.csv"}
	if _, err := compileProbit(t, y).Standardize(); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("standardizing probit data: %v", err)
	}
}

// TestStandardizedRunResumes: a standardized run, interrupted, resumes from
// a freshly compiled (unstandardized) model exactly as if it had not
// stopped, since run.json records the scaling; impute.csv is in the data's
// units. Resuming with a different scaling is refused.
func TestStandardizedRunResumes(t *testing.T) {
	fresh := func() *Model { return compileWithData(t, gaussianModel, wideData, nil) }
	standardized := func() *Model {
		m := fresh()
		if _, err := m.Standardize(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	cfg := Config{Iters: 40, Burn: 10, Chains: 1, Seed: 9, CheckpointEvery: 5, Impute: true}
	outputs := []string{TraceFile, TreesFile(1), ImputeFile}
	cfg.Out = t.TempDir()
	if _, err := Run(context.Background(), standardized(), cfg); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, cfg.Out, outputs...)
	for _, line := range strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(cfg.Out, ImputeFile))))), "\n")[1:] {
		f := strings.Split(line, ",")
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil || !(math.Abs(v-1000) <= 600) {
			t.Fatalf("imputed %q: not in the data's units (around 1000)", line)
		}
	}

	c := cfg
	c.Out = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	c.Progress = func(done, _ int, _ float64) {
		if done == 17 {
			cancel()
		}
	}
	if _, err := Run(ctx, standardized(), c); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupt: %v", err)
	}
	cancel()
	if _, err := Resume(context.Background(), fresh(), c.Out, nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c.Out, outputs...); got != want {
		t.Fatal("the resumed standardized run differs from the uninterrupted one")
	}

	// An unstandardized run resumed with standardized data is refused.
	u := cfg
	u.Out = t.TempDir()
	ctx, cancel = context.WithCancel(context.Background())
	u.Progress = func(done, _ int, _ float64) {
		if done == 3 {
			cancel()
		}
	}
	if _, err := Run(ctx, fresh(), u); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupt: %v", err)
	}
	cancel()
	if _, err := Resume(context.Background(), standardized(), u.Out, nil); err == nil || !strings.Contains(err.Error(), "without --standardize") {
		t.Errorf("resume with standardized data: %v", err)
	}
}

// TestStandardizeLikeRun: a freshly compiled model standardized from a
// run's run.json gets the scaling Standardize computes on the same data;
// an unstandardized run leaves it alone; a standardized model given an
// unstandardized run, or data whose scaling differs, is refused.
func TestStandardizeLikeRun(t *testing.T) {
	fresh := func(rows [][]float64) *Model { return compileWithData(t, gaussianModel, rows, nil) }
	run := func(m *Model) string {
		cfg := Config{Iters: 12, Burn: 2, Chains: 1, Seed: 3, Out: t.TempDir()}
		if _, err := Run(context.Background(), m, cfg); err != nil {
			t.Fatal(err)
		}
		return cfg.Out
	}
	ref := fresh(wideData)
	want, err := ref.Standardize()
	if err != nil {
		t.Fatal(err)
	}
	std := run(ref)
	plain := run(fresh(wideData))

	m := fresh(wideData)
	if err := StandardizeLikeRun(m, std); err != nil {
		t.Fatal(err)
	}
	if m.Scaling == nil || !slices.Equal(m.Scaling.Mean, want.Mean) || !slices.Equal(m.Scaling.SD, want.SD) {
		t.Errorf("scaling %+v, want %+v", m.Scaling, want)
	}
	if err := StandardizeLikeRun(m, std); err != nil {
		t.Errorf("an already standardized model: %v", err)
	}
	m = fresh(wideData)
	if err := StandardizeLikeRun(m, plain); err != nil || m.Scaling != nil {
		t.Errorf("unstandardized run: scaling %+v, error %v", m.Scaling, err)
	}
	m = fresh(wideData)
	if _, err := m.Standardize(); err != nil {
		t.Fatal(err)
	}
	if err := StandardizeLikeRun(m, plain); err == nil || !strings.Contains(err.Error(), "without --standardize") {
		t.Errorf("standardized model, unstandardized run: %v", err)
	}
	other := make([][]float64, len(wideData))
	for i, r := range wideData {
		other[i] = []float64{2 * r[0], r[1]}
	}
	if err := StandardizeLikeRun(fresh(other), std); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("data with another scaling: %v", err)
	}
	if err := StandardizeLikeRun(fresh(wideData), t.TempDir()); err == nil {
		t.Error("a directory with no run.json: no error")
	}
}
