package bp

import (
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TimeSweep visits every branch point of the tree once, each before its
// descendants, and calls visit with the model's TimeEval targeted at it, so
// that the caller can update every divergence time (slice sampling each in
// turn: a systematic scan) at a cost of O(K · D) per branch point instead
// of the O(depth · log K · D) of a TimeEval and a Commit each.
//
// It keeps, per branch point, its outside message (see TimeEval): that of
// a node is its parent's outside message carried through the edge above
// the parent, times the messages of its siblings, read from the parent's
// segment tree. Going down, a node's outside message is formed once its
// parent's time is final and the subtrees of its earlier siblings are done;
// a subtree's message is brought up to date in its parent's segment tree
// when the walk leaves it. During the sweep the messages of the ancestors
// of the visited node are out of date, so visit must use only the
// evaluator (LogLik, Bounds, Node, Commit) and not the model (LogLik,
// Detach, ...); Commit sets the time and rebuilds the node's own segment
// tree, O(K · D). When TimeSweep returns every message is current.
//
// It allocates a buffer of Cap() records on first use, nothing after.
func (m *Model) TimeSweep(visit func(e *TimeEval)) {
	m.flush()
	m.gen++
	m.jr.valid = false
	tr := m.tr
	root := tr.Root()
	if root == pydt.NoNode || tr.IsLeaf(root) {
		return
	}
	rs := m.rs
	if len(m.outs) < tr.Cap()*rs {
		m.outs = make([]float64, tr.Cap()*rs)
	}
	e := &m.te
	own := e.out
	e.sweep = true
	// An explicit stack: a node to enter, or ^node to leave.
	stack := m.path[:0]
	stack = append(stack, root)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v < 0 {
			v = ^v
			if p := tr.Parent(v); p != pydt.NoNode {
				m.updateSlots(p, int(m.seg.node[v].slot), -1)
			}
			continue
		}
		m.enterSweep(v)
		visit(e)
		stack = append(stack, ^v)
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			if !tr.IsLeaf(c) {
				stack = append(stack, c)
			}
		}
	}
	m.path = stack[:0]
	e.sweep, e.out = false, own
	m.gen++
}

// enterSweep targets the evaluator at v during TimeSweep: v's outside
// message from its parent's (already formed) and the parent's segment tree.
func (m *Model) enterSweep(v pydt.NodeID) {
	tr, rs := m.tr, m.rs
	e := &m.te
	e.target(v)
	out := m.outs[int(v)*rs : int(v)*rs+rs]
	e.out = out
	p := tr.Parent(v)
	if p == pydt.NoNode {
		copy(out, m.orig)
		e.tp, e.up = pydt.Origin, 1
		return
	}
	tp := tr.Time(p)
	e.tp, e.up = tp, tp.OneMinus()
	var acc []float64
	var l float64 // length of the edge above p
	if pp := tr.Parent(p); pp == pydt.NoNode {
		acc = m.orig
		if !pydt.Origin.Before(tp) {
			copy(out, m.dead)
			return
		}
		l = tp.T()
	} else {
		tpp := tr.Time(pp)
		if !tpp.Before(tp) {
			copy(out, m.dead)
			return
		}
		acc = m.outs[int(p)*rs : int(p)*rs+rs]
		l = tp.Since(tpp)
	}
	m.withSiblings(out, acc, l, p, v, tp)
}
