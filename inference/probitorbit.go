package inference

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// probitOrbitStep is a generalised Gibbs move (Liu & Sabatti 2000) along an
// orbit on which the likelihood of the Probit auxiliaries is exactly
// invariant, so that its conditional has no likelihood term at all.
//
// Given the tree and the variance σ²_d of column d, the column's observed
// auxiliaries are u ~ N(0, K), K = σ²_d C + I (C_ij the time of the lowest
// common ancestor of leaves i and j, C_ii = 1), restricted to the orthant of
// Y's signs. With η_d = σ²_d/(σ²_d + 1) = 1/(1 + prec_d), the map γ_h (h > 0)
//
//	η_d → h·η_d        (prec_d → (prec_d + 1)/h − 1),
//	t_b → t_b/h        for every branch point b (leaves stay at t = 1),
//	u_id → g_d·u_id,   g_d² = (1 − η_d)/(1 − h·η_d),
//
// gives K' = g_d² K exactly (off the diagonal σ'²t/h = g²σ²t since η' = hη,
// on it σ'² + 1 = g²(σ² + 1)) and keeps every sign, so
// N(g u; 0, g²K)·g^{n_d} = N(u; 0, K): the Jacobian of u cancels the change
// of the likelihood. It is a group action (γ_a∘γ_b = γ_{ab}), defined for
// max_b t_b < h < min_d 1/η_d = min_d (1 + prec_d). In the coordinates the
// engine scores (the variance's own scalar, the times in s = −log(1 − t)),
// the target along the orbit, in δ = log h (the Haar measure of the
// multiplicative group), is
//
//	f(δ) = Σ_j [log p(v'_j) + log |∂v'_j/∂v_j|] + log p_s(T' | c, α, β) + Σ_b log (∂s'_b/∂s_b),
//
// with log |∂v'/∂v| = −δ for a precision (v' = (v + 1)/h − 1) and
// δ − 2 log(1 − (h − 1)σ²) for a variance, and ∂s'/∂s = (1 − t_b)/(h − t_b).
// It moves log σ² along the direction the data cannot see, where every other
// σ² move changes the likelihood of u and so moves log σ² by about 0.1 per
// sweep on animals (docs/probit-mixing.md). δ is slice sampled from 0 with
// a width that is a quarter of the width of δ's domain, log(min_d(1 +
// prec_d)/max_b t_b), which is the same at every point of the orbit, so the
// update commutes with translation of δ as Liu and Sabatti's theorem needs.
// Each evaluation costs the tree prior and the variance's prior (O(number of
// nodes)); the accepted point costs one recomputation of the messages.
type probitOrbitStep struct {
	k          int    // the PYDT's index in Model.Trees
	of         string // " of Y", the data, in a model with several PYDTs
	tof        string // " of Z", the PYDT's variable, in a model with several
	v          *graph.Var
	p          treeParam // the variance's scalar or array element, unless dims
	reciprocal bool      // variance = 1/v (a precision), else variance = v
	dims       bool      // v is a vector: element d is dimension d's
	// mutation breaks the move on purpose, for the invariance test to show
	// that it detects each such error; always 0 in the engine.
	mutation orbitMutation
}

// orbitMutation names a deliberate error of probitOrbitStep (test only).
type orbitMutation int

const (
	orbitExact          orbitMutation = iota
	orbitNoVarJacobian                // the variance's Jacobian term dropped
	orbitNoTimeJacobian               // the times' Jacobian term dropped
	orbitGSquared                     // u scaled by g² instead of g
	orbitTimesFixed                   // the times not scaled
)

