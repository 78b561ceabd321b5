package treemove

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// With no data the likelihood is constant and every move must leave the
// PYDT prior invariant. Two designs test that against draws from the
// generative process (sim.DrawTree) and, for N = 3, the exact topology law:
//
//   - replicates: many independent trees drawn from the prior, each moved a
//     few times by one kind of move; the moved trees must again be prior
//     draws. This works for moves that are not ergodic alone (TimeMove keeps
//     the topology) and needs no autocorrelation correction.
//   - chains: one long chain per move kind, recorded after every move, with
//     batch-means standard errors; this finds kernels whose stationary law
//     is slightly off.

var invariantCases = []struct {
	c priorCase
	n int
}{
	{priorCase{"N3-pydt", 0.5, 0.3, pydt.DivInv{C: 1}}, 3},
	{priorCase{"N4-wide", 1.5, 0.2, pydt.DivInvSq{C: 0.5}}, 4},
	{priorCase{"N6-neg-alpha", -0.2, 0.4, pydt.DivInv{C: 0.7}}, 6},
	{priorCase{"N4-binary", -0.5, 0.25, pydt.DivInv{C: 1.5}}, 4},
	{priorCase{"N4-neal", 0.7, 0.3, pydt.DivNeal{C0: 0.5, C1: 0.4, C2: 0.3}}, 4},
}

var moveKinds = []struct {
	name string
	f    func(s *Sampler)
}{
	{"subtree", func(s *Sampler) { s.SubtreeMove() }},
	{"time", func(s *Sampler) { s.TimeMove() }},
	{"timesweep", func(s *Sampler) { s.TimeSweep() }},
	{"position", func(s *Sampler) { s.PositionMove() }},
	{"sweep", func(s *Sampler) { s.Sweep() }},
	{"local", func(s *Sampler) { s.LocalMove() }},
	{"local-r1", func(s *Sampler) { s.LocalRadius = 1; s.LocalMove() }},
	{"sweep-local", func(s *Sampler) { s.LocalMovesPerLeaf = 1; s.Sweep() }},
	{"local-grid", func(s *Sampler) { s.LocalGrid = 2; s.LocalMove() }},
	{"local-grid3-r2", func(s *Sampler) { s.LocalGrid, s.LocalGridRadius = 3, 2; s.LocalMove() }},
	{"local-grid1", func(s *Sampler) { s.LocalGrid = 1; s.LocalMove() }},
	{"local-grid-unscored", func(s *Sampler) {
		// Regions of more than 3 pieces are proposed from uniformly.
		s.LocalGrid = 2
		defer func(k int) { maxGridPieces = k }(maxGridPieces)
		maxGridPieces = 3
		s.LocalMove()
	}},
}

const zTol = 4.5 // many statistics are tested: 4.5 standard errors each

func TestPriorInvarianceReplicates(t *testing.T) {
	const reps, moves, refDraws = 8000, 4, 30000
	for ci, ic := range invariantCases {
		ref := referenceSeries(t, ic.c, ic.n, refDraws, uint64(100+ci))
		var exact map[string]float64
		if ic.n == 3 {
			exact = threeLaw(ic.c.alpha, ic.c.beta)
		}
		for mi, mk := range moveKinds {
			t.Run(ic.c.name+"/"+mk.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(mi)))
				got := series{}
				for range reps {
					tr, err := sim.DrawTree(rng, ic.n, ic.c.params())
					if err != nil {
						t.Fatal(err)
					}
					s := newSampler(t, tr, ic.c, 1, rng)
					for range moves {
						mk.f(s)
					}
					got.add(statsOf(tr), ic.n)
				}
				compare(t, "replicates", got, ref, exact, zTol)
			})
		}
	}
}

func TestPriorInvarianceChains(t *testing.T) {
	const steps = 150000
	for ci, ic := range invariantCases {
		ref := referenceSeries(t, ic.c, ic.n, 30000, uint64(200+ci))
		var exact map[string]float64
		if ic.n == 3 {
			exact = threeLaw(ic.c.alpha, ic.c.beta)
		}
		for mi, mk := range moveKinds {
			if mk.name == "time" || mk.name == "timesweep" {
				continue // not ergodic alone: covered by the replicates
			}
			t.Run(ic.c.name+"/"+mk.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci+50), uint64(mi)))
				tr, err := sim.DrawTree(rng, ic.n, ic.c.params())
				if err != nil {
					t.Fatal(err)
				}
				s := newSampler(t, tr, ic.c, 1, rng)
				n := steps
				if strings.HasPrefix(mk.name, "sweep") {
					n = steps / (2 * ic.n)
				}
				got := series{}
				for i := range n {
					mk.f(s)
					got.add(statsOf(tr), ic.n)
					if i == 0 {
						got.reserve(n)
					}
				}
				if err := tr.Validate(); err != nil {
					t.Fatal(err)
				}
				compare(t, "chain", got, ref, exact, zTol)
				t.Logf("acceptance: subtree %.2f, time %.2f, position %.2f, local %.2f, gave up %d",
					s.Stats.Subtree.Rate(), s.Stats.Time.Rate(), s.Stats.Position.Rate(), s.Stats.Local.Rate(), s.Stats.GaveUp)
			})
		}
	}
}
