package inference

import (
	"fmt"
	"math"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib"
)

// This file holds the conjugate Gibbs update that the node types'
// capabilities allow (stdlib/conjugate.go): a latent scalar θ with a Gamma
// prior (stdlib.GammaPrior) whose every reader is a factor of a
// stdlib.GammaConjugate type, in one parameter written in θ, is drawn from
// its Gamma conditional.

// reachOf reports how the expression x is written in the scalar θ: θ, 1/θ
// or 1/sqrt(θ) (also as sqrt(1/θ), θ^-1, θ^-0.5), directly or as a
// deterministic variable so defined.
func reachOf(x graph.Expr, th *graph.Var) (stdlib.Reach, bool) {
	isTh := func(x graph.Expr) bool { v, ok := graph.AsRef(x); return ok && v == th }
	isOne := func(x graph.Expr) bool { n, ok := x.(graph.Num); return ok && n.V == 1 }
	sqrtOf := func(x graph.Expr) (graph.Expr, bool) {
		c, ok := x.(*graph.Call)
		if !ok || c.F.Name != "sqrt" || len(c.Args) != 1 {
			return nil, false
		}
		return c.Args[0], true
	}
	switch y := x.(type) {
	case graph.Ref:
		if y.V == th {
			return stdlib.ReachSelf, true
		}
		if y.V.Role == graph.Deterministic && y.V.Expr != nil {
			return reachOf(y.V.Expr, th)
		}
	case graph.Op:
		switch {
		case y.Op == '/' && isOne(y.X) && isTh(y.Y):
			return stdlib.ReachInverse, true
		case y.Op == '/' && isOne(y.X):
			if a, ok := sqrtOf(y.Y); ok && isTh(a) {
				return stdlib.ReachInvSqrt, true
			}
		case y.Op == '^' && isTh(y.X):
			if n, ok := y.Y.(graph.Num); ok && n.V == -1 {
				return stdlib.ReachInverse, true
			} else if ok && n.V == -0.5 {
				return stdlib.ReachInvSqrt, true
			}
		}
	case *graph.Call:
		if a, ok := sqrtOf(y); ok {
			if r, ok := reachOf(a, th); ok && r == stdlib.ReachInverse {
				return stdlib.ReachInvSqrt, true
			}
		}
	}
	return 0, false
}

// conjReader is a factor that reads θ in its parameter k, written as r.
type conjReader struct {
	f  *graph.Factor
	gc stdlib.GammaConjugate
	k  int
	r  stdlib.Reach
}

// gammaConjReader reports how factor f reads θ (or the deterministic
// variables dets that read θ) when f's type is GammaConjugate in that
// parameter; otherwise why not.
func gammaConjReader(f *graph.Factor, th *graph.Var, dets []*graph.Var) (conjReader, string) {
	gc, ok := f.Type.(stdlib.GammaConjugate)
	if !ok {
		return conjReader{}, fmt.Sprintf("%s's node type %s has no conjugate form in a parameter", f.Target.Name, f.TypeName())
	}
	if f.Divergence != nil {
		return conjReader{}, fmt.Sprintf("%s reads it in its divergence function", f.Target.Name)
	}
	readers := append([]*graph.Var{th}, dets...)
	c := conjReader{f: f, gc: gc, k: -1}
	for k, a := range f.Args {
		if !graph.Reads(a, readers...) {
			continue
		}
		r, ok := reachOf(a, th)
		if !ok || c.k >= 0 {
			return conjReader{}, fmt.Sprintf("%s's density reads it as %s", f.Target.Name, a)
		}
		c.k, c.r = k, r
	}
	if c.k < 0 {
		return conjReader{}, fmt.Sprintf("%s reads it in an index", f.Target.Name)
	}
	for _, ix := range f.Index {
		if graph.Reads(ix, readers...) {
			return conjReader{}, fmt.Sprintf("%s reads it in an index", f.Target.Name)
		}
	}
	ones := make([]float64, len(f.Args))
	for i := range ones {
		ones[i] = 1
	}
	if _, _, ok := gc.GammaStats(c.k, c.r, 1, ones); !ok {
		return conjReader{}, fmt.Sprintf("%s's %s is not conjugate to a Gamma prior written as %s", f.TypeName(), f.Type.Params()[c.k].Name, c.r)
	}
	return c, ""
}

