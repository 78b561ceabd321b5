package em

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// LeafNoise makes the precision of the leaves' Gaussian evidence latent:
// the observation of leaf i in dimension d is
//
//	y_id ~ N(x_id, 1/(θ_g Unit[k])),   k = i·D + d,
//
// with θ_g a noise precision under a Gamma prior, one shared by every entry
// (len(Priors) = 1, g = 0) or one per column (len(Priors) = D, g = d), as
// in X ~ Normal(Z, 1 / sqrt(noise)) over leaf locations Z. EM gives each θ_g
// a variational posterior q(θ_g), Gamma, mean field with q(x), q(c) and
// q(τ): the E-step enters the evidence N(Mean[k]; x_id, 1/(E[θ_g] Unit[k])),
// and after it
//
//	q(θ_g) = Gamma(a_g + n_g/2, b_g + ½ Σ_{k in g} Unit[k] E[(Mean[k] − x_id)²])
//
// n_g the observed entries of group g, the expectation under the E-step's
// leaf marginals; the bound gains Σ_g [n_g/2 E[log θ_g] − E[θ_g] S_g −
// KL(q(θ_g) ‖ p(θ_g))] + Σ_k ½ (log Unit[k] − log 2π), S_g the sum above
// (docs/em.md, "A latent observation noise").
type LeafNoise struct {
	// Mean and Unit hold, for entry k = i·D + d (leaf i, that is node i of
	// the tree, and dimension d), the evidence mean and the evidence
	// precision per unit of noise precision. Unit 0 marks a missing entry
	// (no evidence); otherwise Unit must be positive and finite and Mean
	// finite. A fit reads them and does not copy them: they must not
	// change while it runs.
	Mean, Unit []float64
	// Priors are the Gamma priors of the noise precisions: one, shared by
	// every entry, or D, one per column.
	Priors []Gamma
	// Starts are E[θ_g] at the start, the precisions of the first E-step
	// (one per prior).
	Starts []float64
}

// group returns the noise precision's index of entry k.
func (n *LeafNoise) group(k, d int) int {
	if len(n.Priors) == 1 {
		return 0
	}
	return k % d
}

// check checks n for a model of nLeaves leaves in d dimensions.
func (n *LeafNoise) check(nLeaves, d int) error {
	if len(n.Mean) != nLeaves*d || len(n.Unit) != nLeaves*d {
		return fmt.Errorf("em: leaf noise: %d means and %d unit precisions for %d leaves × %d dimensions", len(n.Mean), len(n.Unit), nLeaves, d)
	}
	if len(n.Priors) != 1 && len(n.Priors) != d {
		return fmt.Errorf("em: leaf noise: %d priors for %d dimensions (1 or %d)", len(n.Priors), d, d)
	}
	if len(n.Starts) != len(n.Priors) {
		return fmt.Errorf("em: leaf noise: %d starts for %d priors", len(n.Starts), len(n.Priors))
	}
	for g, p := range n.Priors {
		if err := p.Check(); err != nil {
			return fmt.Errorf("em: prior of noise precision %d: %w", g+1, err)
		}
		if s := n.Starts[g]; !(s > 0) || math.IsInf(s, 1) {
			return fmt.Errorf("em: start %v of noise precision %d must be positive and finite", s, g+1)
		}
	}
	for k, u := range n.Unit {
		if u == 0 {
			continue
		}
		if !(u > 0) || math.IsInf(u, 1) {
			return fmt.Errorf("em: leaf noise: unit precision %v of leaf %d, dimension %d must be positive and finite (or 0: missing)", u, k/d+1, k%d+1)
		}
		if x := n.Mean[k]; math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("em: leaf noise: mean %v of leaf %d, dimension %d is not finite", x, k/d+1, k%d+1)
		}
	}
	return nil
}

// initNoise prepares the latent noise of a fit (New): q(θ_g) with mean
// Starts[g] and shape a_g + n_g/2, the counts and the constant.
func (e *EM) initNoise(n *LeafNoise) error {
	if e.opt.EP != nil {
		return errors.New("em: a latent leaf noise needs Gaussian leaf evidence, not EP sites")
	}
	if err := n.check(e.tr.NumLeaves(), e.d); err != nil {
		return err
	}
	// Mean and Unit are shared with the caller (N·D each, read only).
	c := &LeafNoise{Mean: n.Mean, Unit: n.Unit, Priors: slices.Clone(n.Priors), Starts: slices.Clone(n.Starts)}
	e.opt.Noise = c
	g := len(c.Priors)
	e.qn = make([]Gamma, g)
	e.nCount = make([]float64, g)
	e.nStat = make([]float64, g)
	e.nSet = make([]float64, g)
	e.nConst = 0
	for k, u := range c.Unit {
		if u > 0 {
			e.nCount[c.group(k, e.d)]++
			e.nConst += 0.5 * (math.Log(u) - log2Pi)
		}
	}
	for j, p := range c.Priors {
		a := p.Shape + e.nCount[j]/2
		e.qn[j] = Gamma{Shape: a, Rate: a / c.Starts[j]}
	}
	return nil
}

