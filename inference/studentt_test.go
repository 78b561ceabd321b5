package inference

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// studentTModel has a Student-t likelihood at the PYDT's leaves, with the
// priors of TestGeweke.
const studentTModel = `
dim N, D
data Y : real[N, D]
param Z : real[N, D]
` + gewekePriors + `Z ~ PYDT(alpha, beta, c, 1 / prec)
Y ~ StudentT(Z, 0.5, 3)
`

// drawStudentT draws λ ~ Gamma(ν/2, rate ν/2) into aux and
// y = z + s/√λ · ε into y, from the scale-mixture definition of Student's
// t (not the type's DrawAux or Rand).
func drawStudentT(z, aux, y []float64, s, nu float64, rng *rand.Rand) {
	for k := range y {
		aux[k] = distuv.Gamma{Alpha: nu / 2, Beta: nu / 2, Src: rng}.Rand()
		y[k] = z[k] + s/math.Sqrt(aux[k])*rng.NormFloat64()
	}
}

// redrawStudentT draws a Student-t model's (λ, Y) given the tree and the
// variance: Z at the leaves from the diffusion, then (λ, Y) given Z.
func redrawStudentT(t testing.TB, ch *Chain) {
	locs := sampleLeafLocations(t, ch)
	f := ch.m.Trees[0].Leaf
	s, err := graph.Eval(f.Args[1], ch.st.Env)
	if err != nil {
		t.Fatal(err)
	}
	nu, err := graph.Eval(f.Args[2], ch.st.Env)
	if err != nil {
		t.Fatal(err)
	}
	drawStudentT(locs[:ch.m.N*ch.m.D], ch.trees[0].aux, ch.st.Env.Values[ch.m.Data.ID], s, nu, ch.rng)
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// TestGewekeStudentT is the joint-distribution test (see TestGeweke) of
// the sampler with a Student-t likelihood: the augmentation by each
// value's precision scale λ (stdlib.StudentT's AugmentedLeaf) must leave
// the joint law of tree, hyperparameters, λ and data intact. λ is part of
// the chain's state: its mean after each sweep is compared with the mean
// of draws from its prior (with a misplaced shape (ν+1)/2 → ν/2 in
// DrawAux the test fails at z ≈ -100).
func TestGewekeStudentT(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		setup     gewekeSetup
	}{
		{"constant scale and nu", studentTModel, gewekeSetup{priorSeed: [2]uint64{31, 32}, chainSeed: 33, firstStream: 0, chains: 8, burn: 500, iters: 4000}},
		// The scale and ν latent: slice sampled on their priors, the
		// marginal likelihood of the evidence (the scale) and the
		// auxiliaries' Gamma(ν/2, ν/2) density (ν), through
		// stdlib.AuxLogProber.
		{"latent scale and nu", studentTLatent, gewekeSetup{priorSeed: [2]uint64{41, 42}, chainSeed: 43, firstStream: 0, chains: 8, burn: 500, iters: 4000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.src == studentTLatent {
				t.Skip("long")
			}
			gewekeStudentT(t, tc.src, tc.setup)
		})
	}
}

// studentTLatent is studentTModel with the scale and ν latent.
const studentTLatent = `
dim N, D
data Y : real[N, D]
param Z : real[N, D]
` + gewekePriors + `s ~ Gamma(8, 4)
nu ~ Gamma(4, 1)
Z ~ PYDT(alpha, beta, c, 1 / prec)
Y ~ StudentT(Z, s, nu)
`

