package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// negAlphaModel lets alpha go below -2 beta: its prior restricted to
// alpha >= -2 beta is the model's.
const negAlphaModel = `
dim N, D
data X : real[N, D]
alpha ~ Normal(0, 1)
beta ~ Beta(1, 1)
c ~ Gamma(2, 2)
X ~ PYDT(alpha, beta, c, 1)
`

// TestStartRespectsAlphaBeta starts chains of a model whose priors allow
// alpha < -2 beta, alone and with alpha clamped to values that need a
// large beta: every start must succeed and satisfy the constraint.
func TestStartRespectsAlphaBeta(t *testing.T) {
	for _, c := range []struct {
		name string
		sets map[string]float64
	}{
		{"free", nil},
		{"alpha=-1.5", map[string]float64{"alpha": -1.5}},
		{"alpha=-1.99", map[string]float64{"alpha": -1.99}},
		{"beta=0.1", map[string]float64{"beta": 0.1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := compileWithData(t, negAlphaModel, smallData, c.sets)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			alpha, _ := m.G.Lookup("alpha")
			beta, _ := m.G.Lookup("beta")
			for seed := range uint64(40) {
				ch, err := NewChain(m, sched, seed, seedStream(0))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if a, b := ch.get(alpha), ch.get(beta); a < -2*b {
					t.Fatalf("seed %d: initial alpha = %v < -2 beta = %v", seed, a, -2*b)
				}
				if v, ok := c.sets["alpha"]; ok && ch.get(alpha) != v {
					t.Fatalf("seed %d: clamped alpha moved to %v", seed, ch.get(alpha))
				}
			}
		})
	}
}

// TestImpossibleFixedAlphaBeta refuses a fixed alpha that no draw of beta
// can make valid, with a message naming it: --set values when the model is
// compiled (so that check refuses them too), and an alpha fixed through a
// deterministic definition when the chain starts.
func TestImpossibleFixedAlphaBeta(t *testing.T) {
	data := &dataset.Matrix{Rows: len(smallData), Cols: len(smallData[0]), Source: "x.csv"}
	for _, r := range smallData {
		data.Data = append(data.Data, r...)
	}
	for _, c := range []struct {
		sets map[string]float64
		want string
	}{
		{map[string]float64{"alpha": -2}, "alpha = -2 is fixed, but no beta in [0, 1) satisfies alpha >= -2 beta"},
		{map[string]float64{"alpha": -3.5}, "a fixed alpha must be finite and greater than -2"},
	} {
		f, err := lang.Parse("test.pydt", []byte(negAlphaModel))
		if err != nil {
			t.Fatal(err)
		}
		_, err = graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{"X": data}, Set: c.sets})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.sets, err, c.want)
		}
	}
	const derived = `
dim N, D
data X : real[N, D]
a = 0 - 2
beta ~ Beta(1, 1)
X ~ PYDT(a, beta, 1, 1)
`
	m := compileWithData(t, derived, smallData, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewChain(m, sched, 1, 1)
	want := "alpha = -2 is fixed (a constant or --set), and no beta in [0, 1) satisfies alpha >= -2 beta"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a = 0 - 2: %v, want an error containing %q", err, want)
	}
}

