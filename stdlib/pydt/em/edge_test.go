package em

import (
	"math"
	"testing"
)

// TestEdgeCases builds and fits trees for small or awkward data: one row,
// two rows, exactly duplicated rows, a row with every value missing. Every
// fit must end on a valid tree with a finite objective that never fell.
func TestEdgeCases(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		x    []float64
		n, d int
	}{
		{"one row", []float64{0.3, -1}, 1, 2},
		{"two rows", []float64{0.3, -1, 0.5, 2}, 2, 2},
		{"duplicates", []float64{1, 1, 1, 1, 1, 1, -2, 0.5}, 4, 2},
		{"missing row", []float64{1, 0, nan, nan, -1, 0.5, 0.2, 0.1}, 4, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, m, err := SequentialTree(c.x, c.n, c.d, InitOptions{C: 1, Variance: 1, Alpha: 0.5, Beta: 0.2})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			e, err := New(m, learnAll())
			if err != nil {
				t.Fatal(err)
			}
			prev := math.Inf(-1)
			for range 10 {
				l, err := e.Step()
				if err != nil {
					t.Fatal(err)
				}
				if math.IsNaN(l) || math.IsInf(l, 0) || l < prev-1e-9*(1+math.Abs(prev)) {
					t.Fatalf("objective %v after %v", l, prev)
				}
				prev = l
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEPEdgeCases: with every value missing EP's estimate is log 1 = 0;
// for one leaf EP is exact: P(y = 1) = P(z + ε > 0) = 1/2 for each
// dimension.
func TestEPEdgeCases(t *testing.T) {
	tr, _, err := SequentialTree([]float64{0, 1, 2}, 3, 1, InitOptions{C: 1, Variance: 1, Alpha: 0.5, Beta: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	if ll, err := EPLogLik(tr, 2, []float64{nan, nan, nan}, 1, Probit{}); err != nil || ll != 0 {
		t.Errorf("all missing: %v, %v", ll, err)
	}
	one, _, err := SequentialTree([]float64{0, 0}, 1, 2, InitOptions{C: 1, Variance: 1, Alpha: 0.5, Beta: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if ll, err := EPLogLik(one, 3, []float64{1, 0}, 2, Probit{}); err != nil || !(math.Abs(ll-2*math.Log(0.5)) <= 1e-12) {
		t.Errorf("one leaf: %v (want %v), %v", ll, 2*math.Log(0.5), err)
	}
}
