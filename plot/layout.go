package plot

import (
	"errors"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Layout holds the coordinates of a dendrogram of a tree: every node's
// divergence time (across) and row (down).
type Layout struct {
	// Time is each node's divergence time in [0, 1], indexed by NodeID
	// (leaves at 1); nodes not in the tree have NaN.
	Time []float64
	// S is each node's s = -log(1 - t), exact near t = 1 (leaves +Inf);
	// nodes not in the tree have NaN.
	S []float64
	// Axis is the scale the nodes are placed on (SetAxis; NewLayout
	// places them on AxisT).
	Axis Axis
	// X is each node's position along the axis (SetAxis): Time on the t
	// axis, S on the s axis with the leaves at XMax. It is finite for
	// every node in the tree.
	X []float64
	// XMax is the axis's right end: 1 on the t axis; on the s axis a
	// little beyond the latest branch point, where the leaves are drawn.
	XMax float64
	// Row is each node's vertical position, indexed by NodeID: the leaves
	// take rows 0, 1, ..., N-1 from the top in the order of Leaves, and a
	// branch point sits midway between its first and last child, so that
	// the vertical bar of a multifurcation spans all of its children.
	Row []float64
	// Leaves lists the leaves from top to bottom: the tree's leaves in
	// depth-first order, children in the tree's order.
	Leaves []pydt.NodeID
	// Span is, for every branch point, the rows of its first and last
	// child: the ends of its vertical bar.
	Span [][2]float64
}

// NewLayout lays out tr as a dendrogram, on the t axis (SetAxis changes
// it). The tree must be complete (every leaf attached under the root).
func NewLayout(tr *pydt.Tree) (*Layout, error) {
	if tr == nil || tr.Root() == pydt.NoNode {
		return nil, errors.New("plot: the tree is empty")
	}
	n := tr.Cap()
	l := &Layout{Time: make([]float64, n), S: make([]float64, n), Row: make([]float64, n), Span: make([][2]float64, n)}
	for i := range l.Time {
		l.Time[i] = nan
		l.S[i] = nan
		l.Row[i] = nan
		l.Span[i] = [2]float64{nan, nan}
	}
	post := tr.PostOrder(nil)
	for _, v := range post {
		l.Time[v] = tr.Time(v).T()
		l.S[v] = tr.Time(v).S()
		if tr.IsLeaf(v) {
			l.Row[v] = float64(len(l.Leaves))
			l.Leaves = append(l.Leaves, v)
			continue
		}
		first, last := tr.FirstChild(v), tr.FirstChild(v)
		for c := range tr.Children(v) {
			last = c
		}
		l.Span[v] = [2]float64{l.Row[first], l.Row[last]}
		l.Row[v] = (l.Row[first] + l.Row[last]) / 2
	}
	if len(l.Leaves) != tr.NumLeaves() {
		return nil, errors.New("plot: the tree has detached leaves")
	}
	if err := l.SetAxis(AxisT); err != nil {
		return nil, err
	}
	return l, nil
}
