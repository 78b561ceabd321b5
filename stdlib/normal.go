package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

func init() {
	register(&Dist{
		Name: "Normal",
		Doc:  "Normal(mean, sd): the Gaussian with standard deviation sd (not variance, not precision).",
		Params: []Param{
			{Name: "mean", Support: Real, Default: 0, HasDefault: true, Doc: "mean"},
			{Name: "sd", Support: Positive, Default: 1, HasDefault: true, Doc: "standard deviation > 0"},
		},
		Support: Real,
		LogPDF: func(x float64, p []float64) float64 {
			return distuv.Normal{Mu: p[0], Sigma: p[1]}.LogProb(x)
		},
		Rand: func(rng *rand.Rand, p []float64) float64 {
			return p[0] + p[1]*rng.NormFloat64()
		},
	})
}
