package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

func init() {
	register(fromDistuv(&Dist{
		Name: "Beta",
		Doc:  "Beta(a, b): density x^(a-1) (1-x)^(b-1) / B(a, b) on 0 < x < 1.",
		Params: []Param{
			{Name: "a", Support: Positive, Default: 1, HasDefault: true, Doc: "first shape > 0"},
			{Name: "b", Support: Positive, Default: 1, HasDefault: true, Doc: "second shape > 0"},
		},
		Support: Unit,
	}, func(p []float64, src rand.Source) distuv.Beta {
		return distuv.Beta{Alpha: p[0], Beta: p[1], Src: src}
	}))
}
