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
// it. Sweep therefore runs the collapsed moves (subtree, uniform local and
// position) last, after the moves that condition on c, and the engine
// draws c right after the tree step (inference.Schedule). K and R are
// computed once per Sweep by CStatsFor (O(N), as the draw of c does) and
// kept up to date after every move (collapseEnd, O(depth) each).

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

// beginCollapsed makes the sampler's divergence function the unit
// function (so that the memo's cumulative is Ā and attachTermsR's rbar is
// r(x)), computes K and R, and turns the collapsed targets on; endCollapsed
// restores the chain's divergence function.
func (s *Sampler) beginCollapsed() error {
	if err := s.Collapse.Check(); err != nil {
		return err
	}
	s.savedDiv = s.div
	s.div = s.Collapse.Unit
	s.newEpoch()
	s.cK, s.cR = s.CStats()
	s.collapsing = true
	return nil
}

func (s *Sampler) endCollapsed() {
	s.div, s.savedDiv = s.savedDiv, nil
	s.setScale(1)
	s.newEpoch()
	s.collapsing = false
}

// collapsedMoves runs the topology moves of a Sweep with c integrated
// out: k subtree moves, then the uniform local moves and the position
// moves, each targeting the collapsed prior (collapsedLogRatio, and
// posLogDensityBelow's collapsed term for the others).
func (s *Sampler) collapsedMoves(k, local, position int) error {
	if err := s.beginCollapsed(); err != nil {
		return err
	}
	defer s.endCollapsed()
	for range k {
		s.SubtreeMove()
	}
	for range local {
		s.LocalMove()
	}
	for range position {
		s.PositionMove()
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

// attachedR returns, for the attached subtree v, e = 1 when detaching v
// would splice out its parent (v attached on an edge) and 0 when v is one
// of three or more children (attached at a branch point), and r = R(T) -
// R(T_r), as attachTermsR's rbar at v's position in T_r, from the counts
// of T. O(depth).
func (s *Sampler) attachedR(v pydt.NodeID) (e int, r float64) {
	tr, h := s.tr, s.h
	n := tr.Count(v)
	hn1 := h.H(n - 1)
	p := tr.Parent(v)
	if tr.Degree(p) == 2 {
		e = 1
		u := tr.FirstChild(p)
		if u == v {
			u = tr.NextSibling(u)
		}
		nu := tr.Count(u)
		r = s.cum(p) * (h.H(nu+n-1) - h.H(nu-1) - hn1)
	} else {
		mb := tr.Count(p) - n
		r = s.cum(p) * (h.H(mb+n-1) - h.H(mb-1) - hn1)
	}
	c := p
	for a := tr.Parent(c); a != pydt.NoNode; c, a = a, tr.Parent(a) {
		ma, nc := tr.Count(a)-n, tr.Count(c)-n
		r += s.cum(a) * ((h.H(ma+n-1) - h.H(ma-1)) - (h.H(nc+n-1) - h.H(nc-1)))
	}
	return e, r
}

// collapseBegin prepares a collapsed move of the subtree v, still
// attached: K_x, R_x, c* and the scale. It reports false (the move is then
// not made) when c* is not a positive finite number.
func (s *Sampler) collapseBegin(v pydt.NodeID) bool {
	e, r := s.attachedR(v)
	s.cE0, s.cR0 = e, r
	s.cKx, s.cRx = s.cK-e, s.cR-r
	cstar := (s.Collapse.Shape + float64(s.cKx)) / (s.Collapse.Rate + s.cRx)
	if !(cstar > 0) || math.IsInf(cstar, 1) {
		s.Stats.NonFinite++
		return false
	}
	s.setScale(cstar)
	return true
}

// collapseEnd brings K and R up to date after a collapsed move of v,
// accepted or not.
func (s *Sampler) collapseEnd(v pydt.NodeID) {
	e, r := s.attachedR(v)
	s.cK += e - s.cE0
	s.cR += r - s.cR0
}

// collapsedLg returns the terms of the collapsed prior's log p(T_r +
// v@pos) - log p(T_r) that are not in attachTermsR's free, for a position
// pos whose attachTermsR gave rbar: with e = [pos on an edge],
// K = K_x + e, R = R_x + rbar,
//
//	lgamma(a+K) - lgamma(a+K_x) - (a+K) log(b+R) + (a+K_x) log(b+R_x),
//
// that is f_c(K, R) - f_c(K_x, R_x) without its terms in c (which cancel
// those of delta - free), formed without differences of large numbers.
func (s *Sampler) collapsedLg(pos pydt.Position, rbar float64) float64 {
	a, b := s.Collapse.Shape, s.Collapse.Rate
	ax := a + float64(s.cKx)
	out := -ax * math.Log1p(rbar/(b+s.cRx))
	if !pos.AtNode {
		out += math.Log(ax) - math.Log(b+s.cRx+rbar)
	}
	return out
}

// collapsedLogRatio is logRatio for a move with c integrated out (see
// above), between collapseBegin and collapseEnd.
func (s *Sampler) collapsedLogRatio(v pydt.NodeID, old, pos pydt.Position, nOld int, llOld, llNew float64) float64 {
	logA := math.Inf(-1)
	if !math.IsInf(llNew, -1) {
		logA = math.NaN()
		if Evaluable(llNew) {
			logA = llNew - llOld
		}
	}
	// The collapsed prior's log p(T_r + v@x) - log p(T_r) is free(x) +
	// collapsedLg(x) up to a term shared by both positions; q(x) is the
	// proposal's density at c*.
	n := s.tr.Count(v)
	_, qOld, rOld, fOld := s.attachTermsR(old, n, pydt.NoNode)
	_, qNew, rNew, fNew := s.attachTermsR(pos, n, pydt.NoNode)
	logA += (fNew + s.collapsedLg(pos, rNew) - qNew) - (fOld + s.collapsedLg(old, rOld) - qOld)
	logA += math.Log(float64(nOld)) - math.Log(float64(nodesAfter(old, pos, nOld)))
	return logA
}
