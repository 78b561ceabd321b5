package bp

import (
	"fmt"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// PointMarginal writes to mean and variance (D values each) the posterior
// of the location at the position pos of the tree below the root given all
// its evidence: for pos.AtNode, the location of the branch point pos.Node;
// otherwise that of the point at pos.Time on the edge above pos.Node (the
// node a subtree attached there would hang from). Detached subtrees play no
// part: with a subtree v detached it is the Gaussian of x at v's would-be
// attachment point given the evidence of the rest of the tree, the message
// that LogLikIfAttached multiplies with v's upward message (through the
// edge to v) and integrates. The root's prior N(0, σ² t) is proper, so the
// variance is finite wherever the tree is valid, evidence or not.
//
// It walks from the root down to pos.Node, multiplying the message from
// above with those of the siblings along the path (as TimeEval does), then
// with pos.Node's upward message through the edge below the point: cost
// O(depth · log K · D), no allocation, the tree and the messages untouched.
//
// It returns an error, leaving mean and variance alone, when the slices do
// not have length D, pos.Node is not in the tree below the root, pos is not
// a valid attachment point (pos.Time not strictly inside the edge above
// pos.Node, or AtNode at a leaf), or an edge on the path has non-positive
// length.
func (m *Model) PointMarginal(pos pydt.Position, mean, variance []float64) error {
	if len(mean) != m.d || len(variance) != m.d {
		return fmt.Errorf("bp: PointMarginal needs slices of length D = %d, got %d and %d", m.d, len(mean), len(variance))
	}
	tr := m.tr
	u := pos.Node
	if u < 0 || int(u) >= tr.Cap() || !tr.InUse(u) {
		return fmt.Errorf("bp: PointMarginal at node %d, which is not in use", u)
	}
	if pos.AtNode && tr.IsLeaf(u) {
		return fmt.Errorf("bp: PointMarginal at leaf %s with AtNode set", tr.Label(u))
	}
	m.flush()
	m.path = m.path[:0]
	for a := u; a != pydt.NoNode; a = tr.Parent(a) {
		m.path = append(m.path, a)
	}
	if m.path[len(m.path)-1] != tr.Root() {
		return fmt.Errorf("bp: PointMarginal at node %d, which hangs in a detached subtree", u)
	}
	// out: the message from everything outside u's subtree and the edge
	// above u, about the location of u's parent at time tp (the origin,
	// x = 0 exactly at t = 0, for the root).
	out := m.pt
	tp := pydt.Origin
	if len(m.path) == 1 {
		copy(out, m.orig)
	} else {
		switch bad := m.outside(out); {
		case bad == tr.Root():
			return m.edgeError(bad, tr.Time(bad).T())
		case bad != pydt.NoNode:
			return m.edgeError(bad, tr.BranchLength(bad))
		}
		tp = tr.Time(m.path[1])
	}
	res := m.pt2
	if !m.mergeAt(res, out, pos, tp) {
		if pos.AtNode {
			return m.edgeError(u, tr.BranchLength(u))
		}
		return fmt.Errorf("bp: PointMarginal at %v on the edge above node %d, which runs from %v to %v", pos.Time, u, tp, tr.Time(u))
	}
	copy(mean, res[:m.d])
	copy(variance, res[m.d:2*m.d])
	return nil
}

// mergeAt writes to res the message about the location at pos, the branch
// point pos.Node (pos.AtNode) or the point at pos.Time on the edge above
// it, from out, the message about the location of pos.Node's parent at
// time tp, and pos.Node's upward message, each carried along its edge to
// the point (merge). It reports false, leaving res alone, when the point
// is not strictly after tp or, on the edge, not strictly before pos.Node's
// time. PointMarginal and Region.LogLik share it.
func (m *Model) mergeAt(res, out []float64, pos pydt.Position, tp pydt.Time) bool {
	u := pos.Node
	tu := m.tr.Time(u)
	if pos.AtNode {
		if !tp.Before(tu) {
			return false
		}
		merge(res, out, tu.Since(tp), m.node(u), 0, m.s2)
		return true
	}
	t := pos.Time
	if !tp.Before(t) || !t.Before(tu) {
		return false
	}
	merge(res, out, t.Since(tp), m.node(u), tu.Since(t), m.s2)
	return true
}
