package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
)

// traceData is the part of a trace file (-trace) that compare reads.
type traceData struct {
	name string
	// cols holds log_lik, c, root_t, sum_s and leaf_depth, one value per
	// recorded sweep (none of the last two in a trace written before
	// those columns existed).
	cols [5][]float64
	// cpu is the CPU seconds of the recorded sweeps (the last cpu_s), NaN
	// for a trace without cpu_s (written before that column existed).
	cpu float64
}

// compareCols names the columns compare reports, as in the trace; the
// last two, sum_s and leaf_depth, may be missing.
var compareCols = [5]string{"log_lik", "c", "root_t", "sum_s", "leaf_depth"}

// readTrace reads a trace file, dropping its first skip rows.
func readTrace(path string, skip int) (traceData, error) {
	td := traceData{name: path}
	f, err := os.Open(path)
	if err != nil {
		return td, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return td, fmt.Errorf("%s: %w", path, err)
	}
	idx := [6]int{}
	for i, name := range append(compareCols[:], "cpu_s") {
		if idx[i] = slices.Index(head, name); idx[i] < 0 && i < 3 {
			return td, fmt.Errorf("%s: no column %s", path, name)
		}
	}
	if idx[5] < 0 {
		td.cpu = math.NaN()
	}
	var cpu0 float64
	for row := 0; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A run still writing may leave its last row incomplete.
			if _, ok := err.(*csv.ParseError); ok {
				break
			}
			return td, fmt.Errorf("%s: %w", path, err)
		}
		x := [6]float64{3: math.NaN(), 4: math.NaN(), 5: math.NaN()}
		for i, j := range idx {
			if j < 0 {
				continue
			}
			if x[i], err = strconv.ParseFloat(rec[j], 64); err != nil {
				return td, fmt.Errorf("%s: row %d: %w", path, row+2, err)
			}
		}
		if row < skip {
			cpu0 = x[5]
			continue
		}
		for i := range 5 {
			if idx[i] >= 0 {
				td.cols[i] = append(td.cols[i], x[i])
			}
		}
		td.cpu = x[5] - cpu0
	}
	if n := len(td.cols[0]); n < 8 {
		return td, fmt.Errorf("%s: %d rows after the first %d, need at least 8", path, n, skip)
	}
	return td, nil
}

// halfStats returns the mean of x and its Monte Carlo standard error,
// sd/sqrt(ESS), with Geyer's ESS (diagnostics.ESSMean).
func halfStats(x []float64) (mean, se, ess float64) {
	var s, ss float64
	for _, v := range x {
		s += v
	}
	mean = s / float64(len(x))
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	ess = diagnostics.ESSMean([][]float64{x})
	return mean, math.Sqrt(ss/float64(len(x)-1)) / math.Sqrt(ess), ess
}

// compare writes, for each trace (one chain each) and each of the log
// likelihood, c and the root time: the mean ± Monte Carlo standard error
// of the first and the second half and their difference in standard
// errors (z), the ESS of the whole trace and per CPU second; then, over
// all the traces, the rank-normalised split R-hat (diagnostics.SplitRhat)
// and the ESS of the chains together. A chain at stationarity has |z|
// mostly below 2, and chains from different starts an R-hat near 1. The
// last column is the ESS by batch means (batchMeansESS, 20 batches): its
// agreement with Geyer's ESS bounds the error of either. A column constant
// in a trace (or, for R-hat, in all of them) is reported as "constant",
// where its z, ESS and R-hat would be 0/0.
func compare(w io.Writer, ts []traceData) {
	fmt.Fprintln(w, "| trace | sweeps | CPU s | scalar | mean, 1st half | mean, 2nd half | z | ESS | ESS/s | ESS, batch means |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, t := range ts {
		for i, name := range compareCols {
			x := t.cols[i]
			if len(x) == 0 {
				continue // sum_s or leaf_depth, in a trace without it
			}
			if constant(x) {
				// z, the ESS and R-hat are 0/0 for a constant column
				// (a clamped scalar, a frozen tree's depth): say so.
				fmt.Fprintf(w, "| %s | %d | %.0f | %s | %.4g | %.4g | constant | constant | constant | constant |\n",
					t.name, len(x), t.cpu, name, x[0], x[0])
				continue
			}
			h := len(x) / 2
			m1, s1, _ := halfStats(x[:h])
			m2, s2, _ := halfStats(x[h:])
			ess := diagnostics.ESSMean([][]float64{x})
			fmt.Fprintf(w, "| %s | %d | %.0f | %s | %.4g ± %.2g | %.4g ± %.2g | %.1f | %.0f | %.3f | %.0f |\n",
				t.name, len(x), t.cpu, name, m1, s1, m2, s2, (m2-m1)/math.Hypot(s1, s2), ess, ess/t.cpu, batchMeansESS(x, 20))
		}
	}
	if len(ts) < 2 {
		return
	}
	n := len(ts[0].cols[0])
	for _, t := range ts[1:] {
		n = min(n, len(t.cols[0]))
	}
	fmt.Fprintf(w, "\nAll %d chains, their first %d sweeps each:\n\n", len(ts), n)
	fmt.Fprintln(w, "| scalar | split R-hat | ESS (chains together) |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for i, name := range compareCols {
		var chains [][]float64
		for _, t := range ts {
			if len(t.cols[i]) < n {
				break // sum_s or leaf_depth, missing from a trace
			}
			chains = append(chains, t.cols[i][:n])
		}
		if len(chains) < len(ts) {
			continue
		}
		if constant(slices.Concat(chains...)) {
			fmt.Fprintf(w, "| %s | constant | constant |\n", name)
			continue
		}
		fmt.Fprintf(w, "| %s | %.3f | %.0f |\n", name, diagnostics.SplitRhat(chains), diagnostics.ESSMean(chains))
	}
}

// constant reports whether every value of x is the same (x is not empty).
func constant(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}
