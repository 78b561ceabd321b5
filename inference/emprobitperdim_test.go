package inference

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference/cluster"
)

// binaryPerDimModel returns examples/binary-perdim.pydt, the probit model
// with a diffusion variance per column.
func binaryPerDimModel(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile("../examples/binary-perdim.pydt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "param prec : pos[D]") {
		t.Fatal("examples/binary-perdim.pydt has no precision per column")
	}
	return src
}

// binaryClasses returns k classes of n rows each (row i in class i % k)
// of 0/1 features: k blocks of w class columns, block c being 1 in class
// c's rows and 0 in the others (each entry flipped with probability
// flip), then noise columns of fair coins, the same for every class. It
// returns the matrix and the rows' classes.
func binaryClasses(n, k, w, noise int, flip float64, seed uint64) (*dataset.Matrix, []int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	inf := k * w
	d := inf + noise
	rows := n * k
	y := &dataset.Matrix{Rows: rows, Cols: d, Data: make([]float64, rows*d), Source: "y.csv"}
	class := make([]int, rows)
	for i := range rows {
		class[i] = i % k
		for j := range d {
			v := float64(rng.IntN(2))
			if j < inf {
				v = 0
				if j/w == class[i] {
					v = 1
				}
				if rng.Float64() < flip {
					v = 1 - v
				}
			}
			y.Data[i*d+j] = v
		}
	}
	return y, class
}

// TestEMProbitPerDimHeldMeans: with probit (EP) data and a precision per
// column, every fit of the search holds column d's diffusion variance at
// 1 / the posterior mean of prec[d] in the subsample's MCMC run. The
// test runs that chain itself (the model's MCMC schedule on all rows, the
// same seed and stream, the first half of the sweeps burn-in), reads
// prec's values from the chain's state each kept sweep, and checks that
// alpha_beta's precisions and their sds are those draws' means and sample
// sds (gonum's stat) and that every kept tree was fitted at their
// reciprocals. Mutations that fail it: holding 1 / the mean of the
// variances instead, or keeping the burn-in sweeps.
func TestEMProbitPerDimHeldMeans(t *testing.T) {
	t.Parallel()
	const sweeps = 40
	src := binaryPerDimModel(t)
	y, _ := binaryClasses(4, 3, 6, 2, 0.1, 3)
	m := compileSource(t, "binary-perdim", src, map[string]*dataset.Matrix{"Y": y}, nil)
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Patience: -1, Seed: 7, Out: t.TempDir(), EMIters: 5, ABSweeps: sweeps})
	if err != nil {
		t.Fatal(err)
	}
	ab := res.AlphaBeta
	d := y.Cols
	if ab == nil || ab.Source != ABSubsample || ab.Rows != y.Rows || len(ab.Precisions) != d || len(ab.PrecisionSDs) != d || len(ab.Variances) != d {
		t.Fatalf("alpha_beta %+v: want a subsample estimate on all %d rows with %d precisions", ab, y.Rows, d)
	}

	fresh := compileSource(t, "binary-perdim", src, map[string]*dataset.Matrix{"Y": y}, nil)
	sched, err := NewSchedule(fresh)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(fresh, sched, 7, abStream)
	if err != nil {
		t.Fatal(err)
	}
	prec := fresh.G.ByName["prec"]
	draws := make([][]float64, d)
	for it := range sweeps {
		ch.tuning = it < sweeps/2
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
		if it < sweeps/2 {
			continue
		}
		for k, v := range ch.Values(prec) {
			draws[k] = append(draws[k], v)
		}
	}
	for k := range d {
		mean, sd := stat.Mean(draws[k], nil), stat.StdDev(draws[k], nil)
		if !(math.Abs(ab.Precisions[k]/mean-1) < 1e-12) || !(math.Abs(ab.PrecisionSDs[k]-sd) <= 1e-12*mean) {
			t.Errorf("prec[%d]: held %v (sd %v), want the chain's mean %v (sd %v)", k+1, ab.Precisions[k], ab.PrecisionSDs[k], mean, sd)
		}
		if !(math.Abs(ab.Variances[k]*mean-1) < 1e-12) {
			t.Errorf("prec[%d]: held variance %v, want 1/%v", k+1, ab.Variances[k], mean)
		}
		for i, est := range res.KBestEstimates {
			if !(math.Abs(est.Variances[k]*mean-1) < 1e-12) {
				t.Errorf("tree %d, column %d: fitted at variance %v, want 1/%v", i+1, k+1, est.Variances[k], mean)
			}
		}
	}
}

// TestEMProbitPerDimRecoversClasses: the probit model with a variance per
// column (examples/binary-perdim.pydt), on three classes of 8 rows, each
// class the rows that are 1 in a block of 4 columns of its own (10% of
// the 12 class columns' entries flipped), beside 8 columns of fair coins,
// recovers the classes: the best tree's dendrogram purity is at least 0.9
// (0.944 on both draws; the average-linkage tree has 1.000, random binary
// trees of 24 rows in three classes about 0.45), on two draws. The held
// variances (1 / the subsample's posterior means of prec[d]) tell the two
// kinds of column apart: the median of the class columns' is more than
// twice that of the coins' (3.4 and 3.5 times on these draws), the
// probit's latent location of a column that follows the tree having to
// diffuse far from 0 and that of a coin staying near it.
func TestEMProbitPerDimRecoversClasses(t *testing.T) {
	t.Parallel()
	src := binaryPerDimModel(t)
	const k, w, noise = 3, 4, 8
	for _, seed := range []uint64{1, 2} {
		y, class := binaryClasses(8, k, w, noise, 0.1, seed)
		m := compileSource(t, "binary-perdim", src, map[string]*dataset.Matrix{"Y": y}, nil)
		res, err := RunEM(context.Background(), m, EMConfig{Rounds: 5, Patience: -1, Seed: 1, Out: t.TempDir(), EMIters: 30, ABSweeps: 100})
		if err != nil {
			t.Fatal(err)
		}
		best := res.Trees[0]
		p, err := cluster.DendrogramPurity(best.Tree, class)
		if err != nil {
			t.Fatal(err)
		}
		v := res.AlphaBeta.Variances
		t.Logf("seed %d: purity %.3f, value %.2f (start %s, round %d); held variances %.3g", seed, p, best.Bound, best.Start, best.Round, v)
		if p < 0.9 {
			t.Errorf("seed %d: the best tree (value %.2f, start %s) has purity %.3f, want at least 0.9: %s", seed, best.Bound, best.Start, p, best.Tree.Newick())
		}
		if len(v) != k*w+noise {
			t.Fatalf("seed %d: %d held variances, want %d", seed, len(v), k*w+noise)
		}
		inf, coins := stat.Quantile(0.5, stat.Empirical, sorted(v[:k*w]), nil), stat.Quantile(0.5, stat.Empirical, sorted(v[k*w:]), nil)
		if !(inf > 2*coins) {
			t.Errorf("seed %d: the class columns' median held variance %.3g is not above twice the coins' %.3g: %.3g", seed, inf, coins, v)
		}
	}
}

// sorted returns a sorted copy of x.
func sorted(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s
}
