package predict

import (
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/internal/logsumexp"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// The example models the tests fit, read from examples/:
// examples/gaussian-perdim.pydt has a latent array prec[D], traced as the
// columns prec[1], prec[2]; examples/gaussian-noise.pydt has latent leaves
// Z with Normal observation noise.
var (
	gaussianSrc = exampleSrc("gaussian.pydt")
	perdimSrc   = exampleSrc("gaussian-perdim.pydt")
	noiseSrc    = exampleSrc("gaussian-noise.pydt")
)

// exampleSrc returns the text of the model examples/name.
func exampleSrc(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
	if err != nil {
		panic(err) // the tests run in the package's folder of the repository
	}
	return string(b)
}

func compile(t *testing.T, src string, x *dataset.Matrix) *inference.Model {
	t.Helper()
	f, err := lang.Parse("test.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{"X": x}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := inference.NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func toyData(n, d int, seed uint64) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}
	for i := range n {
		for k := range d {
			x.Data[i*d+k] = float64(i%2)*2 + 0.4*rng.NormFloat64() + 3*float64(k)
		}
	}
	return x
}

// readAll reads the trace and the trees of a run without the package's
// own reader.
func readAll(t *testing.T, dir string, chains int, labels []string) (rows []map[string]float64, trees [][]*pydt.Tree) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		m := map[string]float64{}
		for i, h := range recs[0] {
			m[h], _ = strconv.ParseFloat(r[i], 64)
		}
		rows = append(rows, m)
	}
	for k := 1; k <= chains; k++ {
		b, err := os.ReadFile(filepath.Join(dir, "trees-"+strconv.Itoa(k)+".nwk"))
		if err != nil {
			t.Fatal(err)
		}
		ts, err := pydt.ReadNewickTrees(strings.NewReader(string(b)), labels)
		if err != nil {
			t.Fatal(err)
		}
		trees = append(trees, ts)
	}
	return rows, trees
}

// TestPredictRun checks PredictRun on a short run against the mixture
// average computed by hand from the trace's alpha, beta, c, prec (and
// noise) columns, for the direct and the Normal-noise link, with and
// without standardization and with a missing test entry.
func TestPredictRun(t *testing.T) {
	for _, c := range []struct {
		name   string
		src    string
		stdz   bool
		noise  bool
		perdim bool
	}{
		{"direct", gaussianSrc, false, false, false},
		{"noise, standardized", noiseSrc, true, true, false},
		{"per-dimension precision", perdimSrc, false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := toyData(8, 2, 4)
			raw := append([]float64(nil), x.Data...)
			m := compile(t, c.src, x)
			if c.stdz {
				if _, err := m.Standardize(); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 30, Chains: 2, Seed: 3, Out: dir}); err != nil {
				t.Fatal(err)
			}
			test := [][]float64{{0.1, 3.2}, {2.3, math.NaN()}, {-1, 5}}
			res, err := PredictRun(m, dir, test, RunOptions{Trees: -1})
			if err != nil {
				t.Fatal(err)
			}
			rows, trees := readAll(t, dir, 2, nil)
			if res.Trees != len(rows) {
				t.Fatalf("averaged %d trees, the run kept %d", res.Trees, len(rows))
			}
			mean, sd := []float64{0, 0}, []float64{1, 1}
			if c.stdz {
				mean, sd = inference.ColumnScaling(raw, 8, 2)
			}
			perChain := map[int]int{}
			lds := make([][]float64, len(test))
			imp := make([][]float64, len(test))
			for _, r := range rows {
				ch := int(r["chain"])
				tr := trees[ch-1][perChain[ch]]
				perChain[ch]++
				lik := bp.New(tr, 2)
				for i := range 8 {
					for k := range 2 {
						v := (raw[i*2+k] - mean[k]) / sd[k]
						var err error
						if c.noise {
							err = lik.SetEvidence(pydt.NodeID(i), k, v, r["noise"])
						} else {
							err = lik.Observe(pydt.NodeID(i), k, v)
						}
						if err != nil {
							t.Fatal(err)
						}
					}
				}
				p := Params{Alpha: r["alpha"], Beta: r["beta"], Div: pydt.DivInv{C: r["c"]}, Variance: 1 / r["prec"]}
				if c.noise {
					p.Noise = []float64{1 / r["noise"], 1 / r["noise"]}
				}
				if c.perdim {
					p.Variances = []float64{1 / r["prec[1]"], 1 / r["prec[2]"]}
					if r["prec[1]"] == r["prec[2]"] || !(r["prec[1]"] > 0) {
						t.Fatalf("trace row %v: want two distinct positive precisions", r)
					}
				}
				mx, err := Tree(lik, p, Options{})
				if err != nil {
					t.Fatal(err)
				}
				for i, row := range test {
					s := make([]float64, 2)
					for k := range row {
						s[k] = (row[k] - mean[k]) / sd[k]
					}
					dst := make([]float64, 2)
					lds[i] = append(lds[i], mx.Conditional(s, dst))
					imp[i] = append(imp[i], dst[1])
				}
			}
			for i, row := range test {
				lz := logsumexp.Of(lds[i])
				want := lz - math.Log(float64(len(lds[i])))
				for k := range row {
					if !math.IsNaN(row[k]) {
						want -= math.Log(sd[k])
					}
				}
				if !(math.Abs(res.LogDensity[i]-want) <= 1e-9*math.Abs(want)+1e-12) {
					t.Errorf("row %d: log density %v, by hand %v", i, res.LogDensity[i], want)
				}
				if math.IsNaN(row[1]) {
					var e float64
					for j, l := range lds[i] {
						e += math.Exp(l-lz) * imp[i][j]
					}
					e = e*sd[1] + mean[1]
					if !(math.Abs(res.Imputed[i][1]-e) <= 1e-9) || res.Imputed[i][0] != row[0] {
						t.Errorf("row %d: imputed %v, by hand %v", i, res.Imputed[i], e)
					}
				}
			}
			// Thinning: a subset of the trees.
			sub, err := PredictRun(m, dir, test, RunOptions{Trees: 5})
			if err != nil {
				t.Fatal(err)
			}
			if sub.Trees != 5 {
				t.Errorf("Trees: 5 averaged %d", sub.Trees)
			}
		})
	}
}

