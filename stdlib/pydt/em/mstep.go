package em

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// mstepStats counts the work of the M-steps (for tests and benchmarks).
type mstepStats struct {
	evals, fails int
}

// The M-step maximises timeTerms over the times of the branch points. Its
// free coordinates are u, one per branch point b (in pre-order): the gap in
// s = -log(1-t) between b and its parent (the origin for the root) is e^u,
//
//	s_b = s_parent(b) + e^(u_b),
//
// so every u ∈ R^K is a valid, strictly ordered set of times and L-BFGS
// needs no constraints; t = 1 is s = +Inf, out of reach, as the leaves'
// edges require.

// sFromU writes the s coordinates for u into s.
func (e *EM) sFromU(s, u []float64) {
	for i := range e.internal {
		sp := 0.0
		if e.par[i] >= 0 {
			sp = s[e.par[i]]
		}
		s[i] = sp + math.Exp(u[i])
	}
}

// uFromS writes the free coordinates of the times s into u.
func (e *EM) uFromS(u, s []float64) {
	for i := range e.internal {
		sp := 0.0
		if e.par[i] >= 0 {
			sp = s[e.par[i]]
		}
		u[i] = math.Log(s[i] - sp)
	}
}

// gradS writes the gradient of timeTerms with respect to s into g.
//
// For the edge from p to i, with Δ = s_i - s_p and l = t_i - t_p =
// e^(-s_p)(1 - e^(-Δ)), the term f = -D/2 log l - E[τ] b/l has
// df/dlog l = -D/2 + E[τ] b/l =: g, and
//
//	dlog l/ds_i = 1/(e^Δ - 1),  dlog l/ds_p = -1/(1 - e^(-Δ)),
//
// both formed with expm1; an edge into a leaf has dlog l/ds_p = -1. The
// node term -E[c] J_b s_b adds its coefficient.
func (e *EM) gradS(g, s []float64) {
	et := e.edgePrec()
	ec, _ := e.meanC()
	hd := float64(e.d) / 2
	for i := range g {
		g[i] = 0
	}
	for i, v := range e.internal {
		sp := 0.0
		if e.par[i] >= 0 {
			sp = s[e.par[i]]
		}
		delta := s[i] - sp
		om := -math.Expm1(-delta)
		gl := -hd + et*e.be[v]*math.Exp(sp)/om
		g[i] += gl / math.Expm1(delta)
		if e.par[i] >= 0 {
			g[e.par[i]] -= gl / om
		}
		// Leaf children: l = e^(-s_i), dlog l/ds_i = -1.
		g[i] -= float64(e.leafKids[i])*(-hd) + et*e.leafB[i]*math.Exp(s[i])
		g[i] -= ec * e.j[i]
		// Jacobian term log(s_i - s_p).
		g[i] += 1 / delta
		if e.par[i] >= 0 {
			g[e.par[i]] -= 1 / delta
		}
	}
}

// gradU writes the gradient of timeTerms with respect to u into gu, given
// s = sFromU(u) and scratch space gs: ds_j/du_b = e^(u_b) for every branch
// point j in b's subtree, so dF/du_b = e^(u_b) Σ_{j below b} dF/ds_j,
// accumulated children before parents.
func (e *EM) gradU(gu, u, s, gs []float64) {
	e.gradS(gs, s)
	for i := len(e.internal) - 1; i >= 0; i-- {
		gu[i] = math.Exp(u[i]) * gs[i]
		if p := e.par[i]; p >= 0 {
			gs[p] += gs[i]
		}
	}
}

