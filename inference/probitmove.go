package inference

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// probitScaleStep is a generalised Gibbs move (Liu & Sabatti 2000,
// "Generalised Gibbs sampler and multigrid Monte Carlo for Bayesian
// computation", Biometrika 87) on the scale group acting on the Probit
// auxiliaries and the diffusion variance together: for g = e^δ > 0 it maps
//
//	u → g·u,  σ² → g²·σ²,
//
// which keeps every sign of u, so the data Y = 1{u > 0} are untouched. This
// is the parameter expansion of Liu & Wu (1999, PX-DA) for the Probit model:
// given the tree, the auxiliaries fix the scale of the latent locations
// (u = Z + ε with ε ~ N(0, 1)), and the variance fixes the scale of the
// auxiliaries, so updates of either given the other move the common scale by
// a few percent per sweep. The move changes both in one step.
//
// With the latent locations integrated out, the target along the orbit of
// the current state (u, v, tree), v being the variance's scalar (σ² or the
// precision 1/σ²), is
//
//	f(δ) = log p(v') + log v' + log N(e^δ u; 0, e^{2δ}σ² C + I) + n·δ,
//
// where v' is v moved with σ², log v' the Jacobian of the log scale of v, n
// the number of observed entries of u (the Jacobian of u → e^δ u) and C the
// tree's matrix of shared times. Liu and Sabatti's theorem says that
// drawing δ from f (the Haar measure of the multiplicative group is dg/g =
// dδ) and applying the map leaves the posterior invariant; the draw may be
// replaced by any update of δ that leaves f invariant and commutes with
// translation of δ, which slice sampling with stepping out from δ = 0 does.
// The width is fixed, not tuned, so the move is the same at every sweep.
type probitScaleStep struct {
	k          int       // the PYDT's index in Model.Trees
	of         string    // " of Y", the data, in a model with several PYDTs
	v          treeParam // the variance's scalar or array element
	reciprocal bool      // variance = 1/v (a precision), else variance = v
	slice      scalar.Slice
}

// probitScale returns the scale move of the k-th PYDT when its leaf factor
// is a stdlib.ThresholdLeaf (Probit: auxiliaries u = Z + ε whose sign alone
// is observed, so that scaling u keeps the data) and its variance is a
// latent scalar v or 1/v, or an array element so, that enters nothing
// else.
func probitScale(m *Model, k int) (Updater, bool) {
	v, reciprocal, ok := probitVariance(m, k)
	if !ok {
		return nil, false
	}
	return &probitScaleStep{k: k, of: dataOf(m, k), v: v, reciprocal: reciprocal, slice: scalar.Slice{Width: 0.5}}, true
}

// dataOf is " of Y", Y being the data of the k-th PYDT's leaf factor, in a
// model with several PYDTs, and "" in a model with one.
func dataOf(m *Model, k int) string {
	if !m.Several() || m.Trees[k].Data == nil {
		return treeOf(m, k)
	}
	return " of " + m.Trees[k].Data.Name
}

// probitVariance returns the latent scalar v, or the array element, of
// the variance of the k-th PYDT, whose leaf factor is a
// stdlib.ThresholdLeaf (the variance is 1/v when reciprocal), when it
// enters nothing else, the condition of both probit scale moves.
func probitVariance(m *Model, k int) (v treeParam, reciprocal, ok bool) {
	if m.Trees[k].Threshold() == nil {
		return treeParam{}, false, false
	}
	rs, ok := ridge(m, k)
	if !ok || rs.dims {
		return treeParam{}, false, false // the probit scale moves take one value
	}
	return rs.p, rs.reciprocal, true
}

// varianceAt sets the variance's scalar v to x0 moved with σ² → e^{2δ}σ²
// and returns log p(v') + log v', the first two terms of both probit scale
// moves' targets, or -Inf where v' leaves its support or its density is
// not finite.
func varianceAt(ch *Chain, v treeParam, reciprocal bool, x0, delta float64) float64 {
	x := x0 * math.Exp(2*delta)
	if reciprocal {
		x = x0 * math.Exp(-2*delta)
	}
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Inf(-1)
	}
	if !v.set(ch, x) {
		return math.Inf(-1)
	}
	lp := v.logPrior(ch) + math.Log(x)
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return math.Inf(-1)
	}
	return lp
}

