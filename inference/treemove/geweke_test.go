package treemove

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// gewekeStats returns the statistics of a (tree, data) pair: tree
// statistics, the squared distance between leaves 0 and 1, and its product
// with 1 - t(lca(0, 1)), which couples the tree with the data.
func gewekeStats(tr *pydt.Tree, x []float64, dims int, out series) {
	st := statsOf(tr)
	d2 := 0.0
	for k := range dims {
		diff := x[k] - x[dims+k]
		d2 += diff * diff
	}
	out["E(internal)"] = append(out["E(internal)"], float64(st.internal))
	out["E(root time)"] = append(out["E(root time)"], st.rootTime)
	out["E(sum of times)"] = append(out["E(sum of times)"], st.sumTimes)
	out["E(|x0-x1|^2)"] = append(out["E(|x0-x1|^2)"], d2)
	out["E(|x0-x1|^2 (1-t_lca))"] = append(out["E(|x0-x1|^2 (1-t_lca))"], d2*(1-densetest.LCATime(tr, 0, 1).T()))
	out["E(t_lca)"] = append(out["E(t_lca)"], densetest.LCATime(tr, 0, 1).T())
}

// TestGeweke is Geweke's (2004) joint distribution test at the tree level.
// The marginal-conditional simulator draws (tree, data) from sim.Draw. The
// successive-conditional simulator alternates a draw of the data given the
// tree (bp with no evidence, then SampleLocations: leaf locations from their
// prior given the tree) with a sweep of tree moves given that data. Both
// must give the same joint law of (tree, data); the test compares the means
// of tree statistics and of statistics coupling tree and data, with
// batch-means standard errors for the chain.
func TestGeweke(t *testing.T) {
	cases := []struct {
		c        priorCase
		n, dims  int
		s2       float64
		informed float64 // Sampler.Informed
		timeMove bool    // random-scan TimeMoves instead of TimeSweep
		local    float64 // Sampler.LocalMovesPerLeaf
		grid     int     // Sampler.LocalGrid
	}{
		{priorCase{"N5-D2", 0.5, 0.3, pydt.DivInv{C: 1}}, 5, 2, 1, 0, false, 0, 0},
		{priorCase{"N4-D1", 1, 0.1, pydt.DivInvSq{C: 0.6}}, 4, 1, 0.5, 0, false, 0, 0},
		{priorCase{"N4-D2-neal", 0.8, 0.2, pydt.DivNeal{C0: 0.4, C1: 0.5, C2: 0.3}}, 4, 2, 0.7, 0, false, 0, 0},
		// The likelihood-informed subtree proposal, with a strong weight
		// so that its correction matters.
		{priorCase{"N5-D2-informed", 0.5, 0.3, pydt.DivInv{C: 1}}, 5, 2, 0.6, 2, true, 0, 0},
		{priorCase{"N5-D1-ddt-informed", 0, 0, pydt.DivInv{C: 1.2}}, 5, 1, 1, 1, false, 0, 0},
		// Local prune-and-regraft moves (LocalMove) in every sweep.
		{priorCase{"N5-D2-local", 0.5, 0.3, pydt.DivInv{C: 1}}, 5, 2, 0.6, 0, false, 2, 0},
		{priorCase{"N6-D1-ddt-local", 0, 0, pydt.DivInv{C: 1.2}}, 6, 1, 1, 0, false, 2, 0},
		// The likelihood-informed LocalMove (localgrid.go).
		{priorCase{"N5-D2-local-grid", 0.5, 0.3, pydt.DivInv{C: 1}}, 5, 2, 0.6, 0, false, 2, 2},
		{priorCase{"N6-D1-ddt-local-grid", 0, 0, pydt.DivInv{C: 1.2}}, 6, 1, 1, 0, false, 2, 3},
		{priorCase{"N6-D3-local-grid-r1", 1, 0.2, pydt.DivInvSq{C: 0.7}}, 6, 3, 0.5, 0, false, 2, 1},
	}
	const iters, refDraws = 30000, 30000
	for ci, gc := range cases {
		t.Run(gc.c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 77))
			p := gc.c.params()
			p.Dims, p.Variance = gc.dims, gc.s2
			ref := series{}
			for i := range refDraws {
				if i == 1 {
					ref.reserve(refDraws)
				}
				tr, x, err := sim.Draw(rng, gc.n, p)
				if err != nil {
					t.Fatal(err)
				}
				gewekeStats(tr, x, gc.dims, ref)
			}

			tr, err := sim.DrawTree(rng, gc.n, p)
			if err != nil {
				t.Fatal(err)
			}
			s := newSampler(t, tr, gc.c, gc.dims, rng)
			s.Informed = gc.informed
			s.RandomScanTime = gc.timeMove
			s.LocalMovesPerLeaf = gc.local
			s.LocalGrid = gc.grid
			if gc.grid > 1 {
				s.LocalGridRadius = 2
			}
			if err := s.Model().SetVariance(gc.s2); err != nil {
				t.Fatal(err)
			}
			missing := make([]float64, gc.n*gc.dims)
			for i := range missing {
				missing[i] = math.NaN()
			}
			x := make([]float64, tr.Cap()*gc.dims)
			got := series{}
			for i := range iters {
				if i == 1 {
					got.reserve(iters)
				}
				m := s.Model()
				if err := m.ObserveMatrix(missing); err != nil {
					t.Fatal(err)
				}
				if err := m.SampleLocations(rng, x); err != nil {
					t.Fatal(err)
				}
				if err := m.ObserveMatrix(x[:gc.n*gc.dims]); err != nil {
					t.Fatal(err)
				}
				if err := s.Sweep(); err != nil {
					t.Fatal(err)
				}
				gewekeStats(tr, x, gc.dims, got)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			compare(t, "geweke", got, ref, nil, zTol)
			t.Logf("acceptance: subtree %.2f, time %.2f, position %.2f, local %.2f, gave up %d",
				s.Stats.Subtree.Rate(), s.Stats.Time.Rate(), s.Stats.Position.Rate(), s.Stats.Local.Rate(), s.Stats.GaveUp)
		})
	}
}

