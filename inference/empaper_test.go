package inference

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// paperGaussians draws the paper's synthetic data (Section 6.1): n rows
// from the mixture of four Gaussians at (±1, ±1) with variance 1/8 in each
// coordinate, row i from component i % 4. It returns the data and each
// row's nearest centre (the component the row is closest to, which a
// tree can recover; a draw can land nearer another centre than its own).
func paperGaussians(n int, seed uint64) (*dataset.Matrix, []int) {
	rng := rand.New(rand.NewPCG(seed, 8))
	x := &dataset.Matrix{Rows: n, Cols: 2, Data: make([]float64, 2*n), Source: "paper.csv"}
	near := make([]int, n)
	sd := math.Sqrt(1.0 / 8)
	for i := range n {
		cx, cy := float64(2*(i%2)-1), float64(2*((i/2)%2)-1)
		a, b := cx+sd*rng.NormFloat64(), cy+sd*rng.NormFloat64()
		x.Data[2*i], x.Data[2*i+1] = a, b
		k := 0
		if a > 0 {
			k++
		}
		if b > 0 {
			k += 2
		}
		near[i] = k
	}
	return x, near
}

// topClusters returns the rows below each of the k subtrees that tr's k−1
// earliest branch points leave (the k-cluster cut of the dendrogram), or
// nil when the cut does not give exactly k groups (a multifurcation among
// the earliest branch points).
func topClusters(tr *pydt.Tree, k int) [][]int {
	var internal []pydt.NodeID
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) {
			internal = append(internal, v)
		}
	}
	slices.SortStableFunc(internal, func(a, b pydt.NodeID) int { return cmp.Compare(tr.Time(a).S(), tr.Time(b).S()) })
	top := map[pydt.NodeID]bool{}
	for _, v := range internal[:min(k-1, len(internal))] {
		top[v] = true
	}
	var groups [][]int
	for v := range top {
		for c := range tr.Children(v) {
			if top[c] {
				continue
			}
			var g []int
			for _, l := range tr.PostOrderFrom(c, nil) {
				if tr.IsLeaf(l) {
					g = append(g, int(l))
				}
			}
			groups = append(groups, g)
		}
	}
	if len(groups) != k {
		return nil
	}
	return groups
}

// agreement returns the fraction of rows whose label is the majority label
// of their group, and whether the groups' majority labels are distinct.
func agreement(groups [][]int, label []int) (float64, bool) {
	seen := map[int]bool{}
	agree, n := 0, 0
	distinct := true
	for _, g := range groups {
		cnt := map[int]int{}
		best, bl := 0, -1
		for _, r := range g {
			cnt[label[r]]++
			if cnt[label[r]] > best {
				best, bl = cnt[label[r]], label[r]
			}
		}
		distinct = distinct && !seen[bl]
		seen[bl] = true
		agree += best
		n += len(g)
	}
	return float64(agree) / float64(n), distinct
}

// emPosteriorMeans are the posterior means of α and β of the paper's model
// (examples/gaussian.pydt) on the data sets of the EM tests below, by data
// set: 4 chains of 6000 sweeps each (3000 burn-in) of the MCMC with local
// moves, the chains' means within ±0.04 of these for β (so also without
// local moves, which gave the same means within that error on "paper 2"
// and "pydt 1"). The tests hold α and β there (--set) instead of the
// search's subsample estimate (EMConfig.ABSweeps, 400 sweeps), whose Monte
// Carlo error is larger than the range of β in which they hold: on
// "paper 2" its estimate ranged over β = 0.13-0.50 with the chain's stream
// (0.13-0.36 at 2000 sweeps), and the search's root has 4 children for
// β ≥ 0.22 but 10 or 11 at β ≤ 0.18; on "pydt 1" the largest flat branch
// point holds 10-11 rows for β ≤ 0.23 and 15-23 rows for β ≥ 0.25 (at α
// 1.3). Which side a 400-sweep estimate fell on changed with any change of
// the MCMC's draws (local moves on by default made both tests fail), not
// with the estimate's quality.
var emPosteriorMeans = map[string][2]float64{
	"paper 1": {1.13, 0.24}, "paper 2": {1.11, 0.25},
	"pydt 1": {1.30, 0.22}, "pydt 3": {0.95, 0.135}, "pydt 4": {1.08, 0.14},
}

// compileHeldAB compiles examples/gaussian.pydt on x with α and β held at
// the posterior means of data set name (emPosteriorMeans).
func compileHeldAB(t *testing.T, x *dataset.Matrix, name string) *Model {
	t.Helper()
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	ab, ok := emPosteriorMeans[name]
	if !ok {
		t.Fatalf("no posterior means of alpha and beta for %s", name)
	}
	return compileSource(t, "gaussian.pydt", src, map[string]*dataset.Matrix{"X": x}, map[string]float64{"alpha": ab[0], "beta": ab[1]})
}