// gammaConjStep is the conjugate Gibbs update of a latent scalar θ with a
// Gamma prior whose readers are all Gamma-conjugate in it: θ is drawn from
// Gamma(shape + Σ a, rate + Σ b), the sums over every element of every
// reader (stdlib.GammaConjugate).
type gammaConjStep struct {
	v       *graph.Var
	prior   stdlib.GammaPrior
	readers []conjReader
}

// gammaConj returns the conjugate update of v when its prior and readers
// allow one. Otherwise why is "" when v has no Gamma prior or a reader is
// the tree (the tree's own conjugate updates, gibbsC and gibbsPrecision,
// are tried separately), and else says why not.
func gammaConj(m *Model, v *graph.Var) (u Updater, why string) {
	prior, ok := v.Def.Type.(stdlib.GammaPrior)
	if !ok {
		return nil, ""
	}
	fs, dets := m.G.Readers(v)
	s := &gammaConjStep{v: v, prior: prior}
	for _, f := range fs {
		switch f {
		case m.Tree:
			return nil, ""
		case m.Trees[0].Leaf:
			if _, why := gammaConjReader(f, v, dets); why != "" {
				return nil, why
			}
			// The link factor is conjugate given the leaf locations,
			// which belief propagation integrates out.
			return nil, trapNote(m)
		}
		c, why := gammaConjReader(f, v, dets)
		if why != "" {
			return nil, why
		}
		s.readers = append(s.readers, c)
	}
	return s, ""
}

func (g *gammaConjStep) Name() string { return "gibbs(" + g.v.Name + ")" }

func (g *gammaConjStep) Explain() string {
	var parts []string
	for _, r := range g.readers {
		parts = append(parts, fmt.Sprintf("%s's density (%s %s = %s)", r.f.Target.Name, r.f.TypeName(), r.f.Type.Params()[r.k].Name, strings.ReplaceAll(r.r.String(), "θ", g.v.Name)))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("conjugate Gamma update: %s has a Gamma prior and nothing else reads it (a draw from its prior)", g.v.Name)
	}
	return fmt.Sprintf("conjugate Gamma update: %s has a Gamma prior and is read only by %s, each Gamma-conjugate in it", g.v.Name, strings.Join(parts, ", "))
}

func (g *gammaConjStep) targets() []siteTarget {
	t := siteTarget{V: g.v, Terms: []term{{F: g.v.Def, Elem: -1}}}
	for _, r := range g.readers {
		t.Terms = append(t.Terms, term{F: r.f, Elem: -1})
	}
	return []siteTarget{t}
}

func (g *gammaConjStep) update(ch *Chain) error {
	env := ch.st.Env
	pp := make([]float64, len(g.v.Def.Args))
	for i, a := range g.v.Def.Args {
		pp[i] = a.Eval(env)
	}
	shape, rate := g.prior.GammaParams(pp)
	for _, r := range g.readers {
		f := r.f
		dist, _ := f.Scalar()
		x := env.Values[f.Target.ID]
		p := make([]float64, len(f.Args))
		err := f.ForEach(env, func(off int) error {
			if math.IsNaN(x[off]) {
				return nil // missing: marginalised
			}
			for i, a := range f.Args {
				p[i] = a.Eval(env)
			}
			if dist != nil {
				if err := dist.CheckParams(p); err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
			}
			a, b, _ := r.gc.GammaStats(r.k, r.r, x[off], p)
			shape += a
			rate += b
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", g.Name(), err)
		}
	}
	post := scalar.Gamma{Shape: shape, Rate: rate}
	if post.Validate() != nil {
		// Statistics float64 cannot hold (an overflowing sum of squares):
		// keep the value, as the other conditional updates do.
		ch.Skipped++
		return nil
	}
	x := post.Rand(ch.rng)
	if !(x > 0) || math.IsInf(x, 1) {
		// A draw float64 cannot represent (shape far below 1): keep the
		// value.
		ch.Skipped++
		return nil
	}
	ch.set(g.v, x)
	return nil
}

// trapNote says why a conjugate update given sampled leaf locations is not
// used where the leaves are latent (a Normal or Probit leaf factor).
func trapNote(m *Model) string {
	return fmt.Sprintf("the one given sampled locations of %s traps chains near t = 1 (displacements below float64 resolution "+
		"read as no spread; docs/probit-mixing.md), so %s stays integrated out", m.Leaves.Name, m.Leaves.Name)
}
