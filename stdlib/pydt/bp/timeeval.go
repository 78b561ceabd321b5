package bp

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TimeEval evaluates LogLik as a function of the time of one branch point
// v, everything else fixed, without touching the tree or the messages. It
// is made for slice sampling v's time, which needs the likelihood at
// several candidate times:
//
//	e := m.TimeEval(v)        // O(depth · log K · D), once
//	lo, hi := e.Bounds()      // valid times lie strictly between
//	ll := e.LogLik(t)         // O(K_v · D) per candidate, no path update
//	e.Commit(t)               // m.SetTime(v, t): one path update
//
// TimeEval(v) computes the outside message of v: the product of everything
// in the model except v's subtree and the edge above v (the prior of the
// root's location, the edges and evidence elsewhere), as a Gaussian in the
// location of v's parent with its log normaliser. LogLik(t) then multiplies
// it with the messages of v's children through edges of lengths t_c - t and
// the edge t - t_parent, and integrates.
//
// The evaluator belongs to the Model: it is valid until the model or the
// tree changes other than through its Commit (the outside message does not
// depend on v's time, so the evaluator stays valid after Commit), and the
// next call of m.TimeEval retargets it. Using it after another change
// panics. No allocation.
type TimeEval struct {
	m      *Model
	v      pydt.NodeID
	tp, hi pydt.Time // the parent's time (Origin for the root), the earliest child's
	up     float64   // tp's 1-t
	out    []float64 // outside message about x_parent, a record
	scr    []float64
	gen    uint64
	sweep  bool // targeted by TimeSweep: Commit updates v alone
}

// target points e at v: its earliest child's time (Leaf if v has no
// children) and the model's current generation.
func (e *TimeEval) target(v pydt.NodeID) {
	tr := e.m.tr
	e.v = v
	e.hi = pydt.Leaf
	for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
		if tc := tr.Time(c); tc.Before(e.hi) {
			e.hi = tc
		}
	}
	e.gen = e.m.gen
}

// TimeEval returns the model's time evaluator targeted at the branch point
// v, which must hang below the root (v may be the root). It brings the
// messages up to date first. It panics if v is a leaf, not in use, or
// detached. Cost O(depth · log K · D), K the degrees along the path.
func (m *Model) TimeEval(v pydt.NodeID) *TimeEval {
	tr := m.tr
	if tr.IsLeaf(v) || !tr.InUse(v) {
		panic("bp: TimeEval of a node that is not a branch point")
	}
	m.flush()
	m.path = m.path[:0]
	for a := v; a != pydt.NoNode; a = tr.Parent(a) {
		m.path = append(m.path, a)
	}
	r := m.path[len(m.path)-1]
	if r != tr.Root() {
		panic("bp: TimeEval of a node in a detached subtree")
	}
	e := &m.te
	e.target(v)
	if v == r {
		// The outside of the root is the origin: x = 0 exactly.
		copy(e.out, m.orig)
		e.tp, e.up = pydt.Origin, 1
		return e
	}
	e.tp = tr.Time(m.path[1])
	e.up = e.tp.OneMinus()
	if m.outside(e.out) != pydt.NoNode {
		copy(e.out, m.dead)
	}
	return e
}

// outside writes to out the outside message of m.path[0], whose ancestors
// up to the root m.path lists (at least its parent): the product of the
// prior of the root's location (the origin through an edge of length
// t_root) and everything off the path, as a message about the location of
// m.path[1]. It walks down from the root: at each ancestor a, it multiplies
// the message arriving from above by those of a's children off the path
// (the siblings along the path in a's segment tree), then carries the
// product through the edge to the next node on the path. It returns the
// node on the path below the root, or the root, whose edge above is not of
// positive length (out then partly written), NoNode otherwise. Shared by
// TimeEval and PointMarginal; O(depth · log K · D), no allocation.
func (m *Model) outside(out []float64) pydt.NodeID {
	tr := m.tr
	r := m.path[len(m.path)-1]
	if !pydt.Origin.Before(tr.Time(r)) {
		return r
	}
	acc, l := m.orig, tr.Time(r).T()
	for k := len(m.path) - 1; k >= 1; k-- {
		a, b := m.path[k], m.path[k-1]
		ta := tr.Time(a)
		acc, l = m.withSiblings(out, acc, l, a, b, ta)
		if k > 1 {
			tb := tr.Time(b)
			if !ta.Before(tb) {
				return b
			}
			l = tb.Since(ta)
		}
	}
	return pydt.NoNode
}

// withSiblings multiplies acc, a message about the location of branch
// point a (at time ta) through an edge of length l, by the upward messages
// of a's children other than b, along b's slot in a's segment tree, into
// out: the message about a's location from everything but b's subtree and
// the edge above b. It returns out and 0, or acc and l unchanged when a has
// no other child.
func (m *Model) withSiblings(out, acc []float64, l float64, a, b pydt.NodeID, ta pydt.Time) ([]float64, float64) {
	c := m.seg.capOf(a)
	for i := c + int(m.seg.node[b].slot); i > 1; i >>= 1 {
		sib, ls := m.op(a, ta, c, i^1)
		merge(out, acc, l, sib, ls, m.s2)
		acc, l = out, 0
	}
	return acc, l
}

// Node returns the branch point the evaluator is targeted at.
func (e *TimeEval) Node() pydt.NodeID { return e.v }

// Bounds returns the time of v's parent (the origin for the root) and the
// earliest time of v's children: LogLik is finite only strictly between.
func (e *TimeEval) Bounds() (lo, hi pydt.Time) { return e.tp, e.hi }

// LogLik returns the value the model's LogLik would take with v's time set
// to t, or -Inf when t is not strictly inside Bounds. Cost O(K_v · D), one
// logarithm, no allocation. It panics if the model changed since the
// evaluator was targeted (other than by Commit).
func (e *TimeEval) LogLik(t pydt.Time) float64 {
	m := e.m
	if e.gen != m.gen {
		panic("bp: TimeEval used after the model changed")
	}
	m.timeEvals++
	if !e.tp.Before(t) || !t.Before(e.hi) || math.IsInf(e.out[2*m.d], -1) {
		return math.Inf(-1)
	}
	tt, tu := t.S(), t.OneMinus()
	acc, l := e.out, pydt.Elapsed(e.tp.S(), tt, e.up, tu)
	k := m.tr.Degree(e.v)
	ks := m.seg.kidsOf(e.v)[:k]
	for j, c := range ks {
		ch, lc := m.child(c, tt, tu)
		if j == k-1 {
			return mergeLL(acc, l, ch, lc, m.s2)
		}
		merge(e.scr, acc, l, ch, lc, m.s2)
		acc, l = e.scr, 0
	}
	// No children (not a valid tree): the outside integrates to its
	// normaliser.
	return acc[2*m.d] - 0.5*math.Log(acc[2*m.d+1])
}

// Commit sets v's time to t and updates the messages, as m.SetTime(v, t)
// (during TimeSweep, only v's own; see there). The evaluator stays valid. Cost O(K_v · D + depth · log K · D).
func (e *TimeEval) Commit(t pydt.Time) {
	m := e.m
	if e.gen != m.gen {
		panic("bp: TimeEval used after the model changed")
	}
	if e.sweep {
		m.tr.SetTime(e.v, t)
		m.build(e.v)
		m.gen++
	} else {
		m.SetTime(e.v, t)
	}
	e.gen = m.gen
}
