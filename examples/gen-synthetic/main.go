// Command gen-synthetic writes synthetic clustering data to standard
// output as CSV. Without flags it writes the paper's synthetic data set
// (Knowles & Ghahramani 2011, Section 7.1): N = 100 points in two
// dimensions from an equal mixture of four Gaussians centred at (±1, ±1)
// with variance 1/8 per dimension. Each point's cluster is its row label's
// letter (a, b, c, d) followed by its row number, so trees read back with
// the clusters visible (and internal/clusterstudy scores their purity).
// The seed is fixed.
//
//	go run ./examples/gen-synthetic > examples/data/synthetic.csv
//
// With -n, -d, -k or -seed it writes a larger set of the same kind for
// the EM scale benchmarks (docs/em.md): N points in D dimensions from an
// equal mixture of K Gaussians (K at most 26) with variance 1/8 per
// dimension, row i in cluster i mod K (internal/synth.Mixture). For D = 2
// and K = 4 the centres are the paper's (±1, ±1); otherwise each centre's
// coordinates are drawn from N(0, 1), so that centres are about √(2D)
// apart against a within-cluster spread of √(D/8). The large files are
// not committed (N = 10⁵, D = 10: about 10 MB):
//
//	go run ./examples/gen-synthetic -n 100000 -d 10 > /tmp/syn-1e5-d10.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/pydtlang/pydtlang/internal/synth"
)

func main() {
	n := flag.Int("n", 100, "number of points")
	d := flag.Int("d", 2, "number of dimensions")
	k := flag.Int("k", 4, "number of clusters (at most 26)")
	seed := flag.Uint64("seed", 2011, "random seed")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "gen-synthetic: no arguments expected; see -h")
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	err := write(w, *n, *d, *k, *seed)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen-synthetic:", err)
		os.Exit(1)
	}
}

// write writes n points of the k-cluster mixture in d dimensions.
func write(w io.Writer, n, d, k int, seed uint64) error {
	if k > 26 {
		return fmt.Errorf("at most 26 clusters (one letter each), got %d", k)
	}
	x, cluster, err := synth.Mixture(n, d, k, seed)
	if err != nil {
		return err
	}
	header := "point"
	if d == 2 {
		header += ",x,y"
	} else {
		for j := range d {
			header += ",x" + strconv.Itoa(j+1)
		}
	}
	if _, err := fmt.Fprintln(w, header); err != nil {
		return err
	}
	buf := make([]byte, 0, 32*(d+1))
	for i := range n {
		buf = append(buf[:0], byte('a'+cluster[i]))
		buf = strconv.AppendInt(buf, int64(i+1), 10)
		for j := range d {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, x[i*d+j], 'f', 6, 64)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
