package inference

import (
	"fmt"
	"math/rand/v2"
	"testing"

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
				ch.moves.ResetStats()
				b.ResetTimer()
				for range b.N {
					if err := ch.Sweep(); err != nil {
						b.Fatal(err)
					}
				}
				s := ch.moves.Stats
				moves := s.Subtree.Proposed + s.Time.Proposed + s.Position.Proposed
				b.ReportMetric(float64(moves)/b.Elapsed().Seconds(), "moves/s")
			})
		}
	}
}
