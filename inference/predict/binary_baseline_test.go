package predict

import (
	"math"
	"strings"
	"testing"
)

// TestBernoulliByHand: column 1 has two 1s in three observed rows, P =
// 3/5; column 2 none in two (one missing), P = 1/4.
func TestBernoulliByHand(t *testing.T) {
	b, err := NewBernoulli([][]float64{{1, 0}, {1, math.NaN()}, {0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		y    []float64
		want float64
	}{
		{[]float64{1, 1}, math.Log(3.0 / 5 * 1 / 4)},
		{[]float64{0, 0}, math.Log(2.0 / 5 * 3 / 4)},
		{[]float64{math.NaN(), 1}, math.Log(1.0 / 4)},
		{[]float64{math.NaN(), math.NaN()}, 0},
	} {
		if got, err := b.LogProb(c.y); err != nil || !(math.Abs(got-c.want) <= 1e-12) {
			t.Errorf("%v: %v (%v), want %v", c.y, got, err, c.want)
		}
	}
	if _, err := NewBernoulli([][]float64{{0.5}}); err == nil {
		t.Error("a value 0.5: no error")
	}
	if _, err := NewBernoulli(nil); err == nil {
		t.Error("no rows: no error")
	}
}

// TestBinaryKernelByHand: training rows 00, 01, 11 (and one with a
// missing entry, left out). The query 10 differs from 00 and 11 in one
// entry and from 01 in both; the query 1? (second entry missing) matches
// 11 only. Leave-one-out on the grid {0.1, 0.3}: row 00 against 01 and 11
// has ((1−λ)λ + λ²)/2, and so on, computed here by hand.
func TestBinaryKernelByHand(t *testing.T) {
	train := [][]float64{{0, 0}, {0, 1}, {1, 1}, {1, math.NaN()}}
	bk, crit, err := NewBinaryKernel(train, []float64{0.1, 0.3})
	if err != nil {
		t.Fatal(err)
	}
	loo := func(l float64) float64 {
		a, b := (1-l)*l, l*l // one entry differs, both differ
		return math.Log((a+b)/2) + math.Log((a+a)/2) + math.Log((b+a)/2)
	}
	for g, l := range []float64{0.1, 0.3} {
		if !(math.Abs(crit[g]-loo(l)) <= 1e-12) {
			t.Errorf("λ = %v: criterion %v, want %v", l, crit[g], loo(l))
		}
	}
	wantL := 0.1
	if loo(0.3) > loo(0.1) {
		wantL = 0.3
	}
	if bk.Lambda != wantL {
		t.Errorf("λ = %v, want %v", bk.Lambda, wantL)
	}
	l := bk.Lambda
	if got, err := bk.LogProb([]float64{1, 0}); err != nil || !(math.Abs(got-math.Log(((1-l)*l+l*l+(1-l)*l)/3)) <= 1e-12) {
		t.Errorf("P(10): %v (%v), want %v", got, err, math.Log(((1-l)*l+l*l+(1-l)*l)/3))
	}
	if got, err := bk.LogProb([]float64{1, math.NaN()}); err != nil || !(math.Abs(got-math.Log((l+l+(1-l))/3)) <= 1e-12) {
		t.Errorf("P(1?): %v (%v), want %v", got, err, math.Log((l+l+(1-l))/3))
	}
	if _, _, err := NewBinaryKernel([][]float64{{1, 0}}, nil); err == nil {
		t.Error("one row: no error")
	}
	if _, _, err := NewBinaryKernel([][]float64{{1, 0}, {2, 0}}, nil); err == nil {
		t.Error("a value 2: no error")
	}
	if _, _, err := NewBinaryKernel([][]float64{{1, 0}, {0, 1, 1}, {0, 0}}, nil); err == nil {
		t.Error("ragged rows: no error")
	}
	if _, _, err := NewBinaryKernel([][]float64{{1, 0}, {0, 1}}, []float64{0.6}); err == nil {
		t.Error("flip probability 0.6: no error")
	}
}

// TestBinaryBaselinesRefuseBadQueries: a query entry other than 0, 1 or
// NaN, or a query of the wrong length, is an error naming the problem, not
// a silent answer (a 2 or 0.5 used to be scored as a 0) or a panic (a
// longer query used to index past the training row).
func TestBinaryBaselinesRefuseBadQueries(t *testing.T) {
	train := [][]float64{{0, 0}, {0, 1}, {1, 1}}
	b, err := NewBernoulli(train)
	if err != nil {
		t.Fatal(err)
	}
	bk, _, err := NewBinaryKernel(train, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		y    []float64
		want string
	}{
		{"a 2", []float64{2, 0}, "column 1 is 2"},
		{"a 0.5", []float64{1, 0.5}, "column 2 is 0.5"},
		{"a -1", []float64{-1, 0}, "column 1 is -1"},
		{"+Inf", []float64{0, math.Inf(1)}, "column 2 is +Inf"},
		{"too long", []float64{0, 1, 1}, "has 3 columns, the training rows 2"},
		{"too short", []float64{0}, "has 1 columns, the training rows 2"},
	} {
		for _, s := range []struct {
			name string
			f    func([]float64) (float64, error)
		}{{"Bernoulli", b.LogProb}, {"BinaryKernel", bk.LogProb}} {
			got, err := s.f(c.y)
			if err == nil {
				t.Errorf("%s, %s %v: %v, no error", s.name, c.name, c.y, got)
			} else if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s %v: error %q does not say %q", s.name, c.name, c.y, err, c.want)
			}
		}
	}
}