func gewekeStudentT(t *testing.T, src string, setup gewekeSetup) {
	const n, d = 4, 2
	m := compileSource(t, "studentt.pydt", []byte(src), map[string]*dataset.Matrix{"Y": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}}, nil)
	if m.Trees[0].Augmented() == nil || m.Trees[0].Threshold() != nil {
		t.Fatalf("leaf evidence %v", m.Trees[0].Kind())
	}
	// meanAux and meanAux2 are the means of λ and λ² of the state whose
	// statistics are taken next: of the joint draw, or of the chain after
	// its sweep (before redraw). ν·mean λ² (mean 2 + E ν) tests the joint
	// law of ν and λ, which the marginal of either cannot: E λ = 1 for
	// every ν.
	var meanAux, meanAux2 float64
	mean := func(x []float64) (m1, m2 float64) {
		for _, v := range x {
			m1 += v
			m2 += v * v
		}
		return m1 / float64(len(x)), m2 / float64(len(x))
	}
	leaf := m.Trees[0].Leaf
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		out := treeStats(m, env, tr)
		// Bounded statistics of Y: its moments need not exist for a
		// small ν.
		var sum, abs float64
		for _, v := range env.Values[m.Data.ID] {
			sum += math.Atan(v)
			abs += math.Atan(math.Abs(v))
		}
		nu, err := graph.Eval(leaf.Args[2], env)
		if err != nil {
			t.Fatal(err)
		}
		return append(out, sum, abs, meanAux, nu*meanAux2, math.Log(nu)*abs)
	}
	sample := func(rng *rand.Rand) (*State, error) {
		st, err := m.SampleJoint(rng)
		if err != nil {
			return nil, err
		}
		s, err := graph.Eval(leaf.Args[1], st.Env)
		if err != nil {
			return nil, err
		}
		nu, err := graph.Eval(leaf.Args[2], st.Env)
		if err != nil {
			return nil, err
		}
		aux := make([]float64, n*d)
		drawStudentT(st.Env.Values[m.Leaves.ID], aux, st.Env.Values[m.Data.ID], s, nu, rng)
		meanAux, meanAux2 = mean(aux)
		return st, nil
	}
	redraw := func(ch *Chain) {
		meanAux, meanAux2 = mean(ch.trees[0].aux)
		redrawStudentT(t, ch)
	}
	names := append(treeStatNames(m), "sum of atan Y", "sum of atan |Y|", "mean λ", "ν·mean λ²", "log ν·atan |Y|")
	prior, chains := gewekeMeans(t, m, setup, len(names), stats, sample, redraw)
	compareMeans(t, names, prior, chains)
}

// TestStudentTSchedule checks what the engine makes of a Student-t
// likelihood from its capabilities alone: an augmentation step, none of
// the moves that need a stdlib.ThresholdLeaf, no closed-form evidence (an
// error that names the capability), and a clear refusal of a latent
// parameter of the likelihood.
func TestStudentTSchedule(t *testing.T) {
	y := &dataset.Matrix{Rows: 3, Cols: 2, Data: []float64{0.1, 0.2, -1, 3, math.NaN(), 0.5}, Source: "y.csv"}
	m := compileSource(t, "studentt.pydt", []byte(studentTModel), map[string]*dataset.Matrix{"Y": y}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	text := sched.Explain()
	for _, want := range []string{"studentt-aux", "StudentT likelihood of Y"} {
		if !strings.Contains(text, want) {
			t.Errorf("schedule lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{", u)", ", Z)"} {
		if strings.Contains(text, not) {
			t.Errorf("schedule has a threshold move %q:\n%s", not, text)
		}
	}
	err = m.Evidence(m.NewState().Env, func(int, int, float64, float64) {})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "StudentT likelihood of Y has no closed-form marginal likelihood") || !strings.Contains(err.Error(), "AugmentedLeaf") {
		t.Errorf("Evidence: %v", err)
	}
	if _, err := m.Score(m.NewState()); err == nil {
		t.Error("Score of a Student-t model gave no error")
	}

	latent := strings.Replace(studentTModel, "Y ~ StudentT(Z, 0.5, 3)", "s ~ Gamma(2, 2)\nY ~ StudentT(Z, s, 3)", 1)
	m = compileSource(t, "studentt.pydt", []byte(latent), map[string]*dataset.Matrix{"Y": y}, nil)
	sched, err = NewSchedule(m)
	if err != nil {
		t.Fatalf("latent scale: %v", err)
	}
	if text := sched.Explain(); !strings.Contains(text, "slice(s)") || !strings.Contains(text, "the density of the StudentT auxiliaries of Y given them") {
		t.Errorf("latent scale: the schedule does not serve s on the auxiliaries' density:\n%s", text)
	}
}

// TestStudentTRunResumes runs a Student-t model with missing values
// (imputed through the type's Rand) twice and interrupted: the auxiliary
// variables are checkpointed by name, so the outputs agree byte for byte.
func TestStudentTRunResumes(t *testing.T) {
	nan := math.NaN()
	y := &dataset.Matrix{Rows: 5, Cols: 2, Data: []float64{0.1, 0.2, -1, 3, nan, 0.5, 2, 2.2, 0.3, nan}, Source: "y.csv"}
	m := compileSource(t, "studentt.pydt", []byte(studentTModel), map[string]*dataset.Matrix{"Y": y}, nil)
	checkDeterministicAndResumable(t, m)
}

