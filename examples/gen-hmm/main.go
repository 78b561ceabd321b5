// Command gen-hmm writes the example data of examples/hmm-gaussian.pydt to
// standard output as CSV: T = 150 observations in D = 2 dimensions from a
// hidden Markov chain over four states with a two-level hierarchy of state
// means — states a1 (−2, −2) and a2 (−2, 0) close together, b1 (2, 1)
// and b2 (2, 3) close together, the pairs far apart — a sticky chain
// (stay with probability 0.9, else move to one of the other three
// uniformly; the first state uniform) and Normal noise of sd 0.4 in each
// dimension. Each row's label is its time and true state (t001-a1, ...),
// kept apart from the values. The seed is fixed.
//
//	go run ./examples/gen-hmm > examples/data/hmm-gaussian.csv
package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
)

func main() {
	const (
		T     = 150
		stay  = 0.9
		noise = 0.4
	)
	names := []string{"a1", "a2", "b1", "b2"}
	means := [][2]float64{{-2, -2}, {-2, 0}, {2, 1}, {2, 3}}
	rng := rand.New(rand.NewPCG(12, 2026))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintln(w, "time,y1,y2")
	z := rng.IntN(len(means))
	for t := range T {
		if t > 0 && rng.Float64() >= stay {
			z = (z + 1 + rng.IntN(len(means)-1)) % len(means)
		}
		m := means[z]
		fmt.Fprintf(w, "t%03d-%s,%.4f,%.4f\n", t+1, names[z], m[0]+noise*rng.NormFloat64(), m[1]+noise*rng.NormFloat64())
	}
}
