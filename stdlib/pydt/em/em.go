// Package em fits the divergence times and hyperparameters of a Pitman-Yor
// diffusion tree of fixed structure by variational Bayesian EM, the inner
// loop of the paper's greedy Bayesian EM (Knowles & Ghahramani 2011,
// Section 6.2; docs/em.md gives the derivation).
//
// The model is the PYDT with divergence function a(t) = c/(1-t) and Gaussian
// diffusion of variance σ² = 1/τ per unit time in each of D dimensions; each
// leaf location receives Gaussian evidence through the bp.Model (observed
// values, missing values, noisy observations or EP sites: see EP). The
// locations x get a variational posterior q(x), the smoothness c and the
// precision τ Gamma posteriors q(c), q(τ) (mean field), and the divergence
// times t, the concentration α and the discount β point estimates. EM climbs
//
//	L = E_q[log p(Y, x, u, T | c, τ, α, β)] + E_q[log p(c) + log p(τ)]
//	    + H[q(x)] + H[q(c)] + H[q(τ)] + log p(α) + log p(β)
//
// a lower bound on log p(Y, u, α, β | T), where the times enter through
// their free coordinates u_b = log(s_b - s_parent(b)), s = -log(1-t): the
// density of the times in u is their density in s times the Jacobian
// Π_b (s_b - s_parent(b)). The point estimate of the times is a MAP in u,
// not in t or s: in s the density of a branch point is maximal at s = 0,
// and with β → 1 the structure factor Γ(1-β) makes the density of a star
// with its root at t → 0 unbounded (a degenerate "best tree" that EM found
// on clustered data); in u every gap has an interior maximum (docs/em.md).
// L is maximised by coordinate ascent: each step maximises it over one
// block, so L never decreases when the leaf evidence is Gaussian.
// The steps of one iteration (Step) are
//
//  1. E-step: q(x) = the exact posterior of the locations with σ² = 1/E[τ],
//     by belief propagation (bp.Model.Marginals); from it the expected
//     sufficient statistic of every edge [p i], b_i = ½ Σ_d E[(x_id - x_pd)²].
//  2. q(τ) = Gamma(a + |S| D/2, b + Σ_i b_i / (t_i - t_p)) (NOTES.md,
//     erratum 3), |S| the number of edges, the one from the origin included.
//  3. M-step: all divergence times jointly by L-BFGS (gonum/optimize) with
//     analytic gradients, in free coordinates u that keep the order: the
//     gap in s = -log(1-t) between a node and its parent is e^u.
//  4. q(c) = Gamma(a_c + |I|, b_c + Σ_b J_b s_b) (erratum 2), |I| the number
//     of branch points.
//  5. α, then β, by golden-section search on the terms of L that depend on
//     them (structure and not-diverging terms, and their priors if given).
//
// With Options.Variances each dimension d has its own variance σ²_d = 1/τ_d
// (Neal's DDT), with its own q(τ_d) under Options.PrecPriors: step 2 is
// then q(τ_d) = Gamma(a_d + |S|/2, b_d + Σ_i b_id / (t_i - t_p)) with the
// per-dimension statistics b_id, and the M-step reads Σ_d E[τ_d] b_id
// where it read E[τ] b_i (docs/em.md, "A diffusion variance per
// dimension").
//
// With Options.Noise the precision of the leaves' Gaussian evidence is
// latent too, X ~ Normal(Z, 1/sqrt(θ)) with one θ or one θ_d per column
// (LeafNoise): after the E-step (which enters the evidence at E[θ_g]),
// q(θ_g) = Gamma(a_g + n_g/2, b_g + ½ Σ E[(y − x)²]) from the leaf
// marginals, and the bound gains the matching E_q terms and
// −KL(q(θ_g) ‖ p(θ_g)).
//
// Any of c, τ, α and β may instead be held fixed. With all four fixed and
// Gaussian evidence, L after the E-step is exactly log p(Y, u | T) =
// log p(Y, s | T) + Σ_b log(s_b - s_parent(b)), and the fixed points of EM
// are its stationary points.
package em

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

const log2Pi = 1.8378770664093454835606594728112352797227949472755668

