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

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/inference/labels"
	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// hmmModel is a real-valued hidden Markov model whose K state means are
// the leaves of a PYDT (examples/hmm-gaussian.pydt with T, K, D bound by
// the caller).
const hmmModel = `
dim T, K, D
data y : real[T, D]
param z : categorical(K)[T]
param pi0 : unit[K]
param trans : unit[K, K]
param mu : real[K, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
sd ~ Gamma(2, 4)
mu ~ PYDT(alpha, beta, c, 1 / prec)
pi0 ~ Dirichlet(1)
for k in 1:K {
  trans[k] ~ Dirichlet(1)
}
z[1] ~ Categorical(pi0)
for t in 2:T {
  z[t] ~ Categorical(trans[z[t - 1]])
}
for t in 1:T, d in 1:D {
  y[t, d] ~ Normal(mu[z[t], d], sd)
}
`

func compileHMM(t testing.TB, T, K, D int, y func(i, j int) float64) *Model {
	t.Helper()
	return compileSource(t, "hmm.pydt", []byte(hmmModel), map[string]*dataset.Matrix{"y": dataMat(T, D, y)}, map[string]float64{"K": float64(K)})
}

// TestHMMSchedule: the schedule finds FFBS for z and conjugate Dirichlet
// updates for pi0 and the rows of trans, from capabilities, and puts FFBS
// after the locations it conditions on.
func TestHMMSchedule(t *testing.T) {
	m := compileHMM(t, 6, 3, 1, func(i, j int) float64 { return float64(i) })
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ex := sched.Explain()
	for _, want := range []string{"ffbs(z)", "gibbs(pi0)", "gibbs(trans[k])", "slice(sd)", "locations"} {
		if !strings.Contains(ex, want) {
			t.Errorf("no %s in\n%s", want, ex)
		}
	}
	if strings.Index(ex, "locations") > strings.Index(ex, "ffbs(z)") {
		t.Errorf("ffbs(z) before the locations it conditions on:\n%s", ex)
	}
}

