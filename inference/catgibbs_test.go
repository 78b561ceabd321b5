package inference

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ldaModel is latent Dirichlet allocation over flat token arrays (the
// document of each token, doc, is data read only as an index), with a
// Normal reader of the topics beside the Categorical words, and a PYDT
// apart that the engine needs.
const ldaModel = `
dim T, M, K, V
data w : categorical(V)[T]
data doc : categorical(M)[T]
data y : real[T]
param z : categorical(K)[T]
param theta : unit[M, K]
param phi : unit[K, V]
param mu : real[K]
param X : real[2, 1]
` + gewekePriors + `X ~ PYDT(alpha, beta, c, 1 / prec)
for k in 1:K {
  phi[k] ~ Dirichlet(0.7)
  mu[k] ~ Normal(0, 2)
}
for m in 1:M {
  theta[m] ~ Dirichlet(0.8)
}
for t in 1:T {
  z[t] ~ Categorical(theta[doc[t]])
  w[t] ~ Categorical(phi[z[t]])
  y[t] ~ Normal(mu[z[t]], 1)
}
`

// compileLDA compiles ldaModel with T tokens of M = 2 documents, K topics
// and V words.
func compileLDA(t testing.TB, K, V int, doc []float64) *Model {
	t.Helper()
	T := len(doc)
	return compileSource(t, "lda.pydt", []byte(ldaModel), map[string]*dataset.Matrix{
		"w":   dataMat(T, 1, func(i, _ int) float64 { return float64(i%V + 1) }),
		"doc": dataMat(T, 1, func(i, _ int) float64 { return doc[i] }),
		"y":   dataMat(T, 1, func(i, _ int) float64 { return 0.5 * float64(i) }),
	}, map[string]float64{"K": float64(K), "M": 2, "V": float64(V)})
}

// TestCatGibbsSchedule: the schedule finds the enumeration update for the
// topic assignments and the Dirichlet updates for rows read through them
// and through the data index, from capabilities.
func TestCatGibbsSchedule(t *testing.T) {
	m := compileLDA(t, 3, 4, []float64{1, 2, 1, 2, 2})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ex := sched.Explain()
	for _, want := range []string{"gibbs(z)", "Gibbs by enumeration", "gibbs(theta[m])", "gibbs(phi[k])", "w, y reading it"} {
		if !strings.Contains(ex, want) {
			t.Errorf("no %q in\n%s", want, ex)
		}
	}
	// Vectorised, with no readers: its prior, by enumeration.
	iid := compileSource(t, "iid.pydt", []byte("dim N, D\ndata X : real[N, D]\nX ~ PYDT(1, 0.2, 1, 1)\n"+
		"param p : unit[2]\nparam z : categorical(2)[N]\np ~ Dirichlet(1)\nz ~ Categorical(p)\n"),
		map[string]*dataset.Matrix{"X": dataMat(3, 1, func(i, _ int) float64 { return float64(i) })}, nil)
	sched, err = NewSchedule(iid)
	if err != nil {
		t.Fatal(err)
	}
	if ex := sched.Explain(); !strings.Contains(ex, "gibbs(z)") || !strings.Contains(ex, "gibbs(p)") {
		t.Errorf("schedule of z ~ Categorical(p):\n%s", ex)
	}
}

// catGibbsChain schedules m and returns its (last) enumeration step and a
// chain seeded (seed, stream); it fails t if there is no such step.
func catGibbsChain(t *testing.T, m *Model, seed, stream uint64) (*catGibbsStep, *Chain) {
	t.Helper()
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	var s *catGibbsStep
	for _, st := range sched.Steps {
		if c, ok := st.(*catGibbsStep); ok {
			s = c
		}
	}
	if s == nil {
		t.Fatalf("no enumeration step in\n%s", sched.Explain())
	}
	ch, err := NewChain(m, sched, seed, stream)
	if err != nil {
		t.Fatal(err)
	}
	return s, ch
}

// TestCatGibbsWeights checks the step's conditional log weights of each
// z[t] against the model written out by hand: log theta[doc[t], k] +
// log phi[k, w[t]] + log N(y[t]; mu[k], 1), up to a constant in k.
func TestCatGibbsWeights(t *testing.T) {
	doc := []float64{1, 2, 2, 1, 2, 1}
	const K, V = 3, 4
	m := compileLDA(t, K, V, doc)
	s, ch := catGibbsChain(t, m, 3, 4)
	get := func(name string) []float64 { v, _ := m.G.Lookup(name); return ch.st.Env.Values[v.ID] }
	for sweep := range 3 {
		if sweep > 0 {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
		}
		theta, phi, mu, w, y := get("theta"), get("phi"), get("mu"), get("w"), get("y")
		for off := range doc {
			sc := s.scratch(ch)
			s.weights(ch, sc, off)
			var want [K]float64
			for k := range K {
				d := int(doc[off]) - 1
				r := y[off] - mu[k]
				want[k] = math.Log(theta[d*K+k]) + math.Log(phi[k*V+int(w[off])-1]) - r*r/2 - 0.5*math.Log(2*math.Pi)
			}
			for k := range K {
				got := sc.lp[k] - sc.lp[0]
				exp := want[k] - want[0]
				if !(math.Abs(got-exp) <= 1e-9) {
					t.Errorf("sweep %d, z[%d] = %d: log weight %v relative to category 1, want %v", sweep, off+1, k+1, got, exp)
				}
			}
		}
	}
}

// TestGewekeCatGibbs is the joint-distribution test of the enumeration
// update of the topic assignments with the Dirichlet updates of theta
// (through the data index doc) and phi (through z), and the slice updates
// of mu read through z.
func TestGewekeCatGibbs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	doc := []float64{1, 2, 1, 1, 2}
	const K, V = 2, 3
	m := compileLDA(t, K, V, doc)
	get := valuesOf(m)
	// The last three couple z with what it explains: dropping the
	// readers' terms from the update moves phi[z, w] by 15 SE.
	names := []string{"z[1]", "z[5]", "z[1] = z[3]", "z[2] = z[5]", "mean w", "w[1] = w[2]", "mean y", "theta[1,1]", "theta[2,1]", "phi[1,1]", "phi[2,3]", "mu[1]",
		"mean phi[z, w]", "mean theta[doc, z]", "mean (y - mu[z])²"}
	stats := func(env *graph.Env, _ *pydt.Tree) []float64 {
		z, w, y := get(env, "z"), get(env, "w"), get(env, "y")
		th, ph, mu := get(env, "theta"), get(env, "phi"), get(env, "mu")
		var sw, sy, pzw, tdz, rzz float64
		for i := range z {
			sw += w[i]
			sy += y[i]
			k := int(z[i]) - 1
			pzw += ph[k*V+int(w[i])-1]
			tdz += th[(int(doc[i])-1)*K+k]
			r := y[i] - mu[k]
			rzz += r * r
		}
		n := float64(len(z))
		return []float64{z[0], z[4], indicator(z[0] == z[2]), indicator(z[1] == z[4]), sw / n, indicator(w[0] == w[1]), sy / n, th[0], th[K], ph[0], ph[V+2], mu[0],
			pzw / n, tdz / n, rzz / n}
	}
	redraw := func(ch *Chain) { redrawOthers(t, ch) }
	setup := gewekeSetup{priorSeed: [2]uint64{61, 62}, chainSeed: 63, firstStream: 600, chains: 16, burn: 500, iters: 6000}
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, m.SampleJoint, redraw)
	compareMeans(t, names, prior, chains)
}