// Options configures a fit. The zero value is not valid: C and Variance
// must be set (as fixed values or as starts).
type Options struct {
	// C is the smoothness c of a(t) = c/(1-t), held fixed when CPrior is
	// nil. With CPrior set, c gets the variational posterior q(c) and C is
	// ignored (the first q(c) is computed from the tree's times).
	C float64
	// CPrior is the Gamma prior of c, or nil to hold c at C.
	CPrior *Gamma
	// Variance is the diffusion variance σ², held fixed when PrecPrior is
	// nil, and otherwise the start: the first q(τ) has mean 1/Variance.
	Variance float64
	// PrecPrior is the Gamma prior of the precision τ = 1/σ², or nil to
	// hold σ² at Variance.
	PrecPrior *Gamma
	// Variances, when not nil, gives each dimension d its own diffusion
	// variance σ²_d (length D; bp.Model.SetVariances), as Neal's Dirichlet
	// diffusion tree learns a scale per dimension: the fixed values when
	// PrecPriors is nil, otherwise the starts (q(τ_d) has mean
	// 1/Variances[d]). Variance and PrecPrior are then ignored.
	Variances []float64
	// PrecPriors, with Variances, are the Gamma priors of the precisions
	// τ_d = 1/σ²_d (length D), each with its own variational posterior
	// q(τ_d); nil holds the variances at Variances.
	PrecPriors []Gamma
	// Alpha and Beta are the concentration and discount: the fixed values,
	// or the starts of those that are learned.
	Alpha, Beta float64
	// LearnAlpha and LearnBeta ask for α and β to be optimised.
	LearnAlpha, LearnBeta bool
	// AlphaPrior and BetaPrior, when set, add log p(α) and log p(β) to the
	// objective (MAP); nil is a flat prior (maximum likelihood). They are
	// used only for learned parameters.
	AlphaPrior *Gamma
	BetaPrior  *BetaDist
	// AlphaMax is the upper end of α's search bracket (default 100, or
	// twice the current α if larger).
	AlphaMax float64
	// MaxIter bounds the iterations of Run (default 200).
	MaxIter int
	// MStepIters bounds the L-BFGS iterations of one M-step (default 50):
	// EM needs an M-step only to raise L, not to reach its maximum.
	MStepIters int
	// Tol stops Run when an iteration raises the objective by less than
	// Tol·(1 + |L|) (default 1e-10).
	Tol float64
	// EP, when set, replaces the leaf evidence at every E-step by EP site
	// approximations of a non-Gaussian likelihood (see EP). L is then an
	// approximation (EP's), not a bound, and need not increase.
	EP *EP
	// Noise, when set, makes the precision of the leaves' Gaussian
	// evidence latent (see LeafNoise): the E-step enters the evidence
	// itself, at the current E[θ_g], and the evidence already in the
	// bp.Model is replaced. It needs Gaussian evidence (no EP).
	Noise *LeafNoise
}

// ErrDivergence is wrapped by the error for divergence functions other than
// a(t) = c/(1-t).
var ErrDivergence = errors.New("em: only the divergence function c/(1-t) is supported")

// EM is the state of a fit: the tree (whose times it changes), its bp.Model,
// the variational posteriors and the point estimates. Use New, then Step or
// Run. It is not safe for concurrent use.
type EM struct {
	m   *bp.Model
	tr  *pydt.Tree
	d   int
	opt Options
	h   *pydt.Harmonic

	qc, qt      Gamma // q(c), q(τ) when learned
	alpha, beta float64

	// With a variance per dimension (Options.Variances): perDim is set,
	// qts holds q(τ_d) when learned, bd the per-dimension edge statistics
	// b_vd = ½ E[(x_vd - x_parent(v),d)²] (Cap()·D), and be the
	// precision-weighted Σ_d E[τ_d] b_vd, so that the time terms read it
	// with E[τ] = 1 (edgePrec).
	perDim bool
	qts    []Gamma
	bd     []float64
	vbuf   []float64 // 1/E[τ_d], the variances of the E-step (estepWith)
	tbuf   []float64 // E[τ_d], the weights of bd in be (weightB)

	// With a latent leaf noise (Options.Noise): qn holds q(θ_g), nCount
	// the observed entries n_g of each group, nStat the statistics S_g of
	// the last E-step, nSet the E[θ_g] last entered as evidence, nConst
	// Σ ½ (log Unit − log 2π) (noise.go).
	qn     []Gamma
	nCount []float64
	nStat  []float64
	nSet   []float64
	nConst float64

	// q(x), summarised by what L needs of it once the E-step is done.
	be   []float64 // per node v: ½ Σ_d E[(x_v - x_parent(v))²] (per dimension: weighted, see bd)
	hx   float64   // H[q(x)] + Σ E_q[log evidence] (+ EP constants)
	mean []float64 // marginals, Cap()·D
	vari []float64

	// Structure of the tree, refreshed by New (the structure is fixed).
	order    []pydt.NodeID // nodes in pre-order
	internal []pydt.NodeID // branch points in pre-order
	idx      []int32       // node → index in internal (-1 for leaves)
	par      []int32       // index of the parent in internal (-1: origin)
	j        []float64     // J_b of each branch point at (α, β)
	leafKids []int         // number of leaf children per branch point
	leafB    []float64     // Σ b over leaf children per branch point

	bound float64
	trace []float64 // L after each iteration
	steps []float64 // L after each sub-step (tests)
	iter  int
	mopt  mstepStats
}

