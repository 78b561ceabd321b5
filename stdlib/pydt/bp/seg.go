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
// index 1 is the root, whose record is p's own record m.nr[p*rs:]; indices
// 2..cap-1 are records in the arena seg.recs; index cap+j is slot j, which
// holds child seg.kids[kid(p)+j] or NoNode (an empty slot, no information).
// Slots 0..K-1 are used and K..cap-1 empty: removing a child moves the last
// one into its slot. A slot's message is read from the child's record with
// the edge variance σ²(t_c - t_p) added on the fly, so it needs no storage;
// a binary branch point (cap = 2) keeps no storage beyond its own record.
//
// Blocks (cap kid slots and cap-2 records) are allocated from two arenas by
// size class, with a free list per class; they grow only when a degree
// reaches a capacity not seen before, amortised, and Recompute lays every
// block out afresh in traversal order.

// segStore holds the segment trees of all branch points.
type segStore struct {
	capOf  []int32 // per node: number of slots, 0 when no block
	kidOff []int   // per node: offset of its slots in kids
	recOff []int   // per node: offset of its records in recs
	slot   []int32 // per node: its slot in its parent's segment tree
	kids   []pydt.NodeID
	recs   []float64
	free   [][]segBlock // by size class log2(cap)
	rs     int
}

type segBlock struct{ kid, rec int }

func (s *segStore) init(c, n, d int) {
	s.capOf = make([]int32, c)
	s.kidOff = make([]int, c)
	s.recOff = make([]int, c)
	s.slot = make([]int32, c)
	s.kids = make([]pydt.NodeID, 0, 2*n)
	s.free = make([][]segBlock, 33)
	s.rs = 2*d + 2
}

// reset forgets every block.
func (s *segStore) reset() {
	s.kids = s.kids[:0]
	s.recs = s.recs[:0]
	for k := range s.free {
		s.free[k] = s.free[k][:0]
	}
	clear(s.capOf)
}

// alloc gives p a block of c slots (a power of two), all empty. The records
// are left as they are: build or a full update writes them.
func (s *segStore) alloc(p pydt.NodeID, c int) {
	if s.capOf[p] != 0 {
		s.release(p)
	}
	k := bits.TrailingZeros(uint(c))
	var b segBlock
	if f := s.free[k]; len(f) > 0 {
		b = f[len(f)-1]
		s.free[k] = f[:len(f)-1]
	} else {
		b.kid = len(s.kids)
		for range c {
			s.kids = append(s.kids, pydt.NoNode)
		}
		b.rec = len(s.recs)
		s.recs = append(s.recs, make([]float64, (c-2)*s.rs)...)
	}
	s.capOf[p], s.kidOff[p], s.recOff[p] = int32(c), b.kid, b.rec
	ks := s.kids[b.kid : b.kid+c]
	for i := range ks {
		ks[i] = pydt.NoNode
	}
}

// release returns p's block to the free list.
func (s *segStore) release(p pydt.NodeID) {
	c := int(s.capOf[p])
	if c == 0 {
		return
	}
	k := bits.TrailingZeros(uint(c))
	s.free[k] = append(s.free[k], segBlock{s.kidOff[p], s.recOff[p]})
	s.capOf[p] = 0
}

// slotsFor returns the capacity for k children.
func slotsFor(k int) int {
	if k <= 2 {
		return 2
	}
	return 1 << bits.Len(uint(k-1))
}

// Messages are records of rs = 2d+2 floats: the means (d values), the
// variances (d values), then S and P. A record r (with an edge variance s
// added on the fly, so that a child's stored message serves as its message
// through the edge to its parent) stands for the function
//
//	exp(S - log(P)/2) ∏_d N(x_d; r_d, r_{d+D} + s),
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

