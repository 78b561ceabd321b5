// Command mixbench measures how well the sampler mixes: effective samples
// per second of the log likelihood, of c and of the root time, for the
// paper's continuous model (examples/gaussian.pydt) with alpha = beta = 0
// clamped (Neal's Dirichlet diffusion tree, the set-up of issue 8's
// comparison with fbm) on the paper's four-cluster data (see fourClusters).
//
// Each run starts one chain from a draw of the prior (or, with -init, from
// the EM search's best tree or a given tree), runs Burn sweeps that
// are not recorded, then Sweeps recorded sweeps; the effective sample size
// is Geyer's initial monotone sequence estimator on the untransformed draws
// (diagnostics.ESSMean, one chain split in two halves), and the seconds are
// the process CPU time of the recorded sweeps alone (not of measuring
// them), which on a shared machine is steadier than the wall time (also
// printed). Several seeds give the spread.
//
//	nice -n 10 go run ./internal/mixbench -n 1000 -d 2 -burn 500 -sweeps 2000 -seeds 1,2,3
//
// The output is a Markdown table, one row per seed and a row of medians,
// ready for docs/benchmarks.md. A start tree is not a stationary start:
// at N = 1000 a chain from the EM tree drifts for about 1000 sweeps
// (docs/benchmarks.md, "Session 19"), so check a run's traces with
//
//	go run ./internal/mixbench -compare -skip K tr-1.csv tr-2.csv ...
//
// (each chain's halves, and the chains' R-hat) before trusting its ESS.
//
// For the cost of a sweep at stationarity, at any N, draw the data from the
// model itself and start at the tree they were drawn from, a draw of the
// posterior (c and prec clamped to the values the data were drawn with):
//
//	nice -n 10 go run ./internal/mixbench -n 30000 -d 2 -data ddt -set c=2,prec=2 -init truth -burn 0 -sweeps 8 -seeds 1
//
// To tell the mixing of the times (and c, prec) given the topology from
// that of the topology, -freeze-topology fixes the topology after the
// burn-in: the same burn-in and seed reach the same state, from which the
// frozen chain and the usual one can be compared (docs/benchmarks.md,
// "Session 21"):
//
//	nice -n 10 go run ./internal/mixbench -n 1000 -d 2 -burn 2000 -sweeps 20000 -seeds 1 -freeze-topology -trace frz
//
// -grid G makes the local moves' proposal likelihood-informed, G cells per
// edge (treemove.Sampler.LocalGrid, run --local-grid), and -radius then
// sets its LocalGridRadius.
//
// Each run also prints the work of its recorded sweeps: the mean depth of
// a leaf and of a non-root node, the subtree moves' proposal attempts per
// move and nodes passed per attempt, and the evaluations per position
// move (treemove.Stats; docs/benchmarks.md, "Growth per sweep").
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/internal/cputime"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// fourClusters returns the paper's synthetic data (Knowles & Ghahramani
// 2011, Section 7.1; examples/gen-synthetic) at any size: n points, an
// equal mixture of four Gaussians (point i in cluster i mod 4) with
// variance 1/8 per dimension, centred at (±1, ±1) for d = 2. For d > 2 the
// centre's coordinate j repeats coordinate j mod 2, so that there are still
// four clusters, further apart.
func fourClusters(rng *rand.Rand, n, d int) [][]float64 {
	centres := [4][2]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	sd := math.Sqrt(1.0 / 8)
	rows := make([][]float64, n)
	for i := range rows {
		k := i % 4
		rows[i] = make([]float64, d)
		for j := range d {
			rows[i][j] = centres[k][j%2] + sd*rng.NormFloat64()
		}
	}
	return rows
}