// New prepares a fit of the times of m's tree and of the hyperparameters
// chosen in opt. The tree must be complete and valid and its leaf evidence
// set in m (unless opt.EP supplies it). It returns an error for invalid
// options or tree. A branch point that starts beyond s = -log(1-t) = 600
// (near the overflow of the bound's e^s terms at s = 709; a tree from an
// MCMC chain can be there) has its time in m's tree pulled back first,
// keeping the order of the times (see pullBackStart).
func New(m *bp.Model, opt Options) (*EM, error) {
	tr := m.Tree()
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("em: %w", err)
	}
	if opt.CPrior != nil {
		if err := opt.CPrior.Check(); err != nil {
			return nil, fmt.Errorf("em: prior of c: %w", err)
		}
	} else if !(opt.C > 0) || math.IsInf(opt.C, 1) {
		return nil, fmt.Errorf("em: smoothness c = %v must be positive and finite", opt.C)
	}
	perDim := opt.Variances != nil
	if perDim {
		if err := checkPerDim(m, opt); err != nil {
			return nil, err
		}
		opt.Variance, opt.PrecPrior = math.NaN(), nil
	} else if opt.PrecPriors != nil {
		return nil, errors.New("em: priors of the precisions per dimension (PrecPriors) need Variances, their starts")
	} else if !(opt.Variance > 0) || math.IsInf(opt.Variance, 1) {
		return nil, fmt.Errorf("em: variance %v must be positive and finite", opt.Variance)
	}
	if opt.PrecPrior != nil {
		if err := opt.PrecPrior.Check(); err != nil {
			return nil, fmt.Errorf("em: prior of 1/σ²: %w", err)
		}
	}
	if opt.AlphaPrior != nil {
		if err := opt.AlphaPrior.Check(); err != nil {
			return nil, fmt.Errorf("em: prior of alpha: %w", err)
		}
	}
	if opt.BetaPrior != nil {
		if err := opt.BetaPrior.Check(); err != nil {
			return nil, fmt.Errorf("em: prior of beta: %w", err)
		}
	}
	h, err := pydt.NewHarmonic(opt.Alpha, opt.Beta)
	if err != nil {
		return nil, fmt.Errorf("em: %w", err)
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 200
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-10
	}
	if opt.AlphaMax == 0 {
		opt.AlphaMax = 100
	}
	if opt.EP != nil {
		if err := opt.EP.check(m); err != nil {
			return nil, err
		}
	}
	if opt.MStepIters == 0 {
		opt.MStepIters = 50
	}
	e := &EM{m: m, tr: tr, d: m.Dims(), opt: opt, h: h, alpha: opt.Alpha, beta: opt.Beta, perDim: perDim}
	if e.alpha < 0 && opt.AlphaPrior != nil && opt.LearnAlpha {
		return nil, fmt.Errorf("em: alpha = %v is outside the support of its Gamma prior", e.alpha)
	}
	if opt.Noise != nil {
		if err := e.initNoise(opt.Noise); err != nil {
			return nil, err
		}
	}
	e.structure()
	if e.pullBackStart() {
		if err := m.Recompute(); err != nil {
			return nil, fmt.Errorf("em: the start's times pulled back from t = 1: %w", err)
		}
	}
	e.refreshJ()
	n := tr.Cap()
	e.be = make([]float64, n)
	e.mean = make([]float64, n*e.d)
	e.vari = make([]float64, n*e.d)
	if opt.CPrior != nil {
		e.updateC()
	}
	if opt.PrecPrior != nil {
		a := opt.PrecPrior.Shape + float64(len(e.order)*e.d)/2
		e.qt = Gamma{Shape: a, Rate: a * opt.Variance}
	}
	if perDim {
		e.opt.Variances = slices.Clone(opt.Variances)
		e.bd = make([]float64, n*e.d)
		e.vbuf = make([]float64, e.d)
		e.tbuf = make([]float64, e.d)
		if opt.PrecPriors != nil {
			e.opt.PrecPriors = slices.Clone(opt.PrecPriors)
			e.qts = make([]Gamma, e.d)
			for k, p := range opt.PrecPriors {
				a := p.Shape + float64(len(e.order))/2
				e.qts[k] = Gamma{Shape: a, Rate: a * opt.Variances[k]}
			}
		}
	}
	return e, nil
}

