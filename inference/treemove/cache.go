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
	lg, ln float64 // lgamma(x), log(x) for x = k-β or k+α
	epoch  uint32
}

// newEpoch invalidates every memo entry.
func (s *Sampler) newEpoch() {
	s.epoch++
	if s.epoch == 0 { // wrapped: clear the tables once
		for i := range s.nodes {
			s.nodes[i].epoch = 0
		}
		for _, tab := range [][]countMemo{s.lgB, s.lgA} {
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
	}
}

// nodeEntry returns the memo entry of u, brought up to date.
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

// countAt returns the memo entry of the leaf count k in tab, whose entries
// hold lgamma and log of k+off (off = -β for lgB, α for lgA), brought up to
// date; beyond the table it computes them directly.
func (s *Sampler) countAt(tab []countMemo, k int, off float64) countMemo {
	if uint(k) >= uint(len(tab)) {
		x := float64(k) + off
		return countMemo{lg: lgamma(x), ln: math.Log(x)}
	}
	e := &tab[k]
	if e.epoch != s.epoch {
		x := float64(k) + off
		e.lg, e.ln, e.epoch = lgamma(x), math.Log(x), s.epoch
	}
	return *e
}

// lgRatio returns lgamma(k+n+off) - lgamma(k+off) for n >= 0 from tab (see
// countAt), exactly log(k+off) for n = 1.
func (s *Sampler) lgRatio(tab []countMemo, off float64, k, n int) float64 {
	switch n {
	case 0:
		return 0
	case 1:
		return s.countAt(tab, k, off).ln
	}
	return s.countAt(tab, k+n, off).lg - s.countAt(tab, k, off).lg
}

// lgb returns lgamma(k-β).
func (s *Sampler) lgb(k int) float64 { return s.countAt(s.lgB, k, -s.beta).lg }

// lga returns lgamma(k+α).
func (s *Sampler) lga(k int) float64 { return s.countAt(s.lgA, k, s.alpha).lg }

// lnb returns log(k-β).
func (s *Sampler) lnb(k int) float64 { return s.countAt(s.lgB, k, -s.beta).ln }

// lna returns log(k+α).
func (s *Sampler) lna(k int) float64 { return s.countAt(s.lgA, k, s.alpha).ln }

// lgbRatio returns lgamma(k+n-β) - lgamma(k-β) for n >= 0.
func (s *Sampler) lgbRatio(k, n int) float64 { return s.lgRatio(s.lgB, -s.beta, k, n) }

// lgaRatio returns lgamma(k+n+α) - lgamma(k+α) for n >= 0.
func (s *Sampler) lgaRatio(k, n int) float64 { return s.lgRatio(s.lgA, s.alpha, k, n) }

func lgamma(x float64) float64 {
	l, _ := math.Lgamma(x)
	return l
}
