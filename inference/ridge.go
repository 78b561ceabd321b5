package inference

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ridgeStep is a joint Metropolis move along the ridge of the PYDT
// posterior on which σ²(1-t) is constant: it shifts every branch point's
// s = -log(1-t) by u and multiplies the diffusion variance σ² by e^u, with
// u ~ Normal(0, width²). Near t = 1 the likelihood depends on σ² and the
// times almost only through σ²(1-t), so single-variable updates (Gibbs for
// the precision, slice moves of one time) crawl along this ridge; the joint
// move crosses it in one step.
//
// In the coordinates (log v, s_1, ..., s_K), v being the variance's
// scalar, the proposal is a shift by a symmetric random amount, so the
// Metropolis ratio is the ratio of the target densities in those
// coordinates: prior of v times v (the Jacobian of log v), the tree prior
// times Π(1-t_i) (the Jacobian of each s_i), and the likelihood.
//
// With a variance per dimension (v a vector, σ²_d = v[d] or 1/v[d]) the
// move scales every σ²_d by e^u, keeping each σ²_d(1-t) fixed; in the
// coordinates (log v_1, ..., log v_D, s_1, ..., s_K) it is again a
// symmetric shift, and the target has Π_d p(v_d) v_d.
//
// The variance's scalar may also be one element of a latent array whose
// elements have their own densities (PYDT(h[1], 0.2, h[2], 1 / h[3])): the
// move then scales that element alone, and the target has its own
// density p(h[3]) h[3].
type ridgeStep struct {
	k          int    // the PYDT's index in Model.Trees
	of         string // " of X" naming the PYDT in a model with several, else ""
	v          *graph.Var
	p          treeParam // the variance's scalar (v or an element of v), unless dims
	reciprocal bool      // variance = 1/v (a precision), else variance = v
	dims       bool      // v is a vector: element d is dimension d's
	width      float64
	moves      int
}

// ridge returns the ridge move of the k-th PYDT when its variance is a
// latent scalar v or its reciprocal, or an element of a latent array at
// constant indices or its reciprocal, that enters nothing else, or per
// dimension the elements of a latent vector v or their reciprocals, and v
// enters nothing else.
func ridge(m *Model, k int) (*ridgeStep, bool) {
	b := m.Trees[k]
	f := b.Factor
	arg := f.Args[graph.PYDTVariance]
	if f.DimLoop == nil {
		x, recip := graph.ReciprocalOf(arg)
		if !recip {
			x = arg
		}
		p, ok := paramOf(m, x)
		if !ok || !p.onlyReadBy(m, f, argVariance) {
			return nil, false
		}
		return &ridgeStep{k: k, of: treeOf(m, k), v: p.v, p: p, reciprocal: recip, width: 1, moves: 3}, true
	}
	v, recip, ok := dimVarianceVar(f)
	if !ok || v.Role != graph.Latent || v.Def == nil || v.Def.IsPYDT() {
		return nil, false
	}
	if !v.Def.Elementwise || len(v.Dims) != 1 || v.Dims[0] != b.D {
		return nil, false
	}
	fs, dets := m.G.Readers(v)
	if len(fs) != 1 || fs[0] != f || len(dets) > 0 || readsPriorOf(f, v) {
		return nil, false
	}
	return &ridgeStep{k: k, of: treeOf(m, k), v: v, reciprocal: recip, dims: true, width: 1, moves: 3}, true
}

// treeOf is " of X", X being the k-th PYDT's variable, in a model with
// several PYDTs, and "" in a model with one: the suffix of the names and
// explanations of the steps that act on one tree.
func treeOf(m *Model, k int) string {
	if !m.Several() {
		return ""
	}
	return " of " + m.Trees[k].Leaves.Name
}

func (r *ridgeStep) Name() string {
	if r.dims {
		return "ridge(" + r.v.Name + "[d], times" + r.of + ")"
	}
	return "ridge(" + r.p.name() + ", times" + r.of + ")"
}

func (r *ridgeStep) Explain() string {
	if r.dims {
		return fmt.Sprintf("joint Metropolis move: shifts every -log(1-t) of the tree%s by u and scales every dimension's variance by e^u, "+
			"keeping each σ²_d(1-t) fixed, so chains cross the ridge between %s and times near t = 1", r.of, r.v.Name)
	}
	return fmt.Sprintf("joint Metropolis move: shifts every -log(1-t) of the tree%s by u and scales the variance by e^u, "+
		"keeping σ²(1-t) fixed, so chains cross the ridge between %s and times near t = 1", r.of, r.p.name())
}

