package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The priors keep divergence times where float64 represents them: with a
// large alpha or a small c, data drawn from the model can have leaves whose
// split lies closer to t = 1 than float64 resolves, so that two data rows
// are bitwise identical; the model's posterior for identical rows is
// degenerate (their split runs to t = 1), which no sampler can follow.
//
// TestGeweke is Geweke's (2004) joint-distribution test of the whole
// sampler: draws of (tree, hyperparameters, data) from the prior
// (marginal-conditional) must agree with a chain that alternates the
// sampler's sweep with fresh draws of the data given everything else
// (successive-conditional). Means of the statistics are compared with
// their combined Monte Carlo standard error (batch means for the chain).
func TestGeweke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	// Independent successive-conditional chains: the spread of their
	// means gives an honest standard error even when the sampler mixes
	// slowly (batch means underestimate it then).
	gewekePYDT(t, func(*testing.T) gewekeSetup {
		return gewekeSetup{priorSeed: [2]uint64{1, 2}, chainSeed: 3, firstStream: 100, chains: 8, burn: 1000, iters: 6000}
	})
}

// gewekePYDT runs the Geweke test of the tree statistics on the model
// X ~ PYDT(alpha, beta, c, 1 / prec) under gewekePriors, for N=4, D=1 and
// N=5, D=2, with the setup that setup returns for each subtest.
func gewekePYDT(t *testing.T, setup func(t *testing.T) gewekeSetup) {
	const model = `
dim N, D
data X : real[N, D]
` + gewekePriors + `X ~ PYDT(alpha, beta, c, 1 / prec)
`
	cases := []struct{ n, d int }{{4, 1}, {5, 2}}
	for _, c := range cases {
		t.Run(fmt.Sprintf("N=%d,D=%d", c.n, c.d), func(t *testing.T) {
			m := compileModel(t, model, c.n, c.d, nil)
			names := treeStatNames(m)
			stats := func(env *graph.Env, tr *pydt.Tree) []float64 { return treeStats(m, env, tr) }
			prior, chains := gewekeMeans(t, m, setup(t), len(names), stats, m.SamplePrior, func(ch *Chain) { redrawData(t, ch) })
			compareMeans(t, names, prior, chains)
		})
	}
}

func TestAllMissingRecoversPrior(t *testing.T) {
	t.Parallel()
	for _, div := range []string{"c", "DivInvSq(c)", "DivNeal(0.4, c, 0.3)"} {
		t.Run(div, func(t *testing.T) {
			allMissingRecoversPrior(t, strings.Replace(gaussianModel, "PYDT(alpha, beta, c,", "PYDT(alpha, beta, "+div+",", 1))
		})
	}
}

// allMissingRecoversPrior checks that with every value missing and the
// hyperparameters clamped the N = 3 topologies have the exact law of the
// generative process. The chains start from a fixed tree (topology
// (1,2),3), so that a tree sampler that does not move fails instead of
// keeping a prior draw, and the moves are watched (stepWatch).
func allMissingRecoversPrior(t *testing.T, model string) {
	nan := math.NaN()
	rows := [][]float64{{nan}, {nan}, {nan}}
	alpha, beta := 1.5, 0.3
	m := compileWithData(t, model, rows, map[string]float64{"alpha": alpha, "beta": beta, "c": 1, "prec": 1})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	want := topology3Law(alpha, beta)
	watch := watchSchedule(m, sched)
	const chains, burn, iters, start = 8, 100, 4000, "((1:0.9,2:0.9):0.05,3:0.95):0.05;"
	draws := map[string][][]float64{}
	for k := range chains {
		ch := newChainFixed(t, m, sched, 7, uint64(k), nil, start)
		for name := range want {
			draws[name] = append(draws[name], make([]float64, 0, iters))
		}
		for it := range burn + iters {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
			if it < burn {
				continue
			}
			top := topology3(ch.trees[0].Tree)
			for name := range want {
				draws[name][k] = append(draws[name][k], indicator(top == name))
			}
		}
		if ch.trees[0].moves.Stats.Local.Proposed == 0 {
			t.Errorf("chain %d: the schedule made no local move", k+1)
		}
	}
	watch.check(t)
	for name, p := range want {
		got, se := chainSE(draws[name])
		if !(math.Abs(got-p) <= 4*se) {
			t.Errorf("P(%s) = %.4f ± %.4f, exact %.4f (z = %.1f)", name, got, se, p, (got-p)/se)
		}
	}
}

