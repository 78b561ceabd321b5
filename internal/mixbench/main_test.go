package main

import (
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// TestSmoke runs a tiny measurement: the statistics are finite, the table
// has a row per seed and a row of medians.
func TestSmoke(t *testing.T) {
	var rs []result
	for _, seed := range []uint64{1, 2} {
		r, err := run(config{Model: "../../examples/gaussian.pydt", N: 40, D: 2, Burn: 5, Sweeps: 20, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for name, x := range map[string]float64{"ESS log lik": r.ESSLogLik, "ESS c": r.ESSC, "ESS root": r.ESSRoot,
			"mean log lik": r.MeanLogLik, "mean c": r.MeanC, "mean root": r.MeanRoot} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Errorf("seed %d: %s = %v", seed, name, x)
			}
		}
		if !(r.MeanRoot > 0 && r.MeanRoot < 1) || !(r.MeanC > 0) {
			t.Errorf("seed %d: mean root time %v, mean c %v", seed, r.MeanRoot, r.MeanC)
		}
		rs = append(rs, r)
	}
	var b strings.Builder
	table(&b, rs)
	if lines := strings.Count(b.String(), "\n"); lines != 2+2+1 {
		t.Errorf("table of %d lines, want 5:\n%s", lines, b.String())
	}
}

// TestFourClusters checks the data: cluster i mod 4, centres (±1, ±1)
// repeated over the dimensions, variance 1/8.
func TestFourClusters(t *testing.T) {
	rows := fourClusters(newRand(3), 4000, 3)
	var sum, sq [4][3]float64
	for i, r := range rows {
		for j, x := range r {
			sum[i%4][j] += x
			sq[i%4][j] += x * x
		}
	}
	want := [4][2]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	for k := range 4 {
		for j := range 3 {
			m := sum[k][j] / 1000
			v := sq[k][j]/1000 - m*m
			// SE of the mean sqrt(1/8/1000) ≈ 0.011; of the variance
			// sqrt(2/64/1000) ≈ 0.0056.
			if !(math.Abs(m-want[k][j%2]) <= 0.05) || !(math.Abs(v-0.125) <= 0.025) {
				t.Errorf("cluster %d, dimension %d: mean %v, variance %v", k, j, m, v)
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// TestInit: -init em starts the chain from the EM search's tree, which
// fits the four clusters far better than the prior draw the same seed
// starts from otherwise (same hyperparameters: the start tree replaces the
// drawn tree only); -init FILE starts from the tree in the file, and a
// file of the wrong rows or an unknown -init is an error.
func TestInit(t *testing.T) {
	base := config{Model: "../../examples/gaussian.pydt", N: 40, D: 2, Burn: 0, Sweeps: 4, Seed: 3}
	prior, err := run(base)
	if err != nil {
		t.Fatal(err)
	}
	em := base
	em.Init, em.EMRounds, em.EMTime = "em", 2, time.Minute
	fromEM, err := run(em)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("start log lik: EM tree %.1f, prior draw %.1f", fromEM.InitLogLik, prior.InitLogLik)
	if !(fromEM.InitLogLik > prior.InitLogLik+10) {
		t.Errorf("start log lik: EM tree %v, prior draw %v", fromEM.InitLogLik, prior.InitLogLik)
	}

	m, _, err := model(em)
	if err != nil {
		t.Fatal(err)
	}
	trees, err := initTrees(em, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := trees[""].Newick()
	file := filepath.Join(t.TempDir(), "start.nwk")
	if err := os.WriteFile(file, []byte(want+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	byFile := base
	byFile.Init = file
	got, err := initTrees(byFile, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[""].Newick() != want {
		t.Errorf("-init FILE read\n%s\nwant\n%s", got[""].Newick(), want)
	}
	r, err := run(byFile)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(r.InitLogLik-fromEM.InitLogLik) <= 1e-9*math.Abs(r.InitLogLik)) {
		t.Errorf("start log lik from the file %v, from EM %v", r.InitLogLik, fromEM.InitLogLik)
	}

	bad := filepath.Join(t.TempDir(), "three.nwk")
	if err := os.WriteFile(bad, []byte("((1:0.5,2:0.5):0.2,3:0.7):0.3;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, init := range []string{bad, filepath.Join(t.TempDir(), "missing.nwk")} {
		c := base
		c.Init = init
		if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-init") {
			t.Errorf("-init %s: error %v", init, err)
		}
	}
}

// TestDataSeed: the data follow the run's seed unless DataSeed is set.
func TestDataSeed(t *testing.T) {
	c := config{N: 8, D: 2, Seed: 1}
	d1 := mustData(t, c)
	c.Seed = 2
	d2 := mustData(t, c)
	c.DataSeed = 1
	d3 := mustData(t, c)
	if slices.Equal(d1, d2) || !slices.Equal(d1, d3) {
		t.Errorf("seed 1: %v\nseed 2: %v\nseed 2, data seed 1: %v", d1, d2, d3)
	}
}

func mustData(t *testing.T, c config) []float64 {
	t.Helper()
	x, _, err := data(c)
	if err != nil {
		t.Fatal(err)
	}
	return x.Data
}

// TestTrace: the trace has a header and one row per recorded sweep, whose
// log likelihood is the one recorded, and a cumulative CPU time.
func TestTrace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tr.csv")
	r, err := run(config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 3, Sweeps: 10, Seed: 1, Trace: file})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[0], "sweep,log_lik,c,root_t,") || !strings.HasSuffix(lines[0], ",cpu_s") {
		t.Fatalf("trace:\n%s", b)
	}
	if !strings.HasPrefix(lines[1], "4,") || !strings.HasPrefix(lines[10], "13,") {
		t.Errorf("sweep numbers: %q … %q", lines[1], lines[10])
	}
	var sum float64
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		x, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += x
	}
	if !(math.Abs(sum/10-r.MeanLogLik) <= 1e-6*math.Abs(r.MeanLogLik)) {
		t.Errorf("mean log lik of the trace %v, of the run %v", sum/10, r.MeanLogLik)
	}
}

// TestStop: a closed Stop ends the recording after 4 sweeps, and the
// result is that of the sweeps recorded.
func TestStop(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	r, err := run(config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 2, Sweeps: 50, Seed: 1, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if r.Sweeps != 4 || math.IsNaN(r.MeanLogLik) || math.IsInf(r.MeanLogLik, 0) || !(r.MeanC > 0) {
		t.Errorf("stopped run: %d sweeps, mean log lik %v, mean c %v", r.Sweeps, r.MeanLogLik, r.MeanC)
	}
}

// TestCPULimit: a run with a CPU limit far below its sweeps' cost stops
// after 4 recorded sweeps (the least), one with a generous limit runs them
// all.
func TestCPULimit(t *testing.T) {
	for _, tc := range []struct {
		limit time.Duration
		want  int
	}{{time.Nanosecond, 4}, {time.Hour, 12}} {
		r, err := run(config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 2, Sweeps: 12, Seed: 1, CPULimit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if r.Sweeps != tc.want {
			t.Errorf("limit %v: %d sweeps, want %d", tc.limit, r.Sweeps, tc.want)
		}
	}
}

// TestBatchMeansESS checks batchMeansESS against the exact effective sample
// size of AR(1) series, n(1-φ)/(1+φ), averaged over replicates (the
// estimator's relative standard error is about sqrt(2/19) = 32% per series
// with 20 batches, 4.6% over 50 series; the tolerance is 4 of those).
func TestBatchMeansESS(t *testing.T) {
	for _, phi := range []float64{0, 0.5, 0.9} {
		rng := newRand(uint64(10 * phi))
		const n, reps = 40000, 50
		want := n * (1 - phi) / (1 + phi)
		sum := 0.0
		x := make([]float64, n)
		for range reps {
			y := rng.NormFloat64() / math.Sqrt(1-phi*phi)
			for i := range x {
				x[i] = y
				y = phi*y + rng.NormFloat64()
			}
			sum += batchMeansESS(x, 20)
		}
		if got := sum / reps; !(math.Abs(got/want-1) <= 4*0.046) {
			t.Errorf("φ = %v: mean ESS %.0f, want %.0f", phi, got, want)
		}
	}
	if e := batchMeansESS([]float64{1, 2, 3}, 20); !math.IsNaN(e) {
		t.Errorf("3 draws in 20 batches: %v, want NaN", e)
	}
}

// TestMoveSettings: -local, -radius and -position reach the tree sampler
// (LocalMove runs N times a sweep, position moves N/2 times), and without
// them the defaults hold (one local move per leaf).
func TestMoveSettings(t *testing.T) {
	c := config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 1, Sweeps: 5, Seed: 2}
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Moves.Local.Proposed != 100 || r.Moves.Subtree.Proposed != 100 || r.Moves.Position.Proposed != 10 {
		t.Errorf("defaults: local %d, subtree %d, position %d moves", r.Moves.Local.Proposed, r.Moves.Subtree.Proposed, r.Moves.Position.Proposed)
	}
	for _, tc := range []struct {
		local, position float64
		wantLocal       int
	}{{0, 0.5, 0}, {2, 0.5, 200}} {
		c.Local, c.Radius, c.Position = nonNegative(tc.local), nonNegative(1), nonNegative(tc.position)
		if r, err = run(c); err != nil {
			t.Fatal(err)
		}
		if r.Moves.Local.Proposed != tc.wantLocal || r.Moves.Position.Proposed != 50 {
			t.Errorf("-local %v -position 0.5: local %d, position %d moves", tc.local, r.Moves.Local.Proposed, r.Moves.Position.Proposed)
		}
	}
	if nonNegative(-1) != nil {
		t.Error("nonNegative(-1) is not nil")
	}
}

// TestTimeScale: -timescale adds the scale(c, times) move, which changes
// the chain (same seed, different draws).
func TestTimeScale(t *testing.T) {
	c := config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 1, Sweeps: 5, Seed: 2}
	plain, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.TimeScale = true
	scaled, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	if plain.MeanLogLik == scaled.MeanLogLik {
		t.Errorf("-timescale left the chain unchanged (mean log lik %v)", plain.MeanLogLik)
	}
}

// TestGridSetting: -grid reaches the local moves (the chain changes, the
// local moves still run N times a sweep), -radius with it sets
// LocalGridRadius (the chain changes again), and a -grid beyond
// treemove.MaxLocalGrid is an error.
func TestGridSetting(t *testing.T) {
	c := config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 1, Sweeps: 5, Seed: 2}
	var lls []float64
	for _, tc := range []struct {
		grid   int
		radius *int
	}{{0, nil}, {3, nil}, {3, nonNegative(2)}} {
		c.Grid, c.Radius = tc.grid, tc.radius
		r, err := run(c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Moves.Local.Proposed != 100 {
			t.Errorf("-grid %d: %d local moves, want 100", tc.grid, r.Moves.Local.Proposed)
		}
		lls = append(lls, r.MeanLogLik)
	}
	if lls[0] == lls[1] || lls[1] == lls[2] {
		t.Errorf("mean log lik without -grid, with -grid 3, with -radius 2: %v (a setting left the chain unchanged)", lls)
	}
	c.Grid, c.Radius = treemove.MaxLocalGrid+1, nil
	if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-grid") {
		t.Errorf("-grid %d: error %v", c.Grid, err)
	}
}

// TestDepthStats checks depthStats against depths counted edge by edge
// (pydt.Tree.Depth) on prior draws, and on a tree written out by hand.
func TestDepthStats(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.6,(2:0.3,3:0.3):0.3):0.2,4:0.8):0.2;", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Leaves at depths 2, 3, 3, 1; branch points at 0 (the root, not
	// counted), 1, 2.
	if got, want := depthStats(tr, nil, make([]int, tr.Cap())), (depth{Leaf: 9.0 / 4, Node: 12.0 / 6, Max: 3}); got != want {
		t.Errorf("hand tree: %+v, want %+v", got, want)
	}
	for seed := range uint64(3) {
		tr, err := sim.DrawTree(newRand(seed), 200, sim.Params{Div: pydt.DivInv{C: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var leaf, node, mx, nodes int
		for id := range tr.Cap() {
			v := pydt.NodeID(id)
			if !tr.InUse(v) || v == tr.Root() {
				continue
			}
			d := tr.Depth(v)
			node += d
			nodes++
			mx = max(mx, d)
			if tr.IsLeaf(v) {
				leaf += d
			}
		}
		want := depth{Leaf: float64(leaf) / 200, Node: float64(node) / float64(nodes), Max: float64(mx)}
		got := depthStats(tr, nil, make([]int, tr.Cap()))
		if !(math.Abs(got.Leaf-want.Leaf) <= 1e-12) || !(math.Abs(got.Node-want.Node) <= 1e-12) || got.Max != want.Max {
			t.Errorf("seed %d: %+v, want %+v", seed, got, want)
		}
	}
}

// TestDDTData: -data ddt needs c and prec, draws the data from the tree it
// returns (the same for the same data seed), and -init truth starts the
// chain at that tree: its first log likelihood is the tree's, which a
// prior draw does not reach.
func TestDDTData(t *testing.T) {
	base := config{Model: "../../examples/gaussian.pydt", N: 30, D: 2, Burn: 0, Sweeps: 4, Seed: 1, Data: "ddt"}
	if _, _, err := data(base); err == nil || !strings.Contains(err.Error(), "c and prec") {
		t.Errorf("no c, prec: error %v", err)
	}
	bad := base
	bad.Data = "other"
	if _, _, err := data(bad); err == nil || !strings.Contains(err.Error(), "-data") {
		t.Errorf("-data other: error %v", err)
	}
	base.Set = map[string]float64{"c": 1, "prec": 4}
	x1, tr1, err := data(base)
	if err != nil {
		t.Fatal(err)
	}
	x2, tr2, _ := data(base)
	if !slices.Equal(x1.Data, x2.Data) || tr1.Newick() != tr2.Newick() || x1.Rows != 30 || len(x1.Data) != 60 {
		t.Errorf("-data ddt is not reproducible, or of the wrong size (%d values)", len(x1.Data))
	}
	m, _, err := model(base)
	if err != nil {
		t.Fatal(err)
	}
	truth := base
	truth.Init = "truth"
	trees, err := initTrees(truth, m, tr1)
	if err != nil || trees[""] != tr1 {
		t.Fatalf("-init truth: %v", err)
	}
	if _, err := initTrees(truth, m, nil); err == nil || !strings.Contains(err.Error(), "-data ddt") {
		t.Errorf("-init truth on the four-cluster data: error %v", err)
	}
	r, err := run(truth)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := run(base)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.InitLogLik > prior.InitLogLik) || r.Depth.Leaf <= 0 {
		t.Errorf("start log lik: true tree %v, prior draw %v; depth %+v", r.InitLogLik, prior.InitLogLik, r.Depth)
	}
}

// TestTruthIsStationary checks the premise of -init truth: the tree the
// -data ddt data were drawn from is a draw of the posterior, so the chain's
// log likelihood has the same expectation at its start as after any number
// of sweeps. Over many seeds, the mean over 20 sweeps less the start's must
// average 0 within 4 standard errors. It would fail if the data were drawn
// with other parameters than the model's clamped ones, or if the start
// tree lost precision on its way into the chain.
func TestTruthIsStationary(t *testing.T) {
	const seeds = 200
	var d []float64
	for s := range uint64(seeds) {
		r, err := run(config{Model: "../../examples/gaussian.pydt", N: 30, D: 2, Sweeps: 20, Seed: s + 1,
			Data: "ddt", Init: "truth", Set: map[string]float64{"c": 2, "prec": 2}})
		if err != nil {
			t.Fatal(err)
		}
		d = append(d, r.MeanLogLik-r.InitLogLik)
	}
	m := mean(d)
	v := 0.0
	for _, x := range d {
		v += (x - m) * (x - m)
	}
	se := math.Sqrt(v / float64(seeds-1) / seeds)
	if !(math.Abs(m) <= 4*se) { // a NaN log likelihood fails too
		t.Errorf("mean log lik over 20 sweeps less the start's: %.3f ± %.3f, want 0", m, se)
	}
}

// clades returns the clades of tr's branch points, each as its sorted leaf
// labels joined by commas.
func clades(tr *pydt.Tree) map[string]bool {
	out := map[string]bool{}
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		var names []string
		for _, u := range tr.PostOrderFrom(v, nil) {
			if tr.IsLeaf(u) {
				names = append(names, tr.Label(u))
			}
		}
		slices.Sort(names)
		out[strings.Join(names, ",")] = true
	}
	return out
}

// TestFreezeTopology: -freeze-topology makes the recorded sweeps time
// updates only (the burn-in moves the topology as usual): the tree at the
// end of the recorded sweeps has the same clades as at their start, and
// other times; the same run without it changes the clades (so the check
// can fail). The trace has the sum of the branch points' times, equal to
// sumS of a tree summed by hand.
func TestFreezeTopology(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tr.csv")
	c := config{Model: "../../examples/gaussian.pydt", N: 20, D: 2, Burn: 2, Sweeps: 5, Seed: 2, FreezeTopology: true, Trace: file}
	r, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	mv := r.Moves
	if mv.Subtree.Proposed+mv.Local.Proposed+mv.Position.Proposed != 0 || mv.Time.Proposed == 0 {
		t.Errorf("frozen: subtree %d, local %d, position %d, time %d moves", mv.Subtree.Proposed, mv.Local.Proposed, mv.Position.Proposed, mv.Time.Proposed)
	}
	if !maps.Equal(clades(r.StartTree), clades(r.EndTree)) {
		t.Errorf("frozen: the clades changed:\n%s\n%s", r.StartTree.Newick(), r.EndTree.Newick())
	}
	if sumS(r.StartTree) == sumS(r.EndTree) {
		t.Error("frozen: the times did not change either (the trees compared are the same)")
	}
	c.FreezeTopology, c.Trace = false, ""
	free, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	if maps.Equal(clades(free.StartTree), clades(free.EndTree)) {
		t.Error("not frozen: the clades did not change in 5 sweeps")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "sweep,log_lik,c,root_t,sum_s,leaf_depth,") {
		t.Errorf("trace header: %.60q", b)
	}
	tr, err := pydt.ParseNewick("((1:0.3,2:0.3):0.5,3:0.8):0.2;", []string{"1", "2", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sumS(tr), -math.Log(1-0.2)-math.Log(1-0.7); !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("sumS = %v, want %v", got, want)
	}
}

// TestWriteData: the written file holds the seed's data exactly (parsed
// back bit for bit), one row per line, and a bad -data is an error.
func TestWriteData(t *testing.T) {
	c := config{N: 9, D: 3, Seed: 4}
	want := mustData(t, c)
	path := filepath.Join(t.TempDir(), "x-4.txt")
	if err := writeData(c, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != c.N {
		t.Fatalf("%d lines, want %d", len(lines), c.N)
	}
	var got []float64
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != c.D {
			t.Fatalf("line %q: %d fields, want %d", l, len(f), c.D)
		}
		for _, s := range f {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, x)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("read back %v\nwant %v", got, want)
	}
	if err := writeData(config{N: 4, D: 2, Data: "nope"}, path); err == nil {
		t.Error("-data nope: no error")
	}
}

// TestNoiseOrbit: -noiseorbit adds the orbit(prec, noise, times) move of a
// Normal noise model, which changes the chain, and refuses a model without
// noise.
func TestNoiseOrbit(t *testing.T) {
	c := config{Model: "../../examples/gaussian-noise.pydt", N: 20, D: 2, Burn: 1, Sweeps: 5, Seed: 2}
	plain, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.NoiseOrbit = true
	moved, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	if plain.MeanLogLik == moved.MeanLogLik {
		t.Errorf("-noiseorbit left the chain unchanged (mean log lik %v)", plain.MeanLogLik)
	}
	c.Model = "../../examples/gaussian.pydt"
	if _, err := run(c); err == nil || !strings.Contains(err.Error(), "-noiseorbit") {
		t.Errorf("-noiseorbit on a model without noise: %v", err)
	}
}
