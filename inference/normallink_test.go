package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

const normalLinkModel = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
` + gewekePriors + `noise ~ Gamma(4, 2)
Z ~ PYDT(alpha, beta, c, 1 / prec)
X ~ Normal(Z, 1 / sqrt(noise))
`

// TestGewekeNormalLink is Geweke's joint-distribution test (see TestGeweke)
// of the schedule for a Normal noise model, whose precision is slice
// sampled with the locations integrated out and whose times and c move
// together by the scale move.
func TestGewekeNormalLink(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	m := compileModel(t, normalLinkModel, 4, 2, nil)
	if !m.Trees[0].Gaussian() {
		t.Fatalf("leaf evidence %v", m.Trees[0].Kind())
	}
	names := treeStatNames(m)
	setup := gewekeSetup{priorSeed: [2]uint64{11, 12}, chainSeed: 3, firstStream: 200, chains: 8, burn: 500, iters: 3000}
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 { return treeStats(m, env, tr) }
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, m.SamplePrior, func(ch *Chain) { redrawNoisy(t, ch) })
	compareMeans(t, names, prior, chains)
}

// TestNormalLinkLeavesDegenerateState starts a Normal-noise chain in the
// state that trapped the conjugate update of prec given sampled locations:
// all leaves on one branch point within 1e-250 of t = 1, prec = 1500, a
// small c, on the synthetic four clusters. Within 30 sweeps prec must fall
// to the order of the data's scale (the diffusion explains the clusters)
// and the earliest divergence must leave t = 1. With the conjugate update
// prec stays in the hundreds.
func TestNormalLinkLeavesDegenerateState(t *testing.T) {
	rows := make([][]float64, 40)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range rows {
		cx, cy := float64(2*(i%2)-1), float64(2*(i/2%2)-1)
		rows[i] = []float64{cx + 0.35*rng.NormFloat64(), cy + 0.35*rng.NormFloat64()}
	}
	m := compileWithData(t, normalLinkModel, rows, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	st := m.NewState()
	for name, x := range map[string]float64{"alpha": 3, "beta": 0.95, "c": 0.05, "prec": 1500, "noise": 1} {
		v, _ := m.G.Lookup(name)
		st.Env.Values[v.ID][0] = x
	}
	m.Refresh(st.Env)
	tr := pydt.New(m.N)
	root := tr.NewInternal(pydt.TimeFromLogOneMinus(-575))
	for i := range m.N {
		tr.AddChild(root, pydt.NodeID(i))
	}
	tr.SetRoot(root)
	tr.Recount()
	st.Trees = []*pydt.Tree{tr}
	ch, err := restoreChain(m, sched, st, rand.NewPCG(3, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	pv, _ := m.G.Lookup("prec")
	for range 30 {
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
	}
	prec := ch.get(pv)
	minS := math.Inf(1)
	for _, b := range ch.trees[0].Tree.PreOrder(nil) {
		if !ch.trees[0].Tree.IsLeaf(b) {
			minS = min(minS, -ch.trees[0].Tree.Time(b).LogOneMinus())
		}
	}
	t.Logf("after 30 sweeps: prec = %g, earliest -log(1-t) = %g", prec, minS)
	if !(prec < 20) || !(minS < 50) {
		t.Errorf("after 30 sweeps prec = %g and the earliest divergence is at -log(1-t) = %g: the chain is stuck near t = 1", prec, minS)
	}
}