// merge writes into the record o the product of the messages a (with edge
// variance sa) and b (sb). Per dimension where both carry information,
// N(x; m1, v1) N(x; m2, v2) = N(m1 - m2; 0, v1 + v2) N(x; m, v). The output
// may alias a or b.
func merge(o, a []float64, sa float64, b []float64, sb float64) {
	n := (len(o) - 2) / 2
	a, b, o = a[:2*n+2], b[:2*n+2], o[:2*n+2]
	S, P := a[2*n]+b[2*n], a[2*n+1]*b[2*n+1]
	if P < pLo || P > pHi {
		S, P = fold(S, P)
	}
	am, av := a[:n], a[n:2*n]
	bm, bv := b[:n], b[n:2*n]
	om, ov := o[:n], o[n:2*n]
	quad, k := 0.0, 0
	for d := range om {
		x := av[d] + sa
		y := bv[d] + sb
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
		inv := 1 / tot
		diff := bm[d] - am[d]
		quad += diff * diff * inv
		om[d] = am[d] + x*inv*diff
		ov[d] = x * y * inv
		k++
		if tot > pLo && tot < pHi {
			P *= tot
			if P < pLo || P > pHi {
				S, P = fold(S, P)
			}
		} else {
			S -= 0.5 * math.Log(tot)
		}
	}
	o[2*n] = S - 0.5*(quad+float64(k)*log2Pi)
	o[2*n+1] = P
}

// mergeLL returns the log of the integral over x of the product of the
// messages a (edge variance sa) and b (sb): the log normaliser of the
// product merge would compute, without writing it.
func mergeLL(a []float64, sa float64, b []float64, sb float64) float64 {
	n := (len(a) - 2) / 2
	a, b = a[:2*n+2], b[:2*n+2]
	S, P := a[2*n]+b[2*n], a[2*n+1]*b[2*n+1]
	am, av := a[:n], a[n:2*n]
	bm, bv := b[:n], b[n:2*n]
	quad, k := 0.0, 0
	for d := range am {
		x := av[d] + sa
		y := bv[d] + sb
		if x == inf || y == inf {
			continue
		}
		tot := x + y
		diff := bm[d] - am[d]
		quad += diff * diff / tot
		k++
		if tot > pLo && tot < pHi {
			P *= tot
			if P < pLo || P > pHi {
				S, P = fold(S, P)
			}
		} else {
			S -= 0.5 * math.Log(tot)
		}
	}
	return S - 0.5*(quad+float64(k)*log2Pi+math.Log(P))
}

// node returns v's record.
func (m *Model) node(v pydt.NodeID) []float64 {
	o := int(v) * m.rs
	return m.nr[o : o+m.rs]
}

// child returns the record of child c and the variance of its edge from a
// parent at time tp, or the record m.dead (no information, S = -Inf) for
// an edge of non-positive length.
func (m *Model) child(c pydt.NodeID, tp pydt.Time) ([]float64, float64) {
	l := m.tr.Time(c).Since(tp)
	if !(l > 0) {
		return m.dead, 0
	}
	o := int(c) * m.rs
	return m.nr[o : o+m.rs], m.s2 * l
}

// op returns the record and edge variance at heap index i (2 ≤ i < 2c)
// of p's segment tree, p being at time tp with c slots.
func (m *Model) op(p pydt.NodeID, tp pydt.Time, c, i int) ([]float64, float64) {
	if i >= c {
		ch := m.seg.kids[m.seg.kidOff[p]+i-c]
		if ch == pydt.NoNode {
			return m.empty, 0
		}
		return m.child(ch, tp)
	}
	o := m.seg.recOff[p] + (i-2)*m.rs
	return m.seg.recs[o : o+m.rs], 0
}

// computeRec recomputes the record at heap index i (1 ≤ i < c) of p's
// segment tree from its two children.
func (m *Model) computeRec(p pydt.NodeID, tp pydt.Time, c, i int) {
	a, sa := m.op(p, tp, c, 2*i)
	b, sb := m.op(p, tp, c, 2*i+1)
	var r []float64
	if i == 1 {
		o := int(p) * m.rs
		r = m.nr[o : o+m.rs]
	} else {
		o := m.seg.recOff[p] + (i-2)*m.rs
		r = m.seg.recs[o : o+m.rs]
	}
	merge(r, a, sa, b, sb)
}

