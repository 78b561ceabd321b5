package bp

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

const log2Pi = 1.8378770664093454835606594728112352797227949472755668

// initMsg sets (om, ov) to the message (cm, cv) sent through an edge of
// variance s: the mean is unchanged and the variance grows by s (infinite
// variances stay infinite).
func initMsg(om, ov, cm, cv []float64, s float64) {
	ov = ov[:len(om)]
	cm = cm[:len(om)]
	cv = cv[:len(om)]
	for d := range om {
		om[d] = cm[d]
		ov[d] = cv[d] + s
	}
}

// mergeMsg multiplies the message (om, ov) in place by the message (cm, cv)
// sent through an edge of variance s. Per dimension where both carry
// information, N(x; m1, v1) N(x; m2, v2) = N(m1 - m2; 0, v1 + v2) N(x; m, v);
// mergeMsg returns the sum over those dimensions of (m1-m2)²/(v1+v2), of
// log(v1+v2), and their number, from which the caller forms the log
// normaliser. A side without information leaves the other unchanged. The
// product of the totals v1+v2 is carried in prod (kept within [1e-200,
// 1e200], the excess going to logDet) so that a node costs one logarithm
// however many children it has: the log determinant is logDet + log(prod).
func mergeMsg(om, ov, cm, cv []float64, s, prod float64) (quad, logDet, prodOut float64, n int) {
	ov = ov[:len(om)]
	cm = cm[:len(om)]
	cv = cv[:len(om)]
	for d := range om {
		c := cv[d]
		if c == inf {
			continue
		}
		c += s
		a := ov[d]
		if a == inf {
			om[d], ov[d] = cm[d], c
			continue
		}
		tot := a + c
		inv := 1 / tot
		diff := cm[d] - om[d]
		quad += diff * diff * inv
		om[d] += a * inv * diff
		ov[d] = a * c * inv
		n++
		// Keep the product of the totals in range; one log per call.
		if tot > 1e-100 && tot < 1e100 {
			prod *= tot
			if prod < 1e-200 || prod > 1e200 {
				logDet += math.Log(prod)
				prod = 1
			}
		} else {
			logDet += math.Log(tot)
		}
	}
	return quad, logDet, prod, n
}

// combine computes into (om, ov) the message about x_p that the children of p
// send through their edges, and returns the log normaliser of p's subtree.
// Child sub (NoNode for none) is replaced by a node at time st sending the
// message (sm, sv) with log normaliser slz. An edge of non-positive length
// makes the result -Inf; its child's message is then left out so that no NaN
// arises.
func (m *Model) combine(p pydt.NodeID, om, ov []float64, sub pydt.NodeID, sm, sv []float64, slz float64, st pydt.Time) float64 {
	tr := m.tr
	d := m.d
	tp := tr.Time(p)
	lz := 0.0
	quad, logDet, prod, n := 0.0, 0.0, 1.0, 0
	first := true
	for c := tr.FirstChild(p); c != pydt.NoNode; c = tr.NextSibling(c) {
		var cm, cv []float64
		var clz float64
		var tc pydt.Time
		if c == sub {
			cm, cv, clz, tc = sm, sv, slz, st
		} else {
			i := int(c) * d
			cm, cv, clz, tc = m.mu[i:i+d], m.vr[i:i+d], m.lz[c], tr.Time(c)
		}
		l := tc.Since(tp)
		if !(l > 0) {
			lz = math.Inf(-1)
			continue
		}
		lz += clz
		if first {
			initMsg(om, ov, cm, cv, m.s2*l)
			first = false
			continue
		}
		var q, ld float64
		var k int
		q, ld, prod, k = mergeMsg(om, ov, cm, cv, m.s2*l, prod)
		quad += q
		logDet += ld
		n += k
	}
	if prod != 1 {
		logDet += math.Log(prod)
	}
	if first {
		for i := range om {
			om[i], ov[i] = 0, inf
		}
	}
	return lz - 0.5*(quad+logDet+float64(n)*log2Pi)
}

