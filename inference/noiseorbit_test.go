package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/internal/densetest"
)

// noiseOrbitModel is the Normal noise model with the test priors; NOISE is
// replaced by the noise's prior and the leaf's sd.
const noiseOrbitModel = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
` + gewekePriors + `Z ~ PYDT(alpha, beta, c, 1 / prec)
NOISE
`

// noiseOrbitCase is one setting of TestNoiseOrbitInvariance.
type noiseOrbitCase struct {
	name, noise string // the noise's prior and the leaf, for NOISE
	th          string // the noise's variable
	// variance: the PYDT's variance is prec itself, not 1 / prec.
	variance bool
}

var noiseOrbitCases = []noiseOrbitCase{
	{"precision", "noise ~ Gamma(3, 3)\nX ~ Normal(Z, 1 / sqrt(noise))", "noise", false},
	{"small noise", "noise ~ Gamma(4, 0.4)\nX ~ Normal(Z, 1 / sqrt(noise))", "noise", false},
	{"sd", "sd ~ Gamma(4, 4)\nX ~ Normal(Z, sd)", "sd", false},
	{"inverse sd", "isd ~ Gamma(4, 4)\nX ~ Normal(Z, 1 / isd)", "isd", false},
	{"a variance", "noise ~ Gamma(3, 3)\nX ~ Normal(Z, 1 / sqrt(noise))", "noise", true},
}

var noiseOrbitStatNames = []string{"log prec", "log noise", "LCA time 1,2", "root time", "log prec·log noise"}

// runNoiseOrbitInvariance draws reps states from the joint distribution of
// c's model (data included), applies two moves to each, and returns the
// changes of noiseOrbitStatNames. For the first checks replicates of the
// exact move it checks the move against its definition: h = prec/prec',
// the noise variance v' = v − (h − 1)/prec, the root at t/h, and the log
// likelihood unchanged.
func runNoiseOrbitInvariance(t *testing.T, c noiseOrbitCase, mut orbitMutation, reps, checks int) [][]float64 {
	t.Helper()
	const n, d = 6, 3
	src := strings.Replace(noiseOrbitModel, "NOISE", c.noise, 1)
	if c.variance {
		src = strings.Replace(src, "1 / prec)", "prec)", 1)
	}
	m := compileSource(t, "noise.pydt", []byte(src),
		map[string]*dataset.Matrix{"X": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}}, nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := noiseOrbit(m, 0)
	if !ok {
		t.Fatalf("no orbit move:\n%s", sched.Explain())
	}
	step := u.(*noiseOrbitStep)
	if step.reciprocal == c.variance {
		t.Fatalf("the move takes prec as a precision: %v, want %v", step.reciprocal, !c.variance)
	}
	step.mutation = mut
	pv, _ := m.G.Lookup("prec")
	th, _ := m.G.Lookup(c.th)
	noiseVar := func(ch *Chain) float64 { return step.noiseVar(ch.get(th)) }
	stats := func(ch *Chain) []float64 {
		tr := ch.trees[0].Tree
		lp, ln := math.Log(ch.get(pv)), -math.Log(noiseVar(ch))
		return []float64{lp, ln, densetest.LCATime(tr, 0, 1).T(), tr.Time(tr.Root()).T(), lp * ln}
	}
	rng := rand.New(rand.NewPCG(81, 82))
	diffs := make([][]float64, len(noiseOrbitStatNames))
	var moved int
	for r := range reps {
		st, err := m.SampleJoint(rng)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := restoreChain(m, sched, st, rand.NewPCG(rng.Uint64(), rng.Uint64()), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.trees[0].lik.Recompute(); err != nil {
			t.Fatal(err)
		}
		before := stats(ch)
		ll0, prec0, v0 := ch.trees[0].lik.LogLik(), ch.get(pv), noiseVar(ch)
		root0 := ch.trees[0].Tree.Time(ch.trees[0].Tree.Root()).T()
		for k := range 2 {
			if err := step.update(ch); err != nil {
				t.Fatal(err)
			}
			if k > 0 || r >= checks || mut != orbitExact || ch.get(pv) == prec0 {
				continue
			}
			// σ² before the move, and h = σ²'/σ².
			s20, h := 1/prec0, prec0/ch.get(pv)
			if c.variance {
				s20, h = prec0, ch.get(pv)/prec0
			}
			tr := ch.trees[0].Tree
			if root := tr.Time(tr.Root()).T(); math.Abs(root*h-root0) > 1e-12 {
				t.Errorf("root time %v after the move, want %v/%v", root, root0, h)
			}
			if v, want := noiseVar(ch), v0-(h-1)*s20; math.Abs(v-want) > 1e-10*v0 {
				t.Errorf("noise variance %v after the move, want %v − (%v − 1)·%v = %v", v, v0, h, s20, want)
			}
			if ll := ch.trees[0].lik.LogLik(); !(math.Abs(ll-ll0) <= 1e-8*(1+math.Abs(ll0))) {
				t.Errorf("log likelihood %.12g after the move, %.12g before (h = %v)", ll, ll0, h)
			}
		}
		after := stats(ch)
		if after[0] != before[0] {
			moved++
		}
		for i := range before {
			diffs[i] = append(diffs[i], after[i]-before[i])
		}
	}
	if moved < reps*9/10 {
		t.Errorf("prec changed in %d of %d replicates", moved, reps)
	}
	return diffs
}

// TestNoiseOrbitInvariance checks that orbit(prec, noise, times) leaves
// the posterior of the Normal noise model invariant, exactly and in
// isolation: states drawn from the joint distribution (data included) are
// posterior states given their own data, so after two moves (10,000
// replicates per case) the statistics must keep their law (mean change
// within 4 standard errors of 0), with the noise written as a precision
// (noise sd ≈ 1 and ≈ 0.3), as an sd and as the sd's inverse (the three
// powers of θ's Jacobian, 2, ½ and 3/2). For the first 100 replicates the
// move is checked against its definition, the likelihood unchanged to
// 1e-8. The case "a variance" writes the PYDT's variance as prec itself
// (Jacobian δ; without it the case fails by 22 standard errors).
// TestNoiseOrbitMutations shows that the test detects a dropped
// Jacobian and unscaled times.
func TestNoiseOrbitInvariance(t *testing.T) {
	for _, c := range noiseOrbitCases {
		t.Run(c.name, func(t *testing.T) {
			checkMeanChanges(t, noiseOrbitStatNames, runNoiseOrbitInvariance(t, c, orbitExact, 10000, 100))
		})
	}
}

// TestNoiseOrbitMutations breaks the move and requires the statistics of
// TestNoiseOrbitInvariance to detect it (some mean change beyond 6
// standard errors, test priors, 10,000 replicates).
func TestNoiseOrbitMutations(t *testing.T) {
	for _, mut := range []struct {
		name string
		mut  orbitMutation
	}{
		{"noise Jacobian dropped", orbitNoVarJacobian},
		{"time Jacobian dropped", orbitNoTimeJacobian},
		{"times not scaled", orbitTimesFixed},
	} {
		t.Run(mut.name, func(t *testing.T) {
			diffs := runNoiseOrbitInvariance(t, noiseOrbitCases[0], mut.mut, 10000, 0)
			checkMutationDetected(t, noiseOrbitStatNames, diffs)
		})
	}
}

// TestNoiseOrbitOffered checks which models get the move: a noise read
// elsewhere, or a variance per dimension, gets none.
func TestNoiseOrbitOffered(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"precision", "noise ~ Gamma(3, 3)\nX ~ Normal(Z, 1 / sqrt(noise))", true},
		{"noise read twice", "noise ~ Gamma(3, 3)\nX ~ Normal(Z, 1 / sqrt(noise))\nW ~ Normal(0, 1 / sqrt(noise))", false},
		{"constant noise", "X ~ Normal(Z, 0.5)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(noiseOrbitModel, "NOISE", c.src, 1)
			data := map[string]*dataset.Matrix{"X": {Rows: 4, Cols: 2, Data: make([]float64, 8), Source: "x.csv"}}
			if strings.Contains(c.src, "W ~") {
				src = strings.Replace(src, "param Z", "data W : real\nparam Z", 1)
				data["W"] = &dataset.Matrix{Rows: 1, Cols: 1, Data: []float64{0.3}, Source: "w.csv"}
			}
			m := compileSource(t, "noise.pydt", []byte(src), data, nil)
			if _, got := noiseOrbit(m, 0); got != c.want {
				t.Errorf("noiseOrbit offered %v, want %v", got, c.want)
			}
		})
	}
}