func (p *probitScaleStep) Name() string { return "scale(" + p.v.name() + ", u" + p.of + ")" }

func (p *probitScaleStep) Explain() string {
	return fmt.Sprintf("generalised Gibbs move (Liu & Sabatti 2000; PX-DA): scales the Probit auxiliaries u%s by g and the variance by g², "+
		"g drawn by slice sampling of log g from its conditional (locations integrated out), so %s and u move together", p.of, p.v.name())
}

// probitScratch is a chain's scratch space for the probit moves: the steps
// of a schedule are shared by chains that run in parallel, so they hold no
// state of their own.
type probitScratch struct {
	// obs lists the observed entries k = i·D + d of Y and sign their signs
	// (+1 where Y = 1, -1 where Y = 0).
	obs  []int
	sign []float64
	// hmc is the scratch space of probitHMCStep (and of the tree layout
	// probitGHKStep shares).
	hmc hmcScratch
	// ghk is the scratch space of probitGHKStep.
	ghk ghkScratch
	// orbit is the scratch space of probitOrbitStep.
	orbit orbitScratch
}

// observed lists the entries k = i·D + d of Y, the data of the binding b,
// that are observed, and the sides of 0 their auxiliaries must take
// (stdlib.ThresholdLeaf.Side: +1 where Y = 1, -1 where Y = 0 for Probit),
// reusing the buffers.
func observed(ch *Chain, b *TreeBinding, obs []int, sign []float64) ([]int, []float64) {
	obs, sign = obs[:0], sign[:0]
	th := b.Threshold()
	for k, yk := range ch.st.Env.Values[b.Data.ID] {
		if !math.IsNaN(yk) {
			obs = append(obs, k)
			sign = append(sign, th.Side(yk))
		}
	}
	return obs, sign
}

// at moves the chain to δ along the orbit of (u0 = ch.aux, x0) and returns
// f(δ), -Inf where the variance leaves its support or the likelihood is not
// finite. ch.aux is left alone: the evidence carries e^δ·u.
func (p *probitScaleStep) at(ch *Chain, x0, delta float64) float64 {
	t := ch.trees[p.k]
	lp := varianceAt(ch, p.v, p.reciprocal, x0, delta)
	if math.IsInf(lp, -1) || t.syncVariance(ch.st.Env) != nil {
		return math.Inf(-1)
	}
	g := math.Exp(delta)
	d := t.b.D
	for _, k := range ch.probit.obs {
		if err := t.lik.SetEvidence(pydt.NodeID(k/d), k%d, g*t.aux[k], 1); err != nil {
			return math.Inf(-1)
		}
	}
	lp += t.lik.LogLik() + float64(len(ch.probit.obs))*delta
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		return math.Inf(-1)
	}
	return lp
}

func (p *probitScaleStep) update(ch *Chain) error {
	t := ch.trees[p.k]
	ch.probit.obs, ch.probit.sign = observed(ch, t.b, ch.probit.obs, ch.probit.sign)
	obs := ch.probit.obs
	if len(obs) == 0 {
		return nil // nothing observed: the auxiliaries are not part of the state
	}
	x0 := p.v.value(ch)
	delta, ok, err := sampleOrbit(ch, p.slice, func(dl float64) float64 { return p.at(ch, x0, dl) })
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if !ok {
		// The current state has no finite density along its orbit; leave
		// it (the evidence and variance are as they were), and count it.
		ch.Skipped++
		return nil
	}
	g := math.Exp(delta)
	for _, k := range obs {
		t.aux[k] *= g
	}
	return nil
}