// topology3Law is the exact law, under the PYDT prior with parameters
// alpha and beta, of topology3 of a three-leaf tree (it does not depend on
// the divergence function).
func topology3Law(alpha, beta float64) map[string]float64 {
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	h1 := math.Exp(lg(1-beta) - lg(2+alpha))
	h2 := h1 * (1 - beta) / (2 + alpha)
	three := h1 / (h1 + h2) * (alpha + 2*beta) / (2 + alpha)
	return map[string]float64{"three-way": three, "(1,2),3": (1 - three) / 3, "(1,3),2": (1 - three) / 3, "(2,3),1": (1 - three) / 3}
}

// topology3 names the topology of a three-leaf tree.
func topology3(tr *pydt.Tree) string {
	if tr.NumInternal() == 1 {
		return "three-way"
	}
	for _, v := range tr.PreOrder(nil) {
		if v == tr.Root() || tr.IsLeaf(v) {
			continue
		}
		var pair []pydt.NodeID
		for c := range tr.Children(v) {
			pair = append(pair, c)
		}
		switch {
		case pair[0]+pair[1] == 1:
			return "(1,2),3"
		case pair[0]+pair[1] == 2:
			return "(1,3),2"
		default:
			return "(2,3),1"
		}
	}
	return "?"
}

// TestGewekeProbit is the joint-distribution test of the sampler with a
// Probit likelihood: its data augmentation (truncated-normal auxiliaries)
// must leave the joint law of tree, hyperparameters and binary data intact.
func TestGewekeProbit(t *testing.T) {
	t.Parallel()
	const n, d = 4, 2
	m := compileProbit(t, &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"})
	if m.Trees[0].Threshold() == nil {
		t.Fatalf("leaf evidence %v", m.Trees[0].Kind())
	}
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		out := treeStats(m, env, tr)
		var ones float64
		for _, v := range env.Values[m.Data.ID] {
			ones += v
		}
		return append(out, ones)
	}
	names := append(treeStatNames(m), "number of ones")
	setup := gewekeSetup{priorSeed: [2]uint64{21, 22}, chainSeed: 23, firstStream: 0, chains: 8, burn: 500, iters: 4000}
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, m.SampleJoint, func(ch *Chain) { redrawProbit(t, ch) })
	compareMeans(t, names, prior, chains)
}

// treeStatNames names the statistics of treeStats.
func treeStatNames(m *Model) []string {
	names := []string{"internal nodes", "root time", "root degree", "sum of times"}
	for _, v := range m.Scalars() {
		names = append(names, v.Name)
	}
	return names
}

// gewekeSetup fixes the seeds and lengths of a Geweke test.
type gewekeSetup struct {
	priorSeed [2]uint64 // PCG seed of the marginal-conditional draws
	// chain k runs NewChain(m, sched, chainSeed, firstStream+k)
	chainSeed, firstStream uint64
	chains, burn, iters    int
	// edit, if set, changes the schedule before the chains start (a step
	// that the default schedule leaves out).
	edit func(*Schedule)
}

// reseed returns setup with other seeds when the environment variable
// PYDT_GEWEKE_SEED is a positive integer k: chain seed k, streams from
// 100·k, prior seed (31, 50 + k). A test that passes only by its seeds
// shows up in a loop over k (docs/benchmarks.md, session 24); the tests
// themselves run with their fixed seeds.
func reseed(t *testing.T, setup gewekeSetup) gewekeSetup {
	t.Helper()
	s := os.Getenv("PYDT_GEWEKE_SEED")
	if s == "" {
		return setup
	}
	k, err := strconv.ParseUint(s, 10, 32)
	if err != nil || k == 0 {
		t.Fatalf("PYDT_GEWEKE_SEED=%q: want a positive integer", s)
	}
	setup.chainSeed, setup.firstStream, setup.priorSeed = k, 100*k, [2]uint64{31, 50 + k}
	t.Logf("PYDT_GEWEKE_SEED=%d: chain seed %d, streams from %d, prior seed %v", k, setup.chainSeed, setup.firstStream, setup.priorSeed)
	return setup
}

// gewekeDraws is the number of marginal-conditional draws of a Geweke test.
const gewekeDraws = 20000

// gewekeMeans runs the two sides of Geweke's (2004) joint-distribution
// test (gewekeStates) for statistics of the state's first tree.
func gewekeMeans(t *testing.T, m *Model, setup gewekeSetup, nstat int, stats func(*graph.Env, *pydt.Tree) []float64,
	sample func(*rand.Rand) (*State, error), redraw func(*Chain)) (prior [][]float64, chains [][][]float64) {
	t.Helper()
	return gewekeStates(t, m, setup, nstat, func(st *State) []float64 { return stats(st.Env, st.Trees[0]) }, sample, redraw)
}