// config is one measurement.
type config struct {
	// Model is the model file: examples/gaussian.pydt (-model), whose data
	// variable X the four-cluster data bind.
	Model        string
	N, D         int
	Burn, Sweeps int
	Seed         uint64
	// DataSeed, when not 0, draws the data instead of Seed, so that
	// chains of several seeds (and start trees) run on the same data.
	DataSeed uint64
	// Set clamps further scalars (besides alpha = beta = 0), as --set.
	Set map[string]float64
	// Data is where the data come from: "four" (or "") for the
	// four-cluster data (fourClusters), "ddt" for a draw of the model
	// itself (a tree from Neal's DDT prior with a(t) = c/(1-t) and the
	// leaves' locations by Brownian diffusion of variance 1/prec), which
	// needs c and prec in Set. The drawn tree is then a draw of the
	// posterior given the data, so a chain started there (Init "truth")
	// is at stationarity from its first sweep: costs measured from it are
	// those of stationary sweeps, at any N.
	Data string
	// Local, Radius and Position, when not nil, set the tree sampler's
	// LocalMovesPerLeaf, LocalRadius and PositionMovesPerLeaf (the
	// defaults otherwise).
	Local, Position *float64
	Radius          *int
	// Grid, when positive, sets the schedule's LocalGrid: the
	// likelihood-informed proposal of LocalMove with that many cells per
	// edge; Radius then sets its LocalGridRadius.
	Grid int
	// TimeScale appends the scale(c, times) move (inference.TimeScaleSteps)
	// to the schedule.
	TimeScale bool
	// NoiseOrbit appends the orbit(prec, noise, times) move
	// (inference.NoiseOrbitSteps) to the schedule.
	NoiseOrbit bool
	// Collapse makes the topology moves integrate c out
	// (inference.Schedule.SetCollapse).
	Collapse bool
	// FreezeTopology fixes the tree's topology after the burn-in
	// (treemove.Sampler.TopologyFixed): the recorded sweeps move the
	// times, c, the variance and the rest only, so that their mixing can
	// be told apart from the topology's.
	FreezeTopology bool
	// Trace, if not empty, names a CSV file to which the recorded draws
	// are written as they are made (sweep, log_lik, c, root_t, sum_s (the
	// sum of the branch points' times s = -log(1-t), the tree's overall
	// depth in time), leaf_depth (the mean number of edges from the root
	// to a leaf, a function of the topology alone), every scalar by name, then cpu_s, the CPU seconds of
	// the recorded sweeps so far), so that a long run can be read while it
	// runs.
	Trace string
	// Init is where the chain starts: "prior" (or "") for a draw of the
	// prior, "em" for the best tree of an EM search (RunEM, EMRounds
	// rounds of at most EMIters EM iterations per tree, at most EMTime)
	// on the same data, "truth" for the tree the data were drawn from
	// (Data "ddt" only), or the path of a Newick file whose leaves are
	// labelled 1..N (the data's rows).
	Init              string
	EMRounds, EMIters int
	EMTime            time.Duration
	// Stop, when set and closed, ends the recording after the sweep under
	// way (at least 4 recorded sweeps): the result is that of the sweeps
	// recorded so far (Sweeps is set to their number).
	Stop <-chan struct{}
	// CPULimit, when positive, ends the recording after the sweep at which
	// the recorded sweeps' CPU time reaches it (at least 4 recorded sweeps;
	// Sweeps is set to their number): runs of equal CPU budget, as fbm's
	// dft-mc log @MINUTES (scripts/fbm-compare.sh -minutes).
	CPULimit time.Duration
}

// result is what one run measured.
type result struct {
	config
	// CPU and Wall are the seconds of the recorded sweeps.
	CPU, Wall float64
	// ESS of the log likelihood, of c, of the root time and of the sum of
	// the branch points' times s (sumS).
	ESSLogLik, ESSC, ESSRoot, ESSSumS float64
	// Means of the same, for a sanity check across seeds.
	MeanLogLik, MeanC, MeanRoot float64
	// Means lists the posterior mean of every scalar, "name=mean ...".
	Means string
	// RidgeProposed and RidgeAccepted count the ridge moves of the
	// recorded sweeps.
	RidgeProposed, RidgeAccepted int
	// InitCPU is the CPU seconds spent finding the start tree (the EM
	// search; 0 for a prior draw), InitLogLik the log likelihood of the
	// chain's first state.
	InitCPU, InitLogLik float64
	// Moves are the tree sampler's counters over the recorded sweeps.
	Moves treemove.Stats
	// Depth is the shape of the trees after the recorded sweeps, averaged
	// over them (see depthStats).
	Depth depth
	// StartTree and EndTree are copies of the tree at the start of the
	// recorded sweeps (after the burn-in) and at their end.
	StartTree, EndTree *pydt.Tree
}

