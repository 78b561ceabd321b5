package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

func init() {
	register(fromDistuv(&Dist{
		Name: "Gamma",
		Doc:  "Gamma(shape, rate): density x^(shape-1) e^(-rate x) rate^shape / Γ(shape) on x > 0; mean shape/rate.",
		Params: []Param{
			{Name: "shape", Support: Positive, Doc: "shape a > 0"},
			{Name: "rate", Support: Positive, Default: 1, HasDefault: true, Doc: "rate b > 0 (not scale)"},
		},
		Support: Positive,
	}, func(p []float64, src rand.Source) distuv.Gamma {
		return distuv.Gamma{Alpha: p[0], Beta: p[1], Src: src}
	}))
}