// originTerm returns the log of the integral of the message (mu, vr) about
// the root's location against its prior N(0, σ² t), t being the root's time.
func (m *Model) originTerm(mu, vr []float64, t pydt.Time) float64 {
	l := t.Since(pydt.Origin)
	if !(l > 0) {
		return math.Inf(-1)
	}
	s := m.s2 * l
	vr = vr[:len(mu)]
	quad, prod, logDet, n := 0.0, 1.0, 0.0, 0
	for d, v := range vr {
		if v == inf {
			continue
		}
		tot := v + s
		quad += mu[d] * mu[d] / tot
		n++
		if tot > 1e-100 && tot < 1e100 {
			prod *= tot
			if prod < 1e-200 || prod > 1e200 {
				logDet += math.Log(prod)
				prod = 1
			}
		} else {
			logDet += math.Log(tot)
		}
	}
	if prod != 1 {
		logDet += math.Log(prod)
	}
	return -0.5 * (quad + logDet + float64(n)*log2Pi)
}

// updateNode recomputes the message and log normaliser of internal node p.
func (m *Model) updateNode(p pydt.NodeID) {
	i := int(p) * m.d
	m.lz[p] = m.combine(p, m.mu[i:i+m.d], m.vr[i:i+m.d], pydt.NoNode, nil, nil, 0, pydt.Time{})
}

// updateFrom recomputes the messages of a and of all its ancestors.
func (m *Model) updateFrom(a pydt.NodeID) {
	for ; a != pydt.NoNode; a = m.tr.Parent(a) {
		m.updateNode(a)
	}
}

