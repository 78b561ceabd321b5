package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The line of PositionMove.
//
// With the subtree v (root time t_v) detached, the valid attachment points of
// the remaining tree T_r are the points at times t < t_v on its edges and the
// branch points b with t_b < t_v. They are laid out on a line in depth-first
// pre-order: for each node u with t_parent(u) < t_v, first the piece of the
// edge above u, then (for a branch point before t_v) the atom piece of u,
// then the pieces of u's children in order. On an edge piece the coordinate
// is ψ(t) = s/(1+s) with s = -log(1-t), which maps [0, 1] onto [0, 1] and
// keeps the precision of t near 1; an atom piece has the fixed length
// AtomLen and carries the atom's mass with the uniform density
// π(b)/AtomLen. Slice sampling the density
//
//	f(x) = p(T_r + v@pos(x)) L(T_r + v@pos(x)) J(x) / (N + I(x) - 1),
//
// J = dt/dψ = (1-t)(1+s)² on edges and 1/AtomLen on atoms, I(x) the number
// of branch points of the resulting tree (see SlicePosition), is then slice
// sampling the posterior of the position: the image of f under x -> pos is
// the target, and the current point's coordinate given its position is drawn
// from its conditional (uniform on an atom piece, unique on an edge).
//
// Siblings are laid out in an order drawn afresh for each move (see key).
// The line is never built: coordinates are offsets from the current point,
// and a point at offset d is found by walking the pre-order from the current
// piece, at a cost proportional to the number of pieces passed (bounded by
// the stepping-out width, not by N). Each density evaluation is then
// O(depth · D · degree) through bp.Model.LogLikIfAttached and attachTerms.

// piece is a piece of the line: the edge above node, or node's atom.
type piece struct {
	node pydt.NodeID
	atom bool
}

// psiOneMinus returns 1 - ψ(t) = 1/(1+s), s = -log(1-t); 0 at t = 1.
func psiOneMinus(t pydt.Time) float64 {
	return 1 / (1 - t.LogOneMinus())
}

// open reports whether u is a branch point before tv: its atom and its
// children's edges are on the line.
func (s *Sampler) open(u pydt.NodeID) bool {
	return !s.tr.IsLeaf(u) && s.tr.Time(u).Before(s.tv)
}

// edgeEnd returns the lower end of the edge piece above u: min(t_u, t_v).
func (s *Sampler) edgeEnd(u pydt.NodeID) pydt.Time {
	if tu := s.tr.Time(u); tu.Before(s.tv) {
		return tu
	}
	return s.tv
}

// atomHasMass reports whether branch point b's atom has prior mass,
// α + βK_b > 0 (never for the DDT, α = β = 0).
func (s *Sampler) atomHasMass(b pydt.NodeID) bool {
	return s.alpha+s.beta*float64(s.tr.Degree(b)) > 0
}

func (s *Sampler) pieceLen(p piece) float64 {
	if p.atom {
		if s.atomHasMass(p.node) {
			return s.AtomLen
		}
		// An atom of no prior mass (α + βK_b = 0: always for the DDT,
		// α = β = 0) takes no room: the density on its piece would be
		// zero, and zero-density gaps on the line stop the stepping out.
		// The length depends on the remaining tree only, so the line is
		// the same before and after the move.
		return 0
	}
	return s.psiParent(p.node) - s.psiEnd(p.node)
}

// psiParent returns psiOneMinus of the time of u's parent (the origin for
// the root), from the memo table.
func (s *Sampler) psiParent(u pydt.NodeID) float64 {
	p := s.tr.Parent(u)
	if p == pydt.NoNode {
		return psiOneMinus(pydt.Origin)
	}
	return 1 / (1 - s.logOneMinus(p))
}

// psiEnd returns psiOneMinus(s.edgeEnd(u)), from the memo table.
func (s *Sampler) psiEnd(u pydt.NodeID) float64 {
	if s.tr.Time(u).Before(s.tv) {
		return 1 / (1 - s.logOneMinus(u))
	}
	return psiOneMinus(s.tv)
}

