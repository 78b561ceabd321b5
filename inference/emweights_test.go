package inference

import (
	"math"
	"strings"
	"testing"
)

// TestKBestWeights checks the K-best weights against exp(bound)
// normalised, worked by hand (bounds log 1, log 3: 1/4, 3/4; unchanged by
// a shift of ±1000 nats, where exp overflows or underflows), and that a
// NaN or +Inf bound, or all bounds −Inf, is an error rather than NaN
// weights (the hand-rolled normalisation returned NaN weights silently).
func TestKBestWeights(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, shift := range []float64{0, 1000, -1000} {
		w, err := KBestWeights([]float64{shift, shift + math.Log(3), math.Inf(-1)})
		if err != nil {
			t.Fatalf("shift %v: %v", shift, err)
		}
		for i, want := range []float64{0.25, 0.75, 0} {
			if !(math.Abs(w[i]-want) <= 1e-12) {
				t.Errorf("shift %v: weight %d = %v, want %v", shift, i, w[i], want)
			}
		}
	}
	if w, err := KBestWeights(nil); w != nil || err != nil {
		t.Errorf("no bounds: %v, %v; want nil, nil", w, err)
	}
	for _, b := range [][]float64{{0, nan}, {inf, 0}, {-inf, -inf}} {
		w, err := KBestWeights(b)
		if err == nil || !strings.Contains(err.Error(), "finite total") {
			t.Errorf("bounds %v: weights %v, error %v; want an error", b, w, err)
		}
	}
}
