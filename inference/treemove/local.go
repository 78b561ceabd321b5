package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// LocalMove: prune and regraft to a nearby point.
//
// The move detaches a uniformly chosen non-root node v (its subtree goes
// with it), as SubtreeMove does, and proposes a new attachment point near
// the old one in the remaining tree T_r, in the manner of phylogenetic
// MCMC's subtree-prune-and-regraft moves restricted to a few edges (narrow
// exchange, subtree slide). The valid attachment points of T_r are the
// pieces of PositionMove's line (position.go): the part before t_v of the
// edge above each node x whose parent is before t_v, and the branch points
// b before t_v whose atom has prior mass (α + βK_b > 0). Two pieces are
// neighbours when they share a node: the edge above x touches the edges
// above x's parent, x's siblings and x's children, and the atoms of x's
// parent and of x; the atom of b touches the edge above b and the edges
// above b's children. Let C(p) be the pieces within LocalRadius steps of
// piece p in this graph restricted to valid pieces (p included); the
// relation "within LocalRadius steps" is symmetric, and valid pieces form a
// connected part of T_r containing the root, so C depends on T_r, t_v and p
// only, which the reverse move shares.
//
// The proposal draws a piece p' uniformly from C(p) (p the old piece), and
// on an edge piece a point uniform in ψ = s/(1+s) over the piece (of length
// ℓ(p') in ψ); an atom is its own point. The target, as for PositionMove,
// is f(pos) = p(T_r + v@pos) L(T_r + v@pos) / (N + I(pos) - 1), a density
// in ψ on edges (the factor (1+s)² = ds/dψ) and a probability at atoms
// (the last factor because v is chosen with probability 1/(N+I-1), which
// depends on the state; see SlicePosition). Hence
//
//	log A = log f(pos') - log f(pos) + log |C(p)| - log |C(p')| + log ℓ(p') - log ℓ(p),
//
// with ℓ = 1 for atoms. Each evaluation is one LogLikIfAttached and two
// attachTerms, O(depth · D); the neighbourhood is O(degree^LocalRadius).
func (s *Sampler) LocalMove() bool {
	tr, m := s.tr, s.m
	if tr.NumLeaves() < 2 {
		return false
	}
	s.Stats.Local.Proposed++
	if s.LocalGrid > 0 {
		return s.localGridMove()
	}
	v := s.randomNonRoot()
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
	p0 := piece{node: old.Node, atom: old.AtNode}
	k0 := s.neighbourhood(p0)
	p1 := s.lbuf[s.rng.IntN(k0)]
	f0 := s.localLogTarget(old, n, ll0)
	if !Evaluable(f0) {
		s.Stats.NonFinite++
		m.Attach(v, old)
		return false
	}
	pos, ok := s.drawOnPiece(p1)
	if !ok {
		m.Attach(v, old) // rounded onto an end of the piece: a null set
		return false
	}
	k1 := s.neighbourhood(p1)
	f1 := s.refuse(s.localLogTarget(pos, n, m.LogLikIfAttached(v, pos)))
	logA := f1 - f0 + math.Log(float64(k0)) - math.Log(float64(k1)) +
		s.logPieceLen(p1) - s.logPieceLen(p0)
	if !s.accept(logA) {
		m.Attach(v, old)
		return false
	}
	return s.moveTo(v, old, pos, &s.Stats.Local.Accepted)
}

// localLogTarget returns log f(pos) of LocalMove given the log likelihood
// there: PositionMove's density without the spread of an atom over AtomLen.
func (s *Sampler) localLogTarget(pos pydt.Position, n int, ll float64) float64 {
	f := s.posLogDensity(pos, n, ll)
	if pos.AtNode {
		f += math.Log(s.AtomLen)
	}
	return f
}

// logPieceLen returns the log of the length in ψ of an edge piece, 0 for an
// atom.
func (s *Sampler) logPieceLen(p piece) float64 {
	if p.atom {
		return 0
	}
	return math.Log(s.psiParent(p.node) - s.psiEnd(p.node))
}

// drawOnPiece draws a point of piece p: the atom itself, or a point of the
// edge piece uniform in ψ. It reports false when rounding put the point
// on an end of the edge.
func (s *Sampler) drawOnPiece(p piece) (pydt.Position, bool) {
	if p.atom {
		return pydt.Position{Node: p.node, AtNode: true}, true
	}
	hi, lo := s.psiParent(p.node), s.psiEnd(p.node)
	return s.edgePoint(p.node, lo+s.rng.Float64()*(hi-lo))
}

// atomValid reports whether b's atom is a piece of the line: b is a branch
// point before t_v with prior mass.
func (s *Sampler) atomValid(b pydt.NodeID) bool {
	return s.open(b) && s.atomHasMass(b)
}

// neighbourhood collects in s.lbuf the valid pieces within LocalRadius
// steps of p (p first) and returns their number. Marks are stamps per node,
// so that the cost is that of the pieces visited, with no allocation once
// the buffers have grown.
func (s *Sampler) neighbourhood(p piece) int {
	return s.ball(p, s.LocalRadius)
}

// ball is neighbourhood with the radius r.
func (s *Sampler) ball(p piece, r int) int {
	s.lstamp++
	if s.lstamp == 0 {
		clear(s.lmark)
		s.lstamp = 1
	}
	if c := 2 * s.tr.Cap(); len(s.lmark) < c {
		s.lmark = make([]uint32, c)
	}
	s.lbuf = s.lbuf[:0]
	s.addPiece(p)
	start := 0
	for range max(0, r) {
		end := len(s.lbuf)
		for i := start; i < end; i++ {
			s.addNeighbours(s.lbuf[i])
		}
		start = end
	}
	return len(s.lbuf)
}

// addPiece appends p to s.lbuf unless it is already there (p must be
// valid).
func (s *Sampler) addPiece(p piece) {
	i := 2 * int(p.node)
	if p.atom {
		i++
	}
	if s.lmark[i] == s.lstamp {
		return
	}
	s.lmark[i] = s.lstamp
	s.lbuf = append(s.lbuf, p)
}

// addNeighbours appends the valid neighbours of the valid piece p.
func (s *Sampler) addNeighbours(p piece) {
	tr := s.tr
	x := p.node
	if p.atom {
		s.addPiece(piece{node: x})
		for c := tr.FirstChild(x); c != pydt.NoNode; c = tr.NextSibling(c) {
			s.addPiece(piece{node: c})
		}
		return
	}
	if par := tr.Parent(x); par != pydt.NoNode {
		s.addPiece(piece{node: par})
		if s.atomValid(par) {
			s.addPiece(piece{node: par, atom: true})
		}
		for c := tr.FirstChild(par); c != pydt.NoNode; c = tr.NextSibling(c) {
			s.addPiece(piece{node: c})
		}
	}
	if s.open(x) {
		if s.atomValid(x) {
			s.addPiece(piece{node: x, atom: true})
		}
		for c := tr.FirstChild(x); c != pydt.NoNode; c = tr.NextSibling(c) {
			s.addPiece(piece{node: c})
		}
	}
}
