package pydt_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// Example reads a tree in Newick form (diffusion-time branch lengths),
// scores its structure and times under the PYDT prior, and scores data at
// its leaves with every internal location integrated out.
func Example() {
	tr, err := pydt.ParseNewick("((a:0.3,b:0.3):0.2,c:0.5,d:0.5):0.5;", nil)
	if err != nil {
		log.Fatal(err)
	}
	h, err := pydt.NewHarmonic(1, 0.2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log prior %.4f\n", pydt.LogPrior(tr, 1, 0.2, pydt.DivInv{C: 1.5}, h))

	lik := bp.New(tr, 1)
	lik.SetVariance(0.5)
	lik.ObserveMatrix([]float64{0.1, 0.3, -1.2, 0.5})
	if err := lik.Recompute(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log likelihood %.4f\n", lik.LogLik())
	fmt.Println(tr.Newick())
	// Output:
	// log prior -2.0310
	// log likelihood -5.0435
	// ((a:0.3,b:0.3):0.2,c:0.5,d:0.5):0.5;
}

// Example_draw draws a tree from the PYDT by its generative process.
func Example_draw() {
	rng := rand.New(rand.NewPCG(1, 2))
	tr, err := sim.DrawTree(rng, 5, sim.Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tr.NumLeaves(), "leaves,", tr.NumInternal(), "branch points, valid:", tr.Validate() == nil)
	// Output:
	// 5 leaves, 3 branch points, valid: true
}
