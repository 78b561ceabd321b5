package inference

import (
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/graph"
)

// treeParam is where a parameter of a PYDT that a joint move changes
// lives: a latent scalar, or one element of a latent array whose elements
// have densities of their own (an elementwise prior), read at a constant
// index (PYDT(h[1], 0.2, h[2], 1 / h[3])). The joint moves (the ridge,
// the time scale) change the parameter with the tree; they find it by
// where the PYDT reads it, not by its kind of variable, so a parameter
// kept in an array gets the moves a scalar gets.
type treeParam struct {
	v    *graph.Var
	elem bool       // v is an array and the parameter is its element off
	off  int        // the element's offset (0 for a scalar)
	own  factorElem // the element's own factor element, when elem
}

// paramOf returns the latent parameter x refers to: a latent scalar (x is
// v) or an element of a latent array at constant indices (x is v[i]) whose
// elements have their own densities. It does not check who else reads it
// (see onlyReadBy).
func paramOf(m *Model, x graph.Expr) (treeParam, bool) {
	var v *graph.Var
	var off int
	elem := false
	switch x := x.(type) {
	case graph.Ref:
		v = x.V
		if !v.Scalar() {
			return treeParam{}, false
		}
	case graph.Elem:
		o, ok := staticOffset(x, graph.NewEnv(m.G))
		if !ok {
			return treeParam{}, false
		}
		v, off, elem = x.V, o, true
	default:
		return treeParam{}, false
	}
	if v.Role != graph.Latent || v.Def == nil || v.Def.IsPYDT() {
		return treeParam{}, false
	}
	p := treeParam{v: v, elem: elem, off: off}
	if elem {
		own, err := plate(v.Def, graph.NewEnv(m.G))
		if err != nil || !v.Def.Elementwise {
			return treeParam{}, false
		}
		i := slices.IndexFunc(own, func(e factorElem) bool { return e.off == off })
		if i < 0 {
			return treeParam{}, false
		}
		p.own = own[i]
	}
	return p, true
}

// onlyReadBy reports whether the parameter enters nothing but argument
// arg of the PYDT factor f (an index into pydtArgs(f)): for a scalar, f
// is its only reader and no deterministic variable reads it; for an array
// element, no factor element, deterministic variable or other argument of
// f reads that element (the other elements may be read anywhere).
func (p treeParam) onlyReadBy(m *Model, f *graph.Factor, arg int) bool {
	fs, dets := m.G.Readers(p.v)
	if !p.elem {
		if len(fs) != 1 || fs[0] != f || len(dets) > 0 {
			return false
		}
		for i, x := range pydtArgs(f) {
			if i != arg && graph.Reads(x, p.v) {
				return false
			}
		}
		return true
	}
	sites, err := elemSites(m, p.v)
	if err != nil {
		return false
	}
	s := sites[p.off]
	if len(s.elems) > 0 || len(s.wholes) > 0 || len(s.dets) > 0 {
		return false
	}
	k := m.treeIndex(f)
	for j, r := range s.tree {
		if (j != k && r.any()) || r.link { // another tree, or a leaf factor
			return false
		}
	}
	// Which of f's arguments read the element, by the same static
	// evaluation of indices as elemSites.
	env := graph.NewEnv(m.G)
	dr := detReads(m, p.v, env)
	for i, x := range pydtArgs(f) {
		if i == arg {
			continue
		}
		var set offsetSet
		elemReads(x, p.v, env, dr, &set)
		if set.all || slices.Contains(set.offs, p.off) {
			return false
		}
	}
	return true
}

// The positions in pydtArgs of the variance and of the divergence
// function's first argument.
const (
	argVariance   = 2
	argDivergence = 3
)

// pydtArgs lists the PYDT factor f's parameter expressions: alpha, beta,
// the variance and the divergence function's arguments.
func pydtArgs(f *graph.Factor) []graph.Expr {
	out := []graph.Expr{f.Args[graph.PYDTAlpha], f.Args[graph.PYDTBeta], f.Args[graph.PYDTVariance]}
	if f.Divergence != nil {
		out = append(out, f.Divergence.Args...)
	}
	return out
}

// name is the parameter as the model writes it: "prec", or "h[3]".
func (p treeParam) name() string {
	if !p.elem {
		return p.v.Name
	}
	return p.v.Name + "[" + elemIndex(p.v, p.off) + "]"
}

// value is the parameter's value in the chain's state.
func (p treeParam) value(ch *Chain) float64 { return ch.st.Env.Values[p.v.ID][p.off] }

// assign sets the parameter to x and recomputes the deterministic
// variables (Chain.set for a scalar).
func (p treeParam) assign(ch *Chain, x float64) error {
	ch.st.Env.Values[p.v.ID][p.off] = x
	return ch.m.Refresh(ch.st.Env)
}

// set is assign for a log density: it reports whether the parameter could
// be set, recording the error for the update to return (as
// Chain.setOrRecord).
func (p treeParam) set(ch *Chain, x float64) bool {
	if err := p.assign(ch, x); err != nil {
		ch.record(err)
		return false
	}
	return true
}

// logPrior is the log density of the parameter's own factor (for an array
// element, of its element of the factor), -Inf where it is not defined.
func (p treeParam) logPrior(ch *Chain) float64 {
	if !p.elem {
		return ch.logFactor(p.v.Def)
	}
	lp := ch.logElem(p.own)
	if math.IsNaN(lp) {
		return math.Inf(-1)
	}
	return lp
}