// TestRejectionGivesUpClearly uses a prior with almost no valid mass.
func TestRejectionGivesUpClearly(t *testing.T) {
	const model = `
dim N, D
data X : real[N, D]
alpha ~ Normal(-30, 1)
beta ~ Beta(1, 1)
X ~ PYDT(alpha, beta, 1, 1)
`
	m := compileWithData(t, model, smallData, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewChain(m, sched, 1, 1)
	if err == nil || !strings.Contains(err.Error(), "no draw of the prior in 10000 gave valid PYDT parameters") {
		t.Errorf("got %v", err)
	}
}

// truncatedMoments are the closed-form means of alpha and beta, and
// P(alpha < 0), under alpha ~ Normal(0, 1), beta ~ Uniform(0, 1)
// restricted to alpha >= -2 beta: p(alpha) ∝ φ(alpha) P(beta >= -alpha/2)
// and p(beta) ∝ P(alpha >= -2 beta) = Φ(2 beta).
func truncatedMoments() (alpha, beta, negative float64) {
	std := distuv.UnitNormal
	w := func(a float64) float64 { return std.Prob(a) * math.Min(1, math.Max(0, 1+a/2)) }
	z := quad.Fixed(w, -2, 0, 400, nil, 0) + quad.Fixed(w, 0, math.Inf(1), 400, nil, 0)
	neg := quad.Fixed(w, -2, 0, 400, nil, 0)
	mean := quad.Fixed(func(a float64) float64 { return a * w(a) }, -2, 0, 400, nil, 0) +
		quad.Fixed(func(a float64) float64 { return a * w(a) }, 0, math.Inf(1), 400, nil, 0)
	zb := quad.Fixed(func(b float64) float64 { return std.CDF(2 * b) }, 0, 1, 400, nil, 0)
	mb := quad.Fixed(func(b float64) float64 { return b * std.CDF(2*b) }, 0, 1, 400, nil, 0)
	return mean / z, mb / zb, neg / z
}

// TestPriorDrawsAreTruncated checks SamplePrior's rejection against the
// closed form: independent draws, so plain standard errors.
func TestPriorDrawsAreTruncated(t *testing.T) {
	m := compileWithData(t, negAlphaModel, smallData, nil)
	wantA, wantB, wantNeg := truncatedMoments()
	alpha, _ := m.G.Lookup("alpha")
	beta, _ := m.G.Lookup("beta")
	rng := rand.New(rand.NewPCG(7, 1))
	var as, bs, neg []float64
	for range 20000 {
		st, err := m.SamplePrior(rng)
		if err != nil {
			t.Fatal(err)
		}
		a, b := st.Env.Values[alpha.ID][0], st.Env.Values[beta.ID][0]
		as, bs = append(as, a), append(bs, b)
		neg = append(neg, b2f(a < 0))
	}
	for _, c := range []struct {
		name string
		x    []float64
		want float64
	}{{"alpha", as, wantA}, {"beta", bs, wantB}, {"P(alpha < 0)", neg, wantNeg}} {
		got, se := meanSE(c.x)
		if !(math.Abs(got-c.want) <= 4*se) {
			t.Errorf("%s: prior draws give %.4f ± %.4f, closed form %.4f", c.name, got, se, c.want)
		}
	}
}

// TestSamplerKeepsAlphaBetaConstraint runs the engine on a model whose data
// are all missing, so that its target is the restricted prior: the slice
// updates of alpha and beta must never leave alpha >= -2 beta and must
// reproduce the closed-form means. Proposals outside get density -Inf.
func TestSamplerKeepsAlphaBetaConstraint(t *testing.T) {
	nan := math.NaN()
	m := compileWithData(t, negAlphaModel, [][]float64{{nan}, {nan}, {nan}}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	alpha, _ := m.G.Lookup("alpha")
	beta, _ := m.G.Lookup("beta")
	steps := map[string]*sliceStep{}
	for _, s := range sched.Steps {
		if ss, ok := s.(*sliceStep); ok {
			steps[ss.v.Name] = ss
		}
	}
	if steps["alpha"] == nil || steps["beta"] == nil {
		t.Fatalf("no slice updates of alpha and beta:\n%s", sched.Explain())
	}
	wantA, wantB, wantNeg := truncatedMoments()
	var as, bs, neg []float64
	for k := range 4 {
		ch, err := NewChain(m, sched, 9, seedStream(k))
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			// Proposals that violate the constraint have density -Inf;
			// valid ones do not.
			ch.set(beta, 0.6)
			ch.set(alpha, -1)
			for _, c := range []struct {
				s    *sliceStep
				x    float64
				want bool
			}{{steps["alpha"], -1.3, true}, {steps["alpha"], -1.1, false}, {steps["beta"], 0.4, true}, {steps["beta"], 0.55, false}} {
				if steps["alpha"].tree[0].alphaBeta {
					ch.trees[0].abStats.Reset(ch.trees[0].Tree, ch.trees[0].moves.Divergence())
				}
				lp := ch.sliceTarget(c.s, c.x)
				if math.IsInf(lp, -1) != c.want {
					t.Errorf("%s = %v with the other at its value: log density %v", c.s.v.Name, c.x, lp)
				}
				ch.set(beta, 0.6)
				ch.set(alpha, -1)
			}
			if err := ch.syncPrior(); err != nil {
				t.Fatal(err)
			}
		}
		for it := range 6000 {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
			a, b := ch.get(alpha), ch.get(beta)
			if a < -2*b {
				t.Fatalf("chain %d, sweep %d: alpha = %v < -2 beta = %v", k, it, a, -2*b)
			}
			if it >= 500 {
				as, bs = append(as, a), append(bs, b)
				neg = append(neg, b2f(a < 0))
			}
		}
	}
	for _, c := range []struct {
		name string
		x    []float64
		want float64
	}{{"alpha", as, wantA}, {"beta", bs, wantB}, {"P(alpha < 0)", neg, wantNeg}} {
		got, _ := meanSE(c.x)
		if se := batchSE(c.x); !(math.Abs(got-c.want) <= 4*se) {
			t.Errorf("%s: posterior mean %.4f ± %.4f, closed form %.4f", c.name, got, se, c.want)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