func TestNoAllocation(t *testing.T) {
	c := priorCase{"pydt", 0.5, 0.3, pydt.DivInv{C: 1}}
	s := dataSampler(t, c, 300, 3, rand.New(rand.NewPCG(5, 6)))
	tr := s.Tree()
	for range 20 {
		if err := s.Sweep(); err != nil { // warm up: recompute the messages, reach the steady state
			t.Fatal(err)
		}
	}
	for _, mk := range moveKinds {
		runs := 200
		if mk.name == "sweep" {
			runs = 5
		}
		if a := testing.AllocsPerRun(runs, func() { mk.f(s) }); a != 0 {
			t.Errorf("%s: %v allocations per move", mk.name, a)
		}
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPrior(1, 0.2, pydt.DivInvSq{C: 2}); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { s.SubtreeMove() }); a != 0 {
		t.Errorf("after SetPrior: %v allocations per subtree move", a)
	}
}

// TestLikelihoodKeptCurrent checks after many moves on data that the
// model's incrementally updated likelihood equals a full recomputation.
func TestLikelihoodKeptCurrent(t *testing.T) {
	c := priorCase{"pydt", 0.3, 0.4, pydt.DivInv{C: 0.8}}
	s := dataSampler(t, c, 60, 2, rand.New(rand.NewPCG(8, 9)))
	tr, m := s.Tree(), s.Model()
	for range 20 {
		if err := s.Sweep(); err != nil {
			t.Fatal(err)
		}
		got := m.LogLik()
		if err := m.Recompute(); err != nil {
			t.Fatal(err)
		}
		if want := m.LogLik(); !(math.Abs(got-want) <= 1e-8*(1+math.Abs(want))) {
			t.Fatalf("incremental log likelihood %v, recomputed %v", got, want)
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("acceptance: subtree %.2f, time %.2f, position %.2f, gave up %d",
		s.Stats.Subtree.Rate(), s.Stats.Time.Rate(), s.Stats.Position.Rate(), s.Stats.GaveUp)
}
