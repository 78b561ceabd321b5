package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Memo tables for the quantities the moves look up many times per move:
// the cumulative hazard A(t_u) and log(1-t_u) of a node, and lgamma(k-β),
// lgamma(k+α), log(k-β), log(k+α) of a leaf count k. Every entry carries
// the epoch it was computed in; SetPrior starts a new epoch, which
// invalidates all entries in O(1). A node's entry also keeps the time it
// was computed for and is recomputed whenever the node's time differs, so
// the table stays correct however the tree is changed (node IDs reused, times
// set by other code): it is a pure memo of functions of (time, prior). Look-ups
// allocate nothing; counts beyond the table (never for a complete tree) are
// computed directly.

type nodeMemo struct {
	t     pydt.Time
	a     float64 // A(t)
	lom   float64 // log(1-t)
	epoch uint32
}

type countMemo struct {
	v     float64
	epoch uint32
}

// newEpoch invalidates every memo entry.
func (s *Sampler) newEpoch() {
	s.epoch++
	if s.epoch == 0 { // wrapped: clear the tables once
		for i := range s.nodes {
			s.nodes[i].epoch = 0
		}
		for _, tab := range [][]countMemo{s.lgB, s.lgA, s.lnB, s.lnA} {
			for i := range tab {
				tab[i].epoch = 0
			}
		}
		s.epoch = 1
	}
}

// growMemo sizes the tables for the tree (no allocation once sized).
func (s *Sampler) growMemo() {
	if c := s.tr.Cap(); len(s.nodes) < c {
		s.nodes = make([]nodeMemo, c)
	}
	if k := s.tr.NumLeaves() + 2; len(s.lgB) < k {
		s.lgB = make([]countMemo, k)
		s.lgA = make([]countMemo, k)
		s.lnB = make([]countMemo, k)
		s.lnA = make([]countMemo, k)
	}
}

// node returns the memo entry of u, brought up to date.
func (s *Sampler) nodeEntry(u pydt.NodeID) *nodeMemo {
	e := &s.nodes[u]
	if t := s.tr.Time(u); e.epoch != s.epoch || e.t != t {
		e.t, e.a, e.lom, e.epoch = t, s.div.Cumulative(t), t.LogOneMinus(), s.epoch
	}
	return e
}

// cum returns A(t_u), the cumulative hazard at u's time (+Inf for a leaf).
func (s *Sampler) cum(u pydt.NodeID) float64 { return s.nodeEntry(u).a }

// logOneMinus returns log(1-t_u).
func (s *Sampler) logOneMinus(u pydt.NodeID) float64 { return s.nodeEntry(u).lom }

func lookup(tab []countMemo, k int, epoch uint32, f func(float64) float64, x float64) float64 {
	if uint(k) >= uint(len(tab)) {
		return f(x)
	}
	e := &tab[k]
	if e.epoch != epoch {
		e.v, e.epoch = f(x), epoch
	}
	return e.v
}

// lgb returns lgamma(k-β).
func (s *Sampler) lgb(k int) float64 { return lookup(s.lgB, k, s.epoch, lgamma, float64(k)-s.beta) }

// lga returns lgamma(k+α).
func (s *Sampler) lga(k int) float64 { return lookup(s.lgA, k, s.epoch, lgamma, float64(k)+s.alpha) }

// lnb returns log(k-β).
func (s *Sampler) lnb(k int) float64 { return lookup(s.lnB, k, s.epoch, math.Log, float64(k)-s.beta) }

// lna returns log(k+α).
func (s *Sampler) lna(k int) float64 { return lookup(s.lnA, k, s.epoch, math.Log, float64(k)+s.alpha) }

// lgbRatio returns lgamma(k+n-β) - lgamma(k-β) for n >= 0.
func (s *Sampler) lgbRatio(k, n int) float64 {
	switch n {
	case 0:
		return 0
	case 1:
		return s.lnb(k)
	}
	return s.lgb(k+n) - s.lgb(k)
}

// lgaRatio returns lgamma(k+n+α) - lgamma(k+α) for n >= 0.
func (s *Sampler) lgaRatio(k, n int) float64 {
	switch n {
	case 0:
		return 0
	case 1:
		return s.lna(k)
	}
	return s.lga(k+n) - s.lga(k)
}
