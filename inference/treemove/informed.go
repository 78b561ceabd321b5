package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The likelihood-informed proposal of SubtreeMove.
//
// The proposal runs the generative process of one new point on the
// remaining tree T_r (restricted to times before t_v, see propose), except
// at the branch points it passes: there, instead of the prior's choice
// (child c with probability (n_c-β)/(m+α), a new branch with (α+βK)/(m+α)),
// it chooses option i with the mixture probability
//
//	p_i = (1-ε) w_i / Σ_j w_j + ε π_i,   w_i = π_i exp(λ (g_i - max_j g_j)),
//
// π_i being the prior's probability, λ = Sampler.Informed, ε =
// Sampler.InformedMix, and g_i a local score of how well the detached
// subtree v fits below option i: with (μ_v, V_v) the upward message about
// x_v (bp.Model.Upward) and (μ_i, V_i) that of child i (of u itself for the
// new branch),
//
//	g_i = Σ_d log N(μ_{v,d} - μ_{i,d}; 0, V_{v,d} + V_{i,d} + σ²_d (t_v - t_u) + σ²_d (t_i - t_u)),
//
// over the dimensions where both messages carry information (the second
// edge term is absent for the new branch): the density of the two messages
// had v diverged from i at u. The ε part keeps every point the prior can
// propose proposable, so the chain stays irreducible whatever the scores.
//
// The proposal density is then the prior one-point density q (attachTerms)
// times Π p_i / π_i over the choices on the path from the root, a product
// that informedCorr recomputes for any position by walking up from it.
// Everything it depends on (T_r, v's message, σ², the prior) is the same in
// the reverse move, and so is the probability that an attempt is valid
// (which renormalises the restricted law), so the Metropolis-Hastings
// ratio gains the term informedCorr(old) - informedCorr(pos) and stays
// exact. With no evidence every g_i is 0 and the proposal is the prior's.

// choices fills s.pbuf with the probabilities p_i of the options at the
// branch point u for the detached subtree v: u's children in sibling order,
// then the new branch. It returns their sum (1 to rounding).
func (s *Sampler) choices(u, v pydt.NodeID) float64 {
	tr := s.tr
	k := tr.Degree(u)
	p := s.pbuf[:k+1]
	al, be := s.alpha, s.beta
	w0 := float64(tr.Count(u)) + al
	s2 := s.m.Variances()
	ou := s.oneMinus(u)
	ev := ou - s.oneMinus(v) // length of the edge u -> v
	mv, vv := s.m.Upward(v)
	top := math.Inf(-1)
	i := 0
	for c := tr.FirstChild(u); c != pydt.NoNode; c = tr.NextSibling(c) {
		mc, vc := s.m.Upward(c)
		g := score(mv, vv, mc, vc, s2, ev+ou-s.oneMinus(c))
		p[i] = g
		top = max(top, g)
		i++
	}
	atom := al + be*float64(k)
	if atom > 0 {
		mu, vu := s.m.Upward(u)
		p[k] = score(mv, vv, mu, vu, s2, ev)
		top = max(top, p[k])
	}
	lam, eps := s.Informed, s.InformedMix
	if math.IsInf(top, 0) || math.IsNaN(top) {
		lam = 0 // no usable score: the prior's choice
	}
	// w_i, then the mixture.
	sw := 0.0
	i = 0
	for c := tr.FirstChild(u); c != pydt.NoNode; c = tr.NextSibling(c) {
		w := (float64(tr.Count(c)) - be) * tilt(lam, p[i], top)
		p[i] = w
		sw += w
		i++
	}
	if atom > 0 {
		p[k] = atom * tilt(lam, p[k], top)
		sw += p[k]
	} else {
		p[k] = 0
	}
	tot := 0.0
	i = 0
	for c := tr.FirstChild(u); c != pydt.NoNode; c = tr.NextSibling(c) {
		p[i] = (1-eps)*p[i]/sw + eps*(float64(tr.Count(c))-be)/w0
		tot += p[i]
		i++
	}
	if atom > 0 {
		p[k] = (1-eps)*p[k]/sw + eps*atom/w0
		tot += p[k]
	}
	return tot
}