// build recomputes p's whole segment tree, and so p's message. Cost
// O(K · D).
func (m *Model) build(p pydt.NodeID) {
	c := int(m.seg.capOf[p])
	tp := m.tr.Time(p)
	for i := c - 1; i >= 1; i-- {
		m.computeRec(p, tp, c, i)
	}
}

// updateSlots recomputes the records of p's segment tree above slot j1 and,
// unless j2 < 0, slot j2, root (p's message) included. Cost O(log K · D).
func (m *Model) updateSlots(p pydt.NodeID, j1, j2 int) {
	c := int(m.seg.capOf[p])
	tp := m.tr.Time(p)
	i1, i2 := (c+j1)>>1, -1
	if j2 >= 0 {
		i2 = (c + j2) >> 1
	}
	for i1 >= 1 {
		if i2 == i1 {
			i2 = -1
		}
		if i2 > 0 {
			m.computeRec(p, tp, c, i2)
			i2 >>= 1
		}
		m.computeRec(p, tp, c, i1)
		i1 >>= 1
	}
}

// propagate updates the messages of the ancestors of a, whose own message
// (or edge above) changed. Cost O(depth · log K · D).
func (m *Model) propagate(a pydt.NodeID) {
	tr := m.tr
	for p := tr.Parent(a); p != pydt.NoNode; a, p = p, tr.Parent(p) {
		m.updateSlots(p, int(m.seg.slot[a]), -1)
	}
}

// layout gives p a block for its children ks, in that order, without
// computing anything.
func (m *Model) layout(p pydt.NodeID, ks []pydt.NodeID) {
	s := &m.seg
	s.alloc(p, slotsFor(len(ks)))
	copy(s.kids[s.kidOff[p]:], ks)
	for j, c := range ks {
		s.slot[c] = int32(j)
	}
}

// moveBlock moves p's first k slots to a new block of c slots, leaving the
// records to be rebuilt.
func (m *Model) moveBlock(p pydt.NodeID, k, c int) {
	s := &m.seg
	old := s.kidOff[p]
	// The old block goes to the free list of another size class, so its
	// slots stay intact while they are copied.
	s.release(p)
	s.alloc(p, c)
	copy(s.kids[s.kidOff[p]:s.kidOff[p]+k], s.kids[old:old+k])
}

// addChild records that c became the last child of p (after
// pydt.Tree.Attach) and updates p's message.
func (m *Model) addChild(p, c pydt.NodeID) {
	s := &m.seg
	j := m.tr.Degree(p) - 1
	if j >= int(s.capOf[p]) {
		m.moveBlock(p, j, slotsFor(j+1))
		s.kids[s.kidOff[p]+j] = c
		s.slot[c] = int32(j)
		m.build(p)
		return
	}
	s.kids[s.kidOff[p]+j] = c
	s.slot[c] = int32(j)
	m.updateSlots(p, j, -1)
}

// removeSlot records that p lost the child in slot j (after
// pydt.Tree.Detach left p with at least two children) and updates p's
// message.
func (m *Model) removeSlot(p pydt.NodeID, j int) {
	s := &m.seg
	k := m.tr.Degree(p) // children left
	off := s.kidOff[p]
	last := k
	if j != last {
		c := s.kids[off+last]
		s.kids[off+j] = c
		s.slot[c] = int32(j)
	}
	s.kids[off+last] = pydt.NoNode
	c := int(s.capOf[p])
	if nc := slotsFor(k); nc < c && (4*k <= c || k <= 2) {
		m.moveBlock(p, k, nc)
		m.build(p)
		return
	}
	if j != last {
		m.updateSlots(p, j, last)
	} else {
		m.updateSlots(p, j, -1)
	}
}
