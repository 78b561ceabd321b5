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
type ridgeStep struct {
	v          *graph.Var
	reciprocal bool // variance = 1/v (a precision), else variance = v
	width      float64
	moves      int
}

// ridge returns the ridge move when the PYDT variance is a latent scalar v
// or its reciprocal, and v enters nothing else.
func ridge(m *Model) (Updater, bool) {
	arg := m.Tree.Args[3]
	v, recip := graph.AsReciprocal(arg)
	if !recip {
		var ok bool
		if v, ok = graph.AsRef(arg); !ok {
			return nil, false
		}
	}
	if v.Role != graph.Latent || v.Def == nil || v.Def.IsPYDT() {
		return nil, false
	}
	fs, dets := m.G.Readers(v)
	if len(fs) != 1 || fs[0] != m.Tree || len(dets) > 0 || readsTreePrior(m, v) {
		return nil, false
	}
	return &ridgeStep{v: v, reciprocal: recip, width: 1, moves: 3}, true
}

func (r *ridgeStep) Name() string { return "ridge(" + r.v.Name + ", times)" }

func (r *ridgeStep) Explain() string {
	return fmt.Sprintf("joint Metropolis move: shifts every -log(1-t) by u and scales the variance by e^u, "+
		"keeping σ²(1-t) fixed, so chains cross the ridge between %s and times near t = 1", r.v.Name)
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
	x := ch.get(r.v)
	lp := ch.logFactor(r.v.Def) + math.Log(x)
	// The tree prior in the coordinates s: LogPrior times Π(1-t_i).
	return lp + ch.logTreeS() + ch.lik.LogLik()
}

func (r *ridgeStep) once(ch *Chain) error {
	tr := ch.Tree
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
	x0 := ch.get(r.v)
	ch.saved = ch.saved[:0]
	for _, b := range ch.internal {
		t := tr.Time(b)
		ch.saved = append(ch.saved, t)
		tr.SetTime(b, pydt.TimeFromLogOneMinus(t.LogOneMinus()-u))
	}
	x1 := x0 * math.Exp(u)
	if r.reciprocal {
		x1 = x0 * math.Exp(-u)
	}
	ch.set(r.v, x1)
	ok := ch.syncVariance() == nil && ch.lik.Recompute() == nil && validTimes(tr, ch.internal)
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
	for i, b := range ch.internal {
		tr.SetTime(b, ch.saved[i])
	}
	ch.set(r.v, x0)
	if err := ch.syncVariance(); err != nil {
		return err
	}
	return ch.lik.Recompute()
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
