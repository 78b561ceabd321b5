package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// TestSubModelRows checks the model the subsample's MCMC run estimates α
// and β on (EMPlan.subModel), which no other test looks inside (the
// search's tests see only its α and β, which any rows would give): its
// leaves' data are the chosen rows of the data as the model holds them
// (standardized: not the file's values), with their labels, in order; a
// value clamped by --set stays clamped at that value (a sampled β would
// shift the posterior of α silently), and the learned α and β stay
// latent.
func TestSubModelRows(t *testing.T) {
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		set     map[string]float64
		clamped map[string]float64
		latent  []string
	}{
		{"both learned", nil, nil, []string{"alpha", "beta", "c", "prec"}},
		{"beta clamped", map[string]float64{"beta": 0.2}, map[string]float64{"beta": 0.2}, []string{"alpha", "c", "prec"}},
		{"alpha clamped", map[string]float64{"alpha": 0.7}, map[string]float64{"alpha": 0.7}, []string{"beta", "c", "prec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := fourClusters(24, 0.3, 5)
			for i := range x.Rows {
				x.RowLabels = append(x.RowLabels, fmt.Sprintf("r%d", i+1))
			}
			raw := slices.Clone(x.Data) // Standardize scales the model's values in place
			m := compileSource(t, "gaussian.pydt", src, map[string]*dataset.Matrix{"X": x}, tc.set)
			if _, err := m.Standardize(); err != nil {
				t.Fatal(err)
			}
			p, err := PlanEM(m)
			if err != nil {
				t.Fatal(err)
			}
			rows := []int{0, 3, 7, 8, 20, 23}
			sub, err := p.subModel(rows)
			if err != nil {
				t.Fatal(err)
			}
			b, sb := m.Trees[0], sub.Trees[0]
			if sb.N != len(rows) || sb.D != b.D || len(sb.Data.Value) != len(rows)*b.D {
				t.Fatalf("subsample of %d rows: %d rows × %d columns, %d values", len(rows), sb.N, sb.D, len(sb.Data.Value))
			}
			standardized := false
			for k, i := range rows {
				for j := range b.D {
					got, want := sb.Data.Value[k*b.D+j], b.Data.Value[i*b.D+j]
					if got != want {
						t.Errorf("row %d (of the data %d), column %d: %v, want the model's %v", k+1, i+1, j+1, got, want)
					}
					standardized = standardized || got != raw[i*b.D+j]
				}
				if l := sb.Data.Data.RowLabels; len(l) != len(rows) || l[k] != x.RowLabels[i] {
					t.Errorf("row %d: labels %v, want %s at %d", k+1, l, x.RowLabels[i], k+1)
				}
			}
			if !standardized {
				t.Error("the subsample holds the file's values, not the standardized ones")
			}
			for name, want := range tc.clamped {
				v := sub.G.ByName[name]
				if v == nil || v.Role != graph.Clamped || v.Value[0] != want {
					t.Errorf("%s in the subsample's model: %+v, want clamped at %v", name, v, want)
				}
			}
			for _, name := range tc.latent {
				if v := sub.G.ByName[name]; v == nil || v.Role != graph.Latent {
					t.Errorf("%s in the subsample's model: %+v, want latent", name, v)
				}
			}
		})
	}
}

// TestABStreams: the subsample's rows and its MCMC chain draw from
// independent streams of the seed. Before, both were the stream abStream
// of the seed, so the chain's first draws were the very numbers that had
// chosen its rows.
func TestABStreams(t *testing.T) {
	for seed := range uint64(5) {
		n, k := 50, 10
		pick := abPick(seed, n, k)
		if len(pick) != k || !slices.IsSorted(pick) || pick[0] < 0 || pick[k-1] >= n {
			t.Fatalf("seed %d: pick %v, want %d ascending rows of %d", seed, pick, k, n)
		}
		same := rand.New(rand.NewPCG(seed, abStream)).Perm(n)[:k]
		slices.Sort(same)
		if slices.Equal(pick, same) {
			t.Errorf("seed %d: the rows %v were chosen from the chain's stream", seed, pick)
		}
		if all := abPick(seed, 8, 10); len(all) != 8 || all[7] != 7 {
			t.Errorf("seed %d: 8 rows, 10 asked for: %v, want all rows", seed, all)
		}
	}
}

