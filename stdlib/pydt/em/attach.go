package em

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// InitOptions configures SequentialTree: the hyperparameters the scores use
// (held fixed while the tree is built) and the search.
type InitOptions struct {
	// C is the smoothness of a(t) = c/(1-t), Variance the diffusion
	// variance σ², Alpha and Beta the Pitman-Yor parameters.
	C, Variance, Alpha, Beta float64
	// Exhaustive scores every edge and branch point for every point (the
	// paper's construction, O(N) scores per point, O(N²) in all) instead
	// of descending the tree.
	Exhaustive bool
}

// SequentialTree builds an initial tree by attaching the rows of x
// (row-major, n rows of d values, NaN missing; observed exactly) one by
// one, row 0 first, each at the position of highest score among those it
// considers. The score of a position is the log of
//
//	p(point i takes that path and diverges there | the tree so far)
//	  × p(data of the rows attached so far and of row i | the new tree)
//
// the first factor from the PYDT's generative process (Section 2 of the
// paper: not diverging along each segment, the branch choices, diverging
// at the midpoint of an edge, at rate a(t) Γ(m-β)/Γ(m+1+α), as a density
// in s, or joining a branch point with probability (α+βK)/(m+α)), the
// second by belief propagation (bp.Model.LogLikIfAttached). By
// exchangeability their product is the joint density of the new tree and
// data up to a factor that does not depend on the position. Edge
// midpoints are taken in s = -log(1-t); on an edge into a leaf, at
// t = (t_parent + 1)/2.
//
// Without Exhaustive the positions are found by descent: at a branch point
// v reached by the search, the candidates are v itself and the edges above
// its children; the search moves into the child whose edge scores best
// when that beats the edge above v and v itself, and stops otherwise. Each
// point then costs O(depth · K) scores of O(depth · log K · D) each instead
// of the O(N) scores of the exhaustive search.
//
// It returns the tree and its bp.Model (variance set, evidence x).
func SequentialTree(x []float64, n, d int, opt InitOptions) (*pydt.Tree, *bp.Model, error) {
	if n < 1 || d < 1 || len(x) != n*d {
		return nil, nil, fmt.Errorf("em: SequentialTree: data of length %d for %d rows × %d dimensions", len(x), n, d)
	}
	if err := pydt.CheckPrior(opt.Alpha, opt.Beta, pydt.DivInv{C: opt.C}); err != nil {
		return nil, nil, fmt.Errorf("em: SequentialTree: %w", err)
	}
	h, err := pydt.NewHarmonic(opt.Alpha, opt.Beta)
	if err != nil {
		return nil, nil, err
	}
	tr := pydt.New(n)
	m := bp.New(tr, d)
	if err := m.SetVariance(opt.Variance); err != nil {
		return nil, nil, fmt.Errorf("em: SequentialTree: %w", err)
	}
	if err := m.ObserveMatrix(x); err != nil {
		return nil, nil, fmt.Errorf("em: SequentialTree: %w", err)
	}
	tr.Plant(0)
	if err := m.Recompute(); err != nil {
		return nil, nil, err
	}
	a := attacher{tr: tr, m: m, h: h, opt: opt, logC: math.Log(opt.C)}
	for i := 1; i < n; i++ {
		leaf := pydt.NodeID(i)
		var pos pydt.Position
		var score float64
		if opt.Exhaustive {
			pos, score = a.exhaustive(leaf)
		} else {
			pos, score = a.descend(leaf)
		}
		if math.IsInf(score, -1) || math.IsNaN(score) {
			return nil, nil, fmt.Errorf("em: SequentialTree: row %d has no position of positive density", i+1)
		}
		if !pos.AtNode {
			pos = a.refine(leaf, pos)
		}
		m.Attach(leaf, pos)
	}
	if err := m.Err(); err != nil {
		return nil, nil, err
	}
	return tr, m, nil
}

type attacher struct {
	tr   *pydt.Tree
	m    *bp.Model
	h    *pydt.Harmonic
	opt  InitOptions
	logC float64
}

// edgeTime returns the candidate divergence time for a new point on the
// edge above v: where the Brownian motion's expected squared distance
// matches the data, 1 - t = ||x_new - m_v||² / (2 D σ²), m_v the mean of
// v's upward message (for a leaf, its value), clamped to the middle 90% of
// the edge in s (dimensions missing on either side are left out; with none
// left, the midpoint in s, or t halfway to 1 on an edge into a leaf).
func (a *attacher) edgeTime(leaf, v pydt.NodeID) pydt.Time {
	tr := a.tr
	sa := tr.ParentTime(v).S()
	var sv float64
	if tr.IsLeaf(v) {
		sv = sa + 2*math.Log(1e6) // clamp range for leaf edges: 1-t down to 1e-12·(1-t_a)
	} else {
		sv = tr.Time(v).S()
	}
	var d2 float64
	k := 0
	for d := range a.m.Dims() {
		xm, xv := a.m.Message(leaf, d)
		vm, vv := a.m.Message(v, d)
		if math.IsInf(xv, 1) || math.IsInf(vv, 1) {
			continue
		}
		d2 += (xm - vm) * (xm - vm)
		k++
	}
	var st float64
	switch {
	case k == 0 && tr.IsLeaf(v):
		st = sa + math.Ln2
	case k == 0:
		st = sa + (sv-sa)/2
	default:
		st = -math.Log(d2 / (2 * float64(k) * a.opt.Variance))
		lo, hi := sa+0.05*(sv-sa), sa+0.95*(sv-sa)
		st = math.Min(math.Max(st, lo), hi)
	}
	return pydt.TimeFromS(st)
}

