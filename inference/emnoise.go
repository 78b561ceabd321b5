package inference

import (
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// This file plans a latent observation noise for EM: the precision θ of a
// leaf likelihood with Gaussian leaf evidence (stdlib.GaussianLeaf), such as
// X ~ Normal(Z, 1 / sqrt(noise)), with a Gamma prior, one θ or one θ_d per
// column. The node type's capabilities decide, not its name: the leaf type
// must be stdlib.GammaConjugate in the parameter that reads θ, so that its
// log density is a·log θ − b·θ + const, and with Gaussian evidence in the
// location the evidence precision is then proportional to θ (checked on
// every entry), which is what em.LeafNoise fits (docs/em.md, "A latent
// observation noise").

// emNoise is a latent noise precision of the leaf likelihood.
type emNoise struct {
	v      *graph.Var
	perCol bool // v[d] for column d; else one scalar
	k      int  // the leaf factor's parameter that reads v
	r      stdlib.Reach
	gc     stdlib.GammaConjugate
	priors []em.Gamma
}

// bindNoise reports whether v is read by the leaf likelihood alone, as the
// noise its type can fit (then bound, or an error saying why not).
func (p *EMPlan) bindNoise(v *graph.Var) (bool, error) {
	m := p.m
	b := m.Trees[0]
	fs, dets := m.G.Readers(v)
	if b.Leaf == nil || len(fs) != 1 || fs[0] != b.Leaf {
		return false, nil
	}
	unsupported := func(why string) (bool, error) {
		return true, emUnsupported("latent variable %s, read by the %s likelihood of %s: %s; fix %s with --set, or use MCMC", v.Name, b.Leaf.TypeName(), b.Data.Name, why, v.Name)
	}
	if b.gaussian == nil {
		return unsupported("EM learns a likelihood's noise only with Gaussian leaf evidence (stdlib.GaussianLeaf)")
	}
	f := b.Leaf
	gc, ok := f.Type.(stdlib.GammaConjugate)
	if !ok {
		return unsupported(fmt.Sprintf("its node type %s has no conjugate form in a parameter (stdlib.GammaConjugate)", f.TypeName()))
	}
	n := &emNoise{v: v, gc: gc, k: -1}
	if v.Scalar() {
		c, why := gammaConjReader(f, v, dets)
		if why != "" {
			return unsupported(why)
		}
		g, ok := constGammaPrior(v)
		if !ok {
			return unsupported(fmt.Sprintf("its prior is %s; EM needs a Gamma prior with constant parameters", v.Def.TypeName()))
		}
		n.k, n.r = c.k, c.r
		n.priors = []em.Gamma{{Shape: g.Shape, Rate: g.Rate}}
	} else {
		if len(v.Dims) != 1 || v.Dims[0] != b.D || len(dets) > 0 {
			return unsupported(fmt.Sprintf("a noise array must be one precision per column of %s (length %d), read directly as %s[d]", b.Data.Name, b.D, v.Name))
		}
		col := b.slots[1]
		isTh := func(x graph.Expr) bool {
			e, ok := x.(graph.Elem)
			if !ok || e.V != v || len(e.Idx) != 1 {
				return false
			}
			l, ok := e.Idx[0].(graph.LoopIndex)
			return ok && l.Slot == col
		}
		for k, a := range f.Args {
			if !graph.Reads(a, v) {
				continue
			}
			r, ok := reachIn(a, isTh)
			if !ok || n.k >= 0 || k == 0 {
				return unsupported(fmt.Sprintf("%s's density reads it as %s; EM needs one parameter written in %s[d], d the column", f.Target.Name, a, v.Name))
			}
			n.k, n.r = k, r
		}
		if n.k < 0 {
			return unsupported(fmt.Sprintf("%s reads it in an index", f.Target.Name))
		}
		ones := make([]float64, len(f.Args))
		for i := range ones {
			ones[i] = 1
		}
		if _, _, ok := gc.GammaStats(n.k, n.r, 1, ones); !ok {
			return unsupported(fmt.Sprintf("%s's %s is not conjugate to a Gamma prior written as %s", f.TypeName(), f.Type.Params()[n.k].Name, n.r))
		}
		prior, ok := v.Def.Type.(stdlib.GammaPrior)
		if !ok || !v.Def.Elementwise || slices.ContainsFunc(v.Def.Args, func(a graph.Expr) bool { return len(graph.Vars(a)) > 0 }) {
			return unsupported(fmt.Sprintf("its prior is %s; EM needs elementwise Gamma priors with constant parameters", v.Def.TypeName()))
		}
		shape, rate, err := gibbsPrecisionDimsStep{v: v, prior: prior}.gammaParams(p.env)
		if err != nil {
			return true, fmt.Errorf("run --method em: prior of %s: %w", v.Name, err)
		}
		n.perCol = true
		for k := range shape {
			n.priors = append(n.priors, em.Gamma{Shape: shape[k], Rate: rate[k]})
		}
	}
	for k, g := range n.priors {
		if err := g.Check(); err != nil {
			return true, fmt.Errorf("run --method em: prior of %s (element %d): %w", v.Name, k+1, err)
		}
		p.env.Values[v.ID][k] = g.Shape / g.Rate // start at the prior mean
	}
	p.noise = n
	p.Noise = v
	return true, nil
}

// noiseData returns the em.LeafNoise of the data at the plan's values (the
// noise at its starts, after Model.Refresh): each observed entry's evidence
// mean and its precision per unit of noise precision, checked against the
// leaf type's Gamma statistics: with the noise precision θ at its start,
// a = ½ and b = ½ prec/θ at a location one unit from the mean, so that the
// evidence precision is proportional to θ.
func (p *EMPlan) noiseData() (*em.LeafNoise, error) {
	b, n := p.m.Trees[0], p.noise
	y := p.env.Values[b.Data.ID]
	theta := p.env.Values[n.v.ID]
	ln := &em.LeafNoise{Mean: make([]float64, b.N*b.D), Unit: make([]float64, b.N*b.D), Priors: slices.Clone(n.priors), Starts: slices.Clone(theta)}
	var q []float64
	for k := range b.N * b.D {
		if math.IsNaN(y[k]) {
			continue
		}
		g := 0
		if n.perCol {
			g = k % b.D
		}
		qq, err := b.params(p.env, k, math.NaN(), &q)
		if err != nil {
			return nil, fmt.Errorf("run --method em: %w", err)
		}
		mean, prec, err := b.gaussian.LeafGaussian(y[k], qq)
		if err != nil {
			return nil, fmt.Errorf("run --method em: %s: %w", b.Leaf, err)
		}
		unit := prec / theta[g]
		qq[0] = mean + 1
		a, st, ok := n.gc.GammaStats(n.k, n.r, y[k], qq)
		if !ok || a != 0.5 || !(math.Abs(st-unit/2) <= 1e-9*unit) || !(unit > 0) || math.IsInf(unit, 1) {
			return nil, emUnsupported("latent variable %s: the evidence precision of the %s likelihood of %s (row %d, column %d) is not proportional to %s (its Gamma statistics a = %v, b = %v; evidence precision %v at %s = %v)",
				n.v.Name, b.Leaf.TypeName(), b.Data.Name, k/b.D+1, k%b.D+1, n.v.Name, a, st, prec, n.v.Name, theta[g])
		}
		ln.Mean[k], ln.Unit[k] = mean, unit
	}
	return ln, nil
}

// noiseName returns the name of noise precision g in summary.json and the
// trace: the variable, or its element g+1 for one per column.
func (p *EMPlan) noiseName(g int) string {
	if p.noise.perCol {
		return fmt.Sprintf("%s[%d]", p.noise.v.Name, g+1)
	}
	return p.noise.v.Name
}