// TestHMMIndexedLogLik checks the marginal likelihood of the data given
// the tree and the states, as the chain computes it (belief propagation on
// the evidence aggregated per state, plus the residual factor), against
// the Gaussian it is: y = mu[z] + noise, each column N(0, σ² C[z, z] +
// sd² I) with C the tree's divergence times of the states' common
// ancestors. One state has no data (no evidence) and one datum is missing.
// Model.Score (score) at the same values must give it too.
func TestHMMIndexedLogLik(t *testing.T) {
	const T, K, D = 7, 4, 2
	ys := []float64{0.3, -1.2, 0.5, 2.2, 1.9, -0.4, 0.7, 0.1, math.NaN(), 1.4, -2.1, 0.2, 0.9, 1.1}
	m := compileHMM(t, T, K, D, func(i, j int) float64 { return ys[i*D+j] })
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	env := ch.st.Env
	zs := []float64{1, 1, 2, 4, 4, 1, 2} // state 3 has no data
	set := func(name string, vals ...float64) {
		v, _ := m.G.Lookup(name)
		copy(env.Values[v.ID], vals)
	}
	set("z", zs...)
	set("sd", 0.7)
	set("prec", 2)
	if err := ch.syncVariance(); err != nil {
		t.Fatal(err)
	}
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
	got := ch.logLik()
	var want float64
	for d := range D {
		var obs []int
		for i := range T {
			if !math.IsNaN(ys[i*D+d]) {
				obs = append(obs, i)
			}
		}
		cov := mat.NewSymDense(len(obs), nil)
		x := make([]float64, len(obs))
		for a, i := range obs {
			x[a] = ys[i*D+d]
			for b, j := range obs {
				c := 0.5 // σ² = 1/prec, C_ii = 1
				if zs[i] != zs[j] {
					c = densetest.LCATime(ch.Tree(0), pydt.NodeID(zs[i]-1), pydt.NodeID(zs[j]-1)).T() / 2
				}
				if a == b {
					c += 0.49
				}
				cov.SetSym(a, b, c)
			}
		}
		nrm, ok := distmv.NewNormal(make([]float64, len(obs)), cov, nil)
		if !ok {
			t.Fatal("covariance not positive definite")
		}
		want += nrm.LogProb(x)
	}
	if !(math.Abs(got-want) <= 1e-9*math.Abs(want)) {
		t.Errorf("log likelihood %v, the Gaussian gives %v", got, want)
	}
	// score at the same values (z included) gives the same log_lik, and
	// its log_joint is the chain's.
	sc, err := m.Score(&State{Env: env, Trees: []*pydt.Tree{ch.Tree(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(sc.LogLik-want) <= 1e-9*math.Abs(want)) {
		t.Errorf("score: log_lik %v, the Gaussian gives %v", sc.LogLik, want)
	}
	p, err := ch.Measure(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(sc.LogJoint-p.LogJoint) <= 1e-9*math.Abs(p.LogJoint)) || !slices.Contains(sc.HyperTerms, "z[1] ~ Categorical(pi0)") {
		t.Errorf("score: log_joint %v (terms %v), the chain's %v", sc.LogJoint, sc.HyperTerms, p.LogJoint)
	}
}

// TestHMMIndexOutOfRange: a state outside 1..K read as an index is an
// error naming the leaves and the factor, never a silent wrong answer.
func TestHMMIndexOutOfRange(t *testing.T) {
	m := compileHMM(t, 4, 3, 1, func(i, j int) float64 { return float64(i) })
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := m.G.Lookup("z")
	ch.st.Env.Values[z.ID][2] = 4
	err = ch.syncEvidence()
	var ie graph.IndexError
	if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), "index 4 of mu is outside 1..3") {
		t.Fatalf("got %v, want an index error for mu", err)
	}
}

// redrawHMM draws the data given the state sequence, the state means (the
// leaf locations the FFBS step conditioned on) and sd, for the
// successive-conditional side of the Geweke test.
func redrawHMM(t testing.TB, ch *Chain) {
	env := ch.st.Env
	m := ch.m
	y, _ := m.G.Lookup("y")
	z, _ := m.G.Lookup("z")
	mu, _ := m.G.Lookup("mu")
	sd, _ := m.G.Lookup("sd")
	D := y.Dims[1]
	s := env.Values[sd.ID][0]
	for k := range env.Values[y.ID] {
		st := int(env.Values[z.ID][k/D]) - 1
		env.Values[y.ID][k] = env.Values[mu.ID][st*D+k%D] + s*ch.rng.NormFloat64()
	}
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// hmmStats are label-invariant statistics of an HMM state, beside the
// tree's: the number of distinct states used, the number of switches, and
// the mean and mean absolute value of the data (the prior's 1/prec has no mean, so y² has none); and z[1], pi0[1], trans[1,1], whose
// means the prior's symmetry fixes.
func hmmStats(m *Model, env *graph.Env, tr *pydt.Tree) []float64 {
	get := func(name string) []float64 { v, _ := m.G.Lookup(name); return env.Values[v.ID] }
	z, y := get("z"), get("y")
	seen := map[float64]bool{}
	switches := 0.0
	for t, s := range z {
		seen[s] = true
		if t > 0 && s != z[t-1] {
			switches++
		}
	}
	var sy, sa float64
	for _, x := range y {
		sy += x
		sa += math.Abs(x)
	}
	n := float64(len(y))
	return append(treeStats(m, env, tr), float64(len(seen)), switches, sy/n, sa/n, z[0], get("pi0")[0], get("trans")[0])
}

// TestGewekeHMM is the joint-distribution test of the composed HMM + PYDT
// sampler (FFBS of the states given the sampled leaf locations, Dirichlet
// Gibbs, the tree and hyperparameters with the leaves integrated out
// given the states) at T = 6, K = 3, D = 1 with the example's priors.
func TestGewekeHMM(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	m := compileHMM(t, 6, 3, 1, func(i, j int) float64 { return 0 })
	names := append(treeStatNames(m), "distinct states", "switches", "mean y", "mean |y|", "z[1]", "pi0[1]", "trans[1,1]")
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 { return hmmStats(m, env, tr) }
	gewekeRun(t, m, names, stats, m.SampleJoint, func(ch *Chain) { redrawHMM(t, ch) }, 16, 1000, 6000)
}

// TestHMMRunResumesExactly: a run of the HMM is deterministic and a run
// interrupted and resumed writes the files of an uninterrupted one.
func TestHMMRunResumesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ys := make([]float64, 8)
	for i := range ys {
		ys[i] = float64(i%3) + 0.3*rng.NormFloat64()
	}
	ys[5] = math.NaN() // imputed
	m := compileHMM(t, 8, 3, 1, func(i, j int) float64 { return ys[i] })
	checkDeterministicAndResumable(t, m)
}

// catHMMModel is a hidden Markov model with Categorical emissions whose
// rows have Dirichlet priors (the emissions are not linked to the tree,
// which stands beside them).
const catHMMModel = `
dim T, K, V
data w : categorical(V)[T]
param z : categorical(K)[T]
param trans : unit[K, K]
param emit : unit[K, V]
param X : real[2, 1]
` + gewekePriors + `X ~ PYDT(alpha, beta, c, 1 / prec)
for k in 1:K {
  trans[k] ~ Dirichlet(1)
  emit[k] ~ Dirichlet(0.7)
}
z[1] ~ Categorical(trans[1])
for t in 2:T {
  z[t] ~ Categorical(trans[z[t - 1]])
}
for t in 1:T {
  w[t] ~ Categorical(emit[z[t]])
}
`

// TestGewekeCategoricalHMM is the joint-distribution test of ffbs(z) with
// Categorical emissions and of the Dirichlet updates of rows read through
// the states (trans[z[t - 1]], emit[z[t]], and trans[1] by the first
// state): the statistics are the states' and words' summaries and the
// rows' first components.
func TestGewekeCategoricalHMM(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	const T, K, V = 6, 2, 3
	m := compileSource(t, "cathmm.pydt", []byte(catHMMModel), map[string]*dataset.Matrix{"w": dataMat(T, 1, func(i, j int) float64 { return 1 })},
		map[string]float64{"K": K, "V": V})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ffbs(z)", "gibbs(trans[k])", "gibbs(emit[k])"} {
		if !strings.Contains(sched.Explain(), want) {
			t.Fatalf("no %s in\n%s", want, sched.Explain())
		}
	}
	get := valuesOf(m)
	names := []string{"z[1]", "z[T]", "switches", "mean w", "w[1] = w[2]", "trans[1,1]", "trans[2,1]", "emit[1,1]", "emit[2,3]"}
	stats := func(env *graph.Env, _ *pydt.Tree) []float64 {
		z, w := get(env, "z"), get(env, "w")
		sw, sum, same := hmmPathStats(z, w)
		tr, em := get(env, "trans"), get(env, "emit")
		return []float64{z[0], z[T-1], sw, sum / T, same, tr[0], tr[K], em[0], em[V+2]}
	}
	redraw := func(ch *Chain) { redrawOthers(t, ch) }
	setup := gewekeSetup{priorSeed: [2]uint64{51, 52}, chainSeed: 53, firstStream: 500, chains: 16, burn: 500, iters: 8000}
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, m.SampleJoint, redraw)
	compareMeans(t, names, prior, chains)
}