// TestEMPaperFourGaussians is the paper's Figure 3 as a test: on its four
// Gaussians (N = 100), the PYDT's EM tree joins the four clusters at one
// four-way branch point, the root, each of its subtrees one cluster; the
// DDT (alpha = beta = 0) can only split in two, and its tree's four-cluster
// cut recovers the clusters. Clusters are judged by each row's nearest
// centre (a draw nearer another centre belongs there under any tree model):
// at most 2 of the 100 rows may differ, for the search's sake. Both runs
// used to end at a near-star (a branch point at t ≈ 1e-4 holding 94 rows).
// The PYDT's α and β are held at their posterior means (emPosteriorMeans).
func TestEMPaperFourGaussians(t *testing.T) {
	t.Parallel()
	const ddt = `dim N, D
data X : real[N, D]
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(0, 0, c, 1 / prec)
`
	for _, seed := range []uint64{1, 2} {
		x, near := paperGaussians(100, seed)
		t.Run("PYDT", func(t *testing.T) {
			m := compileHeldAB(t, x, fmt.Sprint("paper ", seed))
			res, err := RunEM(context.Background(), m, EMConfig{Rounds: 10, Patience: -1, Seed: seed, Out: t.TempDir(), EMIters: 30})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Trees[0].Tree
			if d := tr.Degree(tr.Root()); d != 4 {
				t.Fatalf("seed %d: the root has %d children, want 4: %s", seed, d, tr.Newick())
			}
			var groups [][]int
			for c := range tr.Children(tr.Root()) {
				var g []int
				for _, l := range tr.PostOrderFrom(c, nil) {
					if tr.IsLeaf(l) {
						g = append(g, int(l))
					}
				}
				groups = append(groups, g)
			}
			if a, ok := agreement(groups, near); !ok || a < 0.98 {
				t.Errorf("seed %d: the root's subtrees agree with the clusters on %.2f of rows (distinct %v): %s", seed, a, ok, tr.Newick())
			}
			if len(res.Warnings) > 0 {
				t.Errorf("seed %d: warnings %q", seed, res.Warnings)
			}
		})
		t.Run("DDT", func(t *testing.T) {
			m := compileSource(t, "ddt.pydt", []byte(ddt), map[string]*dataset.Matrix{"X": x}, nil)
			res, err := RunEM(context.Background(), m, EMConfig{Rounds: 3, Patience: -1, Seed: seed, Out: t.TempDir(), EMIters: 20})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Trees[0].Tree
			for _, v := range tr.PreOrder(nil) {
				if !tr.IsLeaf(v) && tr.Degree(v) != 2 {
					t.Fatalf("seed %d: branch point %d has %d children in a DDT tree", seed, v, tr.Degree(v))
				}
			}
			groups := topClusters(tr, 4)
			if groups == nil {
				t.Fatalf("seed %d: no four-cluster cut: %s", seed, tr.Newick())
			}
			if a, ok := agreement(groups, near); !ok || a < 0.98 {
				t.Errorf("seed %d: the four-cluster cut agrees with the clusters on %.2f of rows (distinct %v)", seed, a, ok)
			}
		})
	}
}

// TestRunEMFailedFits: candidate fits that fail are counted in the result
// and summary.json with a warning naming the first error, and a search in
// which every candidate fit failed is an error (they used to be dropped
// silently, so a search that fitted nothing looked like one that found
// nothing better).
// failFirst fails the first fit of an initial tree (round 0) only.
func failFirst(err error) func(round int) error {
	done := false
	return func(r int) error {
		if r == 0 && !done {
			done = true
			return err
		}
		return nil
	}
}

func TestRunEMFailedFits(t *testing.T) {
	x := fourClusters(16, 0.25, 3)
	boom := errors.New("injected failure")
	for _, tc := range []struct {
		name     string
		fail     func(round int) error
		wantErr  bool
		wantFail int
	}{
		{"none", func(int) error { return nil }, false, 0},
		{"round 2", func(r int) error {
			if r == 2 {
				return boom
			}
			return nil
		}, false, -1},
		{"all", func(r int) error {
			if r == 0 {
				return nil
			}
			return boom
		}, true, 0},
		{"one initial tree", failFirst(boom), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
			dir := t.TempDir()
			res, err := RunEM(context.Background(), m, EMConfig{Rounds: 3, Patience: -1, Seed: 1, Out: dir, EMIters: 5, failFit: tc.fail})
			if tc.wantErr {
				if err == nil || !errors.Is(err, boom) || !strings.Contains(err.Error(), "all") {
					t.Fatalf("error %v, want one saying all candidate fits failed, wrapping the cause", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Fits == 0 {
				t.Fatal("no candidate fits")
			}
			var sum struct {
				Objective string   `json:"objective"`
				Fits      int      `json:"candidate_fits"`
				Failed    int      `json:"failed_fits"`
				Warnings  []string `json:"warnings"`
			}
			b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sum.Objective, "lower bound on log p(Y, g, alpha, beta | T)") {
				t.Errorf("summary.json objective %q does not name what the bound bounds", sum.Objective)
			}
			if sum.Fits != res.Fits || sum.Failed != res.FailedFits {
				t.Errorf("summary.json fits %d failed %d, result %d %d", sum.Fits, sum.Failed, res.Fits, res.FailedFits)
			}
			initWarned := strings.Contains(strings.Join(sum.Warnings, "\n"), "initial trees failed")
			if wantInit := tc.name == "one initial tree"; initWarned != wantInit || (res.InitialFailed == 1) != wantInit {
				t.Errorf("initial fits failed %d, warnings %q", res.InitialFailed, sum.Warnings)
			}
			if tc.wantFail == 0 {
				if res.FailedFits != 0 {
					t.Errorf("failed fits %d, want 0", res.FailedFits)
				}
				return
			}
			if res.FailedFits == 0 || res.FailedFits >= res.Fits {
				t.Errorf("failed fits %d of %d, want some but not all", res.FailedFits, res.Fits)
			}
			found := false
			for _, w := range sum.Warnings {
				found = found || strings.Contains(w, "injected failure")
			}
			if !found {
				t.Errorf("no warning names the failure: %q", sum.Warnings)
			}
		})
	}
}

// maxLeafChildren returns the largest number of leaves that one branch
// point of tr has as direct children.
func maxLeafChildren(tr *pydt.Tree) int {
	worst := 0
	for _, v := range tr.PreOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		k := 0
		for c := range tr.Children(v) {
			if tr.IsLeaf(c) {
				k++
			}
		}
		worst = max(worst, k)
	}
	return worst
}