func TestSummarizeAndRMSE(t *testing.T) {
	s := Summarize([]float64{-1, -2, -3, -6})
	// mean -3, sample variance (4+1+0+9)/3 = 14/3, se = sqrt(14/3/4).
	if s.Mean != -3 || !(math.Abs(s.SE-math.Sqrt(14.0/12)) <= 1e-15) || s.N != 4 {
		t.Errorf("Summarize: %+v", s)
	}
	nan := math.NaN()
	test := [][]float64{{1, nan}, {nan, nan}, {3, 4}}
	imp := [][]float64{{1, 2}, {0, 1}, {3, 4}}
	truth := [][]float64{{1, 3}, {2, nan}, {3, 5}}
	// errors: (2-3), (0-2); the third row is observed, (1, nan) has no truth.
	r, n := RMSE(test, imp, truth)
	if n != 2 || !(math.Abs(r-math.Sqrt(2.5)) <= 1e-15) {
		t.Errorf("RMSE = %v over %d, want %v over 2", r, n, math.Sqrt(2.5))
	}
}

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want []int
	}{
		{10, 5, []int{1, 3, 5, 7, 9}},
		{3, 5, []int{0, 1, 2}},
		{4, -1, []int{0, 1, 2, 3}},
		{250, 0, nil},
	} {
		got := choose(c.n, c.k)
		if c.want == nil {
			if len(got) != DefaultTrees {
				t.Errorf("choose(%d, 0): %d indices", c.n, len(got))
			}
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("choose(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("choose(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
				break
			}
		}
	}
}