// probitOrbit returns the move of the k-th PYDT when its leaf factor is a
// stdlib.ThresholdLeaf (unit noise, only the sign observed) and its
// variance is a latent scalar v or 1/v, or per dimension v[d] or 1/v[d],
// that enters nothing else (the conditions of the ridge move).
func probitOrbit(m *Model, k int) (Updater, bool) {
	b := m.Trees[k]
	if b.Threshold() == nil || b.Data == nil {
		return nil, false
	}
	rs, ok := ridge(m, k)
	if !ok {
		return nil, false
	}
	return &probitOrbitStep{k: k, of: dataOf(m, k), tof: treeOf(m, k), v: rs.v, p: rs.p, reciprocal: rs.reciprocal, dims: rs.dims}, true
}

// Name is "orbit(prec, times, u)" ("orbit(prec[d], times, u)" with a
// variance per dimension; "orbit(precZ, times of Z, u of Y)" in a model
// with several PYDTs).
func (p *probitOrbitStep) Name() string {
	v := p.v.Name + "[d]"
	if !p.dims {
		v = p.p.name()
	}
	return "orbit(" + v + ", times" + p.tof + ", u" + p.of + ")"
}

func (p *probitOrbitStep) Explain() string {
	return fmt.Sprintf("generalised Gibbs move (Liu & Sabatti 2000) along the orbit on which the likelihood of the Probit auxiliaries u%s is exactly invariant: "+
		"η = σ²/(σ²+1) → h·η, every divergence time t%s → t/h, u → g·u with g² = (1 − η)/(1 − h·η); "+
		"log h slice sampled from the priors of %s and the tree alone (no likelihood), so %s moves along the direction the data cannot see",
		p.of, p.tof, p.varName(), p.varName())
}

// varName is the variance's variable, or for an array element the
// element, as the model writes it.
func (p *probitOrbitStep) varName() string {
	if p.dims {
		return p.v.Name
	}
	return p.p.name()
}

// values are the variance's values the move changes: every element of a
// vector per dimension, the scalar, or the one array element.
func (p *probitOrbitStep) values(ch *Chain) []float64 {
	xs := ch.st.Env.Values[p.v.ID]
	if p.dims {
		return xs
	}
	return xs[p.p.off : p.p.off+1]
}

// logPrior is the log density of the variance's own factor (its element's
// for an array element).
func (p *probitOrbitStep) logPrior(ch *Chain) float64 {
	if p.dims {
		return ch.logFactor(p.v.Def)
	}
	return p.p.logPrior(ch)
}

// orbitScratch is a chain's scratch space for probitOrbitStep.
type orbitScratch struct {
	x0 []float64 // the variance's values before the move
	q  []float64 // per variance element: 1 − (h − 1)σ²_j at the accepted h
}

// newVariance returns the variance's scalar moved by γ_h (em = h − 1 =
// e^δ − 1) from x0, its log Jacobian, and q = 1 − em·σ² = g^{-2}; ok is
// false outside the domain (q ≤ 0) or where the value is not a positive
// finite number.
func (p *probitOrbitStep) newVariance(x0, delta, em float64) (x, logJ, q float64, ok bool) {
	if p.reciprocal {
		// prec' = (prec + 1)/h − 1 = (prec − em)/h, q = (prec − em)/prec.
		x = (x0 - em) * math.Exp(-delta)
		q = (x0 - em) / x0
		logJ = -delta
	} else {
		// σ'² = hσ²/(1 − em·σ²), ∂σ'²/∂σ² = h/q².
		q = 1 - em*x0
		x = x0 * math.Exp(delta) / q
		logJ = delta - 2*math.Log(q)
	}
	if p.mutation == orbitNoVarJacobian {
		logJ = 0
	}
	if !(q > 0) || !(x > 0) || math.IsInf(x, 1) {
		return 0, 0, 0, false
	}
	return x, logJ, q, true
}