// Recompute recomputes every message by a post-order pass over the tree, and
// over every detached subtree, in O(N·D). It returns an error naming the
// node if an edge of the tree has non-positive length (LogLik is then -Inf).
func (m *Model) Recompute() error {
	tr := m.tr
	for _, leaf := range m.pending {
		m.isPending[leaf] = false
	}
	m.pending = m.pending[:0]
	m.stale = false
	root := tr.Root()
	m.order = tr.PostOrder(m.order[:0])
	for id := tr.NumLeaves(); id < tr.Cap(); id++ {
		v := pydt.NodeID(id)
		if v != root && tr.InUse(v) && tr.Parent(v) == pydt.NoNode {
			m.order = tr.PostOrderFrom(v, m.order)
		}
	}
	n := pydt.NodeID(tr.NumLeaves())
	// The nodes' storage is scattered in memory. Reading the data of the
	// node a few places ahead in the order lets the processor fetch it
	// while the current node is computed (a software prefetch); by the
	// time a node is reached its children, earlier in post-order, have
	// been fetched and computed.
	const ahead = 8
	d := m.d
	order := m.order
	sink := 0.0
	for i, v := range order {
		if i+ahead < len(order) {
			u := order[i+ahead]
			j := int(u) * d
			sink += m.mu[j] + m.mu[j+d-1] + m.vr[j] + m.vr[j+d-1] + m.lz[u] + tr.Time(u).OneMinus()
			if u >= n {
				sink += float64(tr.FirstChild(u))
			}
		}
		if v >= n {
			m.updateNode(v)
		}
	}
	m.sink = sink
	if root != pydt.NoNode && math.IsInf(m.LogLik(), -1) {
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
	i := int(r) * m.d
	return m.lz[r] + m.originTerm(m.mu[i:i+m.d], m.vr[i:i+m.d], m.tr.Time(r))
}

// Detach detaches the subtree v from the tree (see pydt.Tree.Detach) and
// updates the messages on the path from the point it left to the root. The
// messages of the detached subtree stay current, for LogLikIfAttached and for
// Attach. Attach(v, pos) with the returned position restores the tree and the
// likelihood. Cost O(depth · D · degree); no allocation.
func (m *Model) Detach(v pydt.NodeID) pydt.Position {
	if m.stale {
		return m.tr.Detach(v)
	}
	m.flush()
	pos := m.tr.Detach(v)
	if pos.AtNode {
		m.updateFrom(pos.Node)
	} else {
		m.updateFrom(m.tr.Parent(pos.Node))
	}
	return pos
}

// Attach attaches the detached subtree v at pos (see pydt.Tree.Attach),
// updates the messages from its new parent to the root, and returns the new
// parent. Cost O(depth · D · degree); no allocation.
func (m *Model) Attach(v pydt.NodeID, pos pydt.Position) pydt.NodeID {
	if m.stale {
		return m.tr.Attach(v, pos)
	}
	m.flush()
	w := m.tr.Attach(v, pos)
	m.updateFrom(w)
	return w
}

// UpdatePath recomputes the messages that depend on v's time: those of v
// itself (the edges to its children) and of its ancestors (the edge above
// v). Call it after changing v's time with pydt.Tree.SetTime; for a leaf it
// recomputes the path above the leaf. Cost O(depth · D · degree).
func (m *Model) UpdatePath(v pydt.NodeID) {
	if m.stale {
		return
	}
	m.flush()
	if m.tr.IsLeaf(v) {
		v = m.tr.Parent(v)
	}
	m.updateFrom(v)
}

// SetTime sets the time of the branch point v and updates the messages
// (pydt.Tree.SetTime followed by UpdatePath). The caller keeps t between the
// time of v's parent and those of its children.
func (m *Model) SetTime(v pydt.NodeID, t pydt.Time) {
	m.tr.SetTime(v, t)
	m.UpdatePath(v)
}

// LogLikIfAttached returns the value LogLik would take if the detached
// subtree v were attached at pos, without changing the tree or the messages:
// the messages on the path from the attachment point to the root are
// recomputed into scratch buffers, at cost O(depth · D · degree) and without
// allocation. The result is -Inf if the attachment would create an edge of
// non-positive length (pos.Time not strictly between the ends of the edge
// above pos.Node and before v's time, or pos.Node at or after v's time).
//
// It panics if v is not detached or if pos is at a leaf with AtNode set.
func (m *Model) LogLikIfAttached(v pydt.NodeID, pos pydt.Position) float64 {
	tr := m.tr
	if tr.Parent(v) != pydt.NoNode || v == tr.Root() {
		panic("bp: LogLikIfAttached of a node that is not detached")
	}
	m.flush()
	d := m.d
	i := int(v) * d
	vm, vv, vlz, tv := m.mu[i:i+d], m.vr[i:i+d], m.lz[v], tr.Time(v)
	am, av, bm, bv := m.am, m.av, m.bm, m.bv
	var cur pydt.NodeID
	var ct pydt.Time
	var lz float64
	if pos.AtNode {
		w := pos.Node
		if tr.IsLeaf(w) {
			panic("bp: LogLikIfAttached at a leaf with AtNode set")
		}
		tw := tr.Time(w)
		l := tv.Since(tw)
		if !(l > 0) {
			return math.Inf(-1)
		}
		j := int(w) * d
		copy(am, m.mu[j:j+d])
		copy(av, m.vr[j:j+d])
		q, ld, prod, k := mergeMsg(am, av, vm, vv, m.s2*l, 1)
		lz = m.lz[w] + vlz - 0.5*(q+ld+math.Log(prod)+float64(k)*log2Pi)
		cur, ct = w, tw
	} else {
		u, t := pos.Node, pos.Time
		j := int(u) * d
		lu := tr.Time(u).Since(t)
		lv := tv.Since(t)
		if !(lu > 0) || !(lv > 0) {
			return math.Inf(-1)
		}
		initMsg(am, av, m.mu[j:j+d], m.vr[j:j+d], m.s2*lu)
		q, ld, prod, k := mergeMsg(am, av, vm, vv, m.s2*lv, 1)
		lz = m.lz[u] + vlz - 0.5*(q+ld+math.Log(prod)+float64(k)*log2Pi)
		cur, ct = u, t
	}
	for a := tr.Parent(cur); a != pydt.NoNode; a = tr.Parent(a) {
		lz = m.combine(a, bm, bv, cur, am, av, lz, ct)
		am, bm = bm, am
		av, bv = bv, av
		cur, ct = a, tr.Time(a)
	}
	return lz + m.originTerm(am, av, ct)
}
