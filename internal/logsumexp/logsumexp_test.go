package logsumexp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOf checks Of on its edge cases and, for finite input, bit for bit
// against the two-pass formula of the copies it replaced (m + log Σ
// exp(x_i - m), m the largest term; they differed only in that one
// returned -Inf for all-NaN input) and to rounding against the naive
// log Σ exp.
func TestOf(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name string
		x    []float64
		want float64
	}{
		{"empty", nil, math.Inf(-1)},
		{"all -Inf", []float64{-inf, -inf}, math.Inf(-1)},
		{"+Inf", []float64{1, inf, -inf}, inf},
		{"all NaN", []float64{nan, nan}, nan},
		{"a NaN", []float64{0, nan, 1}, nan},
		{"large", []float64{1000, 1000}, 1000 + math.Ln2},
		{"one", []float64{-3.25}, -3.25},
	} {
		got := Of(tc.x)
		if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && got != tc.want) {
			t.Errorf("%s: Of(%v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(5, 7))
	for trial := range 200 {
		x := make([]float64, 1+rng.IntN(20))
		var naive float64
		for i := range x {
			x[i] = 30 * rng.NormFloat64()
			naive += math.Exp(x[i])
		}
		m := math.Inf(-1)
		for _, v := range x {
			m = max(m, v)
		}
		var s float64
		for _, v := range x {
			s += math.Exp(v - m)
		}
		got := Of(x)
		if want := m + math.Log(s); got != want {
			t.Errorf("trial %d: Of = %v, the two-pass formula %v", trial, got, want)
		}
		if !(math.Abs(got-math.Log(naive)) <= 1e-12*math.Max(1, math.Abs(got))) {
			t.Errorf("trial %d: Of = %v, log Σ exp = %v", trial, got, math.Log(naive))
		}
	}
}