// depth describes how deep a tree is: the mean number of edges from the
// root down to a leaf and to a non-root node (the nodes the subtree and
// position moves draw uniformly), and the largest.
type depth struct {
	Leaf, Node, Max float64
}

// depthStats returns the depths of tr, reusing buf (O(N)).
func depthStats(tr *pydt.Tree, buf []pydt.NodeID, d []int) depth {
	buf = tr.PreOrder(buf[:0])
	var leaf, node, mx int
	for _, v := range buf {
		p := tr.Parent(v)
		if p == pydt.NoNode {
			d[v] = 0
			continue
		}
		d[v] = d[p] + 1
		node += d[v]
		mx = max(mx, d[v])
		if tr.IsLeaf(v) {
			leaf += d[v]
		}
	}
	return depth{Leaf: float64(leaf) / float64(tr.NumLeaves()), Node: float64(node) / float64(len(buf)-1), Max: float64(mx)}
}

// data draws the data of c (see config.Data), with c.DataSeed or else
// c.Seed, and for Data "ddt" also returns the tree they were drawn from.
func data(c config) (*dataset.Matrix, *pydt.Tree, error) {
	ds := c.Seed
	if c.DataSeed != 0 {
		ds = c.DataSeed
	}
	x := &dataset.Matrix{Rows: c.N, Cols: c.D, Source: "four-clusters"}
	switch c.Data {
	case "", "four":
		for _, r := range fourClusters(rand.New(rand.NewPCG(ds, 2011)), c.N, c.D) {
			x.Data = append(x.Data, r...)
		}
		return x, nil, nil
	case "ddt":
		cc, ok1 := c.Set["c"]
		prec, ok2 := c.Set["prec"]
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("-data ddt: clamp c and prec (-set c=X,prec=Y): the data are drawn with them")
		}
		tr, locs, err := sim.Draw(rand.New(rand.NewPCG(ds, 2012)), c.N,
			sim.Params{Div: pydt.DivInv{C: cc}, Variance: 1 / prec, Dims: c.D})
		if err != nil {
			return nil, nil, fmt.Errorf("-data ddt: %w", err)
		}
		x.Source = "ddt-draw"
		x.Data = append(x.Data, locs[:c.N*c.D]...) // leaf i is row i
		return x, tr, nil
	}
	return nil, nil, fmt.Errorf("-data: want four or ddt, got %q", c.Data)
}

// writeData writes the data of c (see data) to path as whitespace-separated
// text, one row per line with every value to full precision (%.17g), the
// format Neal's fbm reads (data-spec; scripts/fbm-compare.sh), so that
// another program can be run on exactly the data a seed's chain sees.
func writeData(c config, path string) error {
	x, _, err := data(c)
	if err != nil {
		return err
	}
	var b strings.Builder
	for i := range x.Rows {
		for j := range x.Cols {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatFloat(x.Data[i*x.Cols+j], 'g', 17, 64))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("-write-data: %w", err)
	}
	return nil
}

// model compiles the DDT-clamped model on the four-cluster data of c.
func model(c config) (*inference.Model, *pydt.Tree, error) {
	x, truth, err := data(c)
	if err != nil {
		return nil, nil, err
	}
	sets := map[string]float64{"alpha": 0, "beta": 0}
	for k, v := range c.Set {
		sets[k] = v
	}
	src, err := os.ReadFile(c.Model)
	if err != nil {
		return nil, nil, err
	}
	f, err := lang.Parse(c.Model, src)
	if err != nil {
		return nil, nil, err
	}
	g, err := graph.Compile(f, graph.Options{
		Data: map[string]*dataset.Matrix{"X": x},
		Set:  sets,
	})
	if err != nil {
		return nil, nil, err
	}
	m, err := inference.NewModel(g)
	return m, truth, err
}