// mstep maximises L over the times by L-BFGS and writes them to the tree,
// unless the optimiser found nothing better than the current times.
func (e *EM) mstep() error {
	k := len(e.internal)
	if k == 0 {
		return nil
	}
	s0 := e.currentS(make([]float64, 0, k))
	u0 := make([]float64, k)
	e.uFromS(u0, s0)
	f0 := e.timeTerms(s0)
	s := make([]float64, k)
	gs := make([]float64, k)
	prob := optimize.Problem{
		Func: func(u []float64) float64 {
			e.mopt.evals++
			e.sFromU(s, u)
			f := e.timeTerms(s)
			if math.IsNaN(f) {
				return math.Inf(1)
			}
			return -f
		},
		Grad: func(grad, u []float64) {
			e.sFromU(s, u)
			e.gradU(grad, u, s, gs)
			for i := range grad {
				grad[i] = -grad[i]
			}
		},
	}
	// EM needs each M-step only to raise L (generalised EM): a bounded
	// number of L-BFGS iterations from the current times suffices, and
	// the outer iterations converge to the same fixed points.
	settings := &optimize.Settings{
		GradientThreshold: 1e-8,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-11, Relative: 1e-11, Iterations: 5},
		MajorIterations:   e.opt.MStepIters,
	}
	res, err := optimize.Minimize(prob, u0, settings, &optimize.LBFGS{})
	if res == nil {
		e.mopt.fails++
		if err != nil {
			return fmt.Errorf("L-BFGS: %w", err)
		}
		return nil
	}
	if err != nil {
		// A line search that fails near the optimum is not fatal: keep
		// the best point if it improves L.
		e.mopt.fails++
	}
	if !(-res.F > f0) {
		return nil
	}
	e.sFromU(s, res.X)
	return e.setTimes(s)
}

// setTimes writes the branch point coordinates s to the tree (nudging a
// time that rounds onto its parent's to the next float64) and brings the
// model's messages up to date.
func (e *EM) setTimes(s []float64) error {
	for i, v := range e.internal {
		sp := 0.0
		if e.par[i] >= 0 {
			sp = s[e.par[i]]
		}
		if !(s[i] > sp) {
			s[i] = math.Nextafter(sp, math.Inf(1))
		}
		if math.IsInf(s[i], 1) || math.IsNaN(s[i]) {
			return fmt.Errorf("branch point %d: time s = %v out of range", v, s[i])
		}
		e.tr.SetTime(v, pydt.TimeFromS(s[i]))
	}
	return e.m.Recompute()
}

// abTerms returns the terms of L that depend on (α, β), given the
// statistics abs of the tree at divergence c/(1-t), c = E[c]: the
// structure terms and -E[c] Σ_b J_b s_b (in their edge form, from
// pydt.AlphaBetaStats.LogPriorS, which adds the constant Σ_b log E[c]) and
// the priors; -Inf outside the domain.
func (e *EM) abTerms(abs *pydt.AlphaBetaStats, alpha, beta float64) float64 {
	if pydt.CheckPitmanYor(alpha, beta) != nil {
		return math.Inf(-1)
	}
	return abs.LogPriorS(alpha, beta, e.h) + e.abPrior(alpha, beta)
}

// updateAlphaBeta does one round of coordinate ascent: α by golden-section
// search with β fixed, then β with α fixed. A search result replaces the
// current value only if it raises the terms (the searches assume, but do
// not need, unimodality).
func (e *EM) updateAlphaBeta() error {
	const tol = 1e-7
	ec, _ := e.meanC()
	abs := pydt.NewAlphaBetaStats(e.tr, pydt.DivInv{C: ec})
	if e.opt.LearnAlpha {
		lo := -2 * e.beta
		if e.opt.AlphaPrior != nil {
			lo = 0
		}
		hi := math.Max(e.opt.AlphaMax, 2*e.alpha)
		f := func(a float64) float64 { return e.abTerms(abs, a, e.beta) }
		x, fx, err := GoldenMax(f, lo, hi, tol*(1+hi-lo))
		if err != nil {
			return fmt.Errorf("em: alpha: %w", err)
		}
		if fx > f(e.alpha) {
			e.alpha = x
		}
	}
	if e.opt.LearnBeta {
		lo := math.Max(0, -e.alpha/2)
		hi := math.Nextafter(1, 0)
		f := func(b float64) float64 { return e.abTerms(abs, e.alpha, b) }
		x, fx, err := GoldenMax(f, lo, hi, tol)
		if err != nil {
			return fmt.Errorf("em: beta: %w", err)
		}
		if fx > f(e.beta) {
			e.beta = x
		}
	}
	if err := e.h.Reset(e.alpha, e.beta); err != nil {
		return fmt.Errorf("em: %w", err)
	}
	e.refreshJ()
	return nil
}