// probitLatentScaleStep is the same group move on the latent locations
// instead of the auxiliaries, with the auxiliaries integrated out: for
// g = e^δ it maps every node location Z → g·Z and σ² → g²·σ². It runs
// between the sampling of the locations given (u, tree) and the draw of u
// given the locations, so it acts on the marginal posterior of (Z, σ²,
// tree) given Y, in which the data enter through Π Φ(±Z[i,d]); the step
// after it draws u afresh from its conditional given the new Z. The
// diffusion density of the scaled locations times the Jacobian g^{#nodes·D}
// equals the old one, so the target along the orbit is
//
//	f(δ) = log p(v') + log v' + Σ_{observed i,d} log Φ(±e^δ Z[i,d]),
//
// with + for Y = 1 and − for Y = 0. Far from the data's decision
// boundary the Probit factor hardly constrains the overall scale of Z, and
// this move crosses that broad direction in one step, where updates of σ²
// given u or of u given Z each move it by a few percent.
type probitLatentScaleStep struct {
	k          int    // the PYDT's index in Model.Trees
	of         string // " of Z" in a model with several PYDTs (treeOf)
	v          treeParam
	reciprocal bool
	slice      scalar.Slice
}

// probitLatentScale returns the scale move on the locations of the k-th
// PYDT under the conditions of probitScale.
func probitLatentScale(m *Model, k int) (Updater, bool) {
	v, reciprocal, ok := probitVariance(m, k)
	if !ok {
		return nil, false
	}
	return &probitLatentScaleStep{k: k, of: treeOf(m, k), v: v, reciprocal: reciprocal, slice: scalar.Slice{Width: 0.25}}, true
}

// Name is "scale(v, Z)" in a model with one PYDT (Z standing for the
// locations), "scale(v, locations of Z)" for the PYDT of Z in a model
// with several.
func (p *probitLatentScaleStep) Name() string {
	if p.of == "" {
		return "scale(" + p.v.name() + ", Z)"
	}
	return "scale(" + p.v.name() + ", locations" + p.of + ")"
}

func (p *probitLatentScaleStep) Explain() string {
	return fmt.Sprintf("generalised Gibbs move (Liu & Sabatti 2000): scales the sampled locations"+p.of+" by g and the variance by g², "+
		"g drawn by slice sampling of log g with the auxiliaries integrated out (Y enters through Φ), so %s crosses the scale the Probit data hardly determine", p.v.name())
}

func (p *probitLatentScaleStep) at(ch *Chain, x0, delta float64) float64 {
	lp := varianceAt(ch, p.v, p.reciprocal, x0, delta)
	if math.IsInf(lp, -1) {
		return math.Inf(-1)
	}
	g := math.Exp(delta)
	locs := ch.trees[p.k].locs
	for j, k := range ch.probit.obs {
		// log Φ(x) > -1.2e-19 for x > 9: such terms vanish next to the
		// others in float64, and skipping them halves the cost.
		if x := ch.probit.sign[j] * g * locs[k]; x < 9 {
			lp += stdlib.LogNormCDF(x)
		}
	}
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		return math.Inf(-1)
	}
	return lp
}

func (p *probitLatentScaleStep) update(ch *Chain) error {
	t := ch.trees[p.k]
	ch.probit.obs, ch.probit.sign = observed(ch, t.b, ch.probit.obs, ch.probit.sign)
	x0 := p.v.value(ch)
	delta, ok, err := sampleOrbit(ch, p.slice, func(dl float64) float64 { return p.at(ch, x0, dl) })
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name(), err)
	}
	if !ok {
		ch.Skipped++ // no finite density along the orbit: left as it was
		return nil
	}
	g := math.Exp(delta)
	for k := range t.locs {
		t.locs[k] *= g
	}
	return t.syncVariance(ch.st.Env)
}

