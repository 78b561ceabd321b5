package scalar_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib"
)

// A slice sampler for a standard normal known only up to a constant.
func ExampleSlice() {
	rng := rand.New(rand.NewPCG(1, 2))
	logf := func(x float64) float64 { return -x * x / 2 }

	var s scalar.Slice // zero value: Width 1, MaxSteps 50, MaxShrink 200
	x, sum, sumSq := 3.0, 0.0, 0.0
	const n = 20000
	for range n {
		x, _ = s.Sample(rng, x, logf)
		sum += x
		sumSq += x * x
	}
	mean := sum / n
	fmt.Printf("mean %.1f, variance %.1f\n", math.Abs(mean), sumSq/n-mean*mean)
	// Output:
	// mean 0.0, variance 1.0
}

// Sampling the Pitman-Yor discount on [0, 1) on the logit scale, with a
// width tuned during burn-in and then frozen.
func ExampleSlice_SampleTransformed() {
	rng := rand.New(rand.NewPCG(3, 4))
	// A Beta(2, 5) density for the discount, up to a constant.
	logDensity := func(beta float64) float64 { return math.Log(beta) + 4*math.Log1p(-beta) }
	unit, err := scalar.ForSupport(stdlib.UnitLeft) // the logit transform, as Between(0, 1)
	if err != nil {
		fmt.Println(err)
		return
	}

	tuner := scalar.Tuner{Slice: scalar.Slice{Width: 10}}
	beta := 0.0 // the DDT value, on the boundary: moved just inside
	for range 500 {
		beta, _ = tuner.SampleTransformed(rng, beta, unit, logDensity)
	}
	s := tuner.Slice // frozen after burn-in
	sum := 0.0
	const n = 20000
	for range n {
		beta, _ = s.SampleTransformed(rng, beta, unit, logDensity)
		sum += beta
	}
	fmt.Printf("posterior mean %.2f (exact 2/7 = %.2f)\n", sum/n, 2.0/7)
	// Output:
	// posterior mean 0.29 (exact 2/7 = 0.29)
}