// checkPerDim checks the per-dimension variances and priors of opt.
func checkPerDim(m *bp.Model, opt Options) error {
	if len(opt.Variances) != m.Dims() {
		return fmt.Errorf("em: %d variances for %d dimensions", len(opt.Variances), m.Dims())
	}
	for k, v := range opt.Variances {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("em: variance %v of dimension %d must be positive and finite", v, k+1)
		}
	}
	if opt.PrecPriors == nil {
		return nil
	}
	if len(opt.PrecPriors) != m.Dims() {
		return fmt.Errorf("em: %d priors of the precisions for %d dimensions", len(opt.PrecPriors), m.Dims())
	}
	for k, p := range opt.PrecPriors {
		if err := p.Check(); err != nil {
			return fmt.Errorf("em: prior of 1/σ² of dimension %d: %w", k+1, err)
		}
	}
	return nil
}

// structure records the pre-order, the branch points and their parents.
func (e *EM) structure() {
	tr := e.tr
	e.order = tr.PreOrder(nil)
	e.idx = make([]int32, tr.Cap())
	for i := range e.idx {
		e.idx[i] = -1
	}
	for _, v := range e.order {
		if !tr.IsLeaf(v) {
			e.idx[v] = int32(len(e.internal))
			e.internal = append(e.internal, v)
		}
	}
	k := len(e.internal)
	e.par = make([]int32, k)
	e.j = make([]float64, k)
	e.leafKids = make([]int, k)
	e.leafB = make([]float64, k)
	for i, v := range e.internal {
		e.par[i] = -1
		if p := tr.Parent(v); p != pydt.NoNode {
			e.par[i] = e.idx[p]
		}
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			if tr.IsLeaf(c) {
				e.leafKids[i]++
			}
		}
	}
}

// refreshJ recomputes J_b at the current (α, β).
func (e *EM) refreshJ() {
	for i, v := range e.internal {
		e.j[i] = pydt.NodeJ(e.tr, v, e.alpha, e.beta, e.h)
	}
}

// meanC returns E[c] and E[log c].
func (e *EM) meanC() (float64, float64) {
	if e.opt.CPrior == nil {
		return e.opt.C, math.Log(e.opt.C)
	}
	return e.qc.Mean(), e.qc.MeanLog()
}

// meanPrec returns E[τ] and E[log τ] of the shared precision. With a
// variance per dimension there is none: it returns NaNs, so that a caller
// that should have used meanPrecDim (or edgePrec) makes a bound that Step
// refuses rather than a silent wrong answer.
func (e *EM) meanPrec() (float64, float64) {
	if e.perDim {
		return math.NaN(), math.NaN()
	}
	if e.opt.PrecPrior == nil {
		return 1 / e.opt.Variance, -math.Log(e.opt.Variance)
	}
	return e.qt.Mean(), e.qt.MeanLog()
}

