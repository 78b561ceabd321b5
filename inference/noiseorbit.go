package inference

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib"
)

// noiseOrbitStep is the likelihood-invariant orbit of probitOrbitStep for a
// Normal noise model (X = Z + noise of variance v, Z ~ PYDT with diffusion
// variance σ²): each column of X is N(0, K), K = σ²C + vI, and for h > 0
// the map
//
//	σ² → h·σ²,   t_b → t_b/h for every branch point,   v → v − (h − 1)σ²
//
// keeps K exactly (off the diagonal hσ²t/h = σ²t; on it hσ² + v − (h−1)σ²
// = σ² + v) with the data fixed: the likelihood does not change at all. It
// is a group action (σ² → abσ², v → v − (ab − 1)σ²), defined for
// max_b t_b < h < 1 + v/σ². In the coordinates the engine scores (the
// diffusion variance's scalar w, the noise's scalar θ, the times in s) the
// target along the orbit in δ = log h is
//
//	f(δ) = log p(w') + log |∂w'/∂w| + log p(θ') + log |∂θ'/∂θ| + log p_s(T') + Σ_b log ∂s'_b/∂s_b,
//
// with log |∂w'/∂w| = −δ for a precision, δ for a variance; θ reaches the
// noise sd as θ, 1/θ or 1/sqrt(θ) (v = θ², 1/θ², 1/θ), and since v' − v
// does not depend on v, log |∂θ'/∂θ| = −a·log(v'/v) with a = ½, 3/2, 2;
// ∂s'/∂s = (1 − t)/(h − t). δ is slice sampled from 0 with a quarter of the
// domain's width, log((1 + v/σ²)/max_b t_b), which the map leaves unchanged.
// It moves σ² and the noise level against each other along the one
// direction the data cannot see; the accepted point costs one
// recomputation of the messages.
type noiseOrbitStep struct {
	k          int       // the PYDT's index in Model.Trees
	of         string    // " of X" in a model with several PYDTs (treeOf)
	w          treeParam // the diffusion variance's scalar or array element
	reciprocal bool      // σ² = 1/w (a precision), else σ² = w
	th         *graph.Var
	reach      stdlib.Reach // how the noise sd is written in th
	// mutation breaks the move on purpose (test only; always 0 in the
	// engine): orbitNoVarJacobian drops θ's Jacobian, orbitNoTimeJacobian
	// the times', orbitTimesFixed leaves the times alone.
	mutation orbitMutation
}

// NoiseOrbitSteps returns the orbit(prec, noise, times) moves
// (noiseOrbitStep) of the PYDTs of m with a Normal noise model that allows
// them. NewSchedule does not include them: on examples/data/synthetic.csv
// they did not pay (docs/probit-mixing.md); benchmarks append them to a
// schedule's Steps (internal/mixbench -noiseorbit).
func NoiseOrbitSteps(m *Model) []Updater {
	var out []Updater
	for k := range m.Trees {
		if o, ok := noiseOrbit(m, k); ok {
			out = append(out, o)
		}
	}
	return out
}

// noiseOrbit returns the move of the k-th PYDT when its data are its
// leaves plus Normal noise (a stdlib.NoiseLeaf) whose sd is θ, 1/θ or
// 1/sqrt(θ) for a latent scalar θ that enters nothing else, and its
// diffusion variance is a latent scalar w or 1/w that enters nothing else.
func noiseOrbit(m *Model, k int) (Updater, bool) {
	b := m.Trees[k]
	nl, ok := b.gaussian.(stdlib.NoiseLeaf)
	if !ok || b.Leaf == nil || b.Data == nil || b.augmented != nil || b.index != nil || b.LatentLeaves() || b.Exact() {
		return nil, false
	}
	rs, ok := ridge(m, k)
	if !ok || rs.dims {
		return nil, false
	}
	arg := b.Leaf.Args[nl.NoiseSD()]
	vs := graph.Vars(arg)
	if len(vs) != 1 {
		return nil, false
	}
	th := vs[0]
	if !th.Scalar() || th.Role != graph.Latent || th.Def == nil || th.Def.IsPYDT() || th == rs.p.v {
		return nil, false
	}
	reach, ok := reachOf(arg, th)
	if !ok {
		return nil, false
	}
	fs, dets := m.G.Readers(th)
	if len(fs) != 1 || fs[0] != b.Leaf || len(dets) > 0 {
		return nil, false
	}
	return &noiseOrbitStep{k: k, of: treeOf(m, k), w: rs.p, reciprocal: rs.reciprocal, th: th, reach: reach}, true
}

