package em

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestBetaDistLogProb checks BetaDist.LogProb against gonum's Beta density
// inside (0, 1), and against the closed-form limits at the ends and -Inf
// outside.
func TestBetaDistLogProb(t *testing.T) {
	for _, b := range []BetaDist{{1, 1}, {0.5, 0.5}, {2, 5}, {1, 3}, {7, 1}} {
		ref := distuv.Beta{Alpha: b.A, Beta: b.B}
		for _, x := range []float64{1e-9, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9} {
			if got, want := b.LogProb(x), ref.LogProb(x); !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
				t.Errorf("%v: LogProb(%v) = %v, distuv %v", b, x, got, want)
			}
		}
	}
	tests := []struct {
		b    BetaDist
		x    float64
		want float64
	}{
		{BetaDist{1, 3}, 0, math.Log(3)},   // density 3(1-x)^2 at 0
		{BetaDist{7, 1}, 1, math.Log(7)},   // density 7x^6 at 1
		{BetaDist{2, 5}, 0, math.Inf(-1)},  // density 0 at 0
		{BetaDist{0.5, 2}, 0, math.Inf(1)}, // unbounded at 0
		{BetaDist{2, 2}, -0.1, math.Inf(-1)},
		{BetaDist{2, 2}, 1.1, math.Inf(-1)},
		{BetaDist{2, 2}, math.NaN(), math.Inf(-1)},
	}
	for _, tc := range tests {
		if got := tc.b.LogProb(tc.x); !(got == tc.want || math.Abs(got-tc.want) < 1e-12) {
			t.Errorf("%v: LogProb(%v) = %v, want %v", tc.b, tc.x, got, tc.want)
		}
	}
}

// TestGammaLogProb checks Gamma.LogProb against the closed form and -Inf
// off the positive half-line (including x = 0, where distuv differs).
func TestGammaLogProb(t *testing.T) {
	tests := []struct {
		g    Gamma
		x    float64
		want float64
	}{
		{Gamma{1, 2}, 0.5, math.Log(2) - 1},                                   // 2 e^{-2x}
		{Gamma{2, 1}, 3, math.Log(3) - 3},                                     // x e^{-x}
		{Gamma{3, 0.5}, 2, 3*math.Log(0.5) - math.Log(2) + 2*math.Log(2) - 1}, // b^3 x^2 e^{-bx} / 2
		{Gamma{0.5, 1}, 0, math.Inf(-1)},
		{Gamma{1, 2}, 0, math.Inf(-1)},
		{Gamma{2, 1}, -1, math.Inf(-1)},
		{Gamma{2, 1}, math.NaN(), math.Inf(-1)},
	}
	for _, tc := range tests {
		if got := tc.g.LogProb(tc.x); !(got == tc.want || math.Abs(got-tc.want) < 1e-12) {
			t.Errorf("%v: LogProb(%v) = %v, want %v", tc.g, tc.x, got, tc.want)
		}
	}
}
