package inference

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
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
	const n, d = 4, 2
	m := compileSource(t, "studentt.pydt", []byte(studentTModel), map[string]*dataset.Matrix{"Y": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}}, nil)
	if m.Trees[0].Augmented() == nil || m.Trees[0].Threshold() != nil {
		t.Fatalf("leaf evidence %v", m.Trees[0].Kind())
	}
	// meanAux is the mean λ of the state whose statistics are taken next:
	// of the joint draw, or of the chain after its sweep (before redraw).
	var meanAux float64
	mean := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
		out := treeStats(m, env, tr)
		var sum, abs float64
		for _, v := range env.Values[m.Data.ID] {
			sum += v
			abs += math.Abs(v)
		}
		return append(out, sum, abs, meanAux)
	}
	sample := func(rng *rand.Rand) (*State, error) {
		st, err := m.SampleJoint(rng)
		if err != nil {
			return nil, err
		}
		aux := make([]float64, n*d)
		drawStudentT(st.Env.Values[m.Leaves.ID], aux, st.Env.Values[m.Data.ID], 0.5, 3, rng)
		meanAux = mean(aux)
		return st, nil
	}
	redraw := func(ch *Chain) {
		meanAux = mean(ch.trees[0].aux)
		redrawStudentT(t, ch)
	}
	names := append(treeStatNames(m), "sum of Y", "sum of |Y|", "mean λ")
	setup := gewekeSetup{priorSeed: [2]uint64{31, 32}, chainSeed: 33, firstStream: 0, chains: 8, burn: 500, iters: 4000}
	prior, chainMeans := gewekeMeans(t, m, setup, len(names), stats, sample, redraw)
	compareMeans(t, names, prior, chainMeans)
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
	if _, err := NewSchedule(m); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "s enters the StudentT likelihood") {
		t.Errorf("latent scale: %v", err)
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
