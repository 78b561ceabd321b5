package hmm

import (
	"fmt"
	"math/rand/v2"
)

// LogDirichletPost draws one row of log probabilities from the posterior
// Dirichlet(prior + counts) of a row with a symmetric Dirichlet(prior)
// prior and counts (from Counts; all zero for a draw from the prior) into
// dst, by LogDirichlet. scratch (len(scratch) >= len(counts)) holds the
// posterior parameters; len(dst) must equal len(counts).
func LogDirichletPost(rng *rand.Rand, prior float64, counts []int, scratch, dst []float64) error {
	if len(scratch) < len(counts) {
		return fmt.Errorf("hmm: LogDirichletPost: scratch has length %d, want at least %d", len(scratch), len(counts))
	}
	a := scratch[:len(counts)]
	for k, n := range counts {
		a[k] = prior + float64(n)
	}
	return LogDirichlet(rng, a, dst)
}
