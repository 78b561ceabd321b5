// Package synth draws the labelled synthetic clustering data of
// examples/gen-synthetic and of the EM scale benchmarks: equal mixtures of
// Gaussians with variance 1/8 per dimension, the paper's four clusters at
// (±1, ±1) (Knowles & Ghahramani 2011, Section 7.1) and larger sets of the
// same kind.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Mixture returns n points in d dimensions (row-major) from an equal
// mixture of k Gaussians with variance 1/8 per dimension, row i in
// cluster i mod k, and the clusters. For d = 2 and k = 4 the centres are
// the paper's (±1, ±1); otherwise each centre's coordinates are drawn from
// N(0, 1) on a stream of their own, so that the points' stream is the same
// for every d, k and a given seed. With seed 2011, n = 100, d = 2, k = 4 it
// is examples/data/synthetic.csv.
func Mixture(n, d, k int, seed uint64) (x []float64, cluster []int, err error) {
	if n < 1 || d < 1 || k < 1 {
		return nil, nil, fmt.Errorf("synth: need n, d, k ≥ 1, got n = %d, d = %d, k = %d", n, d, k)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	centres := make([][]float64, k)
	if d == 2 && k == 4 {
		centres = [][]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	} else {
		crng := rand.New(rand.NewPCG(seed, 11))
		for c := range centres {
			centres[c] = make([]float64, d)
			for j := range centres[c] {
				centres[c][j] = crng.NormFloat64()
			}
		}
	}
	sd := math.Sqrt(1.0 / 8)
	x = make([]float64, n*d)
	cluster = make([]int, n)
	for i := range n {
		c := i % k
		cluster[i] = c
		for j := range d {
			x[i*d+j] = centres[c][j] + sd*rng.NormFloat64()
		}
	}
	return x, cluster, nil
}
