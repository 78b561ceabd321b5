package treemove

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// TestMovesRefuseNonFinite runs the tree moves on data with two identical
// rows under a small c, where the identical pair's posterior drives its
// divergence time to t = 1 until float64 can no longer evaluate the
// likelihood (issue 7: the moves accepted such states, NaN from then on).
// Every move must refuse them: after every sweep the log posterior is
// finite. The cases with grid set run LocalMove's likelihood-informed
// proposal (LocalGrid, localgrid.go) in the sweeps.
func TestMovesRefuseNonFinite(t *testing.T) {
	cases := []struct {
		name string
		c    priorCase
		dims int
		grid int // Sampler.LocalGrid
	}{
		{"DivInv", priorCase{"", 0.5, 0.2, pydt.DivInv{C: 0.02}}, 4, 0},
		{"DDT", priorCase{"", 0, 0, pydt.DivInv{C: 0.05}}, 2, 0},
		{"DivInv-local-grid", priorCase{"", 0.5, 0.2, pydt.DivInv{C: 0.02}}, 4, 2},
		{"DDT-local-grid", priorCase{"", 0, 0, pydt.DivInv{C: 0.05}}, 2, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 3))
			const n = 12
			p := sim.Params{Alpha: tc.c.alpha, Beta: tc.c.beta, Div: pydt.DivInv{C: 1}, Variance: 1, Dims: tc.dims}
			tr, x, err := sim.Draw(rng, n, p)
			if err != nil {
				t.Fatal(err)
			}
			copy(x[tc.dims:2*tc.dims], x[:tc.dims]) // row 2 = row 1
			s := newSampler(t, tr, tc.c, tc.dims, rng)
			s.LocalGrid = tc.grid
			if err := s.Model().ObserveMatrix(x[:n*tc.dims]); err != nil {
				t.Fatal(err)
			}
			for sweep := 1; sweep <= 400; sweep++ {
				if err := s.Sweep(); err != nil {
					t.Fatal(err)
				}
				if lp := s.LogPosterior(); math.IsNaN(lp) || math.IsInf(lp, 0) {
					t.Fatalf("sweep %d: log posterior %v (closest 1-t %g)", sweep, lp, closest(s.Tree()))
				}
			}
			// Refusals happen only while float64 cannot evaluate some states;
			// a representation that evaluates them all needs none.
			t.Logf("refused %d non-finite evaluations; closest 1-t %g", s.Stats.NonFinite, closest(s.Tree()))
		})
	}
}

func closest(tr *pydt.Tree) float64 {
	u := 1.0
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) {
			u = math.Min(u, tr.Time(v).OneMinus())
		}
	}
	return u
}