// TestPredictRunTreeThin checks that a run with TreeThin matches each kept
// tree to its own iteration: every draw PredictRun would use from a run
// with TreeThin 3 gets the tree that the same run without tree thinning
// (same seed, so the same chains) wrote for that chain and iteration.
func TestPredictRunTreeThin(t *testing.T) {
	x := toyData(8, 2, 4)
	m := compile(t, gaussianSrc, x)
	full, thinned := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		dir      string
		treeThin int
	}{{full, 1}, {thinned, 3}} {
		if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 30, Thin: 2, Chains: 2, Seed: 3, TreeThin: c.treeThin, Out: c.dir}); err != nil {
			t.Fatal(err)
		}
	}
	_, fullTrees := readAll(t, full, 2, m.Labels)
	draws, err := readTrace(m, thinned)
	if err != nil {
		t.Fatal(err)
	}
	// Each chain keeps sweeps 17, 19, ..., 29 (7 draws); trees of kept
	// draws 3 and 6, sweeps 21 and 27.
	draws = withTrees(draws, 3)
	if len(draws) != 4 {
		t.Fatalf("%d draws with trees, want 4", len(draws))
	}
	pick := []int{0, 1, 2, 3}
	if err := readTrees(m, thinned, draws, pick); err != nil {
		t.Fatal(err)
	}
	for _, d := range draws {
		if d.iter != 21 && d.iter != 27 {
			t.Errorf("chain %d: a tree for sweep %d", d.chain, d.iter)
		}
		want := fullTrees[d.chain-1][(d.iter-17)/2].Newick()
		if got := d.tree.Newick(); got != want {
			t.Errorf("chain %d, sweep %d: tree %s, want %s", d.chain, d.iter, got, want)
		}
	}
	res, err := PredictRun(m, thinned, [][]float64{{0.1, 3.2}}, RunOptions{Trees: -1})
	if err != nil || res.Trees != 4 {
		t.Errorf("PredictRun on the thinned run: %v trees, %v", res, err)
	}
}

// TestPredictRunTreesMissRows checks that PredictRun refuses an MCMC run
// whose trees lack some of the model's data rows (the model is given one
// row more than the run was fitted to), or whose tree file is not text,
// instead of predicting with trees of other data.
func TestPredictRunTreesMissRows(t *testing.T) {
	dir := t.TempDir()
	m := compile(t, gaussianSrc, toyData(8, 2, 4))
	if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 20, Chains: 1, Seed: 3, Out: dir}); err != nil {
		t.Fatal(err)
	}
	bigger := compile(t, gaussianSrc, toyData(9, 2, 4))
	_, err := PredictRun(bigger, dir, [][]float64{{0.1, 3.2}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), inference.TreesFile(1)) || !strings.Contains(err.Error(), "9 rows") {
		t.Errorf("PredictRun with trees missing row 9: error %v, want one naming %s and the 9 rows", err, inference.TreesFile(1))
	}
	// The data have no row labels, so the leaves must be the row numbers:
	// trees of 8 leaves named r1..r8 are of other data (ForEachNewick
	// alone numbers such leaves in order of appearance).
	path := filepath.Join(dir, inference.TreesFile(1))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	renamed := regexp.MustCompile(`([(,])([0-9]+):`).ReplaceAll(b, []byte("${1}r$2:"))
	if err := os.WriteFile(path, renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = PredictRun(m, dir, [][]float64{{0.1, 3.2}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), inference.TreesFile(1)) || !strings.Contains(err.Error(), `"r`) {
		t.Errorf("PredictRun with leaves r1..r8 for unlabelled rows: error %v, want one naming %s and the leaf", err, inference.TreesFile(1))
	}
	// A NUL byte in the tree file: the bounded reader's error.
	if err := os.WriteFile(path, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = PredictRun(m, dir, [][]float64{{0.1, 3.2}}, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("PredictRun with a NUL byte in %s: error %v, want one naming it", inference.TreesFile(1), err)
	}
}

// TestPredictRunTreesTruncated checks that a tree file shorter than the
// trace is an error naming the largest kept iteration without its tree
// (the number of trees the file should hold), not an arbitrary one of the
// missing iterations (it was the first met in a map's random order).
func TestPredictRunTreesTruncated(t *testing.T) {
	dir := t.TempDir()
	m := compile(t, gaussianSrc, toyData(8, 2, 4))
	if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 20, Chains: 1, Seed: 3, Out: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, inference.TreesFile(1))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("%s has %d trees, want one per kept sweep (10 of 20 after the burn-in)", path, len(lines))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every kept sweep is asked for: 7 are missing, the 10th the largest.
	for range 5 {
		_, err = PredictRun(m, dir, [][]float64{{0.1, 3.2}}, RunOptions{Trees: -1})
		if err == nil || !strings.Contains(err.Error(), "has 3 trees, fewer than the 10 kept iterations") {
			t.Fatalf("PredictRun with 3 of 10 trees: error %v, want one naming 3 trees and the 10 kept iterations", err)
		}
	}
}
