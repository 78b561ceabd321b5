package bp

import (
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Undoing a detachment.
//
// A rejected subtree move detaches v and attaches it where it was. Instead
// of recomputing the path again, Detach keeps a journal of the records its
// local update overwrites (their old values), and Attach(v, pos), called
// with the position Detach returned and nothing changed in between (reading
// LogLik or LogLikIfAttached is fine), puts the tree back and copies the old
// records back: no merge at all, and the messages are restored exactly
// (bit for bit), not just to rounding. The journal is dropped when it
// would outgrow its reserve (Recompute enlarges it), when Detach shrank the
// parent's block, or by any other change to the model.

// jEntry locates one saved record: in m.nr at off (cls < 0) or in the
// record arena of class cls at off.
type jEntry struct {
	cls int8
	off int32
}

// journal is the undo log of the last Detach.
type journal struct {
	on    bool // recording (inside Detach)
	valid bool // the log describes the last Detach, which is undoable
	gen   uint64
	v     pydt.NodeID
	pos   pydt.Position
	// How v left its parent p: from slot j; for pos.AtNode the last child
	// moved from slot last into j; otherwise p (spliced out) had v in slot
	// j and its other child in 1-j, and held slot js in its parent.
	p          pydt.NodeID
	j, last    int32
	js         int32
	ents       []jEntry
	vals       []float64
	need       int // entries wanted by the deepest path seen
	overflowed bool
}

// reserveJournal makes room for the journal of a path of the depth seen so
// far (called by Recompute, where allocation is expected).
func (m *Model) reserveJournal() {
	j := &m.jr
	want := max(64, 2*j.need)
	if cap(j.ents) < want {
		j.ents = make([]jEntry, 0, want)
		j.vals = make([]float64, 0, want*m.rs)
	}
}

// save records the old value of the record out (in m.nr when cls < 0, else
// in the arena of class cls) at offset off, before it is overwritten.
func (m *Model) save(cls int8, off int, out []float64) {
	j := &m.jr
	if len(j.ents) == cap(j.ents) || len(j.vals)+len(out) > cap(j.vals) {
		j.overflowed = true
		j.need = max(j.need, len(j.ents)+1)
		return
	}
	j.ents = append(j.ents, jEntry{cls, int32(off)})
	j.vals = append(j.vals, out...)
}

// beginJournal starts recording the records Detach(v) overwrites.
func (m *Model) beginJournal(v pydt.NodeID) {
	j := &m.jr
	j.on, j.valid, j.overflowed = true, false, false
	j.ents, j.vals = j.ents[:0], j.vals[:0]
	j.v = v
}

// endJournal stops recording; the journal is valid if nothing was lost.
func (m *Model) endJournal(pos pydt.Position, ok bool) {
	j := &m.jr
	j.on = false
	j.valid = ok && !j.overflowed
	j.pos, j.gen = pos, m.gen
}

// undoable reports whether Attach(v, pos) can undo the last Detach.
func (m *Model) undoable(v pydt.NodeID, pos pydt.Position) bool {
	j := &m.jr
	return j.valid && j.v == v && j.pos == pos && j.gen == m.gen && !m.stale && len(m.pending) == 0
}

// restore copies the saved records back, newest first, so that a record
// saved twice ends with its oldest value.
func (m *Model) restore() {
	j := &m.jr
	rs := m.rs
	for i := len(j.ents) - 1; i >= 0; i-- {
		e := j.ents[i]
		src := j.vals[i*rs : i*rs+rs]
		o := int(e.off)
		if e.cls < 0 {
			copy(m.nr[o:o+rs], src)
		} else {
			copy(m.seg.recs[e.cls][o:o+rs], src)
		}
	}
	j.valid = false
}

// undoDetach attaches v back where the last Detach took it from (pos) and
// restores the messages from the journal. It returns v's parent.
func (m *Model) undoDetach(v pydt.NodeID, pos pydt.Position) pydt.NodeID {
	tr, s, j := m.tr, &m.seg, &m.jr
	w := tr.Attach(v, pos)
	if pos.AtNode {
		// w is p: put v back in slot j and the child moved there back in
		// its own slot.
		if j.j != j.last {
			s.put(w, s.kidsOf(w)[j.j], j.last)
		}
		s.put(w, v, j.j)
	} else {
		// A new branch point w (often p's ID again) takes p's place: the
		// same two children in the same slots, p's record, p's slot.
		u := pos.Node
		s.alloc(w, 2)
		s.put(w, v, j.j)
		s.put(w, u, 1-j.j)
		if w != j.p {
			copy(m.node(w), m.node(j.p))
		}
		if g := tr.Parent(w); g != pydt.NoNode {
			s.put(g, w, j.js)
		}
	}
	m.restore()
	return w
}