// tilt is the factor exp(λ (g - top)) of an option with score g, top
// the largest score; exactly 1 for λ = 0 (the prior's choice), also when
// the scores are infinite or NaN, where the product would be NaN.
func tilt(lam, g, top float64) float64 {
	if lam == 0 {
		return 1
	}
	return math.Exp(lam * (g - top))
}

// score is g_i above: the log density of the difference of two upward
// messages given edges of total length l between them (variance s2[d]·l in
// dimension d), summed over the dimensions where both carry information. It is -Inf or NaN only for
// degenerate messages (choices then falls back to the prior).
func score(mv, vv, mc, vc, s2 []float64, l float64) float64 {
	q, prod, lg := 0.0, 1.0, 0.0
	for d := range mv {
		tot := vv[d] + vc[d] + s2[d]*l
		if math.IsInf(tot, 1) || !(tot > 0) {
			continue
		}
		diff := mv[d] - mc[d]
		q += diff * diff / tot
		prod *= tot
		if prod < 1e-150 || prod > 1e150 { // one logarithm per call, unless it would overflow
			lg += math.Log(prod)
			prod = 1
		}
	}
	return -0.5 * (q + lg + math.Log(prod))
}

// choose draws an option at the branch point u for the detached subtree v
// (see choices): a child, or NoNode for the new branch. It returns the log
// ratio log(p_i / π_i) of the choice made.
func (s *Sampler) choose(u, v pydt.NodeID) (pydt.NodeID, float64) {
	tr := s.tr
	tot := s.choices(u, v)
	k := tr.Degree(u)
	r := s.rng.Float64() * tot
	i := 0
	last, li := pydt.NoNode, 0
	for c := tr.FirstChild(u); c != pydt.NoNode; c = tr.NextSibling(c) {
		if s.pbuf[i] > 0 {
			last, li = c, i
		}
		r -= s.pbuf[i]
		if r < 0 && s.pbuf[i] > 0 {
			return c, s.choiceRatio(u, c, i, tot)
		}
		i++
	}
	if s.pbuf[k] > 0 {
		return pydt.NoNode, s.choiceRatio(u, pydt.NoNode, k, tot)
	}
	return last, s.choiceRatio(u, last, li, tot) // only by rounding
}

// choiceRatio returns log(p_i/tot) - log π_i for option i at u (child c,
// or NoNode for the new branch), s.pbuf holding the choices.
func (s *Sampler) choiceRatio(u, c pydt.NodeID, i int, tot float64) float64 {
	tr := s.tr
	w := float64(tr.Degree(u))*s.beta + s.alpha
	if c != pydt.NoNode {
		w = float64(tr.Count(c)) - s.beta
	}
	return math.Log(s.pbuf[i] / tot * (float64(tr.Count(u)) + s.alpha) / w)
}

// informedCorr returns Σ log(p_i/π_i) over the choices the informed
// proposal makes to reach pos for the detached subtree v: the log ratio of
// its proposal density to the prior's. O(depth · K · D).
func (s *Sampler) informedCorr(v pydt.NodeID, pos pydt.Position) float64 {
	tr := s.tr
	corr := 0.0
	c := pos.Node
	if pos.AtNode {
		tot := s.choices(c, v)
		corr += s.choiceRatio(c, pydt.NoNode, tr.Degree(c), tot)
	}
	for a := tr.Parent(c); a != pydt.NoNode; c, a = a, tr.Parent(a) {
		tot := s.choices(a, v)
		i := 0
		for x := tr.FirstChild(a); x != c; x = tr.NextSibling(x) {
			i++
		}
		corr += s.choiceRatio(a, c, i, tot)
	}
	return corr
}