// Name is "orbit(prec, noise, times)".
func (p *noiseOrbitStep) Name() string {
	return "orbit(" + p.w.name() + ", " + p.th.Name + ", times" + p.of + ")"
}

func (p *noiseOrbitStep) Explain() string {
	return fmt.Sprintf("generalised Gibbs move (Liu & Sabatti 2000) along the orbit on which the likelihood is exactly invariant: "+
		"σ² → h·σ², every divergence time t%s → t/h, the noise variance v → v − (h − 1)σ² (σ²C + vI unchanged); "+
		"log h slice sampled from the priors of %s, %s and the tree alone, so the diffusion and the noise trade scale along the direction the data cannot see",
		p.of, p.w.name(), p.th.Name)
}

// noiseVar is the noise variance for θ, and thetaOf its inverse.
func (p *noiseOrbitStep) noiseVar(th float64) float64 {
	switch p.reach {
	case stdlib.ReachSelf:
		return th * th
	case stdlib.ReachInverse:
		return 1 / (th * th)
	}
	return 1 / th
}

func (p *noiseOrbitStep) thetaOf(v float64) float64 {
	switch p.reach {
	case stdlib.ReachSelf:
		return math.Sqrt(v)
	case stdlib.ReachInverse:
		return 1 / math.Sqrt(v)
	}
	return 1 / v
}

// power is a in log |∂θ'/∂θ| = −a·log(v'/v).
func (p *noiseOrbitStep) power() float64 {
	switch p.reach {
	case stdlib.ReachSelf:
		return 0.5
	case stdlib.ReachInverse:
		return 1.5
	}
	return 2
}

// at moves w, θ and the times to γ_h of their saved values (h = e^δ) and
// returns f(δ), -Inf outside the domain or where a density is not finite.
func (p *noiseOrbitStep) at(ch *Chain, w0, th0, delta float64) float64 {
	t := ch.trees[p.k]
	em := math.Expm1(delta)
	s2 := w0
	w := w0 * math.Exp(delta)
	lp := delta
	if p.reciprocal {
		s2 = 1 / w0
		w = w0 * math.Exp(-delta)
		lp = -delta
	}
	v0 := p.noiseVar(th0)
	v := v0 - em*s2
	if !(v > 0) || !(w > 0) || math.IsInf(w, 1) {
		return math.Inf(-1)
	}
	th := p.thetaOf(v)
	if !(th > 0) || math.IsInf(th, 1) {
		return math.Inf(-1)
	}
	if p.mutation != orbitNoVarJacobian {
		lp -= p.power() * math.Log(v/v0)
	}
	if !p.w.set(ch, w) || !ch.setOrRecord(p.th, th) {
		return math.Inf(-1)
	}
	lp += p.w.logPrior(ch) + ch.logFactor(p.th.Def)
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

func (p *noiseOrbitStep) update(ch *Chain) error {
	t := ch.trees[p.k]
	tr := t.Tree
	ch.saveBranchTimes(tr)
	if len(ch.internal) == 0 {
		return nil
	}
	w0, th0 := p.w.value(ch), ch.get(p.th)
	s2 := w0
	if p.reciprocal {
		s2 = 1 / w0
	}
	// A quarter of the domain's width in δ, the same all along the orbit.
	width := (math.Log1p(p.noiseVar(th0)/s2) - logMaxSavedT(ch)) / 4
	if !(width > 0) || math.IsInf(width, 1) {
		ch.Skipped++
		return nil
	}
	delta, ok, err := sampleOrbit(ch, scalar.Slice{Width: width}, func(dl float64) float64 { return p.at(ch, w0, th0, dl) })
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if ok && delta != 0 {
		err := p.commit(ch)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errOrbitRefused) {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
	}
	// No finite density along the orbit, or a moved state whose
	// likelihood float64 cannot score: back to the state before.
	if !ok || delta != 0 {
		ch.Skipped++
	}
	ch.restoreBranchTimes(tr)
	if err := p.w.assign(ch, w0); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if err := ch.set(p.th, th0); err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if err := p.commit(ch); err != nil {
		return fmt.Errorf("%s: restoring the state before the move: %w", p.Name(), err)
	}
	return nil
}

// commit passes the chain's variance, noise and times to the messages and
// recomputes them; errOrbitRefused when the likelihood is not finite.
func (p *noiseOrbitStep) commit(ch *Chain) error {
	t := ch.trees[p.k]
	if err := t.syncVariance(ch.st.Env); err != nil {
		return errors.Join(errOrbitRefused, err)
	}
	if err := t.syncEvidence(ch.st.Env, &ch.leafParams); err != nil {
		return errors.Join(errOrbitRefused, err)
	}
	return t.recomputeOrRefuse()
}
