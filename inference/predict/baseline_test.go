package predict

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// Standard normal densities, by hand: φ(z) = exp(−z²/2)/√(2π).
const (
	phi1 = 0.24197072451914337
	phi2 = 0.05399096651318806
	phi3 = 0.0044318484119380075
)

// TestKDEByHand: training points 0, 1, 3 (sd √(7/3)); with H = 1/sd the
// kernel is N(·; x_i, 1).
func TestKDEByHand(t *testing.T) {
	train := [][]float64{{0}, {1}, {3}, {math.NaN()}}
	sd := math.Sqrt(7.0 / 3)
	grid := []float64{0.5 / sd, 1 / sd}
	k, crit, err := NewKDE(train, grid)
	if err != nil {
		t.Fatal(err)
	}
	// Leave-one-out at h = 1: x=0 sees 1 and 3, x=1 sees 0 and 3, x=3
	// sees 0 and 1.
	want1 := math.Log((phi1+phi3)/2) + math.Log((phi1+phi2)/2) + math.Log((phi3+phi2)/2)
	if !(math.Abs(crit[1]-want1) <= 1e-12) {
		t.Errorf("LOO criterion at h = 1: %v, by hand %v", crit[1], want1)
	}
	// At h = 1/2 the kernel density at distance z is 2φ(2z).
	phi4, phi6 := 1.3383022576488537e-04, 6.075882849823286e-09
	want05 := math.Log((2*phi2+2*phi6)/2) + math.Log((2*phi2+2*phi4)/2) + math.Log((2*phi6+2*phi4)/2)
	if !(math.Abs(crit[0]-want05) <= 1e-9) {
		t.Errorf("LOO criterion at h = 1/2: %v, by hand %v", crit[0], want05)
	}
	if k.H != grid[1] {
		t.Errorf("chose H = %v, want %v (h = 1)", k.H, grid[1])
	}
	// Density at 2 with h = 1: (φ(2) + φ(1) + φ(1))/3.
	if got, want := math.Exp(mustLog(t)(k.LogDensity([]float64{2}))), (phi2+2*phi1)/3; !(math.Abs(got-want) <= 1e-15) {
		t.Errorf("density at 2: %v, by hand %v", got, want)
	}
	if _, _, err := NewKDE([][]float64{{1}}, nil); err == nil {
		t.Error("a KDE of one row: no error")
	}
}

func TestGaussianByHand(t *testing.T) {
	// Rows (0,0), (2,0), (0,2), (2,2): mean (1,1), MLE covariance I.
	g, err := NewGaussian([][]float64{{0, 0}, {2, 0}, {0, 2}, {2, 2}, {math.NaN(), 5}})
	if err != nil {
		t.Fatal(err)
	}
	// N((1,3); (1,1), I) = φ(0)φ(2); marginal of the first at 2: φ(1).
	phi0 := 1 / math.Sqrt(2*math.Pi)
	if got := math.Exp(mustLog(t)(g.LogDensity([]float64{1, 3}))); !(math.Abs(got-phi0*phi2) <= 1e-15) {
		t.Errorf("density %v, by hand %v", got, phi0*phi2)
	}
	if got := math.Exp(mustLog(t)(g.LogDensity([]float64{2, math.NaN()}))); !(math.Abs(got-phi1) <= 1e-15) {
		t.Errorf("marginal density %v, by hand %v", got, phi1)
	}
	if _, err := NewGaussian([][]float64{{1, 1}, {2, 2}, {3, 3}}); err == nil {
		t.Error("singular covariance: no error")
	}
}

// mustLog returns a function that fails the test on a scoring error and
// passes the log density through.
func mustLog(t *testing.T) func(float64, error) float64 {
	return func(v float64, err error) float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestBaselineBadQueries: a query row of the wrong width, or training rows
// of different widths, are errors, not panics (KDE.LogDensity indexed the
// column sds by the query's columns and panicked on a longer query).
func TestBaselineBadQueries(t *testing.T) {
	train := [][]float64{{0, 1}, {1, 0}, {3, 2}, {2, 4}}
	k, _, err := NewKDE(train, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGaussian(train)
	if err != nil {
		t.Fatal(err)
	}
	scorers := []struct {
		name string
		f    func([]float64) (float64, error)
	}{{"kde", k.LogDensity}, {"gaussian", g.LogDensity}}
	queries := []struct {
		name string
		x    []float64
		ok   bool
	}{
		{"right width", []float64{1, 2}, true},
		{"one missing", []float64{1, math.NaN()}, true},
		{"longer", []float64{1, 2, 3}, false},
		{"much longer", make([]float64, 50), false},
		{"shorter", []float64{1}, false},
		{"empty", nil, false},
		{"infinite", []float64{1, math.Inf(1)}, false},
	}
	for _, s := range scorers {
		for _, q := range queries {
			t.Run(s.name+"/"+q.name, func(t *testing.T) {
				v, err := s.f(q.x)
				switch {
				case q.ok && err != nil:
					t.Errorf("error %v", err)
				case q.ok && (math.IsNaN(v) || math.IsInf(v, 0)):
					t.Errorf("log density %v", v)
				case !q.ok && err == nil:
					t.Errorf("no error (log density %v)", v)
				}
			})
		}
	}
	if _, err := (&KDE{}).LogDensity([]float64{1}); err == nil {
		t.Error("an empty KDE: no error")
	}
	ragged := [][]float64{{0, 1}, {1}, {3, 2}}
	if _, _, err := NewKDE(ragged, nil); err == nil {
		t.Error("NewKDE of ragged rows: no error")
	}
	if _, err := NewGaussian(ragged); err == nil {
		t.Error("NewGaussian of ragged rows: no error")
	}
}

func TestSplit(t *testing.T) {
	train, test, err := Split(504, 0.1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(test) != 50 || len(train) != 454 {
		t.Fatalf("sizes %d, %d", len(train), len(test))
	}
	all := slices.Sorted(slices.Values(append(append([]int(nil), train...), test...)))
	for i, v := range all {
		if v != i {
			t.Fatalf("not a partition of 0..503: %v", all)
		}
	}
	_, again, _ := Split(504, 0.1, 7)
	_, other, _ := Split(504, 0.1, 8)
	if !slices.Equal(test, again) || slices.Equal(test, other) {
		t.Error("the split does not follow the seed")
	}
	for _, f := range []float64{0, 1, -0.1, math.NaN()} {
		if _, _, err := Split(10, f, 1); err == nil {
			t.Errorf("fraction %v: no error", f)
		}
	}
}

func TestWriteMatrixRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for i, x := range []*dataset.Matrix{
		{Rows: 2, Cols: 3, Data: []float64{0.1, -2e-7, math.NaN(), 1.0 / 3, 5, -0.25}},
		{Rows: 2, Cols: 2, Data: []float64{1, 2, math.NaN(), 4}, RowLabels: []string{"a b", "c,d"}, ColNames: []string{"x", "y"}},
	} {
		path := filepath.Join(dir, fmt.Sprintf("m%d.csv", i))
		if err := WriteMatrix(path, x); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
	}
}