// SetEvidence enters into m (of n's leaves and dimensions) the leaf
// evidence of n at the noise precisions theta, one per prior: entry k has
// mean Mean[k] and precision Unit[k]·theta[g], none when missing. A fit
// does this itself at E[θ_g] (Options.Noise); SetEvidence is for a
// bp.Model of a fitted tree outside the fit.
func (n *LeafNoise) SetEvidence(m *bp.Model, theta []float64) error {
	if len(theta) != len(n.Priors) {
		return fmt.Errorf("em: leaf noise: %d noise precisions for %d priors", len(theta), len(n.Priors))
	}
	d := m.Dims()
	if nl := m.Tree().NumLeaves(); len(n.Unit) != nl*d || len(n.Mean) != nl*d {
		return fmt.Errorf("em: leaf noise: %d means and %d unit precisions for %d leaves × %d dimensions", len(n.Mean), len(n.Unit), nl, d)
	}
	for k, u := range n.Unit {
		prec := 0.0
		if u > 0 {
			prec = u * theta[n.group(k, d)]
		}
		if err := m.SetEvidence(pydt.NodeID(k/d), k%d, n.Mean[k], prec); err != nil {
			return err
		}
	}
	return nil
}

// setNoiseEvidence enters the leaf evidence at the current E[θ_g] into the
// bp.Model, when an E[θ_g] changed since it was last entered.
func (e *EM) setNoiseEvidence() error {
	theta := make([]float64, len(e.qn))
	for j, q := range e.qn {
		theta[j] = q.Mean()
	}
	if slices.Equal(theta, e.nSet) {
		return nil
	}
	if err := e.opt.Noise.SetEvidence(e.m, theta); err != nil {
		return err
	}
	copy(e.nSet, theta)
	return nil
}

// noiseStats sets S_g = ½ Σ Unit[k] E[(Mean[k] − x_id)²] from the leaf
// marginals of the E-step.
func (e *EM) noiseStats() {
	n, d := e.opt.Noise, e.d
	clear(e.nStat)
	for k, u := range n.Unit {
		if u == 0 {
			continue
		}
		i := k / d
		r := n.Mean[k] - e.mean[i*d+k%d]
		e.nStat[n.group(k, d)] += 0.5 * u * (r*r + e.vari[i*d+k%d])
	}
}

// updateNoise sets every q(θ_g) to its optimum given q(x).
func (e *EM) updateNoise() {
	for j, p := range e.opt.Noise.Priors {
		e.qn[j] = Gamma{Shape: p.Shape + e.nCount[j]/2, Rate: p.Rate + e.nStat[j]}
	}
}

// noiseTerms returns the terms of L in the leaf evidence with a latent
// noise: Σ_g [n_g/2 E[log θ_g] − E[θ_g] S_g − KL(q(θ_g) ‖ p(θ_g))] plus the
// constant Σ ½ (log Unit − log 2π).
func (e *EM) noiseTerms() float64 {
	l := e.nConst
	for j, q := range e.qn {
		l += e.nCount[j]/2*q.MeanLog() - q.Mean()*e.nStat[j] - q.KL(e.opt.Noise.Priors[j])
	}
	return l
}

// QNoise returns q(θ_g) of every noise precision (one, or one per column)
// and true when the fit has a latent leaf noise (Options.Noise); otherwise
// nil and false.
func (e *EM) QNoise() ([]Gamma, bool) {
	if e.opt.Noise == nil {
		return nil, false
	}
	return slices.Clone(e.qn), true
}

// MeanNoise returns E[θ_g] of every noise precision, nil without a latent
// leaf noise.
func (e *EM) MeanNoise() []float64 {
	if e.opt.Noise == nil {
		return nil
	}
	v := make([]float64, len(e.qn))
	for j, q := range e.qn {
		v[j] = q.Mean()
	}
	return v
}
