package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Memo tables for the quantities the moves look up many times per move: the
// cumulative hazard A(t_u) and log(1-t_u) of a node, and, for a leaf count
// k, log(k-β) and log(k+α) (tables filled by SetPrior) and lgamma(k-β),
// lgamma(k+α) (the Harmonic table's cache). A node's entry carries the epoch
// it was computed in; SetPrior starts a new epoch, which invalidates all
// entries in O(1). It also keeps the time it was computed for and is
// recomputed whenever the node's time differs, so the table stays correct
// however the tree is changed (node IDs reused, times set by other code): it
// is a pure memo of functions of (time, prior). Look-ups allocate nothing.

type nodeMemo struct {
	t     pydt.Time
	a     float64 // A(t)
	lom   float64 // log(1-t)
	om    float64 // 1-t
	epoch uint32
}

// newEpoch invalidates every memo entry.
func (s *Sampler) newEpoch() {
	s.epoch++
	if s.epoch == 0 { // wrapped: clear the tables once
		for i := range s.nodes {
			s.nodes[i].epoch = 0
		}
		s.epoch = 1
	}
}

// growMemo sizes the node table for the tree (no allocation once sized).
func (s *Sampler) growMemo() {
	if c := s.tr.Cap(); len(s.nodes) < c {
		s.nodes = make([]nodeMemo, c)
	}
	if n := s.tr.NumLeaves() + 1; len(s.pbuf) < n {
		s.pbuf = make([]float64, n) // a degree is at most N
	}
}

// setCounts fills the tables of log(k-β) and log(k+α) for the leaf counts
// k = 0..N and grows the Harmonic table's log-gamma cache to N, so that the
// moves' look-ups neither compute nor allocate (O(N)).
func (s *Sampler) setCounts(alpha, beta float64) {
	n := s.tr.NumLeaves()
	if len(s.lnB) != n+1 {
		s.lnB, s.lnA = make([]float64, n+1), make([]float64, n+1)
	}
	for k := range s.lnB {
		s.lnB[k] = math.Log(float64(k) - beta)
		s.lnA[k] = math.Log(float64(k) + alpha)
	}
	s.h.LogGammaMinusBeta(n) // grows the log-gammas of k+α too
}

// nodeEntry returns the memo entry of u, brought up to date.
func (s *Sampler) nodeEntry(u pydt.NodeID) *nodeMemo {
	e := &s.nodes[u]
	if t := s.tr.Time(u); e.epoch != s.epoch || e.t != t {
		e.t, e.a, e.lom, e.om, e.epoch = t, s.div.Cumulative(t), t.LogOneMinus(), t.OneMinus(), s.epoch
	}
	return e
}

// cum returns A(t_u), the cumulative hazard at u's time (+Inf for a leaf).
func (s *Sampler) cum(u pydt.NodeID) float64 { return s.nodeEntry(u).a }

// logOneMinus returns log(1-t_u).
func (s *Sampler) logOneMinus(u pydt.NodeID) float64 { return s.nodeEntry(u).lom }

// oneMinus returns 1-t_u (0 for a leaf).
func (s *Sampler) oneMinus(u pydt.NodeID) float64 { return s.nodeEntry(u).om }

// lgb returns lgamma(k-β), k >= 1.
func (s *Sampler) lgb(k int) float64 { return s.h.LogGammaMinusBeta(k) }

// lga returns lgamma(k+α), k >= 1.
func (s *Sampler) lga(k int) float64 { return s.h.LogGammaPlusAlpha(k) }

// lnb returns log(k-β) for a leaf count k.
func (s *Sampler) lnb(k int) float64 { return s.lnB[k] }

// lna returns log(k+α) for a leaf count k.
func (s *Sampler) lna(k int) float64 { return s.lnA[k] }

// lgbRatio returns lgamma(k+n-β) - lgamma(k-β) for k >= 1, n >= 0: exactly
// log(k-β) for n = 1, and 0 for n = 0.
func (s *Sampler) lgbRatio(k, n int) float64 {
	if n == 1 {
		return s.lnb(k)
	}
	return s.lgb(k+n) - s.lgb(k)
}

// lgaRatio returns lgamma(k+n+α) - lgamma(k+α) for k >= 1, n >= 0: exactly
// log(k+α) for n = 1, and 0 for n = 0.
func (s *Sampler) lgaRatio(k, n int) float64 {
	if n == 1 {
		return s.lna(k)
	}
	return s.lga(k+n) - s.lga(k)
}