// timeScaleStep is a generalised Gibbs move on the scale group acting on
// the divergence times and the divergence function's scalar c together:
// for g = e^δ it maps every branch point's s = -log(1-t) to g·s and c to
// c/g. With a(t) = c/(1-t) the tree prior in the coordinates s is
// Π c·exp(-c·J·Δs) (times the structure), which the map leaves unchanged
// but for the Jacobians, so the move crosses the ridge between c and the
// times in one step: a small c lets the times run towards t = 1 and those
// times keep c small, a pair of conditionals that single-variable updates
// (Gibbs for c, slice moves of one time, the ridge's shifts of s by about
// 1) leave only by a slow random walk. In the coordinates (log c, s_1..s_K)
// the target along the orbit is
//
//	f(δ) = log p(c') + log c' + log p(tree | c') + Σ log(1-t'_b) + K·δ + log lik,
//
// with Σ log(1-t'_b) the Jacobian of t → s and K·δ that of s → g·s. As for
// the other scale moves, δ is slice sampled from 0 with a fixed width,
// which leaves f invariant and commutes with translation of δ (Liu &
// Sabatti 2000). The move is exact for every divergence function whose
// only parameter is c; the prior is invariant for a(t) = c/(1-t) only.
type timeScaleStep struct {
	k     int    // the PYDT's index in Model.Trees
	of    string // " of X" in a model with several PYDTs (treeOf)
	c     treeParam
	slice scalar.Slice
}

// timeScale returns the move of the k-th PYDT when c, the only parameter
// of its divergence function, is a positive latent scalar that enters
// nothing else (the conditions of its conjugate update), this PYDT's alone,
// or an element of a latent array under the same conditions: the
// divergence function linear in it (pydt.Linear), a Gamma prior, read by
// nothing but the divergence function.
func timeScale(m *Model, k int) (Updater, bool) {
	for _, v := range m.G.Vars {
		if !v.Scalar() || v.Role != graph.Latent || v.Def == nil || v.Def.IsPYDT() {
			continue
		}
		if g, ok := gibbsCOf(m, v); ok && len(g.trees) == 1 && g.trees[0] == k {
			return &timeScaleStep{k: k, of: treeOf(m, k), c: treeParam{v: v}, slice: scalar.Slice{Width: 1}}, true
		}
	}
	f := m.Trees[k].Factor
	if f.Divergence == nil || len(f.Divergence.Args) != 1 {
		return nil, false
	}
	p, ok := paramOf(m, f.Divergence.Args[0])
	if !ok || !p.elem || !p.onlyReadBy(m, f, argDivergence) {
		return nil, false
	}
	if _, gamma := p.v.Def.Type.(stdlib.GammaPrior); !gamma {
		return nil, false
	}
	if _, lin := f.Divergence.Type.New([]float64{1}).(pydt.Linear); !lin {
		return nil, false
	}
	return &timeScaleStep{k: k, of: treeOf(m, k), c: p, slice: scalar.Slice{Width: 1}}, true
}

// TimeScaleSteps returns the scale(c, times) moves (timeScaleStep) of the
// PYDTs of m whose divergence function's only parameter is a latent c,
// whatever their leaf factor. NewSchedule includes them only for a latent
// leaf layer (the probit schedule); benchmarks of other models append
// them to a schedule's Steps (internal/mixbench -timescale).
func TimeScaleSteps(m *Model) []Updater {
	var out []Updater
	for k := range m.Trees {
		if c, ok := timeScale(m, k); ok {
			out = append(out, c)
		}
	}
	return out
}

func (s *timeScaleStep) Name() string { return "scale(" + s.c.name() + ", times" + s.of + ")" }

func (s *timeScaleStep) Explain() string {
	return fmt.Sprintf("generalised Gibbs move (Liu & Sabatti 2000): multiplies every -log(1-t) of the tree%s by g and divides %s by g, "+
		"g drawn by slice sampling of log g, so chains leave times crowded at t = 1 with a small %s", s.of, s.c.name(), s.c.name())
}

