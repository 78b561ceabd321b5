package bp

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Region scores the attachment of a detached subtree v at many points of
// one part of the tree (the subtree below a node top, the edge above top
// included) at O(D) per point, where LogLikIfAttached walks to the root at
// O(depth · log K · D) per point. It keeps, for every node x of that part it
// has been asked about, the outside message of x: the product of
// everything in the model except x's subtree and the edge above x (the
// origin's prior, the other edges and evidence), as a Gaussian in the
// location of x's parent with its log normaliser, as TimeEval does for one
// branch point. Attaching v at time t on the edge above x multiplies three
// messages about the location of the new branch point: the outside message
// through the edge from x's parent to t, x's upward message through the
// edge from t to t_x, and v's through the edge from t to t_v; their
// integral is the log likelihood of the tree with v attached there, the
// value LogLikIfAttached returns (to rounding: the products are formed in
// another order).
//
//	r := m.Region(v, top) // the outside message of top: O(depth · log K · D)
//	ll := r.LogLik(pos)   // pos below top: O(D), plus O(K · log K · D) for each node
//	                      // between top and pos.Node met for the first time
//
// The region belongs to the model: it is valid until the model or the
// tree changes, and the next call of m.Region retargets it; using it after
// a change panics. No allocation once the buffers have grown.
type Region struct {
	m      *Model
	v, top pydt.NodeID
	gen    uint64
	stamp  []uint32 // per node ID: the outside record is current when equal to cur
	cur    uint32
	idx    []int32   // per node ID: the index of its outside record in buf
	buf    []float64 // outside records, rs floats each
	used   int
	scr    []float64
}

// Region returns the model's region evaluator for the detached subtree v
// and the part of the tree below top (a node hanging below the root, or
// the root). It brings the messages up to date first and computes top's
// outside message. It panics if v is not detached or top is not in the
// tree below the root.
func (m *Model) Region(v, top pydt.NodeID) *Region {
	tr := m.tr
	if tr.Parent(v) != pydt.NoNode || v == tr.Root() {
		panic("bp: Region of a node that is not detached")
	}
	if !tr.InUse(top) {
		panic("bp: Region below a node that is not in use")
	}
	m.flush()
	r := &m.rg
	r.m = m
	if c := tr.Cap(); len(r.stamp) < c {
		r.stamp = make([]uint32, c)
		r.idx = make([]int32, c)
	}
	if len(r.scr) != m.rs {
		r.scr = make([]float64, m.rs)
		r.buf = r.buf[:0]
	}
	r.cur++
	if r.cur == 0 {
		clear(r.stamp)
		r.cur = 1
	}
	r.v, r.top, r.gen, r.used = v, top, m.gen, 0
	out := r.record(top)
	m.path = m.path[:0]
	for a := top; a != pydt.NoNode; a = tr.Parent(a) {
		m.path = append(m.path, a)
	}
	switch {
	case m.path[len(m.path)-1] != tr.Root():
		panic("bp: Region below a node in a detached subtree")
	case len(m.path) == 1:
		copy(out, m.orig) // the outside of the root is the origin, x = 0
	case m.outside(out) != pydt.NoNode:
		copy(out, m.dead)
	}
	return r
}

// record returns a fresh outside record for x, marked current.
func (r *Region) record(x pydt.NodeID) []float64 {
	rs := r.m.rs
	if need := (r.used + 1) * rs; need > len(r.buf) {
		r.buf = append(r.buf, make([]float64, max(need, 2*len(r.buf))-len(r.buf))...)
	}
	r.stamp[x], r.idx[x] = r.cur, int32(r.used)
	r.used++
	return r.buf[(r.used-1)*rs : r.used*rs]
}

// outside returns the outside message of x (about the location of x's
// parent), computing those of the nodes between top and x first.
func (r *Region) outside(x pydt.NodeID) []float64 {
	if r.stamp[x] == r.cur {
		o := int(r.idx[x]) * r.m.rs
		return r.buf[o : o+r.m.rs]
	}
	m, tr := r.m, r.m.tr
	p := tr.Parent(x)
	if p == pydt.NoNode {
		panic("bp: Region.LogLik at a point not below the region's top")
	}
	op := r.outside(p)
	out := r.record(x)
	tp := tr.Time(p)
	tpp := tr.ParentTime(p)
	if !tpp.Before(tp) || math.IsInf(op[2*m.d], -1) {
		copy(out, m.dead)
		return out
	}
	// The message about p's location from above, times those of x's
	// siblings.
	m.withSiblings(out, op, tp.Since(tpp), p, x, tp)
	return out
}

// LogLik returns the value LogLikIfAttached(v, pos) would return, pos being
// a point on the edge above a node of the region (the top included) or a
// branch point of it: -Inf when the attachment would create an edge of
// non-positive length. It panics if the model changed since the region was
// made, or if pos is not below the region's top.
func (r *Region) LogLik(pos pydt.Position) float64 {
	m, tr := r.m, r.m.tr
	if r.gen != m.gen {
		panic("bp: Region used after the model changed")
	}
	tv := tr.Time(r.v)
	vr := m.node(r.v)
	x := pos.Node
	out := r.outside(x)
	t := pos.Time // the point's time
	if pos.AtNode {
		if tr.IsLeaf(x) {
			panic("bp: Region.LogLik at a leaf with AtNode set")
		}
		t = tr.Time(x)
	}
	if !t.Before(tv) || !m.mergeAt(r.scr, out, pos, tr.ParentTime(x)) {
		return math.Inf(-1)
	}
	return mergeLL(r.scr, 0, vr, tv.Since(t), m.s2)
}