// at moves the variance and the times to γ_h of their saved values
// (h = e^δ) and returns f(δ), -Inf outside the domain or where a density is
// not finite. The auxiliaries and the messages are left alone: f needs
// neither.
func (p *probitOrbitStep) at(ch *Chain, delta float64) float64 {
	t := ch.trees[p.k]
	em := math.Expm1(delta)
	xs := p.values(ch)
	var lp float64
	for j, x0 := range ch.probit.orbit.x0 {
		x, logJ, _, ok := p.newVariance(x0, delta, em)
		if !ok {
			return math.Inf(-1)
		}
		xs[j] = x
		lp += logJ
	}
	if err := ch.m.Refresh(ch.st.Env); err != nil {
		ch.record(err)
		return math.Inf(-1)
	}
	lp += p.logPrior(ch)
	jt, ok := orbitTimes(ch, t, delta, em, p.mutation)
	if !ok {
		return math.Inf(-1)
	}
	lp += jt
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return math.Inf(-1)
	}
	return lp
}

// orbitTimes sets every branch point of t to γ_h of its saved time
// (t → t/h, h = e^δ, em = h − 1; Chain.saveBranchTimes) and returns the log
// Jacobian of that map in s plus the tree prior in s; ok is false where a
// time would pass t = 1, the times are not in order, or the sum is not
// finite. The probit and noise orbits share it.
func orbitTimes(ch *Chain, t *chainTree, delta, em float64, mutation orbitMutation) (float64, bool) {
	tr := t.Tree
	var lp float64
	for i, b := range ch.internal {
		s := ch.saved[i].S()
		s1, ok := orbitTime(s, delta, em)
		if !ok {
			return 0, false
		}
		if mutation == orbitTimesFixed {
			s1 = s
		}
		tr.SetTime(b, pydt.TimeFromS(s1))
		// log ∂s'/∂s = log(1 − t) − log(h − t) = −s + s' − δ; −s is
		// constant along the orbit.
		if mutation != orbitNoTimeJacobian {
			lp += s1 - delta
		}
	}
	if !validTimes(tr, ch.internal) {
		return 0, false
	}
	lp += t.logTreeS()
	return lp, !math.IsNaN(lp) && !math.IsInf(lp, 0)
}

// logMaxSavedT is log max_b t_b over the saved branch times, the lower end
// of both orbits' domain in δ = log h.
func logMaxSavedT(ch *Chain) float64 {
	maxS := 0.0
	for _, tb := range ch.saved {
		maxS = max(maxS, tb.S())
	}
	return math.Log1p(-math.Exp(-maxS))
}

// orbitTime is s' = −log(1 − t/h) for s = −log(1 − t), h = e^δ, em = h − 1:
// 1 − t/h = (h − t)/h with h − t = em + e^{−s}. ok is false where h ≤ t
// (the time would pass t = 1) or s' is not finite.
func orbitTime(s, delta, em float64) (float64, bool) {
	if em == 0 {
		return s, true
	}
	var s1 float64
	if e := math.Exp(-s); e > math.Abs(em) {
		// h − t = e^{−s}(1 + em·e^s), |em·e^s| < 1: accurate for t near 1.
		s1 = s + delta - math.Log1p(em/e)
	} else {
		x := em + e
		if !(x > 0) {
			return 0, false
		}
		s1 = delta - math.Log(x)
	}
	if !(s1 >= 0) || math.IsInf(s1, 1) {
		return 0, false
	}
	return s1, true
}

// width is the slice width: a quarter of the width of δ's domain,
// log(min_j 1/η_j) − log(max_b t_b), which γ_h leaves unchanged (both ends
// shift by −δ). ok is false when the domain is empty or not finite.
func (p *probitOrbitStep) width(ch *Chain) (float64, bool) {
	hi := math.Inf(1)
	for _, x0 := range ch.probit.orbit.x0 {
		prec := x0
		if !p.reciprocal {
			prec = 1 / x0
		}
		hi = min(hi, math.Log1p(prec))
	}
	lo := logMaxSavedT(ch)
	w := (hi - lo) / 4
	return w, w > 0 && !math.IsInf(w, 0)
}

