// Command fbmscore reads the log file of a run of Neal's fbm (dft-mc, one
// Dirichlet diffusion tree, real data with no noise model) and writes, per
// saved iteration, the trace that internal/mixbench writes for pydtlang's
// chains, so that the two samplers are measured by the same code
// (mixbench -compare: Geyer's ESS, ESS per CPU second):
//
//	sweep,log_lik,c,root_t,sum_s,leaf_depth,prec,cpu_s
//
// log_lik is log p(X | tree, σ²) with the branch points' locations
// integrated out, computed here by pydtlang's belief propagation
// (bp.Model.LogLik) on fbm's tree, since fbm records no such quantity; c is
// fbm's c1 (a(t) = c1/(1-t)); prec is 1/σ² for fbm's common diffusion
// standard deviation σ; root_t, sum_s (Σ -log(1-t) over the branch points)
// and leaf_depth (the mean number of edges from the root to a case) are as
// in mixbench; cpu_s is dft-mc's cumulative CPU time (its C clock(): user
// plus system), from the log's iteration records.
//
//	fbmscore -data four-1.txt -log fbm-1.log -out fbm-1.csv
//
// The data file is the one given to fbm's data-spec (whitespace-separated
// rows, e.g. written by mixbench -write-data). scripts/fbm-compare.sh runs
// the whole comparison. The log is read in fbm's binary layout on a
// little-endian machine (see fbmlog.go); nothing here runs fbm.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// readData reads whitespace-separated rows of numbers: the data and the
// number of columns.
func readData(r io.Reader) ([]float64, int, int, error) {
	var x []float64
	d, n := 0, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if d == 0 {
			d = len(f)
		} else if len(f) != d {
			return nil, 0, 0, fmt.Errorf("line %d: %d values, the first row has %d", line, len(f), d)
		}
		for _, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, 0, 0, fmt.Errorf("line %d: %w", line, err)
			}
			x = append(x, v)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, 0, 0, err
	}
	if n < 2 {
		return nil, 0, 0, fmt.Errorf("%d rows, need at least 2", n)
	}
	return x, n, d, nil
}

// leafDepth returns the mean number of edges from the root to a leaf.
func leafDepth(tr *pydt.Tree) float64 {
	depth := make([]int, tr.Cap())
	sum := 0
	for _, v := range tr.PreOrder(nil) {
		if p := tr.Parent(v); p != pydt.NoNode {
			depth[v] = depth[p] + 1
		}
		if tr.IsLeaf(v) {
			sum += depth[v]
		}
	}
	return float64(sum) / float64(tr.NumLeaves())
}

// sumS returns Σ s = -log(1-t) over the branch points of tr.
func sumS(tr *pydt.Tree) float64 {
	s := 0.0
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) {
			s += tr.Time(v).S()
		}
	}
	return s
}

// score writes the trace of the fbm log lg for the n×d data x to w.
func score(w io.Writer, lg io.Reader, x []float64, n, d int, partial bool) (int, error) {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "sweep,log_lik,c,root_t,sum_s,leaf_depth,prec,cpu_s")
	rows := 0
	err := readStates(lg, n, partial, func(s *state) error {
		tr, err := buildTree(s, n)
		if err != nil {
			return err
		}
		if !(s.SD > 0) || math.IsInf(s.SD, 0) {
			return fmt.Errorf("iteration %d: diffusion standard deviation %g", s.Index, s.SD)
		}
		ll, err := logLik(tr, x, d, s.SD*s.SD)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", s.Index, err)
		}
		rows++
		_, err = fmt.Fprintf(bw, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.3f\n", s.Index, ll, s.C1,
			tr.Time(tr.Root()).T(), sumS(tr), leafDepth(tr), 1/(s.SD*s.SD), float64(s.CPUms)/1000)
		return err
	})
	if err != nil {
		return rows, err
	}
	return rows, bw.Flush()
}

func main() {
	dataPath := flag.String("data", "", "the data `FILE` given to fbm's data-spec (whitespace-separated rows)")
	logPath := flag.String("log", "", "fbm's log `FILE` (dft-mc, one tree, no noise model)")
	out := flag.String("out", "", "write the trace to `FILE` (default: standard output)")
	partial := flag.Bool("partial", false, "accept the log of a run stopped mid-iteration: drop its incomplete last iteration")
	flag.Parse()
	if *dataPath == "" || *logPath == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: fbmscore -data FILE -log FILE [-out FILE] [-partial]")
		os.Exit(2)
	}
	if err := run(*dataPath, *logPath, *out, *partial); err != nil {
		fmt.Fprintln(os.Stderr, "fbmscore:", err)
		os.Exit(1)
	}
}

func run(dataPath, logPath, out string, partial bool) error {
	df, err := os.Open(dataPath)
	if err != nil {
		return err
	}
	x, n, d, err := readData(df)
	df.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", dataPath, err)
	}
	lf, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	w := io.Writer(os.Stdout)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	rows, err := score(w, lf, x, n, d, partial)
	if err != nil {
		return fmt.Errorf("%s: %w", logPath, err)
	}
	if rows == 0 {
		return fmt.Errorf("%s: no iterations", logPath)
	}
	return nil
}
