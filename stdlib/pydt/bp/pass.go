package bp

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

const log2Pi = 1.8378770664093454835606594728112352797227949472755668

// originLL returns the log of the integral of the message a about the
// root's location, at time t, against the root's prior N(0, σ²_d t) per
// dimension.
func (m *Model) originLL(a []float64, t pydt.Time) float64 {
	if !pydt.Origin.Before(t) {
		return math.Inf(-1)
	}
	return mergeLL(a, 0, m.orig, t.T(), m.s2)
}

// bfs appends the subtree below r to m.order, parents before children (the
// children of a node contiguous), and records where each node's children
// are.
func (m *Model) bfs(r pydt.NodeID) {
	tr := m.tr
	start := len(m.order)
	m.jslot[start] = 0
	m.order = append(m.order, r)
	for i := start; i < len(m.order); i++ {
		lo := int32(len(m.order))
		m.lo[i] = lo
		for c := tr.FirstChild(m.order[i]); c != pydt.NoNode; c = tr.NextSibling(c) {
			m.jslot[len(m.order)] = int32(len(m.order)) - lo
			m.order = append(m.order, c)
		}
		m.hi[i] = int32(len(m.order))
	}
}

// Recompute recomputes every message by a pass over the tree, children
// before parents, and over every detached subtree, in O(N·D). It lays out
// the segment trees afresh from the tree's child lists, so it also serves
// after the tree was changed directly. It returns an error naming the node
// if an edge of the tree has non-positive length (LogLik is then -Inf), and
// one wrapping ErrNoDensity if LogLik is +Inf (see Err).
func (m *Model) Recompute() error {
	tr := m.tr
	for _, leaf := range m.pending {
		m.isPending[leaf] = false
	}
	m.pending = m.pending[:0]
	m.stale = false
	m.gen++
	m.seg.reset()
	root := tr.Root()
	m.order, m.starts = m.order[:0], m.starts[:0]
	if root != pydt.NoNode {
		m.starts = append(m.starts, 0)
		m.bfs(root)
	}
	n := tr.NumLeaves()
	for id := n; id < tr.Cap(); id++ {
		v := pydt.NodeID(id)
		if v != root && tr.InUse(v) && tr.Parent(v) == pydt.NoNode {
			m.starts = append(m.starts, int32(len(m.order)))
			m.bfs(v)
		}
	}
	order := m.order
	m.seg.reserve(order, m.lo, m.hi, n)
	relaid := len(m.nr)*8 >= m.relayoutBytes
	if relaid {
		m.relayout()
	}
	if w := m.passWorkers(); w > 1 {
		m.layoutAll(relaid)
		m.parallelPass(w, m.starts, relaid)
	} else {
		// Reversed breadth-first order puts children before parents. When
		// relaid, the records lie in breadth-first order: the pass reads
		// and writes them as streams, downwards in memory, and touches
		// nothing indexed by node ID but p's bookkeeping, just written by
		// relayout. Otherwise the records fit in the caches: moving them
		// costs more than it saves.
		for i := len(order) - 1; i >= 0; i-- {
			if sn, ok := m.layoutPos(i, relaid); ok {
				m.buildLaid(i, sn, relaid)
			}
		}
	}
	m.reserveJournal()
	m.jr.valid = false
	if root != pydt.NoNode && math.IsInf(m.LogLik(), 0) {
		return m.Err()
	}
	return nil
}

// LogLik returns the log of the integral over all locations of the evidence
// times the prior of the locations given the tree: for observed leaves, the
// log density of the data with the internal locations integrated out. Only
// the subtree planted at the root counts; detached subtrees are left out. It
// is -Inf if the tree has an edge of non-positive length (see Err), and 0 for
// an empty tree.
func (m *Model) LogLik() float64 {
	m.flush()
	r := m.tr.Root()
	if r == pydt.NoNode {
		return 0
	}
	return m.originLL(m.node(r), m.tr.Time(r))
}

