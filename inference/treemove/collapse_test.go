package treemove

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// collapseCase is a prior with c free: c ~ Gamma(shape, rate), a(t) =
// c·unit(t).
type collapseCase struct {
	name        string
	alpha, beta float64
	shape, rate float64
	unit        pydt.Divergence
	scaled      func(c float64) pydt.Divergence
	n           int
}

var collapseCases = []collapseCase{
	{"N3-pydt", 0.5, 0.3, 2, 1.5, pydt.DivInv{C: 1}, func(c float64) pydt.Divergence { return pydt.DivInv{C: c} }, 3},
	{"N3-ddt", 0, 0, 1, 1, pydt.DivInv{C: 1}, func(c float64) pydt.Divergence { return pydt.DivInv{C: c} }, 3},
	{"N4-invsq", 1.5, 0.2, 3, 4, pydt.DivInvSq{C: 1}, func(c float64) pydt.Divergence { return pydt.DivInvSq{C: c} }, 4},
	{"N6-neg-alpha", -0.2, 0.4, 2, 2, pydt.DivInv{C: 1}, func(c float64) pydt.Divergence { return pydt.DivInv{C: c} }, 6},
	{"N5-ddt", 0, 0, 1, 1, pydt.DivInv{C: 1}, func(c float64) pydt.Divergence { return pydt.DivInv{C: c} }, 5},
}

func (cc collapseCase) prior() scalar.Gamma { return scalar.Gamma{Shape: cc.shape, Rate: cc.rate} }

func (cc collapseCase) params(c float64) sim.Params {
	return sim.Params{Alpha: cc.alpha, Beta: cc.beta, Div: cc.scaled(c), Variance: 1, Dims: 1}
}

// drawJoint draws (c, T) from the joint prior: c from its Gamma prior, T
// from the generative process given c.
func (cc collapseCase) drawJoint(t testing.TB, rng *rand.Rand) (float64, *pydt.Tree) {
	t.Helper()
	c := cc.prior().Rand(rng)
	tr, err := sim.DrawTree(rng, cc.n, cc.params(c))
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// redrawC draws c from its conditional given the sampler's tree and sets
// it, as the engine's gibbs(c) does after the collapsed moves.
func redrawC(t testing.TB, s *Sampler, cc collapseCase) float64 {
	t.Helper()
	k, r := pydt.CStatsFor(s.Tree(), cc.alpha, cc.beta, cc.unit, s.Harmonic())
	c, err := scalar.SampleC(s.Rand(), cc.prior(), k, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetPrior(cc.alpha, cc.beta, cc.scaled(c)); err != nil {
		t.Fatal(err)
	}
	return c
}

// collapseKinds are the updates tested with c free: each is followed by a
// draw of c from its conditional.
var collapseKinds = []struct {
	name string
	f    func(s *Sampler)
}{
	{"collapsed-subtree", func(s *Sampler) {
		if err := s.collapsedMoves(1, 0, 0); err != nil {
			panic(err)
		}
	}},
	{"collapsed-local", func(s *Sampler) {
		if err := s.collapsedMoves(0, 1, 0); err != nil {
			panic(err)
		}
	}},
	{"collapsed-position", func(s *Sampler) {
		if err := s.collapsedMoves(0, 0, 1); err != nil {
			panic(err)
		}
	}},
	{"sweep-grid", func(s *Sampler) {
		s.LocalGrid = 2
		if err := s.Sweep(); err != nil {
			panic(err)
		}
	}},
	{"sweep", func(s *Sampler) {
		if err := s.Sweep(); err != nil {
			panic(err)
		}
	}},
}

func addC(got series, c float64) {
	got["E(c)"] = append(got["E(c)"], c)
	got["E(log c)"] = append(got["E(log c)"], math.Log(c))
}

// collapseReference draws (c, T) from the joint prior.
func collapseReference(t *testing.T, cc collapseCase, draws int, seed uint64) series {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	ref := series{}
	for range draws {
		c, tr := cc.drawJoint(t, rng)
		ref.add(statsOf(tr), cc.n)
		addC(ref, c)
	}
	return ref
}

// TestCollapsedPriorReplicates: with no data, (c, T) drawn from the joint
// prior and moved by collapsed subtree moves (each followed by a draw of c
// given T, as the engine schedules it) must stay joint prior draws: the
// tree statistics and c against independent draws, and the N = 3 topology
// against its exact law (which does not depend on c).
func TestCollapsedPriorReplicates(t *testing.T) {
	const reps, moves, refDraws = 5000, 3, 30000
	for ci, cc := range collapseCases {
		ref := collapseReference(t, cc, refDraws, uint64(300+ci))
		var exact map[string]float64
		if cc.n == 3 {
			exact = threeLaw(cc.alpha, cc.beta)
		}
		for mi, mk := range collapseKinds {
			t.Run(cc.name+"/"+mk.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci+400), uint64(mi)))
				got := series{}
				for range reps {
					c, tr := cc.drawJoint(t, rng)
					s := newSampler(t, tr, priorCase{cc.name, cc.alpha, cc.beta, cc.scaled(c)}, 1, rng)
					s.Collapse = &CollapseC{Shape: cc.shape, Rate: cc.rate, Unit: cc.unit}
					for range moves {
						mk.f(s)
						c = redrawC(t, s, cc)
					}
					got.add(statsOf(tr), cc.n)
					addC(got, c)
				}
				compare(t, "replicates", got, ref, exact, zTol)
			})
		}
	}
}

