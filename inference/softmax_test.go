package inference

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/cputime"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// softmaxHMMModel is examples/hmm-pos.pydt with the Geweke tests' priors:
// an HMM over word ids whose states' emission logits are the leaves of a
// PYDT, read as w[t] ~ Categorical(softmax(eta[z[t]])).
const softmaxHMMModel = `
dim T, K, V
data w : categorical(V)[T]
param z : categorical(K)[T]
param pi0 : unit[K]
param trans : unit[K, K]
param eta : real[K, V]
` + gewekePriors + `eta ~ PYDT(alpha, beta, c, 1 / prec)
pi0 ~ Dirichlet(1)
for k in 1:K {
  trans[k] ~ Dirichlet(1)
}
z[1] ~ Categorical(pi0)
for t in 2:T {
  z[t] ~ Categorical(trans[z[t - 1]])
}
for t in 1:T {
  w[t] ~ Categorical(softmax(eta[z[t]]))
}
`

func compileSoftmaxHMM(t testing.TB, K, V int, w ...float64) *Model {
	t.Helper()
	return compileSource(t, "softmax-hmm.pydt", []byte(softmaxHMMModel), map[string]*dataset.Matrix{"w": vec(w...)},
		map[string]float64{"K": float64(K), "V": float64(V)})
}

// TestSoftmaxHMMSchedule: the schedule of examples/hmm-pos.pydt finds,
// from capabilities, FFBS for z with the emissions from each state's
// log-softmax, conjugate Dirichlet updates, the softmax-leaf update of the
// latent leaves eta, and the conjugate precision given the tree (the
// leaves are observed exactly by the tree), with no locations step.
func TestSoftmaxHMMSchedule(t *testing.T) {
	src, err := os.ReadFile("../examples/hmm-pos.pydt")
	if err != nil {
		t.Fatal(err)
	}
	m := compileSource(t, "hmm-pos.pydt", src, map[string]*dataset.Matrix{"w": vec(1, 2, 3, 1, 2, 3)}, map[string]float64{"K": 2, "V": 3})
	if !m.Trees[0].LatentLeaves() || m.Trees[0].Leaf != nil {
		t.Fatalf("eta is not bound as latent leaves: %s", m.Trees[0].Kind())
	}
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ex := sched.Explain()
	for _, want := range []string{"tree ", "ffbs(z)", "log-softmax", "gibbs(pi0)", "gibbs(trans[k])", "softmax-leaf(eta)", "gibbs(prec)", "gibbs(c)", "slice(alpha)"} {
		if !strings.Contains(ex, want) {
			t.Errorf("no %s in\n%s", want, ex)
		}
	}
	var ff *ffbsStep
	for _, s := range sched.Steps {
		if f, ok := s.(*ffbsStep); ok {
			ff = f
		}
		if s.Name() == "locations" {
			// Neither gibbs(prec) nor ffbs(z) reads sampled locations.
			t.Errorf("the schedule samples locations, which no step needs:\n%s", ex)
		}
	}
	if ff == nil || len(ff.logits) != 6 || len(ff.emits) != 0 {
		t.Fatalf("ffbs(z) does not take all 6 emissions from the logits: %+v", ff)
	}
	// Every element of eta is updated once, its target the tree (its
	// prior) and the words.
	eta, _ := m.G.Lookup("eta")
	w, _ := m.G.Lookup("w")
	seen := map[int]int{}
	for _, st := range sched.Steps {
		tg, ok := st.(targeter)
		if !ok {
			continue
		}
		for _, site := range tg.targets() {
			if site.V != eta {
				continue
			}
			seen[site.Off]++
			if !slices.Contains(site.Terms, term{F: eta.Def, Elem: -1}) || !slices.Contains(site.Terms, term{F: w.Def, Elem: -1}) {
				t.Errorf("eta element %d: target %v lacks the PYDT or the words", site.Off, site.Terms)
			}
		}
	}
	for off := range eta.Len() {
		if seen[off] != 1 {
			t.Errorf("eta element %d: %d updates, want 1", off, seen[off])
		}
	}
	if err := m.Trees[0].ClosedForm(); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ClosedForm of latent logits: %v, want ErrUnsupported", err)
	}
}