// Detach detaches the subtree v from the tree (see pydt.Tree.Detach) and
// updates the messages on the path from the point it left to the root. The
// messages of the detached subtree stay current, for LogLikIfAttached and for
// Attach. Attach(v, pos) with the returned position restores the tree and the
// likelihood. Cost O(depth · log K · D) for branch points of degree up to K;
// no allocation.
func (m *Model) Detach(v pydt.NodeID) pydt.Position {
	m.gen++
	m.jr.valid = false
	if m.stale {
		return m.tr.Detach(v)
	}
	m.flush()
	tr := m.tr
	p := tr.Parent(v)
	j := int(m.seg.node[v].slot)
	m.beginJournal(v)
	jr := &m.jr
	pos := tr.Detach(v)
	if pos.AtNode {
		jr.p, jr.j, jr.last = p, int32(j), int32(tr.Degree(p))
		ok := m.removeSlot(p, j)
		m.propagate(p)
		m.endJournal(pos, ok)
		return pos
	}
	// p was spliced out: its remaining child s takes its slot.
	s := pos.Node
	js := m.seg.node[p].slot
	jr.p, jr.j, jr.js = p, int32(j), js
	m.seg.release(p)
	if g := tr.Parent(s); g != pydt.NoNode {
		m.seg.put(g, s, js)
	}
	m.propagate(s)
	m.endJournal(pos, true)
	return pos
}

// Attach attaches the detached subtree v at pos (see pydt.Tree.Attach),
// updates the messages from its new parent to the root, and returns the new
// parent. Cost O(depth · log K · D), amortised; no allocation once the
// model has seen branch points of the degrees involved. Right after
// LogLikIfAttached(v, pos) for a position on an edge it copies the records
// that call computed (the same bits) instead of recomputing them.
func (m *Model) Attach(v pydt.NodeID, pos pydt.Position) pydt.NodeID {
	if m.undoable(v, pos) {
		m.gen++
		return m.undoDetach(v, pos)
	}
	if m.committable(v, pos) {
		m.gen++
		m.jr.valid = false
		return m.commit(v, pos)
	}
	m.gen++
	m.jr.valid = false
	if m.stale {
		return m.tr.Attach(v, pos)
	}
	m.flush()
	tr := m.tr
	if pos.AtNode {
		w := tr.Attach(v, pos)
		m.addChild(w, v)
		m.propagate(w)
		return w
	}
	u := pos.Node
	ju := m.seg.node[u].slot
	w := tr.Attach(v, pos)
	s := &m.seg
	s.alloc(w, 2)
	s.put(w, u, 0)
	s.put(w, v, 1)
	m.build(w)
	if g := tr.Parent(w); g != pydt.NoNode {
		s.put(g, w, ju)
	}
	m.propagate(w)
	return w
}

// UpdatePath recomputes the messages that depend on v's time: those of v
// itself (the edges to its children) and of its ancestors (the edge above
// v). Call it after changing v's time with pydt.Tree.SetTime; for a leaf it
// recomputes the path above the leaf. Cost O(K_v · D + depth · log K · D).
func (m *Model) UpdatePath(v pydt.NodeID) {
	m.gen++
	if m.stale {
		return
	}
	m.flush()
	if !m.tr.IsLeaf(v) {
		m.build(v)
	}
	m.propagate(v)
}

// SetTime sets the time of the branch point v and updates the messages
// (pydt.Tree.SetTime followed by UpdatePath). The caller keeps t between the
// time of v's parent and those of its children. To evaluate many candidate
// times of one branch point, TimeEval is cheaper.
func (m *Model) SetTime(v pydt.NodeID, t pydt.Time) {
	m.tr.SetTime(v, t)
	m.UpdatePath(v)
}

