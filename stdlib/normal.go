package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

func init() {
	register(fromDistuv(&Dist{
		Name: "Normal",
		Doc:  "Normal(mean, sd): the Gaussian with standard deviation sd (not variance, not precision).",
		Params: []Param{
			{Name: "mean", Support: Real, Default: 0, HasDefault: true, Doc: "mean"},
			{Name: "sd", Support: Positive, Default: 1, HasDefault: true, Doc: "standard deviation > 0"},
		},
		Support: Real,
	}, func(p []float64, src rand.Source) distuv.Normal {
		return distuv.Normal{Mu: p[0], Sigma: p[1], Src: src}
	}))
}