// flatLDA is ldaModel without the PYDT: latent Dirichlet allocation alone.
const flatLDA = `
dim T, M, K, V
data w : categorical(V)[T]
data doc : categorical(M)[T]
param z : categorical(K)[T]
param theta : unit[M, K]
param phi : unit[K, V]
for k in 1:K {
  phi[k] ~ Dirichlet(0.7)
}
for m in 1:M {
  theta[m] ~ Dirichlet(0.8)
}
for t in 1:T {
  z[t] ~ Categorical(theta[doc[t]])
  w[t] ~ Categorical(phi[z[t]])
}
`

// TestModelWithoutTree: a model without a PYDT gives chains that sweep,
// and every entry point that needs a tree refuses it with ErrUnsupported
// instead of failing on a missing tree.
func TestModelWithoutTree(t *testing.T) {
	doc := []float64{1, 2, 1, 2, 2, 1}
	m := compileSource(t, "flat.pydt", []byte(flatLDA), map[string]*dataset.Matrix{
		"w":   dataMat(len(doc), 1, func(i, _ int) float64 { return float64(i%3 + 1) }),
		"doc": dataMat(len(doc), 1, func(i, _ int) float64 { return doc[i] }),
	}, map[string]float64{"K": 2, "M": 2, "V": 3})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(sched.Steps) != 3 {
		t.Errorf("schedule:\n%s", sched.Explain())
	}
	ch, err := NewChain(m, sched, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
	}
	zv, _ := m.G.Lookup("z")
	for _, z := range ch.Values(zv) {
		if z != 1 && z != 2 {
			t.Fatalf("z = %v", ch.Values(zv))
		}
	}
	dir := t.TempDir()
	env := ch.st.Env
	calls := map[string]func() error{
		"Run": func() error {
			_, err := Run(context.Background(), m, Config{Iters: 2, Out: filepath.Join(dir, "run")})
			return err
		},
		"Resume": func() error { _, err := Resume(context.Background(), m, dir, nil); return err },
		"Sample": func() error { return Sample(m, 2, 1, filepath.Join(dir, "sample")) },
		"PlanEM": func() error { _, err := PlanEM(m); return err },
		"RunEM": func() error {
			_, err := RunEM(context.Background(), m, EMConfig{Out: filepath.Join(dir, "em")})
			return err
		},
		"Score":           func() error { _, err := m.Score(ch.st); return err },
		"ScoreTreeFile":   func() error { _, err := m.ScoreTreeFile(filepath.Join(dir, "t.nwk"), 0); return err },
		"MatchTree":       func() error { return m.MatchTree(nil) },
		"ReadTree":        func() error { _, err := m.ReadTree(filepath.Join(dir, "t.nwk"), ""); return err },
		"Standardize":     func() error { _, err := m.Standardize(); return err },
		"StandardizeLike": func() error { return StandardizeLikeRun(m, dir) },
		"ReadCheckpoint":  func() error { _, err := ReadCheckpoint(dir, m); return err },
		"TreeParams":      func() error { _, err := m.TreeParams(env); return err },
		"Evidence":        func() error { return m.Evidence(env, func(int, int, float64, float64) {}) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			if err := call(); !errors.Is(err, ErrUnsupported) {
				t.Errorf("error %v, want ErrUnsupported", err)
			}
		})
	}
}

