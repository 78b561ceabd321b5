package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// attachTerms scores the attachment of a detached subtree with n leaves at
// pos, on the tree as it stands (the remaining tree T_r), without changing
// anything. It returns
//
//	delta = log p(T_r + subtree at pos) - log p(T_r),
//	logq  = log of the one-point sequential density of a new point diverging
//	        at pos (a probability at a branch point),
//
// On an edge both are densities in the coordinate s = -log(1-t) of the new
// branch point's time, not in t: the rate enters as log dA/ds
// (Divergence.LogRateS), which avoids forming log a(t) - s, a difference
// of two large numbers when s is large. Densities in t follow by adding s.
//
// both in O(depth) with O(1) work per ancestor. p is the PYDT prior in its
// node-local form (pydt.NodeLogPrior): attaching the subtree changes only the
// terms of the new parent and of its ancestors, whose leaf counts m grow by n,
// as does the count of the child on the path. Per ancestor a with path child c
// (counts m_a, n_c in T_r) the change is
//
//	lgamma(n_c+n-β) - lgamma(n_c-β) - lgamma(m_a+n+α) + lgamma(m_a+α)
//	  - A(t_a) [ (H_{m_a+n-1} - H_{m_a-1}) - (H_{n_c+n-1} - H_{n_c-1}) ],
//
// a new branch point w at time t above u (count n_u) contributes its whole
// term, log a(t) + lgamma(n_u-β) + lgamma(n-β) - lgamma(1-β) - lgamma(n_u+n+α)
// - A(t)(H_{n_u+n-1} - H_{n_u-1} - H_{n-1}), and an existing branch point b
// that gains the subtree as its (K_b+1)-th child changes by
// log(α+K_b β) + lgamma(n-β) - lgamma(1-β) - lgamma(m_b+n+α) + lgamma(m_b+α)
// - A(t_b)(H_{m_b+n-1} - H_{m_b-1} - H_{n-1}).
//
// The one-point density follows the generative process down the path: on
// each edge into x traversed with m_x earlier points the factor
// exp(-(A(t_x) - A(t_parent)) h_{m_x}), at each branch point passed the choice
// (n_c-β)/(m_a+α), then a(t) h_{n_u} exp(-(A(t)-A(t_parent(u))) h_{n_u}) for a
// divergence at t on the edge above u, or (α+βK_b)/(m_b+α) for a new branch
// at b.
//
// For n = 1 the two agree term by term (delta = logq): that is
// exchangeability, p(T_r + leaf) = p(T_r) q(leaf's position).
func (s *Sampler) attachTerms(pos pydt.Position, n int) (delta, logq float64) {
	delta, logq, _, _ = s.attachTermsR(pos, n, pydt.NoNode)
	return delta, logq
}