// TestRunEMIndexed: a model whose data reach the leaves through an index
// (Y[t, d] ~ Normal(Z[z[t], d], ...)) is refused by EM with an error naming
// the index, whether or not the leaves exceed --ab-rows. Before, with more
// leaves than --ab-rows it failed choosing the subsample ("the data reach
// the leaves through an index"), and with fewer it ran the subsample MCMC
// and failed building the initial trees ("data of length 120 for 12 rows").
func TestRunEMIndexed(t *testing.T) {
	src := []byte(`dim T, K, D
data y : real[T, D]
data z : int[T]
param mu : real[K, D]
c ~ Gamma(1, 1)
mu ~ PYDT(1, 0.2, c, 1)
for t in 1:T, d in 1:D {
  y[t, d] ~ Normal(mu[z[t], d], 0.3)
}
`)
	y := fourClusters(30, 0.3, 3)
	z := &dataset.Matrix{Rows: 30, Cols: 1, Data: make([]float64, 30), Source: "z.csv"}
	for i := range z.Data {
		z.Data[i] = float64(1 + i%6)
	}
	m := compileSource(t, "indexed", src, map[string]*dataset.Matrix{"y": y, "z": z}, map[string]float64{"K": 6})
	for _, rows := range []int{2, 300} {
		_, err := RunEM(context.Background(), m, EMConfig{Out: t.TempDir(), Rounds: 1, ABRows: rows})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "through the index z[t]") {
			t.Errorf("--ab-rows %d: %v, want ErrUnsupported naming the index z[t]", rows, err)
		}
	}
}

// TestMeanSD: the subsample estimate's mean and standard deviation
// (diagnostics.MeanVar, divisor n − 1), 0 for one value.
func TestMeanSD(t *testing.T) {
	for _, tc := range []struct {
		x        []float64
		mean, sd float64
	}{
		{[]float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0 / 3)},
		{[]float64{7}, 7, 0},
		{[]float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, 1e9 + 2, 1},
	} {
		m, sd := meanSD(tc.x)
		if !(math.Abs(m-tc.mean) <= 1e-12*math.Abs(tc.mean)) || !(math.Abs(sd-tc.sd) <= 1e-9) {
			t.Errorf("meanSD(%v) = %v, %v, want %v, %v", tc.x, m, sd, tc.mean, tc.sd)
		}
	}
}