// LogLikIfAttached returns the value LogLik would take if the detached
// subtree v were attached at pos, without changing the tree or the messages:
// the messages on the path from the attachment point to the root are
// recomputed into scratch buffers, at cost O(depth · log K · D) and without
// allocation (once the model has seen paths of that length). The result is
// -Inf if the attachment would create an edge of
// non-positive length (pos.Time not strictly between the ends of the edge
// above pos.Node and before v's time, or pos.Node at or after v's time).
//
// For a position on an edge the scratch records are exactly those Attach
// would compute, bit for bit; Attach(v, pos) called next, with nothing
// changed in between, copies them into place instead of recomputing the
// path (see commit).
//
// It panics if v is not detached or if pos is at a leaf with AtNode set.
func (m *Model) LogLikIfAttached(v pydt.NodeID, pos pydt.Position) float64 {
	tr := m.tr
	if tr.Parent(v) != pydt.NoNode || v == tr.Root() {
		panic("bp: LogLikIfAttached of a node that is not detached")
	}
	m.flush()
	cp := &m.cp
	cp.valid = false
	tv := tr.Time(v)
	vr := m.node(v)
	// The product so far is the record k of cp.buf, the message of cur (or
	// of a node in its place) at time ct.
	k := 0
	acc := m.cpRec(0)
	var cur pydt.NodeID
	var ct pydt.Time
	if pos.AtNode {
		w := pos.Node
		if tr.IsLeaf(w) {
			panic("bp: LogLikIfAttached at a leaf with AtNode set")
		}
		tw := tr.Time(w)
		if !tw.Before(tv) {
			return math.Inf(-1)
		}
		merge(acc, m.node(w), 0, vr, tv.Since(tw), m.s2)
		cur, ct = w, tw
	} else {
		u, t := pos.Node, pos.Time
		tu := tr.Time(u)
		if !t.Before(tu) || !t.Before(tv) {
			return math.Inf(-1)
		}
		merge(acc, m.node(u), tu.Since(t), vr, tv.Since(t), m.s2)
		cur, ct = u, t
	}
	// Walking up, 1-t of the node below (uc) is carried from one level
	// to the next, and an ancestor's is read from its record, where build
	// keeps its time (as updateSlots does): no exponential per ancestor,
	// and the edge lengths are those of Time.Since, bit for bit. Each
	// product goes to a record of its own, as the heap records of
	// updateSlots would.
	uc := ct.OneMinus()
	for a := tr.Parent(cur); a != pydt.NoNode; a = tr.Parent(a) {
		ta := tr.Time(a)
		if !ta.Before(ct) {
			return math.Inf(-1)
		}
		o := m.off(a) + m.rs - 2
		sa, ua := m.nr[o], m.nr[o+1]
		l := pydt.Elapsed(sa, ct.S(), ua, uc)
		c := m.seg.capOf(a)
		for i := c + int(m.seg.node[cur].slot); i > 1; i >>= 1 {
			var sib []float64
			var ls float64
			if j := i ^ 1; j >= c {
				sib, ls = m.slotOp(m.seg.kidsOf(a)[j-c], sa, ua)
			} else {
				sib, ls = m.op(a, ta, c, j)
			}
			k++
			out := m.cpRec(k)
			if i&1 == 0 {
				merge(out, acc, l, sib, ls, m.s2)
			} else {
				merge(out, sib, ls, acc, l, m.s2)
			}
			acc, l = out, 0
		}
		cur, ct, uc = a, ta, ua
	}
	ll := m.originLL(acc, ct)
	if !pos.AtNode {
		cp.valid, cp.gen, cp.v, cp.pos, cp.n = true, m.gen, v, pos, k+1
	}
	return ll
}

// relayout moves the node records so that those of m.order lie in that
// order (the record of order[i] at index i, so the children of a node are
// contiguous), followed by those of the other nodes in ID order, and copies
// the records the pass will not recompute: those of leaves and of nodes
// outside m.order (detached leaves; unused IDs). The records of the branch
// points in m.order are left to the pass. It also sets every ordered
// node's slot in its parent's segment tree and gathers the branch points'
// times into m.tm. The loads indexed by node ID are made in tight loops of
// independent loads, so that the processor overlaps their cache misses.
// O(Cap · D), mostly sequential copies once the layout is close to
// breadth-first; no allocation.
func (m *Model) relayout() {
	tr, rs, nodes := m.tr, m.rs, m.seg.node
	n, order := tr.NumLeaves(), m.order
	nr := m.newRec
	for i := range nr {
		nr[i] = -1
	}
	for i, v := range order {
		nr[v] = int32(i)
	}
	old, nw := m.nr, m.nr2
	next := int32(len(order))
	for id, r := range nr {
		if r < 0 {
			o, d := int(nodes[id].rec)*rs, int(next)*rs
			copy(nw[d:d+rs], old[o:o+rs])
			nodes[id].rec = next
			next++
		}
	}
	oldRec, jslot, tm := m.oldRec, m.jslot, m.tm
	for i, v := range order {
		e := &nodes[v]
		oldRec[i] = e.rec
		e.rec, e.slot = int32(i), jslot[i]
	}
	for i, v := range order {
		if int(v) >= n {
			tm[i] = tr.Time(v)
		}
	}
	for i, v := range order {
		if int(v) < n {
			o := int(oldRec[i]) * rs
			copy(nw[i*rs:i*rs+rs], old[o:o+rs])
		}
	}
	m.nr, m.nr2 = nw, old
}
