package inference

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// BenchmarkSweep times one sweep of the paper's continuous model (about N
// subtree moves, N time moves, 0.2 N position moves and the hyperparameter
// updates) on data drawn from the model itself. It reports tree moves per
// second.
func BenchmarkSweep(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, d := range []int{2, 10} {
			b.Run(fmt.Sprintf("N=%d/D=%d", n, d), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
				_, x, err := sim.Draw(rng, n, sim.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: d})
				if err != nil {
					b.Fatal(err)
				}
				rows := make([][]float64, n)
				for i := range rows {
					rows[i] = x[i*d : (i+1)*d]
				}
				m := compileWithData(b, gaussianModel, rows, nil)
				sched, err := NewSchedule(m)
				if err != nil {
					b.Fatal(err)
				}
				ch, err := NewChain(m, sched, 1, 2)
				if err != nil {
					b.Fatal(err)
				}
				for range 3 { // leave the prior draw
					if err := ch.Sweep(); err != nil {
						b.Fatal(err)
					}
				}
				ch.trees[0].moves.ResetStats()
				b.ResetTimer()
				for range b.N {
					if err := ch.Sweep(); err != nil {
						b.Fatal(err)
					}
				}
				s := ch.trees[0].moves.Stats
				moves := s.Subtree.Proposed + s.Time.Proposed + s.Position.Proposed
				b.ReportMetric(float64(moves)/b.Elapsed().Seconds(), "moves/s")
			})
		}
	}
}

// BenchmarkLogHyper times the log density of the factors outside the tree
// (Model.LogHyper) on a model with an elementwise factor over an N×D data
// matrix whose parameters read another matrix by index: the evaluation of
// expressions and the iteration over a factor's elements.
func BenchmarkLogHyper(b *testing.B) {
	const src = `dim N, D
data X : real[N, D]
data W : real[N, D]
data Y : real[N, D]
s ~ Gamma(1, 1)
X ~ PYDT(1, 0.5, 1, 1)
W ~ Normal(0, 1)
for i in 1:N {
  for d in 1:D {
    Y[i, d] ~ Normal(W[i, d] * 2, s)
  }
}
`
	const n, d = 1000, 10
	rng := rand.New(rand.NewPCG(1, 2))
	data := map[string]*dataset.Matrix{}
	for _, name := range []string{"X", "W", "Y"} {
		m := &dataset.Matrix{Rows: n, Cols: d, Source: name + ".csv", Data: make([]float64, n*d)}
		for i := range m.Data {
			m.Data[i] = rng.NormFloat64()
		}
		data[name] = m
	}
	f, err := lang.Parse("bench.pydt", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Data: data})
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewModel(g)
	if err != nil {
		b.Fatal(err)
	}
	env := graph.NewEnv(g)
	env.Values[g.ByName["s"].ID][0] = 1.5
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := m.LogHyper(env); err != nil {
			b.Fatal(err)
		}
	}
}
