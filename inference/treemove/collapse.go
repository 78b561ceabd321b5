package treemove

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Subtree moves with c integrated out.
//
// For a divergence function linear in its constant, a(t) = c·ā(t) (a
// pydt.Linear), the PYDT prior of a tree T is p(T | c) = h(T) c^K e^{-c R},
// K the number of branch points and R = Σ_b J_b Ā(t_b) (pydt.CStatsFor with
// the unit function ā). Under a Gamma(a, b) prior on c (shape a, rate b)
// the prior with c integrated out is
//
//	p(T) = h(T) Γ(a+K) / (b+R)^(a+K) · b^a/Γ(a),
//
// so that for any c0 > 0, log p(T) = log p(T | c0) + f_c0(K, R) + const with
//
//	f_c0(K, R) = lgamma(a+K) - (a+K) log(b+R) - K log c0 + c0 R.
//
// The collapsed SubtreeMove targets p(T) L(T). Its proposal is the prior's
// attach process (propose) at a value c* of c, which must be the same in the
// move and its reverse: c* is a function of what the two share, the
// remaining tree T_r and the detached subtree v,
//
//	c* = (a + K_x) / (b + R_x),  K_x = K(T) - [old on an edge],  R_x = R(T) - r(old),
//
// r(x) being the change of R when v attaches at x (attachTermsR); K_x and
// R_x are K and R of T_r plus those of v's subtree, the same from T and from
// T' = T_r + v@pos. With the ratio of subtree.go computed at c* (the prior
// ratio p(T'|c*)/p(T|c*) and the proposal's densities at c*, whose
// normaliser over t < t_v cancels as before) the collapsed ratio adds
//
//	f_c*(K_x + [pos on an edge], R_x + r(pos)) - f_c*(K_x + [old on an edge], R_x + r(old)).
//
// Using the chain's current c instead of c* would not be exact: c is
// correlated with T, and the move leaves c unchanged.
//
// The chain's c is stale after collapsed moves: it must be drawn afresh from
// its conditional Gamma(a + K, b + R) before any update that conditions on
// it. Sweep therefore runs the collapsed subtree moves last, after the
// moves that condition on c, and the engine draws c right after the tree
// step (inference.Schedule). K and R are computed once per Sweep by
// CStatsFor (O(N), as the draw of c does) and kept up to date by the
// accepted moves (O(depth) each).

// CollapseC is the prior of the constant c of a divergence function linear
// in it, for the subtree moves with c integrated out (Sampler.Collapse).
type CollapseC struct {
	// Shape and Rate are the Gamma prior's parameters (a, b).
	Shape, Rate float64
	// Unit is the divergence function with c = 1 (pydt.Linear.Unit).
	Unit pydt.Divergence
}

// Check reports whether the prior is valid: a positive finite shape and
// rate, and a unit function.
func (p *CollapseC) Check() error {
	if !(p.Shape > 0) || math.IsInf(p.Shape, 1) || !(p.Rate > 0) || math.IsInf(p.Rate, 1) {
		return fmt.Errorf("treemove: the Gamma prior of c needs a positive shape and rate, got (%v, %v)", p.Shape, p.Rate)
	}
	if p.Unit == nil {
		return fmt.Errorf("treemove: the collapsed moves need the unit divergence function")
	}
	return nil
}

// CStats returns the statistics (K, R) of the current tree that the
// collapsed moves keep, computed afresh (O(N)).
func (s *Sampler) CStats() (int, float64) {
	return pydt.CStatsFor(s.tr, s.alpha, s.beta, s.Collapse.Unit, s.h)
}

// collapsedSubtreeMoves runs k collapsed subtree moves. The sampler's
// divergence function is the unit function during them (so that the memo's
// cumulative is Ā, and r(x) is attachTermsR's rbar), each move setting the
// scale cs = c*; the chain's divergence function is restored after them.
func (s *Sampler) collapsedSubtreeMoves(k int) error {
	if err := s.Collapse.Check(); err != nil {
		return err
	}
	saved := s.div
	s.div = s.Collapse.Unit
	s.newEpoch()
	defer func() {
		s.div = saved
		s.setScale(1)
		s.newEpoch()
	}()
	s.cK, s.cR = s.CStats()
	for range k {
		s.collapsedSubtreeMove()
	}
	return nil
}

// setScale sets the scale of the divergence function in attachTermsR and
// propose.
func (s *Sampler) setScale(c float64) {
	s.cs = c
	s.lcs = 0
	if c != 1 {
		s.lcs = math.Log(c)
	}
}

// collapsedF returns f_c(K, R) - f_c(K0, R0) for K - K0 in {-1, 0, 1},
// keeping the precision of the difference of large terms.
func (s *Sampler) collapsedF(k, k0 int, r, r0, c float64) float64 {
	a, b := s.Collapse.Shape, s.Collapse.Rate
	dk := float64(k - k0)
	var out float64 // lgamma(a+k) - lgamma(a+k0)
	switch k - k0 {
	case 1:
		out = math.Log(a + float64(k0))
	case -1:
		out = -math.Log(a + float64(k))
	}
	out -= dk*math.Log(b+r) + (a+float64(k0))*math.Log1p((r-r0)/(b+r0))
	return out - dk*math.Log(c) + c*(r-r0)
}

// collapsedSubtreeMove is SubtreeMove with c integrated out (see above).
func (s *Sampler) collapsedSubtreeMove() bool {
	tr, m := s.tr, s.m
	if tr.NumLeaves() < 2 {
		return false
	}
	s.Stats.Subtree.Proposed++
	v := s.randomNonRoot()
	nOld := s.numNonRoot()
	llOld := m.LogLik()
	old := m.Detach(v)
	n := tr.Count(v)
	dOld, qOld, rOld := s.attachTermsR(old, n, pydt.NoNode)
	eOld := 0
	if !old.AtNode {
		eOld = 1
	}
	kx, rx := s.cK-eOld, s.cR-rOld
	cstar := (s.Collapse.Shape + float64(kx)) / (s.Collapse.Rate + rx)
	if !(cstar > 0) || math.IsInf(cstar, 1) {
		s.Stats.NonFinite++
		m.Attach(v, old)
		return false
	}
	s.setScale(cstar)
	pos, corrNew, ok := s.propose(v, tr.Time(v))
	if !ok {
		s.Stats.GaveUp++
		m.Attach(v, old)
		return false
	}
	llNew := m.LogLikIfAttached(v, pos)
	logA := math.Inf(-1)
	if !math.IsInf(llNew, -1) {
		logA = math.NaN()
		if Evaluable(llNew) {
			logA = llNew - llOld
		}
	}
	// dOld, qOld were computed at cs = 1 before c* was known: again at c*.
	dOld, qOld, _ = s.attachTermsR(old, n, pydt.NoNode)
	dNew, qNew, rNew := s.attachTermsR(pos, n, pydt.NoNode)
	if n > 1 {
		logA += (dNew - qNew) - (dOld - qOld)
	}
	eNew := 0
	if !pos.AtNode {
		eNew = 1
	}
	nNew := nOld - eOld + eNew
	logA += math.Log(float64(nOld)) - math.Log(float64(nNew))
	logA += s.collapsedF(kx+eNew, kx+eOld, rx+rNew, rx+rOld, cstar)
	if s.Informed > 0 {
		logA += s.informedCorr(v, old) - corrNew
	}
	if !s.accept(logA) {
		m.Attach(v, old)
		return false
	}
	if !s.moveTo(v, old, pos, &s.Stats.Subtree.Accepted) {
		return false
	}
	s.cK += eNew - eOld
	s.cR += rNew - rOld
	return true
}