// topicsModel is examples/topics.pydt: LDA whose topics' log word weights
// are the leaves of a PYDT.
const topicsModel = `
dim T, M, K, V
data w : categorical(V)[T]
data doc : categorical(M)[T]
param z : categorical(K)[T]
param theta : unit[M, K]
param eta : real[K, V]
` + gewekePriors + `eta ~ PYDT(alpha, beta, c, 1 / prec)
for m in 1:M {
  theta[m] ~ Dirichlet(0.8)
}
for t in 1:T {
  z[t] ~ Categorical(theta[doc[t]])
  w[t] ~ Categorical(softmax(eta[z[t]]))
}
`

// TestCatGibbsLogitWeights checks the enumeration's log weights when the
// words' logits are the PYDT's leaves (stdlib.CategoryLogits) against the
// model written out by hand: log theta[doc[t], k] + eta[k, w[t]] −
// log Σ_v exp(eta[k, v]).
func TestCatGibbsLogitWeights(t *testing.T) {
	doc := []float64{1, 2, 2, 1, 2}
	const K, V = 3, 4
	m := compileSource(t, "topics.pydt", []byte(topicsModel), map[string]*dataset.Matrix{
		"w":   dataMat(len(doc), 1, func(i, _ int) float64 { return float64(i%V + 1) }),
		"doc": dataMat(len(doc), 1, func(i, _ int) float64 { return doc[i] }),
	}, map[string]float64{"K": K, "M": 2, "V": V})
	s, ch := catGibbsChain(t, m, 5, 6)
	if explain := ch.sched.Explain(); !strings.Contains(explain, "softmax-leaf(eta)") {
		t.Fatalf("no softmax-leaf step in\n%s", explain)
	}
	get := func(name string) []float64 { v, _ := m.G.Lookup(name); return ch.st.Env.Values[v.ID] }
	for sweep := range 3 {
		if sweep > 0 {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
		}
		theta, eta, w := get("theta"), get("eta"), get("w")
		for off := range doc {
			sc := s.scratch(ch)
			s.weights(ch, sc, off)
			var want [K]float64
			for k := range K {
				var norm float64
				for v := range V {
					norm += math.Exp(eta[k*V+v])
				}
				want[k] = math.Log(theta[(int(doc[off])-1)*K+k]) + eta[k*V+int(w[off])-1] - math.Log(norm)
			}
			for k := range K {
				if got, exp := sc.lp[k]-sc.lp[0], want[k]-want[0]; !(math.Abs(got-exp) <= 1e-9) {
					t.Errorf("sweep %d, z[%d] = %d: log weight %v relative to category 1, want %v", sweep, off+1, k+1, got, exp)
				}
			}
		}
	}
}