// run makes one measurement.
func run(c config) (result, error) {
	res := result{config: c}
	m, truth, err := model(c)
	if err != nil {
		return res, err
	}
	sched, err := inference.NewSchedule(m)
	if err != nil {
		return res, err
	}
	if c.TimeScale {
		ts := inference.TimeScaleSteps(m)
		if len(ts) == 0 {
			return res, fmt.Errorf("-timescale: the model has no scale(c, times) move")
		}
		sched.Steps = append(sched.Steps, ts...)
	}
	if c.NoiseOrbit {
		steps := inference.NoiseOrbitSteps(m)
		if len(steps) == 0 {
			return res, fmt.Errorf("-noiseorbit: the model has no orbit(prec, noise, times) move")
		}
		sched.Steps = append(sched.Steps, steps...)
	}
	if c.Local != nil {
		// The schedule's tree step sets the sampler's LocalMovesPerLeaf
		// before every sweep.
		if err := sched.SetLocalMoves(*c.Local); err != nil {
			return res, fmt.Errorf("-local: %w", err)
		}
	}
	if c.Collapse && sched.SetCollapse() == 0 {
		return res, fmt.Errorf("-collapse: the model has no c to integrate out of the tree moves")
	}
	// And its LocalGrid.
	if err := sched.SetLocalGrid(c.Grid); err != nil {
		return res, fmt.Errorf("-grid: %w", err)
	}
	c0 := cputime.Process()
	trees, err := initTrees(c, m, truth)
	if err != nil {
		return res, err
	}
	res.InitCPU = (cputime.Process() - c0).Seconds()
	ch, err := inference.NewChainAt(m, sched, c.Seed, 1, trees)
	if err != nil {
		return res, err
	}
	scalars := m.Scalars()
	p0, err := ch.Measure(scalars)
	if err != nil {
		return res, fmt.Errorf("the start: %w", err)
	}
	res.InitLogLik = p0.LogLik
	ci := slices.IndexFunc(scalars, func(v *graph.Var) bool { return v.Name == "c" })
	if ci < 0 {
		return res, fmt.Errorf("the model has no scalar c")
	}
	tm := ch.TreeMoves(0)
	if c.Radius != nil {
		if c.Grid > 0 {
			tm.LocalGridRadius = *c.Radius
		} else {
			tm.LocalRadius = *c.Radius
		}
	}
	if c.Position != nil {
		tm.PositionMovesPerLeaf = *c.Position
	}
	for range c.Burn {
		if err := ch.Sweep(); err != nil {
			return res, err
		}
	}
	tm.TopologyFixed = c.FreezeTopology
	res.StartTree = ch.Tree(0).Clone()
	rp0, ra0 := ch.RidgeProposed, ch.RidgeAccepted
	tm.ResetStats()
	sums := make([]float64, len(scalars))
	ll := make([]float64, 0, c.Sweeps)
	cs := make([]float64, 0, c.Sweeps)
	rt := make([]float64, 0, c.Sweeps)
	ss := make([]float64, 0, c.Sweeps)
	var trace *bufio.Writer
	if c.Trace != "" {
		f, err := os.Create(c.Trace)
		if err != nil {
			return res, err
		}
		defer f.Close()
		trace = bufio.NewWriter(f)
		trace.WriteString("sweep,log_lik,c,root_t,sum_s,leaf_depth")
		for _, v := range scalars {
			trace.WriteString("," + v.Name)
		}
		trace.WriteString(",cpu_s\n")
	}
	var cpu, wall time.Duration
	dbuf := make([]pydt.NodeID, 0, ch.Tree(0).Cap())
	dd := make([]int, ch.Tree(0).Cap())
	for k := range c.Sweeps {
		if k >= 4 && (stopped(c.Stop) || (c.CPULimit > 0 && cpu >= c.CPULimit)) {
			res.Sweeps = k
			break
		}
		c0, w0 := cputime.Process(), time.Now()
		if err := ch.Sweep(); err != nil {
			return res, err
		}
		cpu += cputime.Process() - c0
		wall += time.Since(w0)
		p, err := ch.Measure(scalars)
		if err != nil {
			return res, err
		}
		ll = append(ll, p.LogLik)
		cs = append(cs, p.Scalars[ci])
		for i, x := range p.Scalars {
			sums[i] += x
		}
		rt = append(rt, ch.Tree(0).Time(ch.Tree(0).Root()).T())
		ss = append(ss, sumS(ch.Tree(0)))
		ds := depthStats(ch.Tree(0), dbuf, dd)
		res.Depth.Leaf += ds.Leaf
		res.Depth.Node += ds.Node
		res.Depth.Max += ds.Max
		if trace != nil {
			fmt.Fprintf(trace, "%d,%g,%g,%g,%g,%g", c.Burn+k+1, ll[k], cs[k], rt[k], ss[k], ds.Leaf)
			for _, x := range p.Scalars {
				fmt.Fprintf(trace, ",%g", x)
			}
			fmt.Fprintf(trace, ",%.3f\n", cpu.Seconds())
			if err := trace.Flush(); err != nil {
				return res, err
			}
		}
	}
	res.CPU, res.Wall = cpu.Seconds(), wall.Seconds()
	res.EndTree = ch.Tree(0).Clone()
	res.Depth.Leaf /= float64(res.Sweeps)
	res.Depth.Node /= float64(res.Sweeps)
	res.Depth.Max /= float64(res.Sweeps)
	res.RidgeProposed, res.RidgeAccepted = ch.RidgeProposed-rp0, ch.RidgeAccepted-ra0
	res.Moves = tm.Stats
	res.ESSLogLik = diagnostics.ESSMean([][]float64{ll})
	res.ESSC = diagnostics.ESSMean([][]float64{cs})
	res.ESSRoot = diagnostics.ESSMean([][]float64{rt})
	res.ESSSumS = diagnostics.ESSMean([][]float64{ss})
	res.MeanLogLik, res.MeanC, res.MeanRoot = mean(ll), mean(cs), mean(rt)
	for i, v := range scalars {
		res.Means += fmt.Sprintf(" %s=%.4g", v.Name, sums[i]/float64(res.Sweeps))
	}
	return res, nil
}

