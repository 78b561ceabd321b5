package bp

import (
	"math"
	"math/bits"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Every branch point p keeps a segment tree (a complete binary tree in heap
// order) over the messages its children send through their edges, so that
// replacing one child's message costs O(log K · D) for K children instead of
// O(K · D), and the product of all children but one (for the downward
// message of TimeEval) is the product of O(log K) stored partial products.
// Products of Gaussian messages in mean-variance form need no subtraction,
// so a local update equals a full recomputation up to the association
// order of the products: rounding, never cancellation.
//
// The segment tree of p has cap = 2^k ≥ max(K, 2) leaves (slots). Heap
// index 1 is the root, whose record is p's own record m.node(p); indices
// 2..cap-1 are records of p's block; index cap+j is slot j, which holds a
// child or NoNode (an empty slot, no information). Slots 0..K-1 are used
// and K..cap-1 empty: removing a child moves the last one into its slot. A
// slot's message is read from the child's record with the edge variance
// σ²_d(t_c - t_p) added on the fly, so it needs no storage; a binary branch
// point (cap = 2) keeps no records beyond its own.
//
// Blocks (cap slots and cap-2 records) come from one arena per size class
// k = log2(cap), with an intrusive free list (a free block's slot 0 holds
// the next free block). Recompute lays every block out afresh, in
// traversal order, in room reserved beforehand for the blocks it lays out
// and a few more per class (and one of the next class up), so that local
// updates allocate only when a class outgrows that room: amortised, and
// rarely.

// segNode is the bookkeeping of one node.
type segNode struct {
	rec  int32 // index of its record in m.nr (see Model.nr)
	blk  int32 // index of its block in the class
	slot int32 // its slot in its parent's segment tree
	cls  int8  // size class of its block, 0 when none
}

// segStore holds the segment trees of all branch points.
type segStore struct {
	node []segNode // per node
	kids [][]pydt.NodeID
	recs [][]float64
	head []int32 // per class: first free block, -1 for none
	need []int   // per class: scratch of reserve
	rs   int
}

const maxClass = 31

func (s *segStore) init(c, d int) {
	s.node = make([]segNode, c)
	s.kids = make([][]pydt.NodeID, maxClass+1)
	s.recs = make([][]float64, maxClass+1)
	s.head = make([]int32, maxClass+1)
	s.need = make([]int, maxClass+1)
	s.rs = 2*d + 4
	s.reset()
}

// reset forgets every block, keeping the arenas' capacity.
func (s *segStore) reset() {
	for k := range s.kids {
		s.kids[k] = s.kids[k][:0]
		s.recs[k] = s.recs[k][:0]
		s.head[k] = -1
	}
	for i := range s.node {
		s.node[i].cls = 0
	}
}

// reserve is called by Recompute after reset, before it lays out the
// blocks of the branch points order[i] (int(order[i]) >= n) with the
// children order[lo[i]:hi[i]]. It makes room, so that neither the layout
// nor later local updates allocate, for the blocks of each class the
// layout takes, a sixteenth more (at least two more), and one block of the
// class above the largest. Local updates change the blocks in use by a
// few per move and reuse freed blocks, so a class outgrows the room only
// when the tree's shape drifts far from the last Recompute's, and then
// append grows it (amortised). The room is held for the model's life: it
// was twice the blocks in use, more than half of a multifurcating tree's
// block memory, and the layout's appends could leave more.
func (s *segStore) reserve(order []pydt.NodeID, lo, hi []int32, n int) {
	need := s.need
	clear(need)
	top := 1
	for i, p := range order {
		if int(p) < n {
			continue
		}
		k := bits.TrailingZeros(uint(slotsFor(int(hi[i] - lo[i]))))
		need[k]++
		top = max(top, k)
	}
	for k := 1; k <= min(top+1, maxClass); k++ {
		c := 1 << k
		blocks := need[k] + max(need[k]/16, 2)
		if k > top {
			blocks = 1
		}
		s.kids[k] = growTo(s.kids[k], blocks*c)
		s.recs[k] = growTo(s.recs[k], blocks*(c-2)*s.rs)
	}
}

// growTo returns x with a capacity of at least n: x itself when it has
// that, else a copy of capacity n (not append's larger growth).
func growTo[T any](x []T, n int) []T {
	if cap(x) >= n {
		return x
	}
	return append(make([]T, 0, n), x...)
}

// newBlock returns a block of class k (2^k slots, all empty).
func (s *segStore) newBlock(k int) int32 {
	c := 1 << k
	var b int32
	if b = s.head[k]; b >= 0 {
		s.head[k] = int32(s.kids[k][int(b)*c])
	} else {
		b = int32(len(s.kids[k]) / c)
		s.kids[k] = append(s.kids[k], make([]pydt.NodeID, c)...)
		s.recs[k] = append(s.recs[k], make([]float64, (c-2)*s.rs)...)
	}
	ks := s.kids[k][int(b)*c : int(b)*c+c]
	for i := range ks {
		ks[i] = pydt.NoNode
	}
	return b
}

// alloc gives p a new block of c slots (a power of two), all empty,
// releasing any it had. The records are left to build.
func (s *segStore) alloc(p pydt.NodeID, c int) {
	s.release(p)
	k := bits.TrailingZeros(uint(c))
	s.node[p].cls, s.node[p].blk = int8(k), s.newBlock(k)
}

// release returns p's block to the free list of its class.
func (s *segStore) release(p pydt.NodeID) {
	k := int(s.node[p].cls)
	if k == 0 {
		return
	}
	b := int(s.node[p].blk)
	s.kids[k][b<<k] = pydt.NodeID(s.head[k])
	s.head[k] = int32(b)
	s.node[p].cls = 0
}

// capOf returns the number of slots of p's block (0 for none).
func (s *segStore) capOf(p pydt.NodeID) int {
	if k := s.node[p].cls; k != 0 {
		return 1 << k
	}
	return 0
}

// kidsOf returns p's slots.
func (s *segStore) kidsOf(p pydt.NodeID) []pydt.NodeID {
	k := s.node[p].cls
	o := int(s.node[p].blk) << k
	return s.kids[k][o : o+1<<k]
}

// put places child c in slot j of p's block.
func (s *segStore) put(p, c pydt.NodeID, j int32) {
	s.kidsOf(p)[j] = c
	s.node[c].slot = j
}

// slotsFor returns the capacity for k children.
func slotsFor(k int) int {
	if k <= 2 {
		return 2
	}
	return 1 << bits.Len(uint(k-1))
}

// Messages are records of rs = 2d+4 floats: the means (d values), the
// variances (d values), then S and P, then (in node records) the node's
// time as s = -log(1-t) and 1-t, which merge neither reads nor writes. A
// record r (with an edge of length l added on the fly, so that a child's
// stored message serves as its message through the edge to its parent)
// stands for the function
//
//	exp(S - log(P)/2) ∏_d N(x_d; r_d, r_{d+D} + σ²_d l),
//
// a dimension of infinite variance carrying no information. The log
// normaliser is split into S and a product P of variances, kept within
// [1e-100, 1e100] by moving its binary exponent into S, so that products of
// messages need no logarithm: one is taken per LogLik.

const pLo, pHi = 1e-100, 1e100

// fold moves the binary exponent e of P (positive, normal) into S:
// S - log(P)/2 is unchanged, to rounding of e·log(2), and P ends in [1, 2).
// It costs no logarithm.
func fold(S, P float64) (float64, float64) {
	const mask = 0x7ff << 52
	b := math.Float64bits(P)
	e := int((b&mask)>>52) - 1023
	return S - 0.5*math.Ln2*float64(e), math.Float64frombits(b&^mask | 1023<<52)
}

// merge writes into the record o the product of the messages a (through an
// edge of length la) and b (lb), the edge variance in dimension d being
// s2[d]·l. Per dimension where both carry information,
// N(x; m1, v1) N(x; m2, v2) = N(m1 - m2; 0, v1 + v2) N(x; m, v). The output
// may alias a or b.
//
// Variances may be 0: an exactly observed value, or an edge whose length
// underflows float64 (both ends beyond 1-t ≈ 5e-324). Two exact values
// meeting through such edges give a point mass: zero density (S = -Inf)
// when they differ, and an infinite one (S = +Inf) when they are equal;
// zero density dominates when both occur.
func merge(o, a []float64, la float64, b []float64, lb float64, s2 []float64) {
	n := (len(o) - 4) / 2
	a, b, o = a[:2*n+2], b[:2*n+2], o[:2*n+2]
	S, P := a[2*n]+b[2*n], a[2*n+1]*b[2*n+1] // P < 4: stored P lie in [1, 2)
	am, av := a[:n], a[n:2*n]
	bm, bv := b[:n], b[n:2*n]
	om, ov := o[:n], o[n:2*n]
	s2 = s2[:n]
	quad, k := 0.0, 0
	sing := false
	for d := range om {
		x := av[d] + s2[d]*la
		y := bv[d] + s2[d]*lb
		if x == inf {
			if y == inf {
				om[d], ov[d] = 0, inf
			} else {
				om[d], ov[d] = bm[d], y
			}
			continue
		}
		if y == inf {
			om[d], ov[d] = am[d], x
			continue
		}
		tot := x + y
		diff := bm[d] - am[d]
		k++
		if tot > pLo && tot < pHi {
			inv := 1 / tot
			quad += diff * diff * inv
			om[d] = am[d] + x*inv*diff
			ov[d] = x * y * inv
			P *= tot
			if P < pLo || P > pHi {
				S, P = fold(S, P)
			}
			continue
		}
		w, q := extremeTerms(x, tot, diff, &sing)
		quad += q
		om[d] = am[d] + w*diff
		ov[d] = w * y
		if tot > 0 {
			S -= 0.5 * math.Log(tot)
		}
	}
	o[2*n], o[2*n+1] = fold(logNorm(S, quad, k, sing), P)
}

// extremeTerms returns, for a dimension whose total variance tot = x + y
// lies outside [pLo, pHi], the weight w = x/tot of the difference in the
// product's mean and the quadratic term diff²/tot, formed by division so
// that nothing overflows; for tot = 0 (two exact values) w = 0 and the
// quadratic term is +Inf when they differ, while sing is set when they are
// equal.
func extremeTerms(x, tot, diff float64, sing *bool) (w, q float64) {
	if tot > 0 {
		return x / tot, diff * diff / tot
	}
	if diff != 0 {
		return 0, inf
	}
	*sing = true
	return 0, 0
}

// logNorm returns S - (quad + k log 2π)/2, the log normaliser of a product,
// with zero density (S or quad infinite the wrong way) dominating an
// infinite density (S = +Inf, or sing).
func logNorm(S, quad float64, k int, sing bool) float64 {
	switch {
	case S == -inf || quad == inf || S != S:
		return -inf
	case sing || S == inf:
		return inf
	}
	return S - 0.5*(quad+float64(k)*log2Pi)
}

// mergeLL returns the log of the integral over x of the product of the
// messages a (edge length la) and b (lb), with diffusion variances s2: the
// log normaliser of the
// product merge would compute, without writing it.
func mergeLL(a []float64, la float64, b []float64, lb float64, s2 []float64) float64 {
	n := (len(a) - 4) / 2
	a, b = a[:2*n+2], b[:2*n+2]
	S, P := a[2*n]+b[2*n], a[2*n+1]*b[2*n+1]
	am, av := a[:n], a[n:2*n]
	bm, bv := b[:n], b[n:2*n]
	s2 = s2[:n]
	quad, k := 0.0, 0
	sing := false
	for d := range am {
		x := av[d] + s2[d]*la
		y := bv[d] + s2[d]*lb
		if x == inf || y == inf {
			continue
		}
		tot := x + y
		diff := bm[d] - am[d]
		k++
		if tot > pLo && tot < pHi {
			quad += diff * diff / tot
			P *= tot
			if P < pLo || P > pHi {
				S, P = fold(S, P)
			}
			continue
		}
		_, q := extremeTerms(x, tot, diff, &sing)
		quad += q
		if tot > 0 {
			S -= 0.5 * math.Log(tot)
		}
	}
	ll := logNorm(S, quad, k, sing)
	if math.IsInf(ll, 0) {
		return ll
	}
	return ll - 0.5*math.Log(P)
}

// node returns v's record.
func (m *Model) node(v pydt.NodeID) []float64 {
	o := m.off(v)
	return m.nr[o : o+m.rs]
}

// off returns the offset of v's record in m.nr.
func (m *Model) off(v pydt.NodeID) int { return int(m.seg.node[v].rec) * m.rs }

// child returns the record of child c and the length of its edge from a
// parent at time s = -log(1-t) (1-t = u), or the record m.dead (no
// information, S = -Inf) when the child is not strictly after the parent.
// The child's time is read from its record, and the edge length computed
// as pydt.Elapsed does (pydt.Time.Since); it is 0 when it underflows.
func (m *Model) child(c pydt.NodeID, s, u float64) ([]float64, float64) {
	return m.childRec(int(m.seg.node[c].rec), s, u)
}

// childRec is child for the record at index rec. The edge length is a
// function of the two times s and sc alone (1-t = e^(-s)), so it is kept
// per record with the pair it was computed for (m.el) and reused while
// both are unchanged: most edges read by a path update or a proposal's
// score were read, with the same times, by an earlier one, and an edge of
// less than 0.5 in s costs an expm1. The cache is a pure memo: whatever
// record index it is read at, a hit returns the bits Elapsed would.
func (m *Model) childRec(rec int, s, u float64) ([]float64, float64) {
	o := rec * m.rs
	r := m.nr[o : o+m.rs]
	sc := r[m.rs-2]
	if !(sc > s) {
		return m.dead, 0
	}
	e := m.el[3*rec : 3*rec+3]
	if e[0] == s && e[1] == sc {
		return r, e[2]
	}
	l := pydt.Elapsed(s, sc, u, r[m.rs-1])
	e[0], e[1], e[2] = s, sc, l
	return r, l
}

// op returns the record and edge length at heap index i (2 ≤ i < 2c)
// of p's segment tree, p being at time tp with c slots.
func (m *Model) op(p pydt.NodeID, tp pydt.Time, c, i int) ([]float64, float64) {
	if i >= c {
		return m.slotOp(m.seg.kidsOf(p)[i-c], tp.S(), tp.OneMinus())
	}
	r, _, _ := m.heapRec(m.seg.node[p], i)
	return r, 0
}

// slotOp returns the message of slot child ch through its edge from a
// parent at time tp (m.empty for an empty slot).
func (m *Model) slotOp(ch pydt.NodeID, t, u float64) ([]float64, float64) {
	if ch == pydt.NoNode {
		return m.empty, 0
	}
	return m.child(ch, t, u)
}

// heapRec returns the record at heap index i (1 ≤ i < cap) of the segment
// tree with bookkeeping sn, with where it lies for the journal: p's own
// record in m.nr (cls -1) for the root i = 1, else the record arena of
// class cls, at offset off.
func (m *Model) heapRec(sn segNode, i int) (out []float64, cls int8, off int) {
	rs := m.rs
	if i == 1 {
		off = int(sn.rec) * rs
		return m.nr[off : off+rs], -1, off
	}
	off = (int(sn.blk)*(1<<sn.cls-2) + i - 2) * rs
	return m.seg.recs[sn.cls][off : off+rs], sn.cls, off
}

// computeRec recomputes the record at heap index i (1 ≤ i < cap) of p's
// segment tree from its two children; sn is p's bookkeeping and p is at
// time s = -log(1-t) (1-t = u).
func (m *Model) computeRec(p pydt.NodeID, t, u float64, sn segNode, i int) {
	s := &m.seg
	k, rs := int(sn.cls), m.rs
	c := 1 << k
	out, cls, off := m.heapRec(sn, i)
	if m.jr.on {
		m.save(cls, off, out)
	}
	if 2*i >= c {
		o := int(sn.blk)<<k + 2*i - c
		ks := s.kids[k][o : o+2]
		a, sa := m.slotOp(ks[0], t, u)
		b, sb := m.slotOp(ks[1], t, u)
		merge(out, a, sa, b, sb, m.s2)
		return
	}
	o := (int(sn.blk)*(c-2) + 2*i - 2) * rs
	r := s.recs[k][o : o+2*rs]
	merge(out, r[:rs], 0, r[rs:], 0, m.s2)
}

// build recomputes p's whole segment tree, and so p's message, and copies
// p's time from the tree into its record. Cost O(K · D).
func (m *Model) build(p pydt.NodeID) {
	sn := m.seg.node[p]
	tp := m.tr.Time(p)
	t, u := tp.S(), tp.OneMinus()
	o := int(sn.rec)*m.rs + m.rs - 2
	m.nr[o], m.nr[o+1] = t, u
	for i := 1<<sn.cls - 1; i >= 1; i-- {
		m.computeRec(p, t, u, sn, i)
	}
}

// updateSlots recomputes the records of p's segment tree above slot j1 and,
// unless j2 < 0, slot j2, root (p's message) included. Cost O(log K · D).
func (m *Model) updateSlots(p pydt.NodeID, j1, j2 int) {
	sn := m.seg.node[p]
	c := 1 << sn.cls
	o := int(sn.rec)*m.rs + m.rs - 2
	t, u := m.nr[o], m.nr[o+1] // p's time is unchanged since its last build
	i1, i2 := (c+j1)>>1, -1
	if j2 >= 0 {
		i2 = (c + j2) >> 1
	}
	for i1 >= 1 {
		if i2 == i1 {
			i2 = -1
		}
		if i2 > 0 {
			m.computeRec(p, t, u, sn, i2)
			i2 >>= 1
		}
		m.computeRec(p, t, u, sn, i1)
		i1 >>= 1
	}
}

// propagate updates the messages of the ancestors of a, whose own message
// (or edge above) changed. Cost O(depth · log K · D).
func (m *Model) propagate(a pydt.NodeID) {
	tr := m.tr
	for p := tr.Parent(a); p != pydt.NoNode; a, p = p, tr.Parent(p) {
		m.updateSlots(p, int(m.seg.node[a].slot), -1)
	}
}

// layout gives p, which has no block (Recompute, after reset), a block for
// its children ks, in that order, without computing anything, and returns
// p's bookkeeping.
func (m *Model) layout(p pydt.NodeID, ks []pydt.NodeID) segNode {
	s := &m.seg
	// After reset no node has a block: nothing to release.
	k := bits.TrailingZeros(uint(slotsFor(len(ks))))
	b := s.newBlock(k)
	// Whole-struct store, and the caller keeps the value: reading back
	// fields just stored separately would stall on store forwarding.
	sn := segNode{rec: s.node[p].rec, blk: b, slot: s.node[p].slot, cls: int8(k)}
	s.node[p] = sn
	o := int(b) << k
	copy(s.kids[k][o:o+len(ks)], ks) // the children's slots are set by relayout
	return sn
}

// buildAt is build for the branch point p, with bookkeeping sn, at
// position i of m.order during Recompute: its time is m.tm[i] and the
// records of its children, in slot order, are those at m.lo[i] onwards
// (see relayout).
func (m *Model) buildAt(p pydt.NodeID, sn segNode, i int) {
	t, u := m.tm[i].S(), m.tm[i].OneMinus()
	rs := m.rs
	o := int(sn.rec)*rs + rs - 2
	m.nr[o], m.nr[o+1] = t, u
	base, k := int(m.lo[i]), int(m.hi[i]-m.lo[i])
	for h := 1<<sn.cls - 1; h >= 1; h-- {
		m.computeRecAt(p, t, u, sn, h, base, k)
	}
}

// slotAt returns the message of slot j of a branch point at time s (1-t =
// u) whose k children have their records at indices base onwards.
func (m *Model) slotAt(j, base, k int, t, u float64) ([]float64, float64) {
	if j >= k {
		return m.empty, 0
	}
	return m.childRec(base+j, t, u)
}

// computeRecAt is computeRec for buildAt.
func (m *Model) computeRecAt(p pydt.NodeID, t, u float64, sn segNode, i, base, k int) {
	c := 1 << sn.cls
	if 2*i >= c {
		out, _, _ := m.heapRec(sn, i)
		j := 2*i - c
		a, sa := m.slotAt(j, base, k, t, u)
		b, sb := m.slotAt(j+1, base, k, t, u)
		merge(out, a, sa, b, sb, m.s2)
		return
	}
	m.computeRec(p, t, u, sn, i)
}

// moveBlock moves p's first k slots to a new block of c slots, leaving the
// records to be rebuilt.
func (m *Model) moveBlock(p pydt.NodeID, k, c int) {
	s := &m.seg
	k0, b0 := int(s.node[p].cls), int(s.node[p].blk)
	k1 := bits.TrailingZeros(uint(c))
	b1 := int(s.newBlock(k1)) // another class: the old block stays intact
	copy(s.kids[k1][b1<<k1:b1<<k1+k], s.kids[k0][b0<<k0:b0<<k0+k])
	s.release(p)
	s.node[p].cls, s.node[p].blk = int8(k1), int32(b1)
}

// addChild records that c became the last child of p (after
// pydt.Tree.Attach) and updates p's message.
func (m *Model) addChild(p, c pydt.NodeID) {
	s := &m.seg
	j := m.tr.Degree(p) - 1
	if j >= s.capOf(p) {
		m.moveBlock(p, j, slotsFor(j+1))
		s.put(p, c, int32(j))
		m.build(p)
		return
	}
	s.put(p, c, int32(j))
	m.updateSlots(p, j, -1)
}

// removeSlot records that p lost the child in slot j (after
// pydt.Tree.Detach left p with at least two children) and updates p's
// message. It reports false when p's block shrank (which the journal
// cannot undo).
func (m *Model) removeSlot(p pydt.NodeID, j int) bool {
	s := &m.seg
	k := m.tr.Degree(p) // children left
	ks := s.kidsOf(p)
	last := k
	if j != last {
		s.put(p, ks[last], int32(j))
	}
	ks[last] = pydt.NoNode
	c := len(ks)
	if nc := slotsFor(k); nc < c && (4*k <= c || k <= 2) {
		m.moveBlock(p, k, nc)
		m.build(p)
		return false
	}
	if j != last {
		m.updateSlots(p, j, last)
	} else {
		m.updateSlots(p, j, -1)
	}
	return true
}