// meanPrecDim returns E[τ_d] and E[log τ_d] of dimension k (the shared
// precision's without a variance per dimension).
func (e *EM) meanPrecDim(k int) (float64, float64) {
	switch {
	case !e.perDim:
		return e.meanPrec()
	case e.opt.PrecPriors == nil:
		v := e.opt.Variances[k]
		return 1 / v, -math.Log(v)
	}
	return e.qts[k].Mean(), e.qts[k].MeanLog()
}

// edgePrec is the precision by which the time terms multiply the edge
// statistics be: E[τ], or 1 with a variance per dimension (be is then
// weighted by E[τ_d] already).
func (e *EM) edgePrec() float64 {
	if e.perDim {
		return 1
	}
	et, _ := e.meanPrec()
	return et
}

// PerDim reports whether the fit has a diffusion variance per dimension
// (Options.Variances).
func (e *EM) PerDim() bool { return e.perDim }

// QPrecs returns q(1/σ²_d) of every dimension and true when the fit has a
// variance per dimension and learns it; otherwise nil and false.
func (e *EM) QPrecs() ([]Gamma, bool) {
	if !e.perDim || e.opt.PrecPriors == nil {
		return nil, false
	}
	return slices.Clone(e.qts), true
}

// MeanVariances returns 1/E[1/σ²_d] for every dimension d, the variances
// the E-step uses (all equal without a variance per dimension).
func (e *EM) MeanVariances() []float64 {
	v := make([]float64, e.d)
	for k := range v {
		t, _ := e.meanPrecDim(k)
		v[k] = 1 / t
	}
	return v
}

// Tree returns the tree being fitted; Step changes its times.
func (e *EM) Tree() *pydt.Tree { return e.tr }

// Alpha returns the current concentration α.
func (e *EM) Alpha() float64 { return e.alpha }

// Beta returns the current discount β.
func (e *EM) Beta() float64 { return e.beta }

// QC returns q(c) and true when c is learned; otherwise the fixed c as a
// zero Gamma and false.
func (e *EM) QC() (Gamma, bool) { return e.qc, e.opt.CPrior != nil }

// QPrec returns q(1/σ²) and true when the precision is learned (false
// with a variance per dimension: see QPrecs).
func (e *EM) QPrec() (Gamma, bool) { return e.qt, e.opt.PrecPrior != nil }

// MeanC returns E[c] (the fixed c when c is not learned).
func (e *EM) MeanC() float64 { c, _ := e.meanC(); return c }

// MeanVariance returns 1/E[1/σ²], the variance the E-step uses; with a
// variance per dimension, NaN (see MeanVariances).
func (e *EM) MeanVariance() float64 {
	if e.perDim {
		return math.NaN()
	}
	t, _ := e.meanPrec()
	return 1 / t
}

// Bound returns L after the last step (NaN before the first), or, after
// Laplace, L at the point where its Hessian was taken (q(x) refitted by
// an E-step there; Trace keeps the steps' values).
func (e *EM) Bound() float64 {
	if e.iter == 0 {
		return math.NaN()
	}
	return e.bound
}

// Refresh refits q(x) to the current times and hyperparameters (an
// E-step) and sets Bound() to the objective there. A fit stopped before
// convergence (an iteration cap, a time budget) ends with Bound() the
// objective with q(x) from before its last iteration's updates of q(θ),
// q(τ), the times and q(c); after Refresh it is the objective at the
// state the fit holds, as after Laplace, so that fits stopped at
// different points are ranked on the same footing. Bound() never falls
// (the E-step maximises over q(x)); Trace and further Steps are
// unaffected. Refresh needs at least one iteration.
func (e *EM) Refresh() error {
	if e.iter == 0 {
		return errors.New("em: Refresh needs at least one EM iteration")
	}
	if err := e.estep(); err != nil {
		return err
	}
	e.bound = e.objective()
	return nil
}

// Trace returns L after each iteration so far.
func (e *EM) Trace() []float64 { return e.trace }

// Iterations returns the number of iterations done.
func (e *EM) Iterations() int { return e.iter }