// attachTermsR is attachTerms without the terms of the ancestors of top
// (top must be pos.Node or one of its ancestors, or NoNode for all terms),
// that also returns rbar and free (below). The terms above top are the
// same for every position below top (on an edge or at a branch point of
// top's subtree, the edge above top included): at each ancestor of top
// the path child is top's ancestor, whose count does not depend on where
// below top the subtree attaches. So differences of attachTermsR(·, n,
// top) between such positions are differences of attachTerms, at
// O(depth below top) each.
//
// rbar is the change of the J-weighted sum R of the divergence function's
// cumulative (CStatsFor's second value) when the subtree attaches at pos:
// delta's terms in A are
// -A-weighted sums, and rbar is the same sums with the memo's cumulative
// (A itself; the unit cumulative Ā when the sampler's divergence is the
// unit function, as in the collapsed moves, collapse.go). With the scale
// s.cs (1 except in the collapsed moves) the prior is that of the
// divergence function cs·div: every A is multiplied by cs and log a(t)
// gains log cs, which for cs = 1 is exactly the unscaled arithmetic.
//
// free is delta without its terms in the constant: without -cs·rbar and
// without log cs (delta = free + [pos on an edge] log cs - cs·rbar, to
// rounding). The collapsed targets are formed from free and rbar, never
// from delta, whose -cs·rbar can be far larger than the rest (for
// c/(1-t)², Ā grows as e^s).
func (s *Sampler) attachTermsR(pos pydt.Position, n int, top pydt.NodeID) (delta, logq, rbar, free float64) {
	tr, div, h := s.tr, s.div, s.h
	cs := s.cs
	al, be := s.alpha, s.beta
	hn1 := h.H(n - 1)
	lgn := s.lgbRatio(1, n-1) // lgamma(n-β) - lgamma(1-β)
	var c pydt.NodeID
	var pend float64 // rate of the edge into c, whose upper end comes next
	if pos.AtNode {
		b := pos.Node
		mb, kb := tr.Count(b), tr.Degree(b)
		nb := al + float64(kb)*be
		if !(nb > 0) {
			return math.Inf(-1), math.Inf(-1), 0, math.Inf(-1)
		}
		ab := s.cum(b)
		lnb := math.Log(nb)
		rbar = ab * (h.H(mb+n-1) - h.H(mb-1) - hn1)
		free = lnb + lgn - s.lgaRatio(mb, n)
		delta = free - cs*rbar
		rb := h.Rate(mb)
		logq = lnb - s.lna(mb) - cs*(ab*rb)
		c, pend = b, rb
	} else {
		u, t := pos.Node, pos.Time
		nu := tr.Count(u)
		at := div.Cumulative(t)
		lr0 := div.LogRateS(t)
		lr := lr0 + s.lcs
		lgu := s.lgb(nu)
		lgw := s.lga(nu + n)
		logh := lgu - lgw // log h_{n_u} when n = 1
		if n > 1 {
			logh = lgu - s.lga(nu+1)
		}
		rbar = at * (h.H(nu+n-1) - h.H(nu-1) - hn1)
		delta = lr + lgu + lgn - lgw - cs*rbar
		free = lr0 + lgu + lgn - lgw
		ru := h.Rate(nu)
		logq = lr + logh - cs*(at*ru)
		c, pend = u, ru
	}
	for a := tr.Parent(c); a != pydt.NoNode && c != top; c, a = a, tr.Parent(a) {
		ma, nc := tr.Count(a), tr.Count(c)
		aa := s.cum(a)
		ta := aa * ((h.H(ma+n-1) - h.H(ma-1)) - (h.H(nc+n-1) - h.H(nc-1)))
		p := s.lgbRatio(nc, n) - s.lgaRatio(ma, n)
		delta += p - cs*ta
		free += p
		rbar += ta
		ra := h.Rate(ma)
		logq += s.lnb(nc) - s.lna(ma) + cs*(aa*(pend-ra))
		pend = ra
	}
	return delta, logq, rbar, free
}

// propose draws a re-attachment point for a detached subtree whose root is
// at time tv, from the generative process of one new point on the tree as it
// stands, restricted to divergence strictly before tv: each attempt runs the
// process from the origin and is abandoned as soon as the point passes tv
// (it could then only diverge at or after tv); the first valid attempt is
// returned. It reports false after MaxTries invalid attempts. The law of the
// returned point is the one-point density restricted to t < tv and
// renormalised, whatever MaxTries is, since the probability of giving up
// depends only on the tree and tv.
func (s *Sampler) propose(v pydt.NodeID, tv pydt.Time) (pydt.Position, float64, bool) {
	tr, div, h, rng := s.tr, s.div, s.h, s.rng
	al, be := s.alpha, s.beta
	root := tr.Root()
	for range s.MaxTries {
		s.Stats.Tries++
		u := root
		ta := pydt.Origin
		corr := 0.0
		for {
			s.Stats.Steps++
			tu := tr.Time(u)
			// Divergence on (ta, tu) where A reaches A(ta) + E/h_m,
			// found in s from ta (Divergence.Advance), which keeps its
			// precision where A(ta) is large.
			td := div.Advance(ta, rng.ExpFloat64()/(h.Rate(tr.Count(u))*s.cs))
			if td.Before(tu) {
				if !td.Before(tv) {
					break // at or after tv: invalid
				}
				if !ta.Before(td) {
					break // rounded onto the top of the edge: draw again
				}
				return pydt.Position{Node: u, Time: td}, corr, true
			}
			if tr.IsLeaf(u) || !tu.Before(tv) {
				break // past tv (or t = 1 by rounding)
			}
			if s.Informed > 0 {
				next, lr := s.choose(u, v)
				corr += lr
				if next == pydt.NoNode {
					return pydt.Position{Node: u, AtNode: true}, corr, true
				}
				ta, u = tu, next
				continue
			}
			m := tr.Count(u)
			// At branch point u: follow child c with probability
			// (n_c-β)/(m+α), or start a new branch with (α+βK)/(m+α).
			r := rng.Float64() * (float64(m) + al)
			next, last := pydt.NoNode, pydt.NoNode
			for c := tr.FirstChild(u); c != pydt.NoNode; c = tr.NextSibling(c) {
				last = c
				r -= float64(tr.Count(c)) - be
				if r < 0 {
					next = c
					break
				}
			}
			if next == pydt.NoNode {
				if al+be*float64(tr.Degree(u)) > 0 {
					return pydt.Position{Node: u, AtNode: true}, corr, true
				}
				next = last // only by rounding when α+βK = 0
			}
			ta, u = tu, next
		}
	}
	return pydt.Position{}, 0, false
}