// TestStudentTNuConditional checks the update of a latent ν against its
// exact conditional given the auxiliaries: ν enters nothing but the
// precision scales' density, so p(ν | λ, ...) ∝ p(ν) Π Gamma(λ_k; ν/2, ν/2),
// whose mean is found by quadrature. The chain of slice(nu) updates alone
// (the tree, Y and λ fixed) must have that mean within 4 batch-means
// standard errors; without the auxiliaries' density in its target
// (stdlib.AuxLogProber) it would sample ν's prior.
func TestStudentTNuConditional(t *testing.T) {
	const n, d = 4, 2
	y := &dataset.Matrix{Rows: n, Cols: d, Data: []float64{0.3, -1.2, 2.5, 0.1, -0.4, 7, 0.9, -2}, Source: "y.csv"}
	m := compileSource(t, "studentt.pydt", []byte(studentTLatent), map[string]*dataset.Matrix{"Y": y}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	var step Updater
	for _, s := range sched.Steps {
		if s.Name() == "slice(nu)" {
			step = s
		}
	}
	if step == nil {
		t.Fatalf("no slice(nu) in\n%s", sched.Explain())
	}
	ch, err := NewChain(m, sched, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	aux := ch.trees[0].aux
	copy(aux, []float64{0.2, 1.5, 0.05, 2.2, 0.9, 0.01, 1.1, 0.4})
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
	// The exact conditional: prior Gamma(4, 1) times the λs' densities.
	logPost := func(nu float64) float64 {
		lp := distuv.Gamma{Alpha: 4, Beta: 1}.LogProb(nu)
		for _, l := range aux {
			lp += distuv.Gamma{Alpha: nu / 2, Beta: nu / 2}.LogProb(l)
		}
		return lp
	}
	top := logPost(2)
	z := quad.Fixed(func(x float64) float64 { return math.Exp(logPost(x) - top) }, 0, 60, 4000, nil, 0)
	want := quad.Fixed(func(x float64) float64 { return x * math.Exp(logPost(x)-top) }, 0, 60, 4000, nil, 0) / z
	priorMean := 4.0
	nu, ok := m.G.Lookup("nu")
	if !ok {
		t.Fatal("no nu")
	}
	const draws = 20000
	xs := make([]float64, draws)
	for i := range xs {
		if err := step.update(ch); err != nil {
			t.Fatal(err)
		}
		xs[i] = ch.get(nu)
	}
	got, _ := meanSE(xs)
	se := batchSE(xs)
	t.Logf("ν: chain mean %.4f ± %.4f, exact conditional mean %.4f (prior mean %.1f)", got, se, want, priorMean)
	if !(math.Abs(got-want) <= 4*se) {
		t.Errorf("ν's chain mean %.4f differs from its exact conditional mean %.4f by more than 4 standard errors (%.4f)", got, want, se)
	}
	if math.Abs(want-priorMean) < 20*se {
		t.Fatalf("the test cannot tell the conditional (mean %.4f) from the prior (mean %.1f)", want, priorMean)
	}
}

// plainT is StudentT as an augmented likelihood without
// stdlib.AuxLogProber: the engine cannot update its parameters.
type plainT struct{ t stdlib.StudentT }

func (plainT) Name() string                    { return "PlainT" }
func (plainT) Doc() string                     { return "StudentT without AuxLogProber (a test type)" }
func (p plainT) Params() []stdlib.Param        { return p.t.Params() }
func (p plainT) Support() stdlib.Support       { return p.t.Support() }
func (p plainT) CheckParams(q []float64) error { return p.t.CheckParams(q) }
func (p plainT) LogProb(y float64, q []float64) float64 {
	return p.t.LogProb(y, q)
}
func (p plainT) Rand(rng *rand.Rand, q []float64) float64 { return p.t.Rand(rng, q) }
func (p plainT) DrawAux(rng *rand.Rand, y, z float64, q []float64) float64 {
	return p.t.DrawAux(rng, y, z, q)
}
func (p plainT) AuxEvidence(y, u float64, q []float64) (mean, prec float64) {
	return p.t.AuxEvidence(y, u, q)
}

// TestAugmentedParamRefused checks that a latent parameter of an
// augmented likelihood whose type does not offer stdlib.AuxLogProber is
// refused by name when the schedule is built, never left frozen.
func TestAugmentedParamRefused(t *testing.T) {
	lib := stdlib.Default()
	if err := lib.Register(plainT{}); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(studentTLatent, "Y ~ StudentT(Z, s, nu)", "Y ~ PlainT(Z, s, 3)", 1)
	src = strings.Replace(src, "nu ~ Gamma(4, 1)\n", "", 1)
	f, err := lang.Parse("plain.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	y := &dataset.Matrix{Rows: 3, Cols: 2, Data: make([]float64, 6), Source: "y.csv"}
	g, err := graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{"Y": y}, Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	if m.Trees[0].Augmented() == nil {
		t.Fatal("PlainT is not bound as an augmented likelihood")
	}
	_, err = NewSchedule(m)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "s enters the PlainT likelihood") || !strings.Contains(err.Error(), "AuxLogProber") {
		t.Errorf("NewSchedule: %v", err)
	}
}
