package bp

import (
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Committing the path of LogLikIfAttached.
//
// For a position on an edge, LogLikIfAttached(v, pos) computes, level by
// level, exactly the records Attach(v, pos) would compute: the new branch
// point's (u and v in its slots 0 and 1, merged through their edges) and,
// at each ancestor, the heap records of its segment tree from the slot of
// the path up to its own record, by the same merges in the same order. It
// keeps each in a record of its own (cp.buf), so that Attach, called next
// with the same v and pos and nothing changed in between (m.gen), copies
// them into place: one path walk fewer for every accepted subtree move and
// for the final attachment of every position move, with the same bits as
// recomputing (TestCommitIsExact). An attachment at a branch point is
// recomputed as before: LogLikIfAttached multiplies v into the branch
// point's message, not into its segment tree.

// commitPath holds the records of the last LogLikIfAttached.
type commitPath struct {
	valid bool // buf holds the path of LogLikIfAttached(v, pos) at gen
	gen   uint64
	v     pydt.NodeID
	pos   pydt.Position
	n     int       // records in buf
	buf   []float64 // n records of m.rs floats
}

// cpRec returns the scratch record k of the commit path, growing the
// buffer (rarely: to the longest path seen) when needed.
func (m *Model) cpRec(k int) []float64 {
	cp := &m.cp
	if need := (k + 1) * m.rs; need > len(cp.buf) {
		cp.buf = append(cp.buf, make([]float64, max(need, 2*len(cp.buf))-len(cp.buf))...)
	}
	return cp.buf[k*m.rs : (k+1)*m.rs]
}

// committable reports whether Attach(v, pos) can copy the records of the
// last LogLikIfAttached.
func (m *Model) committable(v pydt.NodeID, pos pydt.Position) bool {
	cp := &m.cp
	return cp.valid && cp.v == v && cp.pos == pos && cp.gen == m.gen && !m.stale && len(m.pending) == 0
}

// commit attaches v at pos, a position on an edge, and copies the records
// LogLikIfAttached(v, pos) computed into place.
func (m *Model) commit(v pydt.NodeID, pos pydt.Position) pydt.NodeID {
	cp := &m.cp
	cp.valid = false
	tr, s, rs := m.tr, &m.seg, m.rs
	n := rs - 2 // the floats merge writes: means, variances, S and P
	u := pos.Node
	ju := s.node[u].slot
	w := tr.Attach(v, pos)
	s.alloc(w, 2)
	s.put(w, u, 0)
	s.put(w, v, 1)
	o := m.off(w)
	copy(m.nr[o:o+n], cp.buf[:n])
	m.nr[o+rs-2], m.nr[o+rs-1] = pos.Time.S(), pos.Time.OneMinus()
	k := 1
	cur := w
	for a := tr.Parent(w); a != pydt.NoNode; cur, a = a, tr.Parent(a) {
		if cur == w {
			s.put(a, w, ju)
		}
		sn := s.node[a]
		for i := (1 << sn.cls) + int(s.node[cur].slot); i > 1; i >>= 1 {
			out, _, _ := m.heapRec(sn, i>>1)
			copy(out[:n], cp.buf[k*rs:k*rs+n])
			k++
		}
	}
	if k != cp.n {
		panic("bp: commit: the path changed since LogLikIfAttached")
	}
	return w
}
