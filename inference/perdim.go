package inference

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// gibbsPrecisionDimsStep is the conjugate update of per-dimension
// precisions: a latent vector prec of length D whose elements have Gamma
// priors (prec ~ Gamma(a, b) vectorised, or any elementwise Gamma factor)
// and that enters the PYDT only as its variance 1 / prec, one σ²_d =
// 1/prec[d] per dimension (graph.Factor.DimLoop). With the leaves exact
// observations the log likelihood given the tree splits by dimension as
// c_d − (n_d/2) log σ²_d − q_d/(2σ²_d) (bp.Model.UnitStats, n_d the
// observed entries of column d), so that, the node locations integrated
// out, the precisions are independent given the tree and prec[d] has the
// conditional Gamma(a_d + n_d/2, b_d + q_d/2).
//
// Like the scalar gibbsPrecisionStep it serves only trees whose data are
// the leaf locations; with a latent leaf layer (a Normal noise or Probit
// link) each element is slice sampled with the locations integrated out.
type gibbsPrecisionDimsStep struct {
	k     int           // the PYDT's index in Model.Trees
	tree  *graph.Factor // the PYDT
	of    string        // " of X" in a model with several PYDTs (treeOf)
	v     *graph.Var
	prior stdlib.GammaPrior
}

// gibbsPrecisionDims returns the conjugate update of v when v is a latent
// vector with an elementwise Gamma prior covering it, read by nothing but
// the variance of one PYDT, which is exactly 1 / v (element d in dimension
// d, v of length D).
func gibbsPrecisionDims(m *Model, v *graph.Var) (gibbsPrecisionDimsStep, bool) {
	var none gibbsPrecisionDimsStep
	fs, dets := m.G.Readers(v)
	if len(fs) != 1 || len(dets) > 0 {
		return none, false
	}
	k := m.treeIndex(fs[0])
	if k < 0 {
		return none, false
	}
	b := m.Trees[k]
	f := b.Factor
	if v.Role != graph.Latent || v.Def == nil || len(v.Dims) != 1 || v.Dims[0] != b.D || f.DimLoop == nil {
		return none, false
	}
	prior, ok := v.Def.Type.(stdlib.GammaPrior)
	if !ok || !v.Def.Elementwise {
		return none, false
	}
	if !isDimReciprocal(f, v) || readsPriorOf(f, v) {
		return none, false
	}
	return gibbsPrecisionDimsStep{k: k, tree: f, of: treeOf(m, k), v: v, prior: prior}, true
}

// isDimReciprocal reports whether the variance argument of the PYDT f is
// 1 / v[d], d being f's dimension loop.
func isDimReciprocal(f *graph.Factor, v *graph.Var) bool {
	w, recip, ok := dimVarianceVar(f)
	return ok && recip && w == v
}

func (g gibbsPrecisionDimsStep) Name() string { return "gibbs(" + g.v.Name + "[d])" }

func (g gibbsPrecisionDimsStep) Explain() string {
	return fmt.Sprintf("conjugate Gamma update per dimension given the tree, node locations integrated out: the PYDT variance%s of dimension d is 1/%s[d], "+
		"%s has elementwise Gamma priors and the leaves are exact observations, so the likelihood is ∏_d σ_d^-n_d exp(-q_d/2σ²_d), n_d the observed entries of column d (bp.UnitStats)", g.of, g.v.Name, g.v.Name)
}

// gammaParams evaluates the Gamma prior of every element of g.v in env:
// shape and rate at each element's offset.
func (g gibbsPrecisionDimsStep) gammaParams(env *graph.Env) (shape, rate []float64, err error) {
	f := g.v.Def
	shape, rate = make([]float64, g.v.Len()), make([]float64, g.v.Len())
	p := make([]float64, len(f.Args))
	err = f.ForEach(env, func(off int) error {
		for i, a := range f.Args {
			p[i] = a.Eval(env)
		}
		shape[off], rate[off] = g.prior.GammaParams(p)
		return nil
	})
	return shape, rate, err
}

func (g gibbsPrecisionDimsStep) update(ch *Chain) error {
	t := ch.trees[g.k]
	d := t.b.D
	if _, _, err := t.unitStats(); errors.Is(err, bp.ErrNoDensity) || errors.Is(err, bp.ErrZeroEdge) {
		// Exactly observed values meeting through edges float64 cannot
		// resolve: keep the precisions (see gibbsPrecisionStep).
		ch.Skipped++
		return nil
	} else if err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	q, n := t.unitQ, t.unitN
	env := ch.st.Env
	shape, rate, err := g.gammaParams(env)
	if err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	x := env.Values[g.v.ID]
	old := append([]float64(nil), x...)
	for k := range d {
		if math.IsInf(q[k], 1) || math.IsNaN(q[k]) {
			// Distinct values across edges float64 cannot resolve in
			// this dimension: keep its precision (see
			// gibbsPrecisionStep).
			ch.Skipped++
			continue
		}
		p, err := scalar.SamplePrecision(ch.rng, scalar.Gamma{Shape: shape[k], Rate: rate[k]}, n[k], q[k]/2)
		if err != nil {
			return fmt.Errorf("%s: dimension %d: %w", g.Name(), k+1, err)
		}
		x[k] = p
	}
	if err := ch.m.Refresh(env); err != nil {
		return err
	}
	if err := t.syncVariance(env); err == nil && treemove.Evaluable(t.lik.LogLik()) {
		return nil
	}
	// Refused: a likelihood float64 cannot evaluate (see gibbsCStep).
	ch.Skipped++
	copy(x, old)
	if err := ch.m.Refresh(env); err != nil {
		return err
	}
	return t.syncVariance(env)
}