// sumS returns the sum of the branch points' times s = -log(1-t) in tr:
// the tree's overall depth in time, which the divergence's prior term
// (c·Σ J s for a(t) = c/(1-t)) couples with c.
func sumS(tr *pydt.Tree) float64 {
	sum := 0.0
	for v := range pydt.NodeID(tr.Cap()) {
		if tr.InUse(v) && !tr.IsLeaf(v) {
			sum += tr.Time(v).S()
		}
	}
	return sum
}

// initTrees returns the start tree c.Init asks for, as the argument of
// inference.NewChainAt (nil for a draw of the prior); truth is the tree the
// data were drawn from (nil for the four-cluster data).
func initTrees(c config, m *inference.Model, truth *pydt.Tree) (map[string]*pydt.Tree, error) {
	switch c.Init {
	case "", "prior":
		return nil, nil
	case "truth":
		if truth == nil {
			return nil, fmt.Errorf("-init truth: only with -data ddt")
		}
		return map[string]*pydt.Tree{"": truth}, nil
	case "em":
		dir, err := os.MkdirTemp("", "mixbench-em-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		res, err := inference.RunEM(context.Background(), m, inference.EMConfig{
			Rounds: c.EMRounds, EMIters: c.EMIters, Time: c.EMTime, Seed: c.Seed, Out: dir, Force: true})
		if err != nil {
			return nil, fmt.Errorf("-init em: %w", err)
		}
		return map[string]*pydt.Tree{"": res.Trees[0].Tree}, nil
	default:
		tr, err := m.ReadTree(c.Init, "")
		if err != nil {
			return nil, fmt.Errorf("-init: %w", err)
		}
		return map[string]*pydt.Tree{"": tr}, nil
	}
}

// stopped reports whether stop is closed (never for nil).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// ratio returns a/b, NaN for b = 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	n := len(y)
	if n%2 == 1 {
		return y[n/2]
	}
	return (y[n/2-1] + y[n/2]) / 2
}

// table writes the results as a Markdown table with a row of medians.
func table(w io.Writer, rs []result) {
	fmt.Fprintln(w, "| N | D | seed | sweeps | ms/sweep (CPU) | ESS/s log lik | ESS/s c | ESS/s root t | ESS log lik | ESS c | ESS root t | mean log lik | mean c | mean root t |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var cols [7][]float64
	for _, r := range rs {
		v := [7]float64{1000 * r.CPU / float64(r.Sweeps), r.ESSLogLik / r.CPU, r.ESSC / r.CPU, r.ESSRoot / r.CPU,
			r.ESSLogLik, r.ESSC, r.ESSRoot}
		for i := range v {
			cols[i] = append(cols[i], v[i])
		}
		fmt.Fprintf(w, "| %d | %d | %d | %d | %.2f | %.3f | %.3f | %.3f | %.0f | %.0f | %.0f | %.1f | %.3f | %.4f |\n",
			r.N, r.D, r.Seed, r.Sweeps, v[0], v[1], v[2], v[3], v[4], v[5], v[6], r.MeanLogLik, r.MeanC, r.MeanRoot)
	}
	if len(rs) > 1 {
		fmt.Fprintf(w, "| | | median | | %.2f | %.3f | %.3f | %.3f | %.0f | %.0f | %.0f | | | |\n",
			median(cols[0]), median(cols[1]), median(cols[2]), median(cols[3]),
			median(cols[4]), median(cols[5]), median(cols[6]))
	}
}

// nonNegative returns &x for x ≥ 0 and nil (the default) otherwise.
func nonNegative[T int | float64](x T) *T {
	if x < 0 {
		return nil
	}
	return &x
}

func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-seeds: %w", err)
		}
		out = append(out, x)
	}
	return out, nil
}

