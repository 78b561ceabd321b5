// Command gen-synthetic writes the paper's synthetic data set
// (Knowles & Ghahramani 2011, Section 7.1) to standard output as CSV:
// N = 100 points in two dimensions from an equal mixture of four Gaussians
// centred at (±1, ±1) with variance 1/8 per dimension. Each point's cluster
// is its row label (a, b, c, d) followed by its row number, so trees read
// back with the clusters visible. The seed is fixed.
//
//	go run ./examples/gen-synthetic > examples/data/synthetic.csv
package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

func main() {
	rng := rand.New(rand.NewPCG(2011, 7))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	centres := [4][2]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	sd := math.Sqrt(1.0 / 8)
	fmt.Fprintln(w, "point,x,y")
	for i := range 100 {
		k := i % 4 // 25 points a cluster
		x := centres[k][0] + sd*rng.NormFloat64()
		y := centres[k][1] + sd*rng.NormFloat64()
		fmt.Fprintf(w, "%c%d,%.6f,%.6f\n", 'a'+k, i+1, x, y)
	}
}
