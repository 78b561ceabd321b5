package diagnostics_test

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
)

// Four chains of a well-mixed AR(1) sampler and four chains of which one is
// stuck elsewhere: the second scalar's R-hat flags the problem.
func Example() {
	r := rand.New(rand.NewPCG(1, 2))
	good := make([][]float64, 4)
	bad := make([][]float64, 4)
	for c := range 4 {
		x, y := 0.0, 0.0
		for range 1000 {
			x = 0.5*x + r.NormFloat64()
			y = 0.9*y + 0.3*r.NormFloat64()
			good[c] = append(good[c], x)
			bad[c] = append(bad[c], y+float64(c/3)*2)
		}
	}
	sums := []diagnostics.Summary{
		diagnostics.Summarize("mu", good),
		diagnostics.Summarize("sigma", bad),
	}
	if err := diagnostics.WriteTable(os.Stdout, sums); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("converged: mu %v, sigma %v\n", sums[0].Rhat < 1.01, sums[1].Rhat < 1.01)
	// Output:
	// variable     mean    sd     q5      q50   q95   rhat  ess_bulk  ess_tail
	// mu        0.00974  1.15  -1.89  0.00851  1.89  1.003      1360      2238
	// sigma       0.493  1.09  -1.05    0.292  2.39  1.531         7        46
	// converged: mu true, sigma false
}