func main() {
	modelFile := flag.String("model", "examples/gaussian.pydt", "the model `FILE` (run from the repository's root)")
	n := flag.Int("n", 1000, "number of points")
	d := flag.Int("d", 2, "number of dimensions")
	burn := flag.Int("burn", 500, "sweeps run before recording")
	sweeps := flag.Int("sweeps", 2000, "recorded sweeps")
	seeds := flag.String("seeds", "1,2,3", "comma-separated seeds, one run each (data and chain)")
	dataSeed := flag.Uint64("data-seed", 0, "draw the data of every run with this `SEED` instead of the run's seed (0: the run's seed)")
	trace := flag.String("trace", "", "write each seed's draws to `PREFIX`-SEED.csv")
	set := flag.String("set", "", "clamp scalars besides alpha = beta = 0, as `NAME=X,...` (e.g. c=2 to see the tree moves alone)")
	dataFrom := flag.String("data", "four", "the data: `KIND` four (the four-cluster data) or ddt (drawn from the model with the -set values of c and prec; see -init truth)")
	initFrom := flag.String("init", "prior", "start each chain from `FROM`: prior (a draw), em (the EM search's best tree on the same data), truth (with -data ddt: the tree the data were drawn from, a draw of the posterior, so the chain is stationary from the start), or a Newick FILE whose leaves are labelled 1..N")
	emRounds := flag.Int("em-rounds", 10, "rounds of the EM search of -init em")
	emIters := flag.Int("em-iters", 50, "EM iterations per tree of the EM search of -init em")
	emTime := flag.Duration("em-time", 5*time.Minute, "time bound of the EM search of -init em")
	local := flag.Float64("local", -1, "LocalMoves per leaf in a tree sweep (negative: the default)")
	radius := flag.Int("radius", -1, "LocalMove's radius in steps (LocalGridRadius with -grid; negative: the default)")
	grid := flag.Int("grid", 0, "LocalMove's likelihood-informed proposal with `G` cells per edge (treemove.Sampler.LocalGrid; 0: the uniform proposal)")
	collapse := flag.Bool("collapse", false, "subtree, uniform local and position moves with c integrated out (inference.Schedule.SetCollapse), c drawn right after the tree step")
	timeScale := flag.Bool("timescale", false, "add the scale(c, times) move (inference.TimeScaleSteps) to the schedule")
	noiseOrbit := flag.Bool("noiseorbit", false, "add the orbit(prec, noise, times) move of a Normal noise model (inference.NoiseOrbitSteps) to the schedule")
	position := flag.Float64("position", -1, "PositionMoves per leaf in a tree sweep (negative: the default)")
	freeze := flag.Bool("freeze-topology", false, "fix the tree's topology after the burn-in: the recorded sweeps update the times, c, prec and the rest only")
	comp := flag.Bool("compare", false, "instead of running, compare the trace files given as arguments (one chain each): the halves of each chain, and the chains together (R-hat)")
	skip := flag.Int("skip", 0, "with -compare, drop the first `K` rows of each trace")
	writeTo := flag.String("write-data", "", "instead of running, write each seed's data to `PREFIX`-SEED.txt (whitespace-separated rows, full precision; for fbm, scripts/fbm-compare.sh)")
	cpuLimit := flag.Duration("cpu-limit", 0, "end each run's recording once its recorded sweeps have used this much CPU (e.g. 5m; 0: no limit; -sweeps still bounds it)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	flag.Parse()
	if *comp {
		var ts []traceData
		for _, path := range flag.Args() {
			t, err := readTrace(path, *skip)
			if err != nil {
				fmt.Fprintln(os.Stderr, "mixbench: -compare:", err)
				os.Exit(1)
			}
			ts = append(ts, t)
		}
		if len(ts) == 0 {
			fmt.Fprintln(os.Stderr, "mixbench: -compare: no trace files given")
			os.Exit(2)
		}
		compare(os.Stdout, ts)
		return
	}
	ss, err := parseSeeds(*seeds)
	sets := map[string]float64{}
	if err == nil && *set != "" {
		for _, kv := range strings.Split(*set, ",") {
			k, v, ok := strings.Cut(kv, "=")
			x, perr := strconv.ParseFloat(v, 64)
			if !ok || perr != nil {
				err = fmt.Errorf("-set: want NAME=X, got %q", kv)
				break
			}
			sets[strings.TrimSpace(k)] = x
		}
	}
	if err == nil && (*n < 2 || *d < 1 || *burn < 0 || *sweeps < 4 || *emRounds < 1 || *emIters < 1) {
		err = fmt.Errorf("need -n ≥ 2, -d ≥ 1, -burn ≥ 0, -sweeps ≥ 4, -em-rounds ≥ 1, -em-iters ≥ 1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mixbench:", err)
		os.Exit(2)
	}
	if *writeTo != "" {
		for _, s := range ss {
			c := config{N: *n, D: *d, Seed: s, DataSeed: *dataSeed, Set: sets, Data: *dataFrom}
			if err := writeData(c, fmt.Sprintf("%s-%d.txt", *writeTo, s)); err != nil {
				fmt.Fprintf(os.Stderr, "mixbench: seed %d: %v\n", s, err)
				os.Exit(1)
			}
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mixbench: -cpuprofile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	// An interrupt (or SIGTERM) ends the recording of the run under way
	// after its sweep, and the table reports the sweeps recorded so far.
	stop := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "mixbench: interrupted: ending the recording after this sweep")
		close(stop)
		signal.Stop(sig)
	}()
	var rs []result
	for _, s := range ss {
		if stopped(stop) {
			break
		}
		cfg := config{Model: *modelFile, N: *n, D: *d, Burn: *burn, Sweeps: *sweeps, Seed: s, DataSeed: *dataSeed, Set: sets, Data: *dataFrom,
			Init: *initFrom, EMRounds: *emRounds, EMIters: *emIters, EMTime: *emTime, Stop: stop,
			Local: nonNegative(*local), Radius: nonNegative(*radius), Position: nonNegative(*position),
			TimeScale: *timeScale, NoiseOrbit: *noiseOrbit, Collapse: *collapse, FreezeTopology: *freeze, Grid: *grid, CPULimit: *cpuLimit}
		if *trace != "" {
			cfg.Trace = fmt.Sprintf("%s-%d.csv", *trace, s)
		}
		r, err := run(cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mixbench: seed %d: %v\n", s, err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "seed %d: start (%s, %.1f s CPU) log lik %.1f; %.1f s CPU, %.1f s wall; means%s; ridge moves accepted %d of %d; "+
			"acceptance: subtree %.3f, local %.3f, position %.3f, time %.3f; ESS of sum s %.0f\n",
			s, cfg.Init, r.InitCPU, r.InitLogLik, r.CPU, r.Wall, r.Means, r.RidgeAccepted, r.RidgeProposed,
			r.Moves.Subtree.Rate(), r.Moves.Local.Rate(), r.Moves.Position.Rate(), r.Moves.Time.Rate(), r.ESSSumS)
		mv := r.Moves
		fmt.Fprintf(os.Stderr, "seed %d: work: depth of a leaf %.1f, of a non-root node %.1f, largest %.1f (means over the recorded sweeps); "+
			"subtree moves %d: %.2f proposal attempts per move, %.1f nodes passed per attempt; position moves %d: %.1f evaluations per move\n",
			s, r.Depth.Leaf, r.Depth.Node, r.Depth.Max, mv.Subtree.Proposed, ratio(mv.Tries, mv.Subtree.Proposed), ratio(mv.Steps, mv.Tries),
			mv.Position.Proposed, ratio(mv.PositionEvals, mv.Position.Proposed))
		rs = append(rs, r)
	}
	table(os.Stdout, rs)
}
