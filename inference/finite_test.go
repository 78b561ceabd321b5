package inference

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// compileData compiles src with the matrix x bound to X.
func compileData(t testing.TB, src string, x *dataset.Matrix, sets map[string]float64) *Model {
	t.Helper()
	return compileSource(t, "test.pydt", []byte(src), map[string]*dataset.Matrix{"X": x}, sets)
}

// paperModel is examples/gaussian.pydt: the paper's model with its
// hyperpriors.
const paperModel = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, c, 1 / prec)
`

// irisLike returns a 150×4 standardized-looking data set of three
// clusters of 50 rows (like the iris data) whose row 2 repeats row 1.
func irisLike(seed uint64) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(seed, 7))
	centres := [][]float64{{-1, 1, -1.3, -1.2}, {0.1, -0.6, 0.3, 0.2}, {0.9, -0.2, 1, 1}}
	x := &dataset.Matrix{Rows: 150, Cols: 4, Data: make([]float64, 600), Source: "iris-like.csv"}
	for i := range 150 {
		for d := range 4 {
			x.Data[i*4+d] = centres[i/50][d] + 0.4*rng.NormFloat64()
		}
	}
	copy(x.Data[4:8], x.Data[0:4])
	return x
}

// tinyData returns n rows of D = 2 columns drawn from N(0, sd²).
func tinyData(seed uint64, n int, sd float64) *dataset.Matrix {
	rng := rand.New(rand.NewPCG(seed, 8))
	x := &dataset.Matrix{Rows: n, Cols: 2, Data: make([]float64, 2*n), Source: "tiny.csv"}
	for i := range x.Data {
		x.Data[i] = sd * rng.NormFloat64()
	}
	return x
}

// TestNoNonFiniteState is the regression test of issue 7's reports: with
// two identical rows under the noise-free model, and with data on the
// scale 1e-100, the chains used to accept states whose log density was NaN
// (every later log_joint NaN, every acceptance rate 0) and finish with exit
// status 0. Every step must refuse such states: every sweep ends with a
// finite log joint density and the tree keeps moving.
func TestNoNonFiniteState(t *testing.T) {
	cases := []struct {
		name   string
		x      *dataset.Matrix
		sweeps int
	}{
		{"duplicated rows", irisLike(1), 150},
		{"data at 1e-100", tinyData(2, 20, 1e-100), 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := compileData(t, paperModel, tc.x, nil)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			for k := range 2 {
				ch, err := NewChain(m, sched, 1, seedStream(k))
				if err != nil {
					t.Fatal(err)
				}
				for it := 1; it <= tc.sweeps; it++ {
					if err := ch.Sweep(); err != nil {
						t.Fatalf("chain %d, sweep %d: %v", k+1, it, err)
					}
					p, err := ch.Measure(m.Scalars())
					if err != nil {
						t.Fatal(err)
					}
					if math.IsNaN(p.LogJoint) || math.IsInf(p.LogJoint, 0) || math.IsNaN(p.LogLik) || math.IsInf(p.LogLik, 0) {
						t.Fatalf("chain %d, sweep %d: log_joint %v, log_lik %v", k+1, it, p.LogJoint, p.LogLik)
					}
				}
				if s := ch.trees[0].moves.Stats; s.Subtree.Accepted+s.Time.Accepted+s.Position.Accepted == 0 {
					t.Errorf("chain %d: the tree accepted no move in %d sweeps", k+1, tc.sweeps)
				}
			}
		})
	}
}

// TestNotFiniteError checks that a chain whose state is not finite stops
// with an error that names the PYDT node and says what to try.
func TestNotFiniteError(t *testing.T) {
	m := compileData(t, paperModel, tinyData(3, 10, 1), nil)
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.trees[0].lik.SetVariance(5e-324); err != nil {
		t.Fatal(err)
	}
	err = ch.Sweep()
	if !errors.Is(err, ErrNotFinite) {
		t.Fatalf("error %v, want ErrNotFinite", err)
	}
	for _, want := range []string{"PYDT node X", "standardize the data", "Normal noise model", "X ~ Normal(Z, sd)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// nealModel is spec.md's example of DivNeal.
const nealModel = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c1 ~ Gamma(1, 1)
c2 ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, DivNeal(0, c1, c2), 1 / prec)
`

// TestDivNealRunsFinite is the regression test of runs of spec.md's
// DivNeal example on examples/data/synthetic.csv, which accepted trees of
// log density +Inf (and then failed to write checkpoint.json: "json:
// unsupported value: +Inf") or panicked in Slice.Sample.
func TestDivNealRunsFinite(t *testing.T) {
	x, err := dataset.ReadFile("../examples/data/synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 3} {
		m := compileData(t, nealModel, x, nil)
		dir := t.TempDir()
		if _, err := Run(context.Background(), m, Config{Iters: 100, Chains: 2, Seed: seed, Out: dir}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		trace, err := os.ReadFile(filepath.Join(dir, TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(trace); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
			t.Errorf("seed %d: the trace holds non-finite values", seed)
		}
	}
}

// TestNotFiniteFactorAdvice: a factor off the trees whose density is not
// finite (a Dirichlet row off the simplex) is named, with advice about its
// value's support, not the PYDT's.
func TestNotFiniteFactorAdvice(t *testing.T) {
	m := compileHMM(t, 6, 3, 1, func(i, j int) float64 { return float64(i % 2) })
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	trans, _ := m.G.Lookup("trans")
	row := ch.st.Env.Values[trans.ID][3:6]
	row[0], row[1], row[2] = 1, 1, 0
	err = ch.checkFinite("test")
	if !errors.Is(err, ErrNotFinite) {
		t.Fatalf("error %v, want ErrNotFinite", err)
	}
	for _, want := range []string{"trans", "Dirichlet", "boundary of its support"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "standardize") {
		t.Errorf("error %q gives the PYDT's advice for a Dirichlet", err)
	}
}
