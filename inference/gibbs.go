package inference

import (
	"fmt"
	"math"
	"slices"
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
	return reachIn(x, func(x graph.Expr) bool { v, ok := graph.AsRef(x); return ok && v == th })
}

// reachIn is reachOf with isTh recognising θ: a reference to a scalar, or
// one element of an array.
func reachIn(x graph.Expr, isTh func(graph.Expr) bool) (stdlib.Reach, bool) {
	isOne := func(x graph.Expr) bool { n, ok := x.(graph.Num); return ok && n.V == 1 }
	sqrtOf := func(x graph.Expr) (graph.Expr, bool) {
		c, ok := x.(*graph.Call)
		if !ok || c.F.Name != "sqrt" || len(c.Args) != 1 {
			return nil, false
		}
		return c.Args[0], true
	}
	if isTh(x) {
		return stdlib.ReachSelf, true
	}
	switch y := x.(type) {
	case graph.Ref:
		if y.V.Role == graph.Deterministic && y.V.Expr != nil {
			return reachIn(y.V.Expr, isTh)
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
			if r, ok := reachIn(a, isTh); ok && r == stdlib.ReachInverse {
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
// allow one, and otherwise why not. (The tree's own conjugate updates,
// gibbsC and gibbsPrecision, are tried separately.)
func gammaConj(m *Model, v *graph.Var) (u Updater, why string) {
	prior, ok := v.Def.Type.(stdlib.GammaPrior)
	if !ok {
		return nil, fmt.Sprintf("its prior, %s, offers none (the conjugate updates need a Gamma prior)", v.Def.TypeName())
	}
	fs, dets := m.G.Readers(v)
	s := &gammaConjStep{v: v, prior: prior}
	for _, f := range fs {
		if m.treeIndex(f) >= 0 {
			return nil, "the PYDT is Gamma-conjugate only in the scale c of a linear divergence function that nothing else reads, " +
				"and in the precision 1/variance (given the tree when the leaves are exact observations, else given sampled locations)"
		}
		if k := m.leafIndex(f); k >= 0 {
			if _, why := gammaConjReader(f, v, dets); why != "" {
				return nil, why
			}
			// The link factor is conjugate given the leaf locations,
			// which belief propagation integrates out.
			return nil, trapNoteOf(m.Trees[k].Leaves.Name)
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
	pp, err := factorParams(env, g.v.Def, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	shape, rate := g.prior.GammaParams(pp)
	var p []float64
	for _, r := range g.readers {
		f := r.f
		x := env.Values[f.Target.ID]
		err := f.ForEach(env, func(off int) error {
			if math.IsNaN(x[off]) {
				return nil // missing: marginalised
			}
			var err error
			if p, err = factorParams(env, f, p); err != nil {
				return err
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
	if err := ch.set(g.v, x); err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	return nil
}

// factorParams evaluates the parameters of the factor f at env's loop
// indices into p (reusing its storage) and checks them against f's
// distribution: an index outside its array, or an invalid parameter (NaN,
// a rate below 0), is an error naming the element of f. The conjugate
// Gamma updates read their prior's and their readers' parameters so: with
// invalid ones the posterior would be wrong, or refused by Validate and
// the value kept silently.
func factorParams(env *graph.Env, f *graph.Factor, p []float64) ([]float64, error) {
	p = p[:0]
	for _, a := range f.Args {
		p = append(p, a.Eval(env))
	}
	if err := env.Err(); err != nil {
		return p, err
	}
	if dist, ok := f.Scalar(); ok {
		if err := dist.CheckParams(p); err != nil {
			return p, fmt.Errorf("%s: %w", elemAt(f, env), err)
		}
	}
	return p, nil
}

// trapNote says why a conjugate update given sampled leaf locations is not
// used where the leaves are latent (a Normal or Probit leaf factor).
func trapNote(m *Model) string { return trapNoteOf(m.Leaves.Name) }

// trapNoteOf is trapNote for the leaves of the named PYDT variable.
func trapNoteOf(leaves string) string {
	return fmt.Sprintf("the one given sampled locations of %s traps chains near t = 1 (displacements below float64 resolution "+
		"read as no spread; docs/probit-mixing.md), so %s stays integrated out", leaves, leaves)
}

// elemConjReader is an element of a factor that reads one element of θ in
// its parameter k, written as r.
type elemConjReader struct {
	e  factorElem
	gc stdlib.GammaConjugate
	k  int
	r  stdlib.Reach
}

// elemConjSite is one element of a latent array with a Gamma prior: its
// own factor element and the reader elements, all Gamma-conjugate in it.
type elemConjSite struct {
	off     int
	own     factorElem
	readers []elemConjReader
	dets    []*graph.Var // the deterministic variables that read the element (elemSite.dets)
}

// elemGammaConjStep draws each element of a latent array with Gamma priors
// from its Gamma conditional, when every factor element that reads it is
// Gamma-conjugate in it (e.g. a precision per column, tau[d], read as
// y[i, d] ~ Normal(mu[i], 1 / sqrt(tau[d]))).
type elemGammaConjStep struct {
	v       *graph.Var
	prior   stdlib.GammaPrior
	sites   []elemConjSite
	readers []string // what reads v, for Explain
}

// elemGammaConj returns the elementwise conjugate update of the latent
// array v when its prior and readers allow one, and otherwise why not.
func elemGammaConj(m *Model, v *graph.Var) (Updater, string) {
	prior, ok := v.Def.Type.(stdlib.GammaPrior)
	if !ok {
		return nil, fmt.Sprintf("its prior, %s, offers none (the conjugate updates need a Gamma prior)", v.Def.TypeName())
	}
	sites, err := elemSites(m, v)
	if err != nil {
		return nil, err.Error() // the slice step reports it as an error
	}
	env := graph.NewEnv(m.G)
	dets := detReads(m, v, env)
	s := &elemGammaConjStep{v: v, prior: prior}
	seen := map[*graph.Factor]bool{}
	for _, site := range sites {
		switch {
		case slices.ContainsFunc(site.tree, func(r treeReach) bool { return r.link }):
			return nil, linkNote(m, v, slices.IndexFunc(site.tree, func(r treeReach) bool { return r.link }))
		case slices.ContainsFunc(site.tree, treeReach.any):
			return nil, "its elements reach the PYDT's prior or variance, which is Gamma-conjugate in none of them here"
		case len(site.wholes) > 0:
			return nil, fmt.Sprintf("%s reads it at an index not known in advance", site.wholes[0].Target.Name)
		}
		cs := elemConjSite{off: site.off, own: site.own, dets: site.dets}
		for _, e := range site.elems {
			gc, ok := e.f.Type.(stdlib.GammaConjugate)
			if !ok {
				return nil, fmt.Sprintf("%s's node type %s has no conjugate form in a parameter", e.f.Target.Name, e.f.TypeName())
			}
			for k, l := range e.f.Loops {
				env.Loop[l.Slot] = e.loop[k]
			}
			off := site.off
			isTh := func(x graph.Expr) bool {
				el, ok := x.(graph.Elem)
				if !ok || el.V != v {
					return false
				}
				o, ok := staticOffset(el, env)
				return ok && o == off
			}
			c := elemConjReader{e: e, gc: gc, k: -1}
			for k, a := range e.f.Args {
				var rs offsetSet
				elemReads(a, v, env, dets, &rs)
				if !rs.all && !slices.Contains(rs.offs, off) {
					continue
				}
				r, ok := reachIn(a, isTh)
				if !ok || c.k >= 0 {
					return nil, fmt.Sprintf("%s's density reads it as %s", e.f.Target.Name, a)
				}
				c.k, c.r = k, r
			}
			if c.k < 0 {
				return nil, fmt.Sprintf("%s reads it in an index", e.f.Target.Name)
			}
			ones := make([]float64, len(e.f.Args))
			for i := range ones {
				ones[i] = 1
			}
			if _, _, ok := gc.GammaStats(c.k, c.r, 1, ones); !ok {
				return nil, fmt.Sprintf("%s's %s is not conjugate to a Gamma prior written as %s", e.f.TypeName(), e.f.Type.Params()[c.k].Name, c.r)
			}
			cs.readers = append(cs.readers, c)
			if !seen[e.f] {
				seen[e.f] = true
				s.readers = append(s.readers, fmt.Sprintf("%s's density (%s %s = %s)", e.f.Target.Name, e.f.TypeName(), e.f.Type.Params()[c.k].Name,
					strings.ReplaceAll(c.r.String(), "θ", v.Name+"[·]")))
			}
		}
		s.sites = append(s.sites, cs)
	}
	return s, ""
}

func (g *elemGammaConjStep) Name() string { return "gibbs(" + g.v.Name + ")" }

func (g *elemGammaConjStep) Explain() string {
	by := "nothing else reads them (draws from their priors)"
	if len(g.readers) > 0 {
		by = "they are read only by elements of " + strings.Join(g.readers, ", ") + ", each Gamma-conjugate in the element it reads"
	}
	return fmt.Sprintf("elementwise conjugate Gamma updates of the %d elements: each has a Gamma prior and %s", len(g.sites), by)
}

func (g *elemGammaConjStep) targets() []siteTarget {
	out := make([]siteTarget, len(g.sites))
	for i, s := range g.sites {
		t := siteTarget{V: g.v, Off: s.off, Terms: []term{{F: s.own.f, Elem: s.own.off}}}
		for _, r := range s.readers {
			t.Terms = append(t.Terms, term{F: r.e.f, Elem: r.e.off})
		}
		out[i] = t
	}
	return out
}

// setLoops sets env's loop indices to those of e.
func setLoops(env *graph.Env, e factorElem) {
	for k, l := range e.f.Loops {
		env.Loop[l.Slot] = e.loop[k]
	}
}

func (g *elemGammaConjStep) update(ch *Chain) error {
	env := ch.st.Env
	vals := env.Values[g.v.ID]
	var pp, p []float64
	var err error
	for _, s := range g.sites {
		setLoops(env, s.own)
		if pp, err = factorParams(env, g.v.Def, pp); err != nil {
			return fmt.Errorf("%s: %w", g.Name(), err)
		}
		shape, rate := g.prior.GammaParams(pp)
		for _, r := range s.readers {
			setLoops(env, r.e)
			x := env.Values[r.e.f.Target.ID][r.e.off]
			if math.IsNaN(x) {
				continue // missing: marginalised
			}
			if p, err = factorParams(env, r.e.f, p); err != nil {
				return fmt.Errorf("%s: %w", g.Name(), err)
			}
			a, b, _ := r.gc.GammaStats(r.k, r.r, x, p)
			shape += a
			rate += b
		}
		post := scalar.Gamma{Shape: shape, Rate: rate}
		if post.Validate() != nil {
			// Statistics float64 cannot hold (an overflowing sum of
			// squares): keep the value, as the other conditional updates
			// do.
			ch.Skipped++
			continue
		}
		x := post.Rand(ch.rng)
		if !(x > 0) || math.IsInf(x, 1) {
			ch.Skipped++
			continue
		}
		vals[s.off] = x
		if err := graph.EvalDeterministicVars(env, s.dets); err != nil {
			return fmt.Errorf("%s: %w", g.Name(), err)
		}
	}
	return nil
}

// elemAt names the element of f at env's loop indices: the factor, and
// "at i = 2, j = 1" for a loop, or "at element [2, 1]" for a vectorised
// statement.
func elemAt(f *graph.Factor, env *graph.Env) string {
	if len(f.Loops) == 0 {
		return fmt.Sprintf("%s: %s", f.Pos, f)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s at ", f.Pos, f)
	if strings.HasPrefix(f.Loops[0].Name, "_") { // vectorised
		b.WriteString("element [")
		for k, l := range f.Loops {
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, env.Loop[l.Slot])
		}
		b.WriteString("]")
		return b.String()
	}
	for k, l := range f.Loops {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = %d", l.Name, env.Loop[l.Slot])
	}
	return b.String()
}

// linkNote says why an element of the array v that the leaf factor of the
// k-th PYDT reads has no conjugate update: the trap of trapNoteOf when the
// leaf factor is Gamma-conjugate in it, else that it is not.
func linkNote(m *Model, v *graph.Var, k int) string {
	trap := trapNoteOf(m.Trees[k].Leaves.Name)
	f := m.Trees[k].Leaf
	gc, ok := f.Type.(stdlib.GammaConjugate)
	isV := func(x graph.Expr) bool { el, ok := x.(graph.Elem); return ok && el.V == v }
	for k, a := range f.Args {
		if !graph.Reads(a, v) {
			continue
		}
		r, isReach := reachIn(a, isV)
		ones := make([]float64, len(f.Args))
		for i := range ones {
			ones[i] = 1
		}
		if ok && isReach {
			if _, _, conj := gc.GammaStats(k, r, 1, ones); conj {
				return trap
			}
		}
		return fmt.Sprintf("%s's density reads it as %s, in which it is not Gamma-conjugate", f.Target.Name, a)
	}
	return trap
}
