package predict_test

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/inference/predict"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// The predictive density of a new point given a tree of three observed
// points: ((a, b) at t = 0.6, c) at t = 0.3.
func Example() {
	tr, err := pydt.ParseNewick("((a:0.4,b:0.4):0.3,c:0.7):0.3;", []string{"a", "b", "c"})
	if err != nil {
		panic(err)
	}
	lik := bp.New(tr, 1)
	for i, x := range []float64{-1, -0.8, 1.2} {
		if err := lik.Observe(pydt.NodeID(i), 0, x); err != nil {
			panic(err)
		}
	}
	mx, err := predict.Tree(lik, predict.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variance: 1}, predict.Options{})
	if err != nil {
		panic(err)
	}
	for _, x := range []float64{-0.9, 0, 1.2, 3} {
		fmt.Printf("p(%4.1f) = %.4f\n", x, math.Exp(mx.LogDensity([]float64{x})))
	}
	// Output:
	// p(-0.9) = 0.4308
	// p( 0.0) = 0.3479
	// p( 1.2) = 0.2059
	// p( 3.0) = 0.0011
}
