package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestGHKLogLikOrthant checks ghkLogLik, the independent estimate that
// TestEMAnimalsStudy compares EP with, against closed-form orthant
// probabilities of a Gaussian: P(all of 3 > 0) = 1/8 + Σ asin(r_ab)/(4π)
// and P(both of 2 > 0) = 1/4 + asin(r)/(2π), r the correlations of the
// sign-flipped latent u = z + ε, cov σ² C + I. One column has all three
// rows, one a row missing (NaN, left out); the sum of their logs must be
// within 4 Monte Carlo standard errors.
func TestGHKLogLikOrthant(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,3:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	const n, d = 3, 2
	for _, tc := range []struct {
		s2 float64
		y  []float64 // n×d
	}{
		{1, []float64{1, 0, 1, 1, 0, math.NaN()}},
		{4, []float64{0, 1, 1, 0, 1, math.NaN()}},
		{0.5, []float64{1, 1, 1, 1, 1, math.NaN()}},
	} {
		corr := func(col, a, b int) float64 {
			sa, sb := 2*tc.y[a*d+col]-1, 2*tc.y[b*d+col]-1
			return sa * sb * tc.s2 * bruteLCATime(tr, a, b) / (tc.s2 + 1)
		}
		want := math.Log(1.0/8+(math.Asin(corr(0, 0, 1))+math.Asin(corr(0, 0, 2))+math.Asin(corr(0, 1, 2)))/(4*math.Pi)) +
			math.Log(1.0/4+math.Asin(corr(1, 0, 1))/(2*math.Pi))
		got, se := ghkLogLik(tr, tc.s2, tc.y, n, d, 4000, rand.New(rand.NewPCG(3, 4)))
		if !(se > 0) || !(math.Abs(got-want) <= 4*se) {
			t.Errorf("σ² %v, y %v: GHK %.5f ± %.5f, exact %.5f", tc.s2, tc.y, got, se, want)
		}
	}
}