// key returns the rank of node c among its siblings in the order of the
// line: a hash of c under the move's random seed. The line must not depend
// on the order in which the tree happens to store children: that order
// records the history of the moves (an attached subtree becomes the last
// child), so its law given the tree depends on where v sits, and a line built
// on it would make the move leave a different law invariant. A fresh seed per
// move makes the sibling order a uniformly random permutation whatever the
// stored order and IDs are.
func (s *Sampler) key(c pydt.NodeID) uint64 {
	z := s.seed ^ uint64(uint32(c))*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// sibling returns the child of p adjacent to u in the line's order (the
// next one when after is set, the previous one otherwise), or, for
// u = NoNode, the first (after) or last (!after) child. O(degree).
func (s *Sampler) sibling(p, u pydt.NodeID, after bool) pydt.NodeID {
	// Looking backwards is looking forwards in the complemented keys (keys
	// are distinct: key is a bijection of c for a given seed).
	var flip uint64
	if !after {
		flip = ^uint64(0)
	}
	var ku uint64
	if u != pydt.NoNode {
		ku = s.key(u) ^ flip
	}
	best, kb := pydt.NoNode, uint64(0)
	for c := s.tr.FirstChild(p); c != pydt.NoNode; c = s.tr.NextSibling(c) {
		if k := s.key(c) ^ flip; c != u && (u == pydt.NoNode || k > ku) && (best == pydt.NoNode || k < kb) {
			best, kb = c, k
		}
	}
	return best
}

func (s *Sampler) nextPiece(p piece) (piece, bool) {
	tr := s.tr
	if p.atom {
		return piece{node: s.sibling(p.node, pydt.NoNode, true)}, true
	}
	u := p.node
	if s.open(u) {
		return piece{node: u, atom: true}, true
	}
	root := tr.Root()
	for u != root {
		par := tr.Parent(u)
		if n := s.sibling(par, u, true); n != pydt.NoNode {
			return piece{node: n}, true
		}
		u = par
	}
	return piece{}, false
}

func (s *Sampler) prevPiece(p piece) (piece, bool) {
	tr := s.tr
	if p.atom {
		return piece{node: p.node}, true
	}
	u := p.node
	par := tr.Parent(u)
	if par == pydt.NoNode {
		return piece{}, false
	}
	prev := s.sibling(par, u, false)
	if prev == pydt.NoNode {
		return piece{node: par, atom: true}, true
	}
	// The last piece of prev's subtree.
	for s.open(prev) {
		prev = s.sibling(prev, pydt.NoNode, false)
	}
	return piece{node: prev}, true
}

// locate returns the position at signed offset d from the current point of
// the line, or false when d is off either end of the line or on the boundary
// of an edge piece.
func (s *Sampler) locate(d float64) (pydt.Position, bool) {
	p, off := s.cur, s.off0+d
	if d >= 0 {
		for {
			l := s.pieceLen(p)
			if off < l {
				break
			}
			off -= l
			var ok bool
			if p, ok = s.nextPiece(p); !ok {
				return pydt.Position{}, false
			}
		}
	} else {
		for off < 0 {
			var ok bool
			if p, ok = s.prevPiece(p); !ok {
				return pydt.Position{}, false
			}
			off += s.pieceLen(p)
		}
	}
	if p.atom {
		return pydt.Position{Node: p.node, AtNode: true}, true
	}
	return s.edgePoint(p.node, s.psiParent(p.node)-off)
}

// edgePoint returns the point of the edge piece above u at 1-ψ = om, or
// false when it is not strictly inside the piece (by rounding).
func (s *Sampler) edgePoint(u pydt.NodeID, om float64) (pydt.Position, bool) {
	if !(om > 0) {
		return pydt.Position{}, false
	}
	t := pydt.TimeFromLogOneMinus(1 - 1/om) // -s = 1 - 1/(1-ψ)
	if !s.tr.ParentTime(u).Before(t) || !t.Before(s.edgeEnd(u)) {
		return pydt.Position{}, false
	}
	return pydt.Position{Node: u, Time: t}, true
}

// posLogDensity returns log f at pos (see the line above) given the log
// likelihood there, for a subtree of n leaves.
func (s *Sampler) posLogDensity(pos pydt.Position, n int, ll float64) float64 {
	return s.posLogDensityBelow(pos, n, ll, pydt.NoNode, s.AtomLen)
}

// posLogDensityBelow is posLogDensity without the prior's terms of the
// ancestors of top (attachTermsR), with an atom spread over atomLen in
// ψ (1 for a probability at an atom: LocalMove's target).
func (s *Sampler) posLogDensityBelow(pos pydt.Position, n int, ll float64, top pydt.NodeID, atomLen float64) float64 {
	if math.IsInf(ll, -1) {
		return ll
	}
	d, _, rbar, free := s.attachTermsR(pos, n, top)
	if s.collapsing {
		if top != pydt.NoNode {
			panic("treemove: a collapsed move scored a position without the terms above top")
		}
		d = free + s.collapsedLg(pos, rbar)
	}
	// Non-root nodes of the resulting tree; v was drawn with probability
	// 1/nodes (see SlicePosition).
	nodes := s.numNonRoot()
	if pos.AtNode {
		return d + ll - math.Log(atomLen) - math.Log(float64(nodes))
	}
	// d is a density in s (attachTerms); dt/dψ = (1-t)(1+s)², and
	// dt/ds = 1-t, so ds/dψ = (1+s)².
	x := pos.Time.S()
	return d + ll + 2*math.Log1p(x) - math.Log(float64(nodes+1))
}

// posEval returns the position at offset d and log f there.
func (s *Sampler) posEval(v pydt.NodeID, n int, d float64) (pydt.Position, float64) {
	s.Stats.PositionEvals++
	pos, ok := s.locate(d)
	if !ok {
		return pos, math.Inf(-1)
	}
	return pos, s.refuse(s.posLogDensity(pos, n, s.m.LogLikIfAttached(v, pos)))
}

// PositionMove detaches a uniformly chosen non-root node and slice samples
// where it re-attaches (see SlicePosition). It reports whether the
// position changed.
func (s *Sampler) PositionMove() bool {
	if s.tr.NumLeaves() < 2 {
		return false
	}
	return s.SlicePosition(s.randomNonRoot())
}

// SlicePosition detaches the subtree v (a non-root node) and re-attaches it
// at a point drawn by slice sampling over the line of valid attachment
// points described above, with stepping out by PosWidth (at most MaxSteps
// widths) and shrinkage. The target is the prior of the resulting tree
// times its likelihood, divided by the number of non-root nodes N+I-1 of
// the resulting tree: PositionMove draws v with probability 1/(N+I-1),
// which depends on the position being updated (an edge position adds a
// branch point), and a random-scan update with state-dependent selection
// probabilities w_v(T) leaves π invariant when each update is reversible
// with respect to π(T) w_v(T). (Sampling π alone here would favour edge
// positions by the factor (N+I)/(N+I-1).) It reports whether the position
// changed.
func (s *Sampler) SlicePosition(v pydt.NodeID) bool {
	tr, m := s.tr, s.m
	s.Stats.Position.Proposed++
	if s.collapsing {
		if !s.collapseBegin(v) {
			return false
		}
		defer s.collapseEnd(v)
	}
	ll0 := m.LogLik()
	old := m.Detach(v)
	n := tr.Count(v)
	s.tv = tr.Time(v)
	s.seed = s.rng.Uint64()
	if old.AtNode {
		s.cur, s.off0 = piece{node: old.Node, atom: true}, s.AtomLen*s.rng.Float64()
	} else {
		s.cur = piece{node: old.Node}
		s.off0 = psiOneMinus(tr.ParentTime(old.Node)) - psiOneMinus(old.Time)
	}
	f0 := s.posLogDensity(old, n, ll0)
	if !Evaluable(f0) {
		// No slice at a state whose density is not finite (see Finite).
		s.Stats.NonFinite++
		m.Attach(v, old)
		return false
	}
	y := f0 - s.rng.ExpFloat64()

	w := s.PosWidth
	l := -w * s.rng.Float64()
	r := l + w
	jl := int(float64(s.MaxSteps) * s.rng.Float64())
	kr := s.MaxSteps - 1 - jl
	for ; jl > 0; jl-- {
		if _, f := s.posEval(v, n, l); !(f > y) {
			break
		}
		l -= w
	}
	for ; kr > 0; kr-- {
		if _, f := s.posEval(v, n, r); !(f > y) {
			break
		}
		r += w
	}
	for range maxShrink {
		d := l + s.rng.Float64()*(r-l)
		pos, f := s.posEval(v, n, d)
		if f > y {
			m.Attach(v, pos)
			if pos == old {
				return false
			}
			if s.settled() {
				s.Stats.Position.Accepted++
				return true
			}
			// Outside the slice after all: detach again and shrink.
			m.Detach(v)
		}
		if d < 0 {
			l = d
		} else {
			r = d
		}
	}
	m.Attach(v, old)
	return false
}
