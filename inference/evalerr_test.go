package inference

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
)

// TestIndexErrorOutsideLoops checks that an index the compiler cannot
// check (it reads a constant through a deterministic variable), outside
// any loop, is an error from every entry point that evaluates it: it
// panicked through inference, which recovered index errors only inside
// loops, and an index of 2.5 was silently truncated to 2.
func TestIndexErrorOutsideLoops(t *testing.T) {
	for _, tt := range []struct{ k, want string }{
		{"4", "index 4 of w is outside 1..3"},
		{"2.5", "index 2.5 of w is not a whole number"},
	} {
		t.Run(tt.k, func(t *testing.T) {
			src := `dim N, D, K
data X : real[N, D]
data w : pos[K]
w ~ Gamma(1, 1)
const k = ` + tt.k + `
a = w[k]
c ~ Gamma(1, 1)
X ~ PYDT(a, 0.5, c, 1)
`
			f, err := lang.Parse("m.pydt", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			data := map[string]*dataset.Matrix{
				"X": {Rows: 3, Cols: 2, Data: []float64{0, 1, 2, 3, 4, 5}, Source: "x.csv"},
				"w": {Rows: 3, Cols: 1, Data: []float64{1, 2, 3}, Source: "w.csv"},
			}
			g, err := graph.Compile(f, graph.Options{Data: data})
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewModel(g)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "a = w[k]") {
					t.Errorf("%s: got %v, want an error naming a = w[k]: %s", what, err, tt.want)
				}
			}
			_, err = m.SamplePrior(rand.New(rand.NewPCG(1, 2)))
			check("SamplePrior", err)
			_, _, err = m.LogHyper(graph.NewEnv(g))
			check("LogHyper", err)
			check("Refresh", m.Refresh(graph.NewEnv(g)))
		})
	}
}

// TestIndexErrorInChain checks that an index outside its array met while
// sampling stops the chain with that error, naming the statement and the
// loop position; the density it made not finite was reported instead, as
// a float64 problem with advice about standardizing.
func TestIndexErrorInChain(t *testing.T) {
	const src = `dim N, D, K
data X : real[N, D]
data z : real[N]
z ~ Normal(0, 1)
param mu : real[K]
mu ~ Normal(0, 1)
data Y : real[N]
for i in 1:N {
  Y[i] ~ Normal(mu[z[i]], 1)
}
c ~ Gamma(1, 1)
X ~ PYDT(1, 0.5, c, 1)
`
	f, err := lang.Parse("m.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	vec := func(x ...float64) *dataset.Matrix {
		return &dataset.Matrix{Rows: len(x), Cols: 1, Data: x, Source: "v.csv"}
	}
	data := map[string]*dataset.Matrix{
		"X": {Rows: 4, Cols: 2, Data: []float64{0, 1, 2, 3, 4, 5, 6, 7}, Source: "x.csv"},
		"z": vec(1, 2, 5, 1),
		"Y": vec(0, 0, 0, 0),
	}
	g, err := graph.Compile(f, graph.Options{Data: data, Set: map[string]float64{"K": 3}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := NewSchedule(m)
	if err == nil {
		var ch *Chain
		if ch, err = NewChain(m, sched, 1, 2); err == nil {
			err = ch.Sweep()
		}
	}
	const want = "Y[i] ~ Normal(mu[z[i]], 1) for i in 1:4: at i = 3: index 5 of mu is outside 1..3"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "standardize") {
		t.Errorf("got %v, want an error ending %q", err, want)
	}
}
