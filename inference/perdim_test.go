package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// perDimStats returns, for each element of prec, its value and square.
func perDimStats(m *Model, env *graph.Env) []float64 {
	v, _ := m.G.Lookup("prec")
	var out []float64
	for _, x := range env.Values[v.ID] {
		out = append(out, x, x*x)
	}
	return out
}

func perDimStatNames(d int) []string {
	var out []string
	for k := range d {
		out = append(out, fmt.Sprintf("prec[%d]", k+1), fmt.Sprintf("prec[%d]²", k+1))
	}
	return out
}

// perDimSource is examples/gaussian-perdim.pydt with the priors of
// TestGeweke, which keep divergence times where float64 represents them
// (the examples' priors draw bitwise identical rows without noise, see
// TestGewekeExamplePriorsNoiseFree); noise adds a Normal noise model.
func perDimSource(t *testing.T, noise bool) string {
	t.Helper()
	src := readExample(t, "gaussian-perdim.pydt")
	for _, r := range [][2]string{
		{"alpha ~ Gamma(2, 0.5)", "alpha ~ Gamma(2, 4)"},
		{"beta ~ Beta(1, 1)", "beta ~ Beta(2, 3)"},
		{"c ~ Gamma(1, 1)", "c ~ Gamma(4, 2)"},
		{"prec ~ Gamma(1, 1)", "prec ~ Gamma(3, 3)"},
	} {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("examples/gaussian-perdim.pydt has no %q", r[0])
		}
		src = strings.Replace(src, r[0], r[1], 1)
	}
	if noise {
		src = strings.Replace(src, "param prec : pos[D]", "param Z : real[N, D]\nparam prec : pos[D]", 1)
		src = strings.Replace(src, "X ~ PYDT(", "Z ~ PYDT(", 1)
		src += "noise ~ Gamma(4, 2)\nX ~ Normal(Z, 1 / sqrt(noise))\n"
	}
	return src
}

// TestGewekePerDimension is the joint-distribution test of
// examples/gaussian-perdim.pydt (a diffusion variance 1/prec[d] per
// dimension, N = 4, D = 3): with the data at the leaves prec is drawn by
// the conjugate Gamma update per dimension given the tree; under
// a Normal noise model each element is slice sampled with the locations
// integrated out; in both, the ridge move scales every dimension's
// variance with the times. Every element's mean and second moment is
// compared, so a dimension read with another's variance fails.
func TestGewekePerDimension(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	const n, d = 4, 3
	for _, tc := range []struct {
		name  string
		noise bool
		step  string
	}{{"direct", false, "gibbs(prec[d])"}, {"noise", true, "slice(prec)"}} {
		t.Run(tc.name, func(t *testing.T) {
			x := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}
			m := compileSource(t, "gaussian-perdim.pydt", []byte(perDimSource(t, tc.noise)), map[string]*dataset.Matrix{"X": x}, nil)
			if m.Tree.DimLoop == nil {
				t.Fatal("the variance is not per dimension")
			}
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{tc.step, "ridge(prec[d], times)"} {
				if !strings.Contains(sched.Explain(), want) {
					t.Fatalf("no %s:\n%s", want, sched.Explain())
				}
			}
			names := append(baseNames(m), perDimStatNames(d)...)
			stats := func(env *graph.Env, tr *pydt.Tree) []float64 {
				return append(append(treeStats(m, env, tr), sStats(tr)...), perDimStats(m, env)...)
			}
			redraw := func(ch *Chain) { redrawData(t, ch) }
			if tc.noise {
				redraw = func(ch *Chain) { redrawNoisy(t, ch) }
			}
			gewekeRun(t, m, names, stats, m.SamplePrior, redraw, 8, 500, 3000)
		})
	}
}

// TestPerDimensionLearnsScales fits data drawn from the model on one tree
// with variances 16 times apart between columns (prec = 4, 1, 0.25, within
// the reach of the example's Gamma(1, 1) prior): the posterior geometric
// means of prec must lie within a factor of 2 of the truth, where one
// shared variance could not.
func TestPerDimensionLearnsScales(t *testing.T) {
	const n, d = 30, 3
	truth := []float64{4, 1, 0.25}
	sets := map[string]float64{"alpha": 1, "beta": 0.3, "c": 2}
	rng := rand.New(rand.NewPCG(5, 6))
	_, locs, err := sim.Draw(rng, n, sim.Params{Alpha: 1, Beta: 0.3, Div: pydt.DivInv{C: 2},
		Variances: []float64{1 / truth[0], 1 / truth[1], 1 / truth[2]}, Dims: d})
	if err != nil {
		t.Fatal(err)
	}
	x := &dataset.Matrix{Rows: n, Cols: d, Data: locs[:n*d], Source: "x.csv"}
	m := compileSource(t, "gaussian-perdim.pydt", []byte(readExample(t, "gaussian-perdim.pydt")), map[string]*dataset.Matrix{"X": x}, sets)
	prec, _ := m.G.Lookup("prec")
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 9, 0)
	if err != nil {
		t.Fatal(err)
	}
	logMean := make([]float64, d)
	const burn, keep = 300, 700
	for it := range burn + keep {
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
		if it >= burn {
			for k, v := range ch.Values(prec) {
				logMean[k] += math.Log(v) / keep
			}
		}
	}
	for k := range d {
		if got := math.Exp(logMean[k]); !(got >= truth[k]/2 && got <= truth[k]*2) {
			t.Errorf("dimension %d: posterior geometric mean of prec %.4g, truth %v", k+1, got, truth[k])
		}
	}
}

// readExample returns the text of a file under examples/.
func readExample(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}