// TestLogitsEmissions checks the two shortcuts of softmax emissions
// against the factor's own density evaluated element by element
// (CategoricalLogits.LogProbVector through vectorLogDensity): the log
// density of the data with one normaliser per row (logitsLogDensity, a
// missing datum included), and FFBS's emission log-likelihoods of every
// state (addLogitsEmissions against setting z[t] = k).
func TestLogitsEmissions(t *testing.T) {
	const K, V = 3, 4
	m := compileSoftmaxHMM(t, K, V, 1, 4, 2, math.NaN(), 3, 3, 1)
	st, err := m.SampleJoint(rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	env := st.Env
	w, _ := m.G.Lookup("w")
	z, _ := m.G.Lookup("z")
	copy(env.Values[w.ID], []float64{1, 4, 2, math.NaN(), 3, 3, 1})
	eta, _ := m.G.Lookup("eta")
	for i := range env.Values[eta.ID] {
		env.Values[eta.ID][i] = 3 * math.Sin(float64(i)+0.5)
	}
	f := w.Def
	var want float64
	var a graph.VecArgs
	vt, _ := f.Vector()
	err = f.ForEach(env, func(off int) error {
		want += vectorLogDensity(f, vt, env, off, &a)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := factorLogDensity(f, env, nil)
	if err != nil || !(math.Abs(got-want) <= 1e-10) {
		t.Errorf("log density of w: %v (%v), element by element %v", got, err, want)
	}
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	var ff *ffbsStep
	for _, s := range sched.Steps {
		if f, ok := s.(*ffbsStep); ok {
			ff = f
		}
	}
	T := z.Dims[0]
	logEmit := make([]float64, T*K)
	var lse []float64
	addLogitsEmissions(env, ff.logits, K, logEmit, &lse)
	zs := env.Values[z.ID]
	for tt := range T {
		for k := range K {
			saved := zs[tt]
			zs[tt] = float64(k + 1)
			env.Loop[f.Loops[0].Slot] = tt + 1
			want := vectorLogDensity(f, vt, env, tt, &a)
			zs[tt] = saved
			if !(math.Abs(logEmit[tt*K+k]-want) <= 1e-10) {
				t.Errorf("emission of state %d at t = %d: %v, want %v", k+1, tt+1, logEmit[tt*K+k], want)
			}
		}
	}
}

// TestSoftmaxHMMRunResumesExactly: a run of the softmax HMM is
// deterministic, and a run interrupted and resumed writes the files of an
// uninterrupted one (the latent logits are in the checkpoint, and the
// softmax-leaf update keeps no state between sweeps that the checkpoint
// lacks).
func TestSoftmaxHMMRunResumesExactly(t *testing.T) {
	m := compileSoftmaxHMM(t, 3, 4, 1, 2, 2, 4, 3, 1, 1, 4)
	checkDeterministicAndResumable(t, m)
}

// TestSoftmaxLeavesRefused: latent leaves read both as softmax logits and
// by a Gaussian likelihood are refused with an error naming both.
func TestSoftmaxLeavesRefused(t *testing.T) {
	src := `
dim T, K, V
data w : categorical(V)[T]
data y : real[K, V]
param z : categorical(K)[T]
param eta : real[K, V]
param pk : unit[K]
eta ~ PYDT(1, 0.5, 1, 1)
pk ~ Dirichlet(1)
z ~ Categorical(pk)
for t in 1:T {
  w[t] ~ Categorical(softmax(eta[z[t]]))
}
y ~ Normal(eta, 1)
`
	f, err := lang.Parse("both.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{"w": vec(1, 2), "y": dataMat(2, 2, func(i, j int) float64 { return 0 })},
		Set: map[string]float64{"K": 2, "V": 2}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewModel(g)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "softmax") {
		t.Errorf("got %v, want an ErrUnsupported naming the softmax reader", err)
	}
}

// TestGewekeSoftmaxHMM is the joint-distribution test of the composed HMM
// + PYDT + softmax sampler (ffbs(z) with the emissions from each state's
// log-softmax, gibbs(pi0) and gibbs(trans[k]), softmax-leaf(eta), the tree
// moves with eta as exactly observed leaves, the hyperparameters) at T = 6,
// K = 3, V = 3 with the Geweke tests' priors. Beside the tree's statistics
// and the states', it compares the logits' moments and the log mass of the
// first word under its state's softmax, which couples eta, z and w.
func TestGewekeSoftmaxHMM(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	const T, K, V = 6, 3, 3
	m := compileSoftmaxHMM(t, K, V, 1, 2, 3, 1, 2, 3)
	get := valuesOf(m)
	names := append(treeStatNames(m), "switches", "z[1]", "mean w", "w[1] = w[2]", "pi0[1]", "trans[1,1]",
		"eta[1,1]", "eta[1,1]^2", "(eta[1,1] - eta[2,1])^2", "log p(w[1] | eta, z[1])")
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		z, w, eta := get(env, "z"), get(env, "w"), get(env, "eta")
		sw, sum, same := hmmPathStats(z, w)
		k := int(z[0]) - 1
		row := eta[k*V : (k+1)*V]
		lp := row[int(w[0])-1] - stdlib.LogSoftmaxNorm(row)
		d := eta[0] - eta[V]
		return append(treeStats(m, env, tr), sw, z[0], sum/T, same, get(env, "pi0")[0], get(env, "trans")[0],
			eta[0], eta[0]*eta[0], d*d, lp)
	}
	gewekeRun(t, m, names, stats, m.SampleJoint, func(ch *Chain) { redrawOthers(t, ch) }, 16, 500, 5000)
}

// BenchmarkSoftmaxHMMBrownNews times a sweep of examples/hmm-pos.pydt on
// the Brown news category (T = 100,554 tokens, V = 6,279 word ids, K = 30
// states) after 5 sweeps from the prior: the whole sweep, the sweep with
// the log joint a run measures after it (Chain.Measure), and each step of
// the schedule alone. It needs examples/data/brown/news
// (scripts/fetch-brown.sh) and is skipped without it.
func BenchmarkSoftmaxHMMBrownNews(b *testing.B) {
	w, err := dataset.ReadFile("../examples/data/brown/news/words.csv")
	if err != nil {
		b.Skipf("no Brown news data (run scripts/fetch-brown.sh): %v", err)
	}
	src, err := os.ReadFile("../examples/hmm-pos.pydt")
	if err != nil {
		b.Fatal(err)
	}
	V := 0.0
	for _, x := range w.Data {
		V = max(V, x)
	}
	m := compileSource(b, "hmm-pos.pydt", src, map[string]*dataset.Matrix{"w": w}, map[string]float64{"K": 30, "V": V})
	sched, err := NewSchedule(m)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 2)
	if err != nil {
		b.Fatal(err)
	}
	for range 5 {
		if err := ch.Sweep(); err != nil {
			b.Fatal(err)
		}
	}
	// The machine may be shared: CPU seconds per sweep are reported
	// beside the wall time.
	cpu := func(b *testing.B, f func()) {
		c0 := cputime.Process().Seconds()
		f()
		b.ReportMetric((cputime.Process().Seconds()-c0)/float64(b.N), "cpu-s/op")
	}
	b.Run("sweep", func(b *testing.B) {
		cpu(b, func() {
			for range b.N {
				if err := ch.Sweep(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("sweep+measure", func(b *testing.B) {
		c0 := cputime.Process().Seconds()
		defer func() { b.ReportMetric((cputime.Process().Seconds()-c0)/float64(b.N), "cpu-s/op") }()
		for range b.N {
			if err := ch.Sweep(); err != nil {
				b.Fatal(err)
			}
			if _, err := ch.Measure(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, st := range sched.Steps {
		b.Run("step="+st.Name(), func(b *testing.B) {
			cpu(b, func() {
				for range b.N {
					if err := st.update(ch); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
