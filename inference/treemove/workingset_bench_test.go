package treemove

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/internal/cputime"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// BenchmarkSubtreeMoveWorkingSet separates the two causes of the growth of
// a subtree move's cost with N (docs/benchmarks.md, "Growth per sweep"):
// the depth of the tree, and the memory the moves range over. It runs
// subtree moves round robin over K independent samplers, each on its own
// N = 1000 draw of Neal's DDT (α = β = 0, a(t) = 2/(1-t), σ² = 1/2, D = 2,
// started at the true tree, a draw of the posterior): the trees' depth and
// the work per move are those of N = 1000 whatever K is, while the memory
// touched is K times that of one tree, as for one tree of K·1000 leaves.
// A cost per move that grows with K is the cost of cache misses.
func BenchmarkSubtreeMoveWorkingSet(b *testing.B) {
	c := priorCase{"ddt", 0, 0, pydt.DivInv{C: 2}}
	const n, d = 1000, 2
	for _, k := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("copies=%d", k), func(b *testing.B) {
			ss := make([]*Sampler, k)
			for i := range ss {
				p := c.params()
				p.Dims, p.Variance = d, 0.5
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				tr, x, err := sim.Draw(rng, n, p)
				if err != nil {
					b.Fatal(err)
				}
				ss[i] = newSampler(b, tr, c, d, rng)
				if err := ss[i].Model().ObserveMatrix(x[:n*d]); err != nil {
					b.Fatal(err)
				}
			}
			for _, s := range ss {
				if err := s.Sweep(); err != nil { // fills the memo tables
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			c0 := cputime.Process()
			i := 0
			for b.Loop() {
				ss[i].SubtreeMove()
				if i++; i == k {
					i = 0
				}
			}
			b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
