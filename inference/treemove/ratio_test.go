package treemove

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

var ratioCases = []priorCase{
	{"ddt", 0, 0, pydt.DivInv{C: 1}},
	{"pydt", 0.5, 0.3, pydt.DivInv{C: 1}},
	{"binary-beta", -0.6, 0.3, pydt.DivInvSq{C: 0.7}},
	{"wide", 2, 0.6, pydt.DivNeal{C0: 0.2, C1: 0.5, C2: 0.3}},
}

// sJacobian returns log(dt/ds)^-1 = s for a position on an edge (a new
// branch point at time t), 0 at a branch point: a log density in t less
// that is the log density in s.
func sJacobian(pos pydt.Position) float64 {
	if pos.AtNode {
		return 0
	}
	return pos.Time.S()
}

// subtreePrior returns the sum of pydt.NodeLogPrior over the branch points
// of the subtree rooted at v.
func subtreePrior(s *Sampler, v pydt.NodeID) float64 {
	total := 0.0
	for _, b := range s.tr.PostOrderFrom(v, nil) {
		if !s.tr.IsLeaf(b) {
			total += pydt.NodeLogPrior(s.tr, b, s.alpha, s.beta, s.div, s.h)
		}
	}
	return total
}

// TestAttachTermsAgainstLogPrior checks the O(depth) prior change of
// attachTerms against full pydt.LogPrior evaluations, for every non-root node
// of random trees and for several positions each (the old one and proposals),
// and that for leaves the prior change equals the one-point proposal density
// (so that the acceptance ratio reduces to the likelihood ratio).
func TestAttachTermsAgainstLogPrior(t *testing.T) {
	for _, c := range ratioCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			checked, leaves := 0, 0
			for rep := range 6 {
				tr, err := sim.DrawTree(rng, 9+rep, c.params())
				if err != nil {
					t.Fatal(err)
				}
				s := newSampler(t, tr, c, 1, rng)
				for id := range tr.Cap() {
					v := pydt.NodeID(id)
					if !tr.InUse(v) || v == tr.Root() {
						continue
					}
					within := subtreePrior(s, v)
					old := s.m.Detach(v)
					rest := pydt.LogPrior(tr, s.alpha, s.beta, s.div, s.h)
					n := tr.Count(v)
					positions := []pydt.Position{old}
					for range 4 {
						if p, _, ok := s.propose(v, tr.Time(v)); ok {
							positions = append(positions, p)
						}
					}
					for _, pos := range positions {
						d, q := s.attachTerms(pos, n)
						s.m.Attach(v, pos)
						// LogPrior is a density in t, attachTerms one in s.
						want := pydt.LogPrior(tr, s.alpha, s.beta, s.div, s.h) - rest - within - sJacobian(pos)
						s.m.Detach(v)
						if !(math.Abs(d-want) <= 1e-9*(1+math.Abs(want))) {
							t.Errorf("v=%d (n=%d) at %+v: delta %v, LogPrior difference %v", v, n, pos, d, want)
						}
						if n == 1 {
							leaves++
							if !(math.Abs(d-q) <= 1e-9*(1+math.Abs(d))) {
								t.Errorf("leaf %d at %+v: prior change %v != log q %v", v, pos, d, q)
							}
						}
						checked++
					}
					s.m.Attach(v, old)
					if err := tr.Validate(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if checked < 100 || leaves < 50 {
				t.Fatalf("only %d positions (%d for leaves) checked", checked, leaves)
			}
		})
	}
}

// TestLeafRatioIsLikelihoodRatio checks on data that logRatio is the
// general acceptance ratio of SubtreeMove, with the prior ratio from full
// pydt.LogPrior evaluations of the trees before and after (the proposal
// densities from attachTerms, which TestAttachTermsAgainstLogPrior checks
// against the prior for leaves); that for a leaf the general ratio is the
// likelihood ratio times the node-count ratio; and that for subtrees it is
// not (the correction matters).
func TestLeafRatioIsLikelihoodRatio(t *testing.T) {
	s := dataSampler(t, ratioCases[1], 20, 2, rand.New(rand.NewPCG(3, 4)))
	tr := s.tr
	logPrior := func() float64 { return pydt.LogPrior(tr, s.alpha, s.beta, s.div, s.h) }
	differs := 0
	for range 300 {
		v := s.randomNonRoot()
		nOld := s.numNonRoot()
		llOld := s.m.LogLik()
		lpOld := logPrior()
		old := s.m.Detach(v)
		pos, _, ok := s.propose(v, tr.Time(v))
		if !ok {
			s.m.Attach(v, old)
			continue
		}
		llNew := s.m.LogLikIfAttached(v, pos)
		got := s.logRatio(v, old, pos, nOld, llOld, llNew)
		nNew := nOld
		if !old.AtNode {
			nNew--
		}
		if !pos.AtNode {
			nNew++
		}
		lik := llNew - llOld + math.Log(float64(nOld)/float64(nNew))
		n := tr.Count(v)
		// The general formula, forced for leaves too.
		_, qn := s.attachTerms(pos, n)
		_, qo := s.attachTerms(old, n)
		s.m.Attach(v, pos)
		lpNew := logPrior()
		s.m.Detach(v)
		general := lik + (lpNew - sJacobian(pos) - lpOld + sJacobian(old)) - qn + qo
		if !(math.Abs(got-general) <= 1e-9*(1+math.Abs(general))) {
			t.Errorf("v=%d: logRatio %v, general formula %v", v, got, general)
		}
		if n == 1 && !(math.Abs(general-lik) <= 1e-9*(1+math.Abs(lik))) {
			t.Errorf("leaf %d: general ratio %v, likelihood ratio %v", v, general, lik)
		}
		if n > 1 && math.Abs(general-lik) > 1e-6 {
			differs++
		}
		s.m.Attach(v, old)
	}
	if differs == 0 {
		t.Error("the subtree correction was never non-zero")
	}
}
