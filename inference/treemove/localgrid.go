package treemove

import (
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// MaxLocalGrid is the largest LocalGrid: the proposal keeps one weight per
// cell of every piece of its region (up to 64 pieces), and cells finer than
// this gain nothing over the target's own variation along an edge.
const MaxLocalGrid = 1000

// The likelihood-informed proposal of LocalMove (LocalGrid > 0).
//
// LocalMove's uniform proposal (local.go) picks a piece near the old one
// and a point uniform in ψ on it, blind to where the detached subtree v
// fits. With LocalGrid = G > 0 the proposal is a Metropolized griddy
// Gibbs step (Ritter & Tanner 1992) over a region of pieces:
//
//  1. Detach v (a uniformly chosen non-root node); p is the old piece.
//     Draw a centre piece c uniformly from C(p), the valid pieces within
//     LocalGridRadius steps of p (as in local.go), and let the region
//     R = C(c). Since "within LocalGridRadius steps" is symmetric, p ∈ R, and a new
//     piece p' ∈ R has c ∈ C(p'): the reverse move can draw the same
//     centre, with probability 1/|C(p')|.
//  2. Cut each edge piece of R into G cells of equal length in ψ; an atom
//     piece is one cell. Evaluate the target f (LocalMove's: the posterior
//     density in ψ on edges, probability at atoms, with the node-count
//     factor) at the midpoint of every cell, f_j, and give cell j the
//     weight e^{f_j} times its length in ψ (1 for an atom).
//  3. Draw a cell by weight and a point uniform in ψ in it. The proposal
//     density of a point y (in ψ, or a probability at an atom) is
//     e^{f_j(y)}/W, j(y) the cell holding y and W the sum of the weights:
//     a piecewise-constant approximation of f over R.
//
// The weights depend on the remaining tree T_r, v and R only, which the
// reverse move (from the new point, with the same centre) shares, so W
// cancels and
//
//	log A = [f(y) - f_j(y)] - [f(x) - f_j(x)] + log |C(p)| - log |C(p')|,
//
// x being the old point. When f is nearly constant on each cell the
// proposal is nearly a draw from the posterior restricted to R and A is
// near 1, however far across R the point moves.
//
// Cost: the target at every cell midpoint is scored by a bp.Region below
// the lowest common ancestor of the region's pieces (one walk to the root
// for its outside message, then O(D) per point and O(K · log K · D) per
// node of the region) and by attachTermsR below the region's top
// (O(depth within the region)), since both are needed only up to a constant common to R; the
// accepted point is attached by one path update, a rejection undoes the
// detach. No allocation once the buffers have grown.

// maxGridPieces is the largest region whose cells the informed LocalMove
// scores (see localGridMove); a variable for the tests.
var maxGridPieces = 64

// localGridMove is LocalMove with the informed proposal above. The caller
// has counted the proposal.
func (s *Sampler) localGridMove() bool {
	tr, m := s.tr, s.m
	v := s.randomNonRoot()
	old := m.Detach(v)
	n := tr.Count(v)
	s.tv = tr.Time(v)
	p0 := piece{node: old.Node, atom: old.AtNode}
	rad := s.LocalGridRadius
	k0 := s.ball(p0, rad)
	c := s.lbuf[s.rng.IntN(k0)]
	s.rbuf = append(s.rbuf[:0], s.lbuf[:s.ball(c, rad)]...)
	top := s.regionTop(c)
	s.region = m.Region(v, top)
	g := s.LocalGrid // positive: LocalMove calls this only then

	// The target at every cell's midpoint, and the weights. A region of
	// more than maxGridPieces pieces (around branch points of high
	// degree) is not scored: every f_j is 0, a proposal uniform in ψ over
	// the region, so that a move costs O(K) cheap steps, not O(K)
	// likelihood evaluations. Whether a region is scored depends on the
	// region only, which the reverse move shares.
	scored := len(s.rbuf) <= maxGridPieces
	s.gbuf = s.gbuf[:0]
	fmax := math.Inf(-1)
	for _, p := range s.rbuf {
		if p.atom {
			f := 0.0
			if scored {
				f = s.gridTarget(pydt.Position{Node: p.node, AtNode: true}, n, top)
			}
			s.gbuf = append(s.gbuf, f)
			fmax = max(fmax, f)
			continue
		}
		hi, lo := s.psiParent(p.node), s.psiEnd(p.node)
		w := (hi - lo) / float64(g)
		for j := range g {
			f := 0.0
			if scored {
				f = math.Inf(-1)
				if pos, ok := s.edgePoint(p.node, hi-(float64(j)+0.5)*w); ok {
					f = s.gridTarget(pos, n, top)
				}
			}
			s.gbuf = append(s.gbuf, f)
			fmax = max(fmax, f)
		}
	}
	if math.IsInf(fmax, 0) || math.IsNaN(fmax) {
		if !(fmax == math.Inf(-1)) { // NaN or +Inf: refused as not finite
			s.Stats.NonFinite++
		}
		m.Attach(v, old) // nothing to propose (the same from every point of R)
		return false
	}
	// The cells' weights, e^{f_j - fmax} times the cell's length in ψ (1
	// at an atom), each formed once, and their sum.
	s.wbuf = s.wbuf[:0]
	tot := 0.0
	k := 0
	for _, p := range s.rbuf {
		if p.atom {
			wt := math.Exp(s.gbuf[k] - fmax)
			s.wbuf = append(s.wbuf, wt)
			tot += wt
			k++
			continue
		}
		w := (s.psiParent(p.node) - s.psiEnd(p.node)) / float64(g)
		for range g {
			wt := math.Exp(s.gbuf[k]-fmax) * w
			s.wbuf = append(s.wbuf, wt)
			tot += wt
			k++
		}
	}

	// Draw a cell, then a point in it.
	r := s.rng.Float64() * tot
	var p1 piece
	var pos pydt.Position
	k = 0
	found := false
	for _, p := range s.rbuf {
		if p.atom {
			r -= s.wbuf[k]
			k++
			if r < 0 {
				p1, pos, found = p, pydt.Position{Node: p.node, AtNode: true}, true
				break
			}
			continue
		}
		hi, lo := s.psiParent(p.node), s.psiEnd(p.node)
		w := (hi - lo) / float64(g)
		for j := range g {
			r -= s.wbuf[k]
			k++
			if r < 0 {
				var ok bool
				p1 = p
				if pos, ok = s.edgePoint(p.node, hi-(float64(j)+s.rng.Float64())*w); !ok {
					m.Attach(v, old) // rounded onto an end of the edge: a null set
					return false
				}
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		m.Attach(v, old) // only by rounding of the sum
		return false
	}

	f0 := s.gridTarget(old, n, top)
	if !Evaluable(f0) {
		s.Stats.NonFinite++
		m.Attach(v, old)
		return false
	}
	f1 := s.refuse(s.gridTarget(pos, n, top))
	k1 := s.ball(p1, rad)
	logA := f1 - s.cellTarget(pos, g) - f0 + s.cellTarget(old, g) +
		math.Log(float64(k0)) - math.Log(float64(k1))
	if !s.accept(logA) || pos == old { // the old atom drawn again: not counted
		m.Attach(v, old)
		return false
	}
	return s.moveTo(v, old, pos, &s.Stats.Local.Accepted)
}

// gridTarget returns log f(pos) of LocalMove up to a constant common to the
// positions below top: the likelihood from the region evaluator and the
// prior's change below top.
func (s *Sampler) gridTarget(pos pydt.Position, n int, top pydt.NodeID) float64 {
	return s.posLogDensityBelow(pos, n, s.region.LogLik(pos), top, 1)
}

// cellTarget returns the weight exponent f_j of the cell holding pos (see
// above), read from s.gbuf: the cells are those of the region s.rbuf, in
// its order. pos lies in the region.
func (s *Sampler) cellTarget(pos pydt.Position, g int) float64 {
	k := 0
	for _, p := range s.rbuf {
		if p.atom {
			if pos.AtNode && pos.Node == p.node {
				return s.gbuf[k]
			}
			k++
			continue
		}
		if !pos.AtNode && pos.Node == p.node {
			hi, lo := s.psiParent(p.node), s.psiEnd(p.node)
			j := int((hi - psiOneMinus(pos.Time)) / (hi - lo) * float64(g))
			return s.gbuf[k+min(g-1, max(0, j))]
		}
		k += g
	}
	panic("treemove: a point outside the region of LocalMove")
}

// regionTop returns the lowest common ancestor of the nodes of the pieces
// in s.rbuf (the region C(c) around the centre piece c): every piece of the
// region is on the edge above a node of its subtree or at one of its
// branch points. A piece within r steps of c has its node at most r levels
// above c's, so each walk up from a piece's node meets c's first r+1
// ancestors within O(r) steps.
func (s *Sampler) regionTop(c piece) pydt.NodeID {
	tr := s.tr
	s.anc = s.anc[:0]
	for a, i := c.node, 0; a != pydt.NoNode && i <= max(0, s.LocalGridRadius); a, i = tr.Parent(a), i+1 {
		s.anc = append(s.anc, a)
	}
	best := 0
	for _, p := range s.rbuf {
		for a := p.node; a != pydt.NoNode; a = tr.Parent(a) {
			if i := ancIndex(s.anc, a); i >= 0 {
				best = max(best, i)
				break
			}
		}
	}
	return s.anc[best]
}

func ancIndex(anc []pydt.NodeID, a pydt.NodeID) int {
	for i, x := range anc {
		if x == a {
			return i
		}
	}
	return -1
}