// TestRunEMNoNearStar is the regression test of the near-star: on the
// README's example (examples/data/synthetic.csv, four clusters of 25) EM
// ended with 94 of the 100 rows hanging from one branch point at
// t ≈ 1e-4, and on a second, seeded draw of the paper's data likewise. No
// branch point may now hold more than 30% of the rows as direct children
// (a whole cluster as one flat branch point is 25%), and the near-star
// warning must not fire.
func TestRunEMNoNearStar(t *testing.T) {
	file, err := dataset.ReadFile("../examples/data/synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	drawn, _ := paperGaussians(100, 7)
	for name, x := range map[string]*dataset.Matrix{"synthetic.csv": file, "drawn": drawn} {
		t.Run(name, func(t *testing.T) {
			m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
			res, err := RunEM(context.Background(), m, EMConfig{Rounds: 5, Patience: -1, Seed: 1, Out: t.TempDir(), EMIters: 30})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Trees[0].Tree
			if k := maxLeafChildren(tr); 10*k > 3*x.Rows {
				t.Errorf("a branch point holds %d of %d rows: %s", k, x.Rows, tr.Newick())
			}
			if w := starWarning(tr); w != "" || len(res.Warnings) > 0 {
				t.Errorf("warnings %q %q", w, res.Warnings)
			}
		})
	}
}

// pydtData draws n rows of d columns from the PYDT itself, α = 0.2,
// β = 0.03 (mostly binary trees, as the MCMC posteriors of ccle have them),
// c as given, σ² = 1, and returns them with the drawn tree.
func pydtData(t *testing.T, n, d int, c float64, seed uint64) (*dataset.Matrix, *pydt.Tree) {
	t.Helper()
	tr, x, err := sim.Draw(rand.New(rand.NewPCG(seed, 77)), n, sim.Params{Alpha: 0.2, Beta: 0.03, Div: pydt.DivInv{C: c}, Variance: 1, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	// Leaves are the nodes 0..n-1, the rows in order.
	return &dataset.Matrix{Rows: n, Cols: d, Data: slices.Clone(x[:n*d]), Source: "pydt.csv"}, tr
}

// TestRunEMNoNearStarPYDTData is the regression test of the near-star on
// data drawn from the PYDT itself (60 rows in 5 columns, α = 0.2,
// β = 0.03, c = 0.5; the drawn trees are binary, at most 2 rows at one branch
// point): with α and β fitted to each tree the search ended with 30, 17
// and 26 of the 60 rows at one branch point (β → 0.59–0.71), since a
// large β makes a star almost free. With α and β held at their posterior
// means (emPosteriorMeans: β 0.14-0.22; the search holds the subsample
// MCMC's estimate of them, here of all 60 rows, whose Monte Carlo error is
// too large for this test) no branch point may hold more than 12 rows
// (20%). The PYDT must still find multifurcations where the data have
// them: TestEMPaperFourGaussians.
func TestRunEMNoNearStarPYDTData(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 3, 4} {
		x, truth := pydtData(t, 60, 5, 0.5, seed)
		m := compileHeldAB(t, x, fmt.Sprint("pydt ", seed))
		res, err := RunEM(context.Background(), m, EMConfig{Rounds: 5, Patience: -1, Seed: 1, Out: t.TempDir(), EMIters: 30})
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Trees[0].Tree
		if k := maxLeafChildren(tr); k > 12 {
			t.Errorf("seed %d: a branch point holds %d of the 60 rows (the drawn tree: at most %d): %s", seed, k, maxLeafChildren(truth), tr.Newick())
		}
	}
}