// Step does one iteration (E-step, q(τ), times, q(c), α, β) and returns
// the objective L after it. A bound that is not finite is an error (the
// iteration is not counted).
func (e *EM) Step() (float64, error) {
	e.steps = e.steps[:0]
	if err := e.estep(); err != nil {
		return math.NaN(), fmt.Errorf("em: E-step: %w", err)
	}
	e.record()
	if e.opt.Noise != nil {
		e.updateNoise()
		e.record()
	}
	if e.opt.PrecPrior != nil || e.opt.PrecPriors != nil {
		e.updatePrec()
		e.record()
	}
	if err := e.mstep(); err != nil {
		return math.NaN(), fmt.Errorf("em: M-step: %w", err)
	}
	e.record()
	if e.opt.CPrior != nil {
		e.updateC()
		e.record()
	}
	if e.opt.LearnAlpha || e.opt.LearnBeta {
		if err := e.updateAlphaBeta(); err != nil {
			return math.NaN(), err
		}
		e.record()
	}
	if math.IsNaN(e.bound) || math.IsInf(e.bound, 0) {
		return math.NaN(), fmt.Errorf("em: iteration %d: the bound is %v (the leaf evidence, an EP site or the hyperparameters are out of range)", e.iter+1, e.bound)
	}
	e.iter++
	e.trace = append(e.trace, e.bound)
	return e.bound, nil
}

func (e *EM) record() {
	e.bound = e.objective()
	e.steps = append(e.steps, e.bound)
}

// Run iterates Step until L rises by less than Tol·(1 + |L|) in an
// iteration, or MaxIter iterations. It reports whether it converged.
func (e *EM) Run() (converged bool, err error) { return e.RunUntil(nil, nil) }

// RunUntil is Run that also stops, before any iteration but the first,
// when stop (if not nil) returns true, and calls each (if not nil) after
// every iteration with the iteration's number (from 1) and the bound.
func (e *EM) RunUntil(stop func() bool, each func(iter int, bound float64)) (converged bool, err error) {
	prev := math.Inf(-1)
	for i := range e.opt.MaxIter {
		if i > 0 && stop != nil && stop() {
			return false, nil
		}
		l, err := e.Step()
		if err != nil {
			return false, err
		}
		if each != nil {
			each(i+1, l)
		}
		if math.Abs(l-prev) < e.opt.Tol*(1+math.Abs(l)) {
			return true, nil
		}
		prev = l
	}
	return false, nil
}

// estep computes q(x) at σ² = 1/E[τ] and the statistics of the bound.
func (e *EM) estep() error { return e.estepWith(true) }

// estepWith is estep; without entropy it leaves the entropy and evidence
// terms (hx) alone and computes only the edge statistics, all that the
// time terms' gradient needs (Laplace).
func (e *EM) estepWith(entropy bool) error {
	m, tr, d := e.m, e.tr, e.d
	// s2 is the shared variance 1/E[τ]; with a variance per dimension
	// vbuf holds each 1/E[τ_d] instead.
	s2 := math.NaN()
	if e.perDim {
		for k := range e.vbuf {
			tk, _ := e.meanPrecDim(k)
			e.vbuf[k] = 1 / tk
		}
		if err := m.SetVariances(e.vbuf); err != nil {
			return err
		}
	} else {
		et, _ := e.meanPrec()
		s2 = 1 / et
		if err := m.SetVariance(s2); err != nil {
			return err
		}
	}
	if e.opt.Noise != nil {
		if err := e.setNoiseEvidence(); err != nil {
			return err
		}
	}
	epConst := 0.0
	if e.opt.EP != nil {
		c, err := e.opt.EP.Fit(m)
		if err != nil {
			return err
		}
		epConst = c
	}
	if err := m.Marginals(e.mean, e.vari); err != nil {
		return err
	}
	hx := epConst
	for _, c := range e.order {
		p := tr.Parent(c)
		bl := tr.BranchLength(c)
		s := s2 * bl
		var b float64
		for k := range d {
			if e.perDim {
				s = e.vbuf[k] * bl
			}
			mp, vp := 0.0, 0.0
			if p != pydt.NoNode {
				mp, vp = e.mean[int(p)*d+k], e.vari[int(p)*d+k]
			}
			mc, vc := m.Message(c, k)
			diff := mc - mp
			var ex, cond float64
			switch {
			case math.IsInf(vc, 1):
				// No evidence below c in this dimension: x_c - x_p is the
				// edge's own increment.
				ex, cond = s, s
			case vc == 0:
				// x_c is known (an observed leaf).
				ex, cond = diff*diff+vp, 0
			default:
				// Given x_p, x_c is N(w x_p + (1-w) m_c, s w), w = v/(v+s):
				// x_c - x_p = (1-w)(m_c - x_p) + noise, no cancellation.
				w := vc / (vc + s)
				a := s / (vc + s)
				ex, cond = a*a*(diff*diff+vp)+s*w, s*w
			}
			b += ex
			if e.perDim {
				e.bd[int(c)*d+k] = ex / 2
			}
			if !entropy {
				continue
			}
			if cond > 0 {
				hx += 0.5 * (log2Pi + 1 + math.Log(cond))
			}
			if tr.IsLeaf(c) && e.opt.Noise == nil {
				// (With a latent noise the evidence terms are
				// noiseTerms.)
				mu, prec := m.Evidence(c, k)
				if prec > 0 && !math.IsInf(prec, 1) {
					mv, vv := e.mean[int(c)*d+k], e.vari[int(c)*d+k]
					r := mu - mv
					hx += 0.5*(math.Log(prec)-log2Pi) - 0.5*prec*(r*r+vv)
				}
			}
		}
		e.be[c] = b / 2
	}
	if entropy {
		e.hx = hx
		if e.opt.Noise != nil {
			e.noiseStats()
		}
	}
	e.weightB()
	return nil
}