// TestReadEMResultRankedBy: a summary.json written before ranked_by gets
// it from approximate and times_integrated when read (the name the plot
// and every reader use; it was derived in package plot).
func TestReadEMResultRankedBy(t *testing.T) {
	for _, tc := range []struct {
		json, want string
	}{
		{`{"method": "em", "approximate": true}`, "EP approximation"},
		{`{"method": "em", "times_integrated": true}`, "bound + Laplace correction"},
		{`{"method": "em"}`, "bound"},
		{`{"method": "em", "times_integrated": true, "ranked_by": "bound"}`, "bound"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := ReadEMResult(dir)
		if err != nil {
			t.Fatal(err)
		}
		if res.RankedBy != tc.want {
			t.Errorf("%s: ranked_by %q, want %q", tc.json, res.RankedBy, tc.want)
		}
	}
}

// TestAddVariances checks the per-sweep sum of the diffusion variances of
// the subsample's MCMC run against sim.Params.DimVariances (the values
// the run summed before), for one shared variance and one per dimension,
// and that with one shared variance a sweep allocates nothing (it copied
// the D values every sweep).
func TestAddVariances(t *testing.T) {
	for _, tc := range []struct {
		name string
		tp   sim.Params
	}{
		{"shared", sim.Params{Variance: 0.3, Dims: 7}},
		{"per dimension", sim.Params{Variance: math.NaN(), Variances: []float64{0.1, 2, 0.7}, Dims: 3}},
	} {
		var got abSample
		want := make([]float64, tc.tp.Dims)
		for sweep := range 3 {
			v := got.addVariances(tc.tp)
			dv := tc.tp.DimVariances()
			var wv float64
			for k, x := range dv {
				want[k] += x
				wv += x / float64(len(dv))
			}
			if v != wv || !slices.Equal(got.variances, want) {
				t.Fatalf("%s, sweep %d: average %v, sums %v; want %v, %v", tc.name, sweep+1, v, got.variances, wv, want)
			}
		}
		if tc.tp.Variances != nil {
			continue
		}
		if a := testing.AllocsPerRun(100, func() { got.addVariances(tc.tp) }); a != 0 {
			t.Errorf("%s: %v allocations a sweep, want 0", tc.name, a)
		}
	}
}

// TestABBudget: with --time the subsample's MCMC run keeps to its share:
// its sweeps cut to what fits at the rate so far (at least abMinSweeps,
// half burn-in, never fewer burn-in sweeps than made), and after the
// burn-in it ends once the share is spent with abMinSweeps/2 kept.
func TestABBudget(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name                 string
		sweeps, burn, done   int
		elapsed, budget      time.Duration
		wantSweeps, wantBurn int
	}{
		{"on course", 400, 200, 10, 1 * s, 60 * s, 400, 200},
		{"cut to the budget", 400, 200, 10, 10 * s, 100 * s, 100, 50},
		{"never below the minimum", 400, 200, 2, 20 * s, 15 * s, abMinSweeps, abMinSweeps / 2},
		{"the burn-in made so far kept", 400, 200, 30, 30 * s, 40 * s, 60, 30},
		{"already cut, on course", 100, 50, 20, 20 * s, 100 * s, 100, 50},
		{"past the burn-in, share spent", 400, 200, 230, 61 * s, 60 * s, 230, 200},
		{"past the burn-in, too few kept", 400, 200, 205, 61 * s, 60 * s, 400, 200},
		{"past the burn-in, within the share", 400, 200, 300, 50 * s, 60 * s, 400, 200},
	} {
		gs, gb := abBudget(tc.sweeps, tc.burn, tc.done, tc.elapsed, tc.budget)
		if gs != tc.wantSweeps || gb != tc.wantBurn {
			t.Errorf("%s: %d sweeps, %d burn-in; want %d, %d", tc.name, gs, gb, tc.wantSweeps, tc.wantBurn)
		}
	}
}

// TestRunEMTimeCapsABRun: given --time, the subsample's MCMC run makes
// the sweeps that fit in a quarter of it (here the minimum), where it made
// all 400 whatever --time said (65 s of CPU on animals with a noise per
// column, against --time 60s); alpha_beta records the 400 planned, and a
// warning says the estimate is from fewer sweeps.
func TestRunEMTimeCapsABRun(t *testing.T) {
	x := fourClusters(40, 0.25, 3)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Time: time.Nanosecond, Seed: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ab := res.AlphaBeta
	if ab == nil || ab.Sweeps != abMinSweeps || ab.Burn != abMinSweeps/2 || ab.PlannedSweeps != defaultABSweeps {
		t.Errorf("alpha_beta %+v: want %d sweeps, %d burn-in, %d planned", ab, abMinSweeps, abMinSweeps/2, defaultABSweeps)
	}
	warned := false
	for _, w := range res.Warnings {
		warned = warned || strings.Contains(w, fmt.Sprintf("from %d MCMC sweeps", abMinSweeps))
	}
	if !warned {
		t.Errorf("no warning of the short run: %q", res.Warnings)
	}
}