// genericFFBS is s with every emission evaluated in full, K times per
// element, and the sampled locations copied into the leaf variable.
func genericFFBS(t testing.TB, m *Model, s *ffbsStep) *ffbsStep {
	t.Helper()
	slow := *s
	slow.emits, slow.leafEmits, slow.copyLeaves = nil, nil, s.trees
	env := graph.NewEnv(m.G)
	for _, f := range s.readers {
		elems, err := plate(f, env)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range elems {
			tt, ok := readsOne(e, s.v, env)
			if !ok {
				t.Fatal("readsOne")
			}
			slow.emits = append(slow.emits, emitElem{e: e, t: tt})
		}
	}
	return &slow
}

// BenchmarkFFBS times ffbs(z) of the HMM at T = 5000, K = 8, D = 2 with
// the leaf factor served by its Gaussian evidence ("evidence") and
// evaluated in full K times per element ("generic").
func BenchmarkFFBS(b *testing.B) {
	const T, K, D = 5000, 8, 2
	rng := rand.New(rand.NewPCG(1, 2))
	ys := make([]float64, T*D)
	for i := range ys {
		ys[i] = float64((i/D/50)%K) + 0.5*rng.NormFloat64()
	}
	m := compileHMM(b, T, K, D, func(i, j int) float64 { return ys[i*D+j] })
	sched, err := NewSchedule(m)
	if err != nil {
		b.Fatal(err)
	}
	fast := ffbsOf(b, sched)
	for _, c := range []struct {
		name string
		s    *ffbsStep
	}{{"evidence", fast}, {"generic", genericFFBS(b, m, fast)}} {
		b.Run(c.name, func(b *testing.B) {
			ch, err := NewChain(m, sched, 1, 2)
			if err != nil {
				b.Fatal(err)
			}
			if err := ch.Sweep(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := c.s.update(ch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ffbsOf returns the schedule's ffbs step.
func ffbsOf(t testing.TB, sched *Schedule) *ffbsStep {
	t.Helper()
	for _, st := range sched.Steps {
		if s, ok := st.(*ffbsStep); ok {
			return s
		}
	}
	t.Fatal("no ffbs step")
	return nil
}

// TestFFBSLeafEmissions: ffbs(z) serves the elements of the tree's leaf
// factor by their Gaussian evidence, once per element, instead of
// evaluating the factor K times per token, and no longer copies the
// sampled locations into the leaf variable. Its emission log densities
// must equal the factor's own (Normal's LogProb at each state's sampled
// location, the generic path), and its draws of z the generic path's
// from the same state and stream; the leaf variable is left alone.
func TestFFBSLeafEmissions(t *testing.T) {
	const T, K, D = 40, 4, 2
	rng := rand.New(rand.NewPCG(3, 4))
	ys := make([]float64, T*D)
	for i := range ys {
		ys[i] = float64((i/D)%K) + 0.4*rng.NormFloat64()
	}
	ys[7], ys[30] = math.NaN(), math.NaN()
	m := compileHMM(t, T, K, D, func(i, j int) float64 { return ys[i*D+j] })
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	fast := ffbsOf(t, sched)
	if len(fast.emits) != 0 || len(fast.leafEmits) != T*D || len(fast.copyLeaves) != 0 {
		t.Fatalf("emits %d, leaf emits %d, copied trees %v: want 0, %d, none", len(fast.emits), len(fast.leafEmits), fast.copyLeaves, T*D)
	}
	slow := genericFFBS(t, m, fast)
	for sweeps := range 4 {
		chA, err := NewChain(m, sched, 9, 10)
		if err != nil {
			t.Fatal(err)
		}
		chB, err := NewChain(m, sched, 9, 10)
		if err != nil {
			t.Fatal(err)
		}
		for range sweeps {
			if err := chA.Sweep(); err != nil {
				t.Fatal(err)
			}
			if err := chB.Sweep(); err != nil {
				t.Fatal(err)
			}
		}
		for _, ch := range []*Chain{chA, chB} {
			if err := (locationsStep{m: m}).update(ch); err != nil {
				t.Fatal(err)
			}
		}
		mu, _ := m.G.Lookup("mu")
		muA := slices.Clone(chA.st.Env.Values[mu.ID])
		if err := fast.update(chA); err != nil {
			t.Fatal(err)
		}
		if err := slow.update(chB); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(muA, chA.st.Env.Values[mu.ID]) {
			t.Errorf("after %d sweeps: ffbs wrote the leaf variable mu", sweeps)
		}
		la := chA.scratch[fast].(*ffbsScratch).logEmit
		lb := chB.scratch[slow].(*ffbsScratch).logEmit
		for i := range la {
			if !(math.Abs(la[i]-lb[i]) <= 1e-10*(1+math.Abs(lb[i]))) {
				t.Fatalf("after %d sweeps: log emission %d (t %d, state %d) %v, the factor's own %v", sweeps, i, i/K+1, i%K+1, la[i], lb[i])
			}
		}
		z, _ := m.G.Lookup("z")
		if !slices.Equal(chA.st.Env.Values[z.ID], chB.st.Env.Values[z.ID]) {
			t.Errorf("after %d sweeps: the draws of z differ from the generic path's", sweeps)
		}
	}
}

// TestFFBSLeafEmissionsFallBack: a leaf factor that reads the states
// elsewhere too (a sd per state) is evaluated in full, with the locations
// copied into the leaf variable.
func TestFFBSLeafEmissionsFallBack(t *testing.T) {
	src := strings.Replace(strings.Replace(hmmModel, "Normal(mu[z[t], d], sd)", "Normal(mu[z[t], d], s[z[t]])", 1),
		"sd ~ Gamma(2, 4)", "param s : pos[K]\nfor k in 1:K {\n  s[k] ~ Gamma(2, 4)\n}", 1)
	m := compileSource(t, "hmm.pydt", []byte(src), map[string]*dataset.Matrix{"y": dataMat(6, 1, func(i, j int) float64 { return float64(i) })}, map[string]float64{"K": 3})
	z, _ := m.G.Lookup("z")
	s, why := newFFBS(m, z)
	if s == nil {
		t.Fatal(why)
	}
	if len(s.leafEmits) != 0 || len(s.emits) != 6 || !slices.Equal(s.copyLeaves, []int{0}) {
		t.Errorf("emits %d, leaf emits %d, copied trees %v: want 6, 0, [0]", len(s.emits), len(s.leafEmits), s.copyLeaves)
	}
}

// TestHMMSyntheticRecovery: data drawn from a sticky HMM over four states
// whose means form a two-level hierarchy (a1, a2 near each other, b1, b2
// near each other, the pairs far apart; examples/gen-hmm's design) are fitted by
// the HMM + PYDT model with K = 4, two chains. Stated tolerances: the
// modal aligned states (states-z.csv) match the true states one to one
// (Hungarian) on at least 95% of the time points; the summary tree's
// top split (summary.nwk, made from the aligned trees) separates the
// a-states from the b-states; the noise sd's posterior mean is within 25%
// of the true 0.4. With 1000 sweeps it passes for every chain seed tried
// (1 to 11); with 400, one seed in five left a pair of states merged in
// one chain and failed the top split.
func TestHMMSyntheticRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of 2 × 1000 sweeps")
	}
	const T, K, D, noise = 200, 4, 2, 0.4
	means := [][2]float64{{-2, -2}, {-2, 0}, {2, 1}, {2, 3}} // a1, a2, b1, b2
	rng := rand.New(rand.NewPCG(31, 2026))
	truth := make([]int, T)
	ys := make([]float64, T*D)
	z := rng.IntN(K)
	for i := range T {
		if i > 0 && rng.Float64() >= 0.9 {
			z = (z + 1 + rng.IntN(K-1)) % K
		}
		truth[i] = z
		for d := range D {
			ys[i*D+d] = means[z][d] + noise*rng.NormFloat64()
		}
	}
	m := compileHMM(t, T, K, D, func(i, j int) float64 { return ys[i*D+j] })
	dir := t.TempDir()
	res, err := Run(context.Background(), m, Config{Iters: 1000, Chains: 2, Seed: 1, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	modal := make([]int, T)
	for i, k := range res.Aligned.Arrays[0].Modal {
		modal[i] = k - 1
	}
	acc, mapping, err := labels.OneToOne(modal, K, truth, K)
	if err != nil {
		t.Fatal(err)
	}
	if acc < 0.95 {
		t.Errorf("one-to-one accuracy of the modal aligned states %.3f, want >= 0.95", acc)
	}
	text, err := os.ReadFile(filepath.Join(dir, SummaryTreeFile))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := pydt.ParseNewick(strings.TrimSpace(string(text)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var sides []string
	for c := range tr.Children(tr.Root()) {
		var side []int
		for _, v := range tr.PostOrderFrom(c, nil) {
			if tr.IsLeaf(v) {
				side = append(side, mapping[v]/2) // 0: an a-state, 1: a b-state
			}
		}
		slices.Sort(side)
		sides = append(sides, fmt.Sprint(side))
	}
	slices.Sort(sides)
	if !slices.Equal(sides, []string{"[0 0]", "[1 1]"}) {
		t.Errorf("summary tree %s (aligned state k is true state %v): top split %v, want the a-states from the b-states", text, mapping, sides)
	}
	i := slices.IndexFunc(res.Scalars, func(s diagnostics.Summary) bool { return s.Name == "sd" })
	if i < 0 {
		t.Fatalf("no summary of sd among %d scalars", len(res.Scalars))
	}
	if s := res.Scalars[i]; !(math.Abs(s.Mean-noise) <= 0.25*noise) {
		t.Errorf("sd posterior mean %.3f, want %.2f within 25%%", s.Mean, noise)
	}
}

// hmmPathStats returns an HMM draw's number of state switches in z, the
// sum of its emissions w, and 1 if w[1] = w[2] (else 0): Geweke statistics
// shared by the HMM tests.
func hmmPathStats(z, w []float64) (switches, sum, same float64) {
	for t := range z {
		if t > 0 && z[t] != z[t-1] {
			switches++
		}
		sum += w[t]
	}
	return switches, sum, indicator(w[0] == w[1])
}

// valuesOf returns a function giving the values of m's variable name in
// an environment, for the Geweke tests' statistics.
func valuesOf(m *Model) func(env *graph.Env, name string) []float64 {
	return func(env *graph.Env, name string) []float64 {
		v, ok := m.G.Lookup(name)
		if !ok {
			panic("no variable " + name)
		}
		return env.Values[v.ID]
	}
}

// indicator is 1 if b, else 0: a Geweke statistic of an event.
func indicator(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
