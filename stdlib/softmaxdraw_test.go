package stdlib

import (
	"math"
	"math/rand/v2"
	"testing"
)

// twoPassLogits is CategoricalLogits.RandVector as it was before its
// weights were computed once: exp(eta − max) summed, then recomputed while
// inverting, the rounding fallback the last category of positive weight.
func twoPassLogits(rng *rand.Rand, eta []float64) float64 {
	m := math.Inf(-1)
	for _, e := range eta {
		m = max(m, e)
	}
	var tot float64
	for _, e := range eta {
		tot += math.Exp(e - m)
	}
	u := rng.Float64() * tot
	for j, e := range eta {
		if u -= math.Exp(e - m); u < 0 {
			return float64(j + 1)
		}
	}
	for j := len(eta) - 1; j >= 0; j-- {
		if math.Exp(eta[j]-m) > 0 {
			return float64(j + 1)
		}
	}
	return float64(len(eta))
}

// TestLogitsDrawsUnchanged checks that CategoricalLogits.RandVector, which
// now computes each weight once, draws bit for bit what the two-pass
// version drew from the same stream, for vectors of 1 to 3000 logits
// spread from a few units to far beyond exp's range (weights that
// underflow to 0 must never be drawn).
func TestLogitsDrawsUnchanged(t *testing.T) {
	gen := rand.New(rand.NewPCG(7, 8))
	for r := range 2000 {
		k := 1 + gen.IntN(40)
		if r%50 == 0 {
			k = 1000 + gen.IntN(2000)
		}
		spread := []float64{1, 5, 50, 800}[r%4]
		eta := make([]float64, k)
		for j := range eta {
			eta[j] = spread * gen.NormFloat64()
		}
		seed := gen.Uint64()
		a, b := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
		x := []float64{0}
		for range 5 {
			CategoricalLogits{}.RandVector(a, x, [][]float64{eta})
			if want := twoPassLogits(b, eta); x[0] != want {
				t.Fatalf("case %d (K = %d, spread %g): drew %v, the two-pass draw %v", r, k, spread, x[0], want)
			}
		}
	}
}
