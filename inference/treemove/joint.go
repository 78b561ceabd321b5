package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// JointScore is the caller's part of JointSubtreeMove: the state that moves
// with the tree (for the probit model, the auxiliaries of the moved
// subtree's leaves, transported in non-centred coordinates) and its part
// of the acceptance ratio.
type JointScore interface {
	// Ratio returns the log of the caller's part of the acceptance ratio
	// of moving the detached subtree v from old to pos, evaluated on the
	// remaining tree (v detached, the tree's messages current). It takes
	// the place of the likelihood ratio of SubtreeMove; -Inf refuses the
	// proposal, and NaN or +Inf refuse it as not evaluable (counted in
	// Stats.NonFinite). It may keep what it needs for Commit.
	Ratio(v pydt.NodeID, old, pos pydt.Position) float64
	// Prepare is called when the proposal scored by the last Ratio passed
	// the acceptance test, before anything changes: it completes what
	// Commit needs (work that only an accepted proposal needs may be left
	// to it), and false refuses the proposal (a numerical failure).
	Prepare(v pydt.NodeID) bool
	// Commit is called once v is attached at pos, after Ratio(v, old,
	// pos) was accepted: it sets the state that moves with the tree (the
	// model's evidence of v's leaves).
	Commit(v pydt.NodeID) error
	// Revert undoes Commit, when the committed state's log likelihood
	// turns out not to be finite (the move is then refused).
	Revert(v pydt.NodeID) error
}

// JointSubtreeMove runs one Metropolis-Hastings subtree move whose
// likelihood part is the caller's (JointScore): it draws v uniformly from
// the non-root nodes, does nothing more when v has more than maxLeaves
// leaves (maxLeaves ≤ 0: no bound), detaches v, proposes a re-attachment
// point from the prior's one-point process restricted to times before t_v
// (never the informed proposal, whose choices read v's evidence, which the
// caller's state moves), and accepts with the prior, proposal and
// node-count terms of SubtreeMove's ratio (subtree.go) plus sc.Ratio. The
// choice of v, the bound and the proposal depend only on v's subtree and
// the remaining tree, which the reverse move shares, so the move is exact
// whenever sc's part is.
//
// It reports whether a move was proposed (v within the bound and a point
// drawn) and whether it was accepted; an error is Commit's or Revert's.
// It does not touch Stats.Subtree.
func (s *Sampler) JointSubtreeMove(maxLeaves int, sc JointScore) (proposed, accepted bool, err error) {
	tr, m := s.tr, s.m
	if tr.NumLeaves() < 2 {
		return false, false, nil
	}
	v := s.randomNonRoot()
	if maxLeaves > 0 && tr.Count(v) > maxLeaves {
		return false, false, nil
	}
	nOld := s.numNonRoot()
	old := m.Detach(v)
	informed := s.Informed
	s.Informed = 0
	pos, _, ok := s.propose(v, tr.Time(v))
	s.Informed = informed
	if !ok {
		s.Stats.GaveUp++
		m.Attach(v, old)
		return false, false, nil
	}
	logA := s.logRatio(v, old, pos, nOld, 0, 0)
	if !math.IsInf(logA, -1) {
		logA += sc.Ratio(v, old, pos)
	}
	if math.IsNaN(logA) || math.IsInf(logA, 1) {
		s.Stats.NonFinite++
		m.Attach(v, old)
		return true, false, nil
	}
	if (logA >= 0 || s.rng.Float64() < math.Exp(logA)) && sc.Prepare(v) {
		m.Attach(v, pos)
		if err := sc.Commit(v); err != nil {
			return true, false, err
		}
		if s.settled() {
			return true, true, nil
		}
		if err := sc.Revert(v); err != nil {
			return true, false, err
		}
		m.Detach(v)
	}
	m.Attach(v, old)
	return true, false, nil
}
