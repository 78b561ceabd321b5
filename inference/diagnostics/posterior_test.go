package diagnostics

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readCSV reads a headerless numeric CSV; "NA" becomes NaN.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

func parseNum(t *testing.T, s string) float64 {
	t.Helper()
	s = strings.TrimSpace(s)
	if s == "NA" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAgainstPosterior compares every statistic with R's posterior package,
// run by testdata/posterior/reference.R on the draws stored beside it (an
// independent implementation; the draws cover autocorrelated, antithetic,
// odd-length, single-chain, very short, tied, binary, heavy-tailed and
// non-converged cases).
func TestAgainstPosterior(t *testing.T) {
	dir := filepath.Join("testdata", "posterior")
	ref := readCSV(t, filepath.Join(dir, "reference.csv"))
	header := ref[0]
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	if len(ref) < 10 {
		t.Fatalf("reference.csv has only %d rows", len(ref))
	}
	for _, row := range ref[1:] {
		name := strings.TrimSpace(row[0])
		t.Run(name, func(t *testing.T) {
			draws := readCSV(t, filepath.Join(dir, name+".csv"))
			chains := make([][]float64, len(draws[0]))
			for _, r := range draws {
				for c, s := range r {
					chains[c] = append(chains[c], parseNum(t, s))
				}
			}
			s := Summarize(name, chains)
			got := map[string]float64{
				"mean": s.Mean, "sd": s.SD, "q5": s.Q5, "q50": s.Q50, "q95": s.Q95,
				"rhat": s.Rhat, "ess_bulk": s.ESSBulk, "ess_tail": s.ESSTail,
				"rhat_basic": ClassicSplitRhat(chains), "ess_mean": ESSMean(chains),
				"rhat_bulk": RhatBulk(chains), "rhat_tail": RhatTail(chains),
				"ess_q05": ESSQuantile(chains, 0.05), "ess_q95": ESSQuantile(chains, 0.95),
			}
			for key, g := range got {
				i, ok := col[key]
				if !ok {
					t.Fatalf("reference.csv lacks column %q", key)
				}
				want := parseNum(t, row[i])
				if math.IsNaN(want) || math.IsNaN(g) {
					if math.IsNaN(want) != math.IsNaN(g) {
						t.Errorf("%s = %v, posterior %v", key, g, want)
					}
					continue
				}
				if !approxEq(g, want, 1e-10) {
					t.Errorf("%s = %.15g, posterior %.15g", key, g, want)
				}
			}
		})
	}
}
