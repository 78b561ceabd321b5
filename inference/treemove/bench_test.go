package treemove

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// Benchmarks run on data drawn from the model (sim.Draw with α = 0.5,
// β = 0.3, a(t) = 1/(1-t), σ² = 1), starting at the true tree, after one
// warm-up sweep (so that the reported cost is that of a tree near the
// posterior, not of the generating one).
var benchCase = priorCase{"pydt", 0.5, 0.3, pydt.DivInv{C: 1}}

type benchKey struct{ n, d int }

var benchData sync.Map

func benchSampler(b *testing.B, n, d int) *Sampler {
	b.Helper()
	key := benchKey{n, d}
	type entry struct {
		tr *pydt.Tree
		x  []float64
	}
	e, ok := benchData.Load(key)
	if !ok {
		p := benchCase.params()
		p.Dims = d
		tr, x, err := sim.Draw(rand.New(rand.NewPCG(uint64(n), uint64(d))), n, p)
		if err != nil {
			b.Fatal(err)
		}
		e = entry{tr, x[:n*d]}
		benchData.Store(key, e)
	}
	en := e.(entry)
	rng := rand.New(rand.NewPCG(1, 2))
	s := newSampler(b, en.tr.Clone(), benchCase, d, rng)
	if err := s.Model().ObserveMatrix(en.x); err != nil {
		b.Fatal(err)
	}
	s.Sweep()
	s.ResetStats()
	return s
}

func benchMoves(b *testing.B, f func(s *Sampler)) {
	for _, n := range []int{100, 1000, 10000} {
		for _, d := range []int{2, 10} {
			b.Run(fmt.Sprintf("N=%d/D=%d", n, d), func(b *testing.B) {
				s := benchSampler(b, n, d)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					f(s)
				}
				b.StopTimer()
				st := s.Stats
				if st.Subtree.Proposed > 0 {
					b.ReportMetric(st.Subtree.Rate(), "accept")
				} else if st.Time.Proposed > 0 {
					b.ReportMetric(st.Time.Rate(), "accept")
				} else if st.Local.Proposed > 0 {
					b.ReportMetric(st.Local.Rate(), "accept")
				} else if st.Position.Proposed > 0 {
					b.ReportMetric(st.Position.Rate(), "accept")
				}
			})
		}
	}
}

func BenchmarkSubtreeMove(b *testing.B)  { benchMoves(b, func(s *Sampler) { s.SubtreeMove() }) }
func BenchmarkTimeMove(b *testing.B)     { benchMoves(b, func(s *Sampler) { s.TimeMove() }) }
func BenchmarkPositionMove(b *testing.B) { benchMoves(b, func(s *Sampler) { s.PositionMove() }) }
func BenchmarkLocalMove(b *testing.B)    { benchMoves(b, func(s *Sampler) { s.LocalMove() }) }
func BenchmarkSweep(b *testing.B)        { benchMoves(b, func(s *Sampler) { s.Sweep() }) }

// BenchmarkLocalGridMove is LocalMove with the likelihood-informed proposal
// (LocalGrid 2, LocalGridRadius 1; localgrid.go).
func BenchmarkLocalGridMove(b *testing.B) {
	benchMoves(b, func(s *Sampler) { s.LocalGrid = 2; s.LocalMove() })
}