// TestCollapsedPriorChains: one long chain of collapsed subtree moves, c
// drawn given T after each, recorded after every move.
func TestCollapsedPriorChains(t *testing.T) {
	const steps = 100000
	for ci, cc := range collapseCases {
		ref := collapseReference(t, cc, 30000, uint64(500+ci))
		var exact map[string]float64
		if cc.n == 3 {
			exact = threeLaw(cc.alpha, cc.beta)
		}
		for mi, mk := range collapseKinds {
			if strings.HasPrefix(mk.name, "sweep") {
				continue // the replicates test them
			}
			t.Run(cc.name+"/"+mk.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci+600), uint64(mi)))
				c, tr := cc.drawJoint(t, rng)
				s := newSampler(t, tr, priorCase{cc.name, cc.alpha, cc.beta, cc.scaled(c)}, 1, rng)
				s.Collapse = &CollapseC{Shape: cc.shape, Rate: cc.rate, Unit: cc.unit}
				got := series{}
				for i := range steps {
					mk.f(s)
					c = redrawC(t, s, cc)
					got.add(statsOf(tr), cc.n)
					addC(got, c)
					if i == 0 {
						got.reserve(steps)
					}
				}
				if err := tr.Validate(); err != nil {
					t.Fatal(err)
				}
				compare(t, "chain", got, ref, exact, zTol)
				t.Logf("acceptance: subtree %.2f, local %.2f, position %.2f", s.Stats.Subtree.Rate(), s.Stats.Local.Rate(), s.Stats.Position.Rate())
			})
		}
	}
}

// TestCollapsedStatsKept: the K and R that the collapsed moves keep up to
// date on accepted moves equal CStatsFor's on the tree they leave, on trees
// with data (where moves are accepted less often and from every kind of
// position) and without.
func TestCollapsedStatsKept(t *testing.T) {
	for ci, cc := range collapseCases {
		for _, dims := range []int{0, 2} {
			rng := rand.New(rand.NewPCG(uint64(ci+700), uint64(dims)))
			c := cc.prior().Rand(rng)
			pc := priorCase{cc.name, cc.alpha, cc.beta, cc.scaled(c)}
			var s *Sampler
			if dims == 0 {
				tr, err := sim.DrawTree(rng, 3*cc.n, cc.params(c))
				if err != nil {
					t.Fatal(err)
				}
				s = newSampler(t, tr, pc, 1, rng)
			} else {
				s = dataSampler(t, pc, 3*cc.n, dims, rng)
			}
			s.Collapse = &CollapseC{Shape: cc.shape, Rate: cc.rate, Unit: cc.unit}
			accepted := 0
			for range 200 {
				s.Stats = Stats{}
				if err := s.collapsedMoves(5, 5, 2); err != nil {
					t.Fatal(err)
				}
				accepted += s.Stats.Subtree.Accepted
				k, r := s.CStats()
				if s.cK != k || !(math.Abs(s.cR-r) <= 1e-9*(1+r)) {
					t.Fatalf("%s, %d dims: kept K, R = %d, %.12g; CStatsFor %d, %.12g", cc.name, dims, s.cK, s.cR, k, r)
				}
				if s.div != cc.scaled(c) || s.cs != 1 || s.lcs != 0 {
					t.Fatalf("%s: the divergence function %v (scale %v) was not restored to %v", cc.name, s.div, s.cs, cc.scaled(c))
				}
			}
			if accepted < 50 {
				t.Errorf("%s, %d dims: only %d moves accepted", cc.name, dims, accepted)
			}
		}
	}
}

// TestAttachedR: attachedR of an attached subtree equals attachTermsR's
// rbar at its position once detached, and e says whether that position is
// on an edge.
func TestAttachedR(t *testing.T) {
	for ci, cc := range collapseCases {
		rng := rand.New(rand.NewPCG(uint64(ci+800), 3))
		c := cc.prior().Rand(rng)
		tr, err := sim.DrawTree(rng, 4*cc.n, cc.params(c))
		if err != nil {
			t.Fatal(err)
		}
		s := newSampler(t, tr, priorCase{cc.name, cc.alpha, cc.beta, cc.unit}, 1, rng)
		for range 100 {
			v := s.randomNonRoot()
			e, r := s.attachedR(v)
			old := s.m.Detach(v)
			_, _, rbar, _ := s.attachTermsR(old, tr.Count(v), pydt.NoNode)
			s.m.Attach(v, old)
			if e != b2i(!old.AtNode) || !(math.Abs(r-rbar) <= 1e-12*(1+math.Abs(r))) {
				t.Fatalf("%s: attachedR = %d, %.15g; detached: on an edge %v, rbar %.15g", cc.name, e, r, !old.AtNode, rbar)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
