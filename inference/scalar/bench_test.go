package scalar

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

var sink float64

// BenchmarkNormalAbove draws from N(mu, 1) truncated to (0, ∞).
func BenchmarkNormalAbove(b *testing.B) {
	for _, mu := range []float64{-10, -3, -0.25, 0, 2, 8} {
		b.Run("mu="+strconv.FormatFloat(mu, 'g', -1, 64), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := 0.0
			for b.Loop() {
				s += NormalAbove(rng, mu, 1, 0)
			}
			sink = s
		})
	}
}

// BenchmarkSliceNormal is one update on a standard normal target.
func BenchmarkSliceNormal(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	logf := func(x float64) float64 { return -x * x / 2 }
	x := 0.0
	evals := 0
	for b.Loop() {
		var e int
		x, e = Slice{Width: 2.5}.Sample(rng, x, logf)
		evals += e
	}
	b.ReportMetric(float64(evals)/float64(b.N), "evals/op")
	sink = x
}

// BenchmarkSliceBetaLogit is one update of a Beta(2, 5) on the logit scale.
func BenchmarkSliceBetaLogit(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	logf := func(x float64) float64 { return math.Log(x) + 4*math.Log1p(-x) }
	unit := Between(0, 1)
	x := 0.3
	evals := 0
	for b.Loop() {
		var e int
		x, e = Slice{Width: 2}.SampleTransformed(rng, x, unit, logf)
		evals += e
	}
	b.ReportMetric(float64(evals)/float64(b.N), "evals/op")
	sink = x
}