// TestGewekeTopics is the joint-distribution test of examples/topics.pydt
// at tiny sizes: gibbs(z) with logit emissions, gibbs(theta[m]) through
// the document index, softmax-leaf(eta), the tree moves and the
// hyperparameters together.
func TestGewekeTopics(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	doc := []float64{1, 2, 1, 2, 2}
	const K, V = 2, 3
	m := compileSource(t, "topics.pydt", []byte(topicsModel), map[string]*dataset.Matrix{
		"w":   dataMat(len(doc), 1, func(i, _ int) float64 { return float64(i%V + 1) }),
		"doc": dataMat(len(doc), 1, func(i, _ int) float64 { return doc[i] }),
	}, map[string]float64{"K": K, "M": 2, "V": V})
	get := valuesOf(m)
	names := append(treeStatNames(m), "z[1]", "z[1] = z[3]", "mean w", "w[1] = w[2]", "theta[1,1]", "eta[1,1]", "eta[1,1]^2",
		"mean log p(w | eta, z)", "mean theta[doc, z]")
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		z, w, eta, th := get(env, "z"), get(env, "w"), get(env, "eta"), get(env, "theta")
		var sw, lp, tdz float64
		for i := range z {
			sw += w[i]
			k := int(z[i]) - 1
			row := eta[k*V : (k+1)*V]
			lp += row[int(w[i])-1] - stdlib.LogSoftmaxNorm(row)
			tdz += th[(int(doc[i])-1)*K+k]
		}
		n := float64(len(z))
		return append(treeStats(m, env, tr), z[0], indicator(z[0] == z[2]), sw/n, indicator(w[0] == w[1]), th[0], eta[0], eta[0]*eta[0], lp/n, tdz/n)
	}
	gewekeRun(t, m, names, stats, m.SampleJoint, func(ch *Chain) { redrawOthers(t, ch) }, 16, 500, 4000)
}

// TestCatGibbsProbsAndLogitsOfOneVar: one variable read through z both as
// probabilities (Categorical(phi[z[t]])) and as logits
// (Categorical(softmax(phi[z[t]]))) gets the two readers' log weights, each
// from its own cache of the rows (log phi and log softmax(phi)), against
// the model written out by hand.
func TestCatGibbsProbsAndLogitsOfOneVar(t *testing.T) {
	const src = `
dim N, D, T, K, V
data X : real[N, D]
X ~ PYDT(1, 0.5, 1, 1)
data w : categorical(V)[T]
data u : categorical(V)[T]
param z : categorical(K)[T]
param p : unit[K]
data phi : unit[K, V]
p ~ Dirichlet(1)
for k in 1:K {
  phi[k] ~ Dirichlet(1)
}
for t in 1:T {
  z[t] ~ Categorical(p)
  w[t] ~ Categorical(phi[z[t]])
  u[t] ~ Categorical(softmax(phi[z[t]]))
}
`
	const T, K, V = 4, 3, 3
	m := compileSource(t, "both.pydt", []byte(src), map[string]*dataset.Matrix{
		"X": dataMat(3, 1, func(i, _ int) float64 { return float64(i) }),
		"w": dataMat(T, 1, func(i, _ int) float64 { return float64(i%V + 1) }),
		"u": dataMat(T, 1, func(i, _ int) float64 { return float64((i+1)%V + 1) }),
		"phi": dataMat(K, V, func(i, j int) float64 {
			return []float64{0.2, 0.5, 0.3, 0.6, 0.1, 0.3, 0.25, 0.25, 0.5}[i*V+j]
		}),
	}, map[string]float64{"K": K, "V": V})
	s, ch := catGibbsChain(t, m, 7, 8)
	get := func(name string) []float64 { v, _ := m.G.Lookup(name); return ch.st.Env.Values[v.ID] }
	p, phi, w, u := get("p"), get("phi"), get("w"), get("u")
	sc := s.scratch(ch)
	for off := range T {
		s.weights(ch, sc, off)
		var want [K]float64
		for k := range K {
			var norm float64
			for v := range V {
				norm += math.Exp(phi[k*V+v])
			}
			want[k] = math.Log(p[k]) + math.Log(phi[k*V+int(w[off])-1]) + phi[k*V+int(u[off])-1] - math.Log(norm)
		}
		for k := range K {
			if got, exp := sc.lp[k]-sc.lp[0], want[k]-want[0]; !(math.Abs(got-exp) <= 1e-9) {
				t.Errorf("z[%d] = %d: log weight %v relative to category 1, want %v", off+1, k+1, got, exp)
			}
		}
	}
}