func (p *probitOrbitStep) update(ch *Chain) error {
	t := ch.trees[p.k]
	tr := t.Tree
	ch.probit.obs, ch.probit.sign = observed(ch, t.b, ch.probit.obs, ch.probit.sign)
	if len(ch.probit.obs) == 0 {
		return nil // nothing observed: the auxiliaries are not part of the state
	}
	ch.saveBranchTimes(tr)
	if len(ch.internal) == 0 {
		return nil
	}
	sc := &ch.probit.orbit
	sc.x0 = append(sc.x0[:0], p.values(ch)...)
	w, ok := p.width(ch)
	if !ok {
		ch.Skipped++
		return nil
	}
	delta, ok, err := sampleOrbit(ch, scalar.Slice{Width: w}, func(dl float64) float64 { return p.at(ch, dl) })
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if !ok {
		// No finite density at the current state along its orbit: leave it.
		ch.Skipped++
		return p.restore(ch)
	}
	// The accepted point: scale u column by column and recompute the
	// messages for the new times, variance and evidence.
	em := math.Expm1(delta)
	sc.q = sc.q[:0]
	for _, x0 := range sc.x0 {
		_, _, q, _ := p.newVariance(x0, delta, em)
		sc.q = append(sc.q, q)
	}
	d := t.b.D
	g := func(k int) float64 {
		q := sc.q[0]
		if p.dims {
			q = sc.q[k%d]
		}
		if p.mutation == orbitGSquared {
			return 1 / q
		}
		return 1 / math.Sqrt(q)
	}
	for _, k := range ch.probit.obs {
		t.aux[k] *= g(k)
	}
	if err := p.commit(ch); err == nil {
		return nil
	} else if !errors.Is(err, errOrbitRefused) {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	// The moved state cannot be scored in float64 (an infinite or NaN
	// likelihood): refuse it and return to the state before the move.
	for _, k := range ch.probit.obs {
		t.aux[k] /= g(k)
	}
	ch.Skipped++
	return p.restore(ch)
}

// errOrbitRefused marks a moved state whose likelihood is not finite.
var errOrbitRefused = errors.New("the moved state has no finite likelihood")

// commit passes the chain's variance, auxiliaries and times to the
// messages and recomputes them; it returns errOrbitRefused when the
// likelihood is not finite.
func (p *probitOrbitStep) commit(ch *Chain) error {
	t := ch.trees[p.k]
	if err := t.syncVariance(ch.st.Env); err != nil {
		return errors.Join(errOrbitRefused, err)
	}
	d := t.b.D
	for _, k := range ch.probit.obs {
		if err := t.lik.SetEvidence(pydt.NodeID(k/d), k%d, t.aux[k], 1); err != nil {
			return errors.Join(errOrbitRefused, err)
		}
	}
	return t.recomputeOrRefuse()
}

// recomputeOrRefuse recomputes t's messages after an orbit move and
// returns errOrbitRefused (joined with the cause) when the moved state's
// likelihood has no finite value; any other error as it is.
func (t *chainTree) recomputeOrRefuse() error {
	if err := t.lik.Recompute(); err != nil {
		if errors.Is(err, bp.ErrNoDensity) {
			return errors.Join(errOrbitRefused, err)
		}
		return err
	}
	if ll := t.lik.LogLik(); math.IsNaN(ll) || math.IsInf(ll, 0) {
		return errOrbitRefused
	}
	return nil
}

// restore puts back the saved times and variance (the auxiliaries are the
// caller's) and recomputes the messages.
func (p *probitOrbitStep) restore(ch *Chain) error {
	t := ch.trees[p.k]
	ch.restoreBranchTimes(t.Tree)
	copy(p.values(ch), ch.probit.orbit.x0)
	if err := ch.m.Refresh(ch.st.Env); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if err := p.commit(ch); err != nil {
		return fmt.Errorf("%s: restoring the state before the move: %w", p.Name(), err)
	}
	return nil
}