// weightB sets, with a variance per dimension, be[v] = Σ_d E[τ_d] b_vd
// from the per-dimension statistics, and the sums over leaf children.
func (e *EM) weightB() {
	tr, d := e.tr, e.d
	if e.perDim {
		for k := range e.tbuf {
			e.tbuf[k], _ = e.meanPrecDim(k)
		}
		for _, c := range e.order {
			var b float64
			for k, tk := range e.tbuf {
				b += tk * e.bd[int(c)*d+k]
			}
			e.be[c] = b
		}
	}
	for i := range e.leafB {
		e.leafB[i] = 0
	}
	for _, c := range e.order {
		if tr.IsLeaf(c) {
			if p := tr.Parent(c); p != pydt.NoNode {
				e.leafB[e.idx[p]] += e.be[c]
			}
		}
	}
}

// timeTerms returns the part of L that depends on the times given q(x),
// q(c), q(τ), α and β:
//
//	Σ_edges [-D/2 log(t_i - t_p) - E[τ] b_i/(t_i - t_p)] - E[c] Σ_b J_b s_b
//	+ Σ_b log(s_b - s_parent(b))
//
// with s_b = -log(1 - t_b), evaluated at the branch point coordinates s
// (indexed as e.internal); the edge from the origin to a lone leaf (N = 1)
// is the constant -E[τ] b.
func (e *EM) timeTerms(s []float64) float64 {
	et := e.edgePrec()
	ec, _ := e.meanC()
	hd := float64(e.d) / 2
	if len(e.internal) == 0 {
		return -et * e.be[e.tr.Root()]
	}
	f := 0.0
	for i, v := range e.internal {
		sp := 0.0
		if e.par[i] >= 0 {
			sp = s[e.par[i]]
		}
		delta := s[i] - sp
		om := -math.Expm1(-delta) // (t_i - t_p)/(1 - t_p)
		if !(om > 0) {
			return math.Inf(-1)
		}
		logL := -sp + math.Log(om)
		f += -hd*logL - et*e.be[v]*math.Exp(sp)/om
		// Leaf children: edges of length 1 - t_v = e^(-s_v).
		f += float64(e.leafKids[i])*hd*s[i] - et*e.leafB[i]*math.Exp(s[i])
		f -= ec * e.j[i] * s[i]
		// The Jacobian of the free coordinate u_b = log(s_b - s_parent):
		// L is a bound on the density of the times in u, not in s.
		f += math.Log(delta)
	}
	return f
}

