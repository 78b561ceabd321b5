package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The acceptance ratio of SubtreeMove.
//
// Write T_r for the tree with the subtree v (n leaves, root time t_v)
// detached, and pos for where v is attached: T = T_r + v@pos. The map
// (T_r, pos) -> T is one to one with unit Jacobian (a position on an edge is
// the new branch point's time), so densities of T and of (T_r, pos) agree.
// The move draws v uniformly from the N+I-1 non-root nodes (I branch
// points), detaches it (deterministic), and draws pos' from q(· | T_r)
// restricted to t < t_v, i.e. q(pos' | T_r) / Z(T_r, t_v). The reverse move
// picks the same v in T' = T_r + v@pos' (v's subtree is unchanged), detaches
// it to the same T_r, and must propose pos. Hence
//
//	A = [L(T') p(T') q(pos | T_r) (N+I-1)] / [L(T) p(T) q(pos' | T_r) (N+I'-1)]
//
// where Z cancels (the same T_r and t_v both ways). By exchangeability,
// adding v's leaves one by one with the first at pos,
//
//	p(T_r + v@pos) = p(T_r) q(pos | T_r) g(pos),
//
// where g is the density of v's other n-1 leaves following the first one's
// path (and of v's internal structure). For a leaf g = 1 and the prior and
// proposal cancel, leaving the paper's likelihood ratio (times the node-count
// ratio, which the paper omits and which is needed because I changes when a
// move creates or removes a branch point). For n > 1, g depends on the
// counts along the path to pos, and
//
//	log A = [log L(T') - log L(T)] + [d(pos') - log q(pos')] - [d(pos) - log q(pos)]
//	        + log(N+I-1) - log(N+I'-1),
//
// with d(x) = log p(T_r + v@x) - log p(T_r) from the node terms along the path
// (attachTerms), O(depth) and without an O(N) LogPrior.

// SubtreeMove runs one Metropolis-Hastings subtree move (see the derivation
// above) and reports whether the proposal was accepted. With fewer than two
// leaves it does nothing. The likelihood costs three passes over a path:
// Detach, LogLikIfAttached at the proposal, and Attach at the chosen point.
func (s *Sampler) SubtreeMove() bool {
	tr, m := s.tr, s.m
	if tr.NumLeaves() < 2 {
		return false
	}
	s.Stats.Subtree.Proposed++
	v := s.randomNonRoot()
	if s.collapsing {
		if !s.collapseBegin(v) {
			return false
		}
		defer s.collapseEnd(v)
	}
	nOld := s.numNonRoot()
	llOld := m.LogLik()
	old := m.Detach(v)
	pos, corrNew, ok := s.propose(v, tr.Time(v))
	if !ok {
		s.Stats.GaveUp++
		m.Attach(v, old)
		return false
	}
	logA := s.logRatio(v, old, pos, nOld, llOld, m.LogLikIfAttached(v, pos))
	if s.Informed > 0 {
		logA += s.informedCorr(v, old) - corrNew
	}
	if !s.accept(logA) {
		m.Attach(v, old)
		return false
	}
	return s.moveTo(v, old, pos, &s.Stats.Subtree.Accepted)
}

// logRatio returns the log acceptance ratio of moving the detached subtree v
// from old to pos, given the number of non-root nodes nOld and the log
// likelihoods before and after.
func (s *Sampler) logRatio(v pydt.NodeID, old, pos pydt.Position, nOld int, llOld, llNew float64) float64 {
	if s.collapsing {
		return s.collapsedLogRatio(v, old, pos, nOld, llOld, llNew)
	}
	if math.IsInf(llNew, -1) {
		return math.Inf(-1)
	}
	if !Evaluable(llNew) {
		return math.NaN() // not evaluable; SubtreeMove refuses it
	}
	logA := llNew - llOld
	if n := s.tr.Count(v); n > 1 {
		dNew, qNew := s.attachTerms(pos, n)
		dOld, qOld := s.attachTerms(old, n)
		logA += (dNew - qNew) - (dOld - qOld)
	}
	return logA + math.Log(float64(nOld)) - math.Log(float64(nodesAfter(old, pos, nOld)))
}

// nodesAfter returns the number of non-root nodes after moving a subtree
// from old to pos when there were nOld: a branch point fewer in T_r when
// v's old parent was spliced out (old is on an edge), one more when the
// new position is on an edge.
func nodesAfter(old, pos pydt.Position, nOld int) int {
	nNew := nOld
	if !old.AtNode {
		nNew--
	}
	if !pos.AtNode {
		nNew++
	}
	return nNew
}