// pass returns the log probability that a new point does not diverge on
// the edge above v before v's time.
func (a *attacher) pass(v pydt.NodeID) float64 {
	ds := a.tr.Time(v).S() - a.tr.ParentTime(v).S()
	return -a.opt.C * a.h.Rate(a.tr.Count(v)) * ds
}

// edgePrior returns the candidate position on the edge above v and the log
// density (in s) of a new point diverging there, given the log
// probability top of reaching the top of that edge.
func (a *attacher) edgePrior(leaf, v pydt.NodeID, top float64) (pydt.Position, float64) {
	t := a.edgeTime(leaf, v)
	r := a.opt.C * a.h.Rate(a.tr.Count(v))
	return pydt.Position{Node: v, Time: t}, top + math.Log(r) - r*(t.S()-a.tr.ParentTime(v).S())
}

// nodePrior returns the position at the branch point v and the log
// probability of a new point joining v as a new branch.
func (a *attacher) nodePrior(v pydt.NodeID, top float64) (pydt.Position, float64) {
	mv := float64(a.tr.Count(v))
	k := float64(a.tr.Degree(v))
	pr := top + a.pass(v) + math.Log((a.opt.Alpha+a.opt.Beta*k)/(mv+a.opt.Alpha))
	return pydt.Position{Node: v, AtNode: true}, pr
}

// onEdge returns the score of attaching leaf on the edge above v.
func (a *attacher) onEdge(leaf, v pydt.NodeID, top float64) (pydt.Position, float64) {
	pos, pr := a.edgePrior(leaf, v, top)
	return pos, pr + a.m.LogLikIfAttached(leaf, pos)
}

// atNode returns the score of attaching leaf as a new child of v.
func (a *attacher) atNode(leaf, v pydt.NodeID, top float64) (pydt.Position, float64) {
	pos, pr := a.nodePrior(v, top)
	if math.IsInf(pr, -1) {
		return pos, pr
	}
	return pos, pr + a.m.LogLikIfAttached(leaf, pos)
}

// into returns the log probability of reaching the top of child c's edge
// from the top of v's edge.
func (a *attacher) into(v, c pydt.NodeID, top float64) float64 {
	mv := float64(a.tr.Count(v))
	return top + a.pass(v) + math.Log((float64(a.tr.Count(c))-a.opt.Beta)/(mv+a.opt.Alpha))
}

// descend finds a position by greedy descent from the root.
func (a *attacher) descend(leaf pydt.NodeID) (pydt.Position, float64) {
	tr := a.tr
	v := tr.Root()
	top := 0.0
	best, bestScore := a.onEdge(leaf, v, top)
	for !tr.IsLeaf(v) {
		cand, cs := a.atNode(leaf, v, top)
		next, nextTop := pydt.NoNode, 0.0
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			ct := a.into(v, c, top)
			p, s := a.onEdge(leaf, c, ct)
			if s > cs {
				cand, cs, next, nextTop = p, s, c, ct
			}
		}
		if !(cs > bestScore) {
			break
		}
		best, bestScore = cand, cs
		if next == pydt.NoNode {
			break // v itself is best
		}
		v, top = next, nextTop
	}
	return best, bestScore
}

// refine moves the divergence time on the chosen edge to the best the
// score finds by golden-section search over logit(f), f the fraction of
// the edge in s (for an edge into a leaf, in t: 1-t = (1-t_a)(1-f)). The
// path probabilities down to the edge do not depend on the time, so the
// score along the edge is the divergence density plus LogLikIfAttached.
func (a *attacher) refine(leaf pydt.NodeID, pos pydt.Position) pydt.Position {
	tr, v := a.tr, pos.Node
	sa := tr.ParentTime(v).S()
	r := a.opt.C * a.h.Rate(tr.Count(v))
	at := func(y float64) pydt.Time {
		f := 1 / (1 + math.Exp(-y))
		if tr.IsLeaf(v) {
			return pydt.TimeFromS(sa - math.Log1p(-f))
		}
		return pydt.TimeFromS(sa + f*(tr.Time(v).S()-sa))
	}
	score := func(y float64) float64 {
		t := at(y)
		p := pydt.Position{Node: v, Time: t}
		return -r*(t.S()-sa) + a.m.LogLikIfAttached(leaf, p)
	}
	lo, hi := -14.0, 14.0
	if tr.IsLeaf(v) {
		hi = 25
	}
	y, fy, err := GoldenMax(score, lo, hi, 1e-3)
	if err != nil || !(fy > score(logitOf(a, v, pos.Time))) {
		return pos
	}
	return pydt.Position{Node: v, Time: at(y)}
}

// logitOf returns the search coordinate of time t on the edge above v (see
// refine).
func logitOf(a *attacher, v pydt.NodeID, t pydt.Time) float64 {
	sa := a.tr.ParentTime(v).S()
	var f float64
	if a.tr.IsLeaf(v) {
		f = -math.Expm1(-(t.S() - sa))
	} else {
		f = (t.S() - sa) / (a.tr.Time(v).S() - sa)
	}
	return math.Log(f / (1 - f))
}

// exhaustive scores every edge and branch point.
func (a *attacher) exhaustive(leaf pydt.NodeID) (pydt.Position, float64) {
	tr := a.tr
	var best pydt.Position
	bestScore := math.Inf(-1)
	var walk func(v pydt.NodeID, top float64)
	walk = func(v pydt.NodeID, top float64) {
		if p, s := a.onEdge(leaf, v, top); s > bestScore {
			best, bestScore = p, s
		}
		if tr.IsLeaf(v) {
			return
		}
		if p, s := a.atNode(leaf, v, top); s > bestScore {
			best, bestScore = p, s
		}
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			walk(c, a.into(v, c, top))
		}
	}
	walk(tr.Root(), 0)
	return best, bestScore
}