func (r *ridgeStep) update(ch *Chain) error {
	for range r.moves {
		if err := r.once(ch); err != nil {
			return err
		}
	}
	return nil
}

// ridgeTarget is the log target in the move's coordinates at the chain's
// current state.
func (r *ridgeStep) target(ch *Chain) float64 {
	var lp float64
	if r.dims {
		lp = ch.logFactor(r.v.Def)
		for _, x := range ch.st.Env.Values[r.v.ID] {
			lp += math.Log(x)
		}
	} else {
		lp = r.p.logPrior(ch) + math.Log(r.p.value(ch))
	}
	// The tree prior in the coordinates s: LogPrior times Π(1-t_i). The
	// other trees do not change.
	t := ch.trees[r.k]
	return lp + t.logTreeS() + t.lik.LogLik()
}

func (r *ridgeStep) once(ch *Chain) error {
	t := ch.trees[r.k]
	tr := t.Tree
	ch.internal = ch.internal[:0]
	minS := math.Inf(1)
	for _, b := range tr.PreOrder(ch.order[:0]) {
		if !tr.IsLeaf(b) {
			ch.internal = append(ch.internal, b)
			minS = min(minS, -tr.Time(b).LogOneMinus())
		}
	}
	if len(ch.internal) == 0 {
		return nil
	}
	ch.RidgeProposed++
	u := r.width * ch.rng.NormFloat64()
	if !(minS+u > 0) {
		return nil // the root would cross t = 0: a proposal of zero density
	}
	before := r.target(ch)
	xs := ch.st.Env.Values[r.v.ID]
	x0 := append(ch.ridgeSaved[:0], xs...)
	ch.ridgeSaved = x0
	ch.saved = ch.saved[:0]
	for _, b := range ch.internal {
		t := tr.Time(b)
		ch.saved = append(ch.saved, t)
		tr.SetTime(b, pydt.TimeFromLogOneMinus(t.LogOneMinus()-u))
	}
	f := math.Exp(u)
	if r.reciprocal {
		f = math.Exp(-u)
	}
	if r.dims {
		for k := range xs {
			xs[k] = x0[k] * f
		}
	} else {
		xs[r.p.off] = x0[r.p.off] * f
	}
	ok := ch.m.Refresh(ch.st.Env) == nil && t.syncVariance(ch.st.Env) == nil && t.lik.Recompute() == nil && validTimes(tr, ch.internal)
	after := math.Inf(-1)
	if ok {
		after = r.target(ch)
	}
	// A proposal whose density float64 cannot evaluate (NaN, +Inf) is
	// refused (checked last, so that the random stream is unchanged).
	if ok && math.Log(ch.rng.Float64()) < after-before && treemove.Evaluable(after) {
		ch.RidgeAccepted++
		return nil
	}
	ch.restoreBranchTimes(tr)
	copy(xs, x0)
	if err := ch.m.Refresh(ch.st.Env); err != nil {
		return err
	}
	if err := t.syncVariance(ch.st.Env); err != nil {
		return err
	}
	return t.lik.Recompute()
}

// validTimes checks that shifted times still increase down the tree and
// stay below t = 1 in float64.
func validTimes(tr *pydt.Tree, internal []pydt.NodeID) bool {
	for _, b := range internal {
		t := tr.Time(b)
		if t.IsLeaf() || !tr.ParentTime(b).Before(t) {
			return false
		}
	}
	return true
}

// dimVarianceVar reports whether the per-dimension variance of the PYDT f
// is v[d] or (reciprocal) 1 / v[d], d being f's dimension loop.
func dimVarianceVar(f *graph.Factor) (v *graph.Var, reciprocal, ok bool) {
	x := f.Args[graph.PYDTVariance]
	if y, ok := graph.ReciprocalOf(x); ok {
		x, reciprocal = y, true
	}
	e, isElem := x.(graph.Elem)
	if !isElem || len(e.Idx) != 1 {
		return nil, false, false
	}
	li, isLoop := e.Idx[0].(graph.LoopIndex)
	if !isLoop || li.Slot != f.DimLoop.Slot {
		return nil, false, false
	}
	return e.V, reciprocal, true
}