// at sets every internal time to s0·e^δ and c to c0·e^{-δ} and returns f(δ).
func (s *timeScaleStep) at(ch *Chain, c0, delta float64) float64 {
	t := ch.trees[s.k]
	tr := t.Tree
	g := math.Exp(delta)
	for i, b := range ch.internal {
		tr.SetTime(b, pydt.TimeFromLogOneMinus(ch.saved[i].LogOneMinus()*g))
	}
	c := c0 / g
	if !(c > 0) || math.IsInf(c, 1) {
		return math.Inf(-1)
	}
	if !s.c.set(ch, c) {
		return math.Inf(-1)
	}
	if !validTimes(tr, ch.internal) {
		return math.Inf(-1)
	}
	// The prior's parameters and the messages at a valid state: an error
	// here is not a point of zero density but a state the chain cannot
	// score, and the update stops with it (sampleOrbit returns what was
	// recorded). An infinite likelihood (bp.ErrNoDensity) is rejected, as
	// every proposal of +Inf density is.
	if err := t.syncPrior(ch.st.Env); err != nil {
		ch.record(fmt.Errorf("the tree prior at c = %g: %w", c, err))
		return math.Inf(-1)
	}
	if err := t.lik.Recompute(); err != nil {
		if !errors.Is(err, bp.ErrNoDensity) {
			ch.record(fmt.Errorf("the likelihood at times scaled by %g: %w", g, err))
		}
		return math.Inf(-1)
	}
	// The tree prior in the coordinates s (LogPrior times Π(1-t'_b)); c
	// enters this tree alone.
	lp := s.c.logPrior(ch) + math.Log(c) + t.logTreeS() + t.lik.LogLik() + float64(len(ch.internal))*delta
	if math.IsNaN(lp) || math.IsInf(lp, 1) {
		return math.Inf(-1)
	}
	return lp
}

func (s *timeScaleStep) update(ch *Chain) error {
	t := ch.trees[s.k]
	tr := t.Tree
	ch.saveBranchTimes(tr)
	if len(ch.internal) == 0 {
		return nil
	}
	c0 := s.c.value(ch)
	restore := func() error {
		ch.restoreBranchTimes(tr)
		if err := s.c.assign(ch, c0); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		if err := t.syncPrior(ch.st.Env); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		if err := t.lik.Recompute(); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		return nil
	}
	_, ok, err := sampleOrbit(ch, s.slice, func(dl float64) float64 { return s.at(ch, c0, dl) })
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	if !ok {
		ch.Skipped++
		return restore() // no finite density here: leave the state as it was
	}
	return nil
}

// sampleOrbit runs the scale moves' update of δ: slice sampling from δ = 0
// with s's fixed width under f, the log target along the orbit, which also
// moves the chain to its argument (and returns -Inf where the density is
// zero or not evaluable). It leaves the chain at the accepted δ. ok is false,
// with the chain at δ = 0, when f(0) is -Inf: the state has no finite
// density along its orbit and the caller leaves it. err is the first error
// f recorded in ch.setErr (a deterministic variable that could not be
// evaluated), which outranks ok.
//
// f is evaluated once per point the slice sampler visits: the value at 0,
// computed first to check the state, is handed to the sampler's own first
// call at 0, and the chain is moved back to the accepted δ only when it was
// not the last point evaluated (the sampler returns the point whose
// evaluation accepted it, so that is rare). The draws and the resulting
// state are those of evaluating f afresh at each call, with two full
// evaluations fewer per move.
func sampleOrbit(ch *Chain, s scalar.Slice, f func(float64) float64) (delta float64, ok bool, err error) {
	ch.setErr = nil
	defer func() {
		if ch.setErr != nil {
			err = ch.setErr
		}
	}()
	f0 := f(0)
	if math.IsInf(f0, -1) {
		return 0, false, nil
	}
	last, atStart := 0.0, true // the chain is at δ = last
	delta, _ = s.Sample(ch.rng, 0, func(dl float64) float64 {
		if atStart && dl == 0 {
			atStart = false
			return f0
		}
		atStart = false
		last = dl
		return f(dl)
	})
	if delta != last {
		if v := f(delta); math.IsInf(v, -1) {
			return delta, true, fmt.Errorf("the density is zero at the accepted scale e^%g", delta)
		}
	}
	return delta, true, nil
}
