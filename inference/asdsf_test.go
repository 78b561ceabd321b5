package inference

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func countChain(t *testing.T, n int, newicks ...string) *CladeCounts {
	t.Helper()
	c, err := NewCladeCounts(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range newicks {
		tr, err := pydt.ParseNewick(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Add(tr); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestSplitFrequencySDByHand checks the ASDSF against a hand computation.
// Clades (the root's left out): T1 {12} {34}, T2 {12} {123}, T3 {23}
// {123}. Chain A = T1 T1 T2 T2, chain B = T1 T2 T2 T3, chain C = T3 × 4.
// Frequencies (A, B, C): {12} 1, 3/4, 0; {34} 1/2, 1/4, 0; {123} 1/2,
// 3/4, 1; {23} 0, 1/4, 1.
func TestSplitFrequencySDByHand(t *testing.T) {
	const (
		t1 = "((1:0.5,2:0.5):0.3,(3:0.4,4:0.4):0.4):0.2;"
		t2 = "(((1:0.3,2:0.3):0.3,3:0.6):0.2,4:0.8):0.2;"
		t3 = "((1:0.6,(2:0.3,3:0.3):0.3):0.2,4:0.8):0.2;"
	)
	a := countChain(t, 4, t1, t1, t2, t2)
	b := countChain(t, 4, t1, t2, t2, t3)
	c := countChain(t, 4, t3, t3, t3, t3)
	r2 := math.Sqrt2
	s39 := math.Sqrt(39) / 12 // {12}, {23} over three chains: ss = 78/144, /2
	for _, tc := range []struct {
		name     string
		chains   []*CladeCounts
		min      float64
		avg, max float64
		clades   int
	}{
		// Two chains: each clade's sd is |f_A − f_B|/√2 = (1/4)/√2.
		{"A, B", []*CladeCounts{a, b}, 0.1, 0.25 / r2, 0.25 / r2, 4},
		// {23} is at 0 and 1/4, below 0.3 in both: left out.
		{"A, B, min 0.3", []*CladeCounts{a, b}, 0.3, 0.25 / r2, 0.25 / r2, 3},
		// Three chains, sample sd (denominator 2): {12} and {23} √39/12,
		// {34} and {123} 1/4.
		{"A, B, C", []*CladeCounts{a, b, c}, 0.1, (2*s39 + 0.5) / 4, s39, 4},
		// Identical chains agree on every clade.
		{"A, A", []*CladeCounts{a, a}, 0.1, 0, 0, 3},
	} {
		got, err := SplitFrequencySD(tc.chains, tc.min)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !(math.Abs(got.Average-tc.avg) <= 1e-12) || !(math.Abs(got.Max-tc.max) <= 1e-12) || got.Clades != tc.clades || got.Chains != len(tc.chains) {
			t.Errorf("%s: %+v, want average %v, max %v over %d clades", tc.name, got, tc.avg, tc.max, tc.clades)
		}
	}
	if _, err := SplitFrequencySD([]*CladeCounts{a}, 0.1); err == nil {
		t.Error("one chain: no error")
	}
	empty, _ := NewCladeCounts(4)
	if _, err := SplitFrequencySD([]*CladeCounts{a, empty}, 0.1); err == nil {
		t.Error("a chain without trees: no error")
	}
	five := countChain(t, 5, "((1:0.5,2:0.5):0.3,(3:0.4,4:0.4,5:0.4):0.4):0.2;")
	if _, err := SplitFrequencySD([]*CladeCounts{a, five}, 0.1); err == nil {
		t.Error("chains on different rows: no error")
	}
	// No clade reaches the minimum: the average is NaN.
	if got, err := SplitFrequencySD([]*CladeCounts{a, b}, 2); err != nil || !math.IsNaN(got.Average) || got.Clades != 0 {
		t.Errorf("min 2: %+v, %v", got, err)
	}
}

// cladeStrings returns the clades of tr but the root's, each as its sorted
// leaf indices joined by commas: an independent count, not by hash keys.
func cladeStrings(tr *pydt.Tree) []string {
	var out []string
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) || v == tr.Root() {
			continue
		}
		var leaves []int
		for _, u := range tr.PostOrderFrom(v, nil) {
			if tr.IsLeaf(u) {
				leaves = append(leaves, int(u))
			}
		}
		slices.Sort(leaves)
		out = append(out, strings.Trim(fmt.Sprint(leaves), "[]"))
	}
	return out
}

// checkRunASDSF recomputes a run's ASDSF from its tree files, one chain a
// file, counting clades as leaf-set strings, and compares it with res.
func checkRunASDSF(t *testing.T, dir string, chains int, labels []string, got *SummaryInfo) {
	t.Helper()
	freq := make([]map[string]float64, chains)
	for k := range chains {
		trees := readTreesFile(t, filepath.Join(dir, TreesFile(k+1)), labels)
		freq[k] = map[string]float64{}
		for _, tr := range trees {
			for _, c := range cladeStrings(tr) {
				freq[k][c] += 1 / float64(len(trees))
			}
		}
	}
	all := map[string]bool{}
	for _, f := range freq {
		for c, x := range f {
			if x >= MinSplitFreq-1e-12 {
				all[c] = true
			}
		}
	}
	var sum, mx float64
	for c := range all {
		var mean, ss float64
		for _, f := range freq {
			mean += f[c] / float64(chains)
		}
		for _, f := range freq {
			ss += (f[c] - mean) * (f[c] - mean)
		}
		sd := math.Sqrt(ss / float64(chains-1))
		sum += sd
		mx = max(mx, sd)
	}
	if got.ASDSF == nil || got.ASDSFClades != len(all) || !(math.Abs(*got.ASDSF-sum/float64(len(all))) <= 1e-9) || !(math.Abs(*got.MaxSDSF-mx) <= 1e-9) {
		t.Errorf("run ASDSF %v (max %v) over %d clades; recomputed %v (max %v) over %d", got.ASDSF, got.MaxSDSF, got.ASDSFClades, sum/float64(len(all)), mx, len(all))
	}
}

func readTreesFile(t *testing.T, path string, labels []string) []*pydt.Tree {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trees, err := pydt.ReadNewickTrees(f, labels)
	if err != nil {
		t.Fatal(err)
	}
	return trees
}

// TestTreeThin checks that TreeThin writes exactly every TreeThin-th
// kept tree of the run without it (same seed, so the same chains), that
// the trace is unchanged, and that run.json records it for Resume.
func TestTreeThin(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	full, thinned := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		dir      string
		treeThin int
	}{{full, 1}, {thinned, 4}} {
		res, err := Run(context.Background(), m, Config{Iters: 40, Chains: 2, Seed: 3, TreeThin: c.treeThin, Out: c.dir})
		if err != nil {
			t.Fatal(err)
		}
		if res.TreeThin != c.treeThin {
			t.Errorf("Result.TreeThin %d, want %d", res.TreeThin, c.treeThin)
		}
	}
	if a, b := must(os.ReadFile(filepath.Join(full, TraceFile))), must(os.ReadFile(filepath.Join(thinned, TraceFile))); string(a) != string(b) {
		t.Error("tree thinning changed trace.csv")
	}
	for k := 1; k <= 2; k++ {
		all := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(full, TreesFile(k)))))), "\n")
		got := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(thinned, TreesFile(k)))))), "\n")
		var want []string
		for i := 3; i < len(all); i += 4 {
			want = append(want, all[i])
		}
		if len(all) != 20 || !slices.Equal(got, want) {
			t.Errorf("chain %d: %d trees, want every 4th of %d (%d)", k, len(got), len(all), len(want))
		}
	}
	if k, err := RunTreeThin(thinned); err != nil || k != 4 {
		t.Errorf("RunTreeThin = %d, %v", k, err)
	}
	if _, err := Run(context.Background(), m, Config{Iters: 40, TreeThin: -1, Out: t.TempDir()}); err == nil {
		t.Error("TreeThin -1: no error")
	}
}