// objective returns L at the current state (see the package doc).
func (e *EM) objective() float64 {
	_, elc := e.meanC()
	s := e.currentS(nil)
	edges := float64(len(e.order))
	var l float64
	if e.perDim {
		l = e.hx + e.timeTerms(s)
		for k := range e.d {
			_, elt := e.meanPrecDim(k)
			l += edges / 2 * (elt - log2Pi)
		}
		for k, q := range e.qts {
			l -= q.KL(e.opt.PrecPriors[k])
		}
	} else {
		_, elt := e.meanPrec()
		l = e.hx + edges*float64(e.d)/2*(elt-log2Pi) + e.timeTerms(s)
	}
	if e.opt.Noise != nil {
		l += e.noiseTerms()
	}
	l += float64(len(e.internal)) * elc
	l += pydt.LogStructure(e.tr, e.alpha, e.beta)
	if e.opt.CPrior != nil {
		l -= e.qc.KL(*e.opt.CPrior)
	}
	if e.opt.PrecPrior != nil {
		l -= e.qt.KL(*e.opt.PrecPrior)
	}
	l += e.abPrior(e.alpha, e.beta)
	return l
}

// abPrior returns the log priors of the learned α and β.
func (e *EM) abPrior(alpha, beta float64) float64 {
	lp := 0.0
	if e.opt.LearnAlpha && e.opt.AlphaPrior != nil {
		lp += e.opt.AlphaPrior.LogProb(alpha)
	}
	if e.opt.LearnBeta && e.opt.BetaPrior != nil {
		lp += e.opt.BetaPrior.LogProb(beta)
	}
	return lp
}

// currentS appends the s coordinates of the branch points to buf.
func (e *EM) currentS(buf []float64) []float64 {
	buf = buf[:0]
	for _, v := range e.internal {
		buf = append(buf, e.tr.Time(v).S())
	}
	return buf
}

// updatePrec sets q(τ) (or every q(τ_d)) to its optimum given q(x) and
// the times.
func (e *EM) updatePrec() {
	if e.perDim {
		d := e.d
		for k, p := range e.opt.PrecPriors {
			rate := p.Rate
			for _, v := range e.order {
				rate += e.bd[int(v)*d+k] / e.tr.BranchLength(v)
			}
			e.qts[k] = Gamma{Shape: p.Shape + float64(len(e.order))/2, Rate: rate}
		}
		e.weightB()
		return
	}
	p := e.opt.PrecPrior
	rate := p.Rate
	for _, v := range e.order {
		rate += e.be[v] / e.tr.BranchLength(v)
	}
	e.qt = Gamma{Shape: p.Shape + float64(len(e.order)*e.d)/2, Rate: rate}
}

// updateC sets q(c) to its optimum given the times, α and β.
func (e *EM) updateC() {
	p := e.opt.CPrior
	k, s := pydt.CStats(e.tr, e.alpha, e.beta, e.h)
	e.qc = Gamma{Shape: p.Shape + float64(k), Rate: p.Rate + s}
}

// sStartMax is the largest s = -log(1-t) at which New leaves a branch
// point's starting time. The time terms of the bound hold e^s, which
// overflows beyond s = 709: a tree from an MCMC chain near t = 1 can have
// branch points at s in the thousands, whose bound would be -Inf or NaN
// before the first iteration. EM's own fits can put a branch point of
// duplicate rows at s of several hundred, where the bound still rises, so
// the threshold stays well above that and below the overflow: a refit of
// a fitted tree starts where its fit ended.
const sStartMax = 600

// pullBackStart moves the starting time of every branch point beyond
// sStartMax back to sStartMax + H_k, where k counts it and its ancestors
// beyond sStartMax and H_k is the k-th harmonic number: the order of the
// times is kept, the largest s is sStartMax + ln(depth) + 1, and the
// M-step fits the times from there. It reports whether any time moved.
// e.internal is in preorder, so a parent is moved before its children.
func (e *EM) pullBackStart() bool {
	moved := false
	newS := make([]float64, len(e.internal))
	level := make([]int, len(e.internal))
	for i, v := range e.internal {
		s := e.tr.Time(v).S()
		if s <= sStartMax {
			newS[i] = s
			continue
		}
		sp, k := 0.0, 1
		if p := e.par[i]; p >= 0 {
			sp, k = newS[p], level[p]+1
		}
		newS[i] = max(sp, sStartMax) + 1/float64(k)
		level[i] = k
		e.tr.SetTime(v, pydt.TimeFromS(newS[i]))
		moved = true
	}
	return moved
}