// gewekeStates runs the two sides of Geweke's (2004) joint-distribution
// test: gewekeDraws marginal-conditional draws of sample, and independent
// successive-conditional chains (a sweep, then redraw), for the nstat
// statistics stats of a state: prior[i] holds the draws of statistic i,
// chains[i][k] its values in chain k over the iterations after burn-in.
//
// It fails t when the chains do not move (see stepWatch): a step of the
// schedule that changed the state too rarely, a sampled variable, a
// tree's topology or times that changed too rarely, or a statistic whose
// lag-1 autocorrelation is near 1. The chains start from (nearly) prior
// draws, so that without these checks a step that never moves its
// variable would pass the comparison of means.
func gewekeStates(t *testing.T, m *Model, setup gewekeSetup, nstat int, stats func(*State) []float64,
	sample func(*rand.Rand) (*State, error), redraw func(*Chain)) (prior [][]float64, chains [][][]float64) {
	t.Helper()
	setup = reseed(t, setup)
	rng := rand.New(rand.NewPCG(setup.priorSeed[0], setup.priorSeed[1]))
	prior = make([][]float64, nstat)
	for range gewekeDraws {
		st, err := sample(rng)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range stats(st) {
			prior[i] = append(prior[i], s)
		}
	}
	sched, err := NewSchedule(m)
	if err == nil && setup.edit != nil {
		setup.edit(sched)
	}
	if err != nil {
		t.Fatal(err)
	}
	watch := watchSchedule(m, sched)
	chains = make([][][]float64, nstat)
	for i := range chains {
		chains[i] = make([][]float64, setup.chains)
	}
	for k := range setup.chains {
		ch, err := NewChain(m, sched, setup.chainSeed, setup.firstStream+uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		redraw(ch)
		for i := range chains {
			chains[i][k] = make([]float64, 0, setup.iters)
		}
		for it := range setup.burn + setup.iters {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
			redraw(ch)
			if it < setup.burn {
				continue
			}
			for i, s := range stats(ch.st) {
				chains[i][k] = append(chains[i][k], s)
			}
		}
		// The whole schedule runs, local moves included (on by default):
		// the tree step sets each sampler's rate before its sweep.
		for _, tr := range ch.trees {
			if tr.moves.LocalMovesPerLeaf > 0 && tr.Tree.NumLeaves() > 1 && tr.moves.Stats.Local.Proposed == 0 {
				t.Errorf("chain %d: no local move was proposed in %d sweeps", k+1, setup.burn+setup.iters)
			}
		}
	}
	watch.check(t)
	for i := range chains {
		// A statistic constant under the prior (an event absent from
		// both sides) has no autocorrelation to check.
		if _, v := diagnostics.MeanVar(prior[i]); v == 0 {
			continue
		}
		if r := lag1(chains[i]); !(r < 1-maxLag1Gap) {
			t.Errorf("statistic %d: lag-1 autocorrelation %.4f over the chains (at most %.3f expected): the chains do not move",
				i+1, r, 1-maxLag1Gap)
		}
	}
	return prior, chains
}

// compareMeans compares, statistic by statistic, the mean of the
// marginal-conditional draws with the mean of the independent
// successive-conditional chains, failing beyond 4 combined standard
// errors. The chains' standard error is chainSE's, from their effective
// sample size over all their draws (with 8 chains, the spread of the
// chains' means would give a z with the heavy tails of Student's t on 7
// degrees of freedom). It logs each statistic's lag-1 autocorrelation, and
// returns the chains' standard errors.
func compareMeans(t *testing.T, names []string, prior [][]float64, chains [][][]float64) (chainSEs []float64) {
	t.Helper()
	chainSEs = make([]float64, len(names))
	for i, name := range names {
		pm, pse := meanSE(prior[i])
		cm, cse := chainSE(chains[i])
		chainSEs[i] = cse
		sd := math.Hypot(pse, cse)
		z := (cm - pm) / sd
		if sd == 0 && cm == pm {
			// An event absent from both sides: equal means with no
			// spread, z = 0/0, which is agreement.
			z = 0
		}
		t.Logf("%-15s prior %.4f ± %.4f  chain %.4f ± %.4f  z = %+.2f  lag-1 %.3f", name, pm, pse, cm, cse, z, lag1(chains[i]))
		// z is NaN when a statistic is NaN on either side: that fails.
		if !(math.Abs(z) <= 4) {
			t.Errorf("%s: successive-conditional mean %.4f differs from the prior mean %.4f (z = %.1f)", name, cm, pm, z)
		}
	}
	return chainSEs
}
