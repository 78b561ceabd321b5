package treemove

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// cellKey names where a proposed position lies: the edge above a node, or
// a branch point.
type cellKey struct {
	node pydt.NodeID
	atom bool
}

// cellLaw returns the law of the cell of the point SubtreeMove proposes for
// the detached subtree v (time tv), computed from the generative process
// directly: the probability of reaching the edge above u (surviving every
// edge above, choosing the path child at every branch point passed), times
// that of diverging on it before min(t_u, tv), or of reaching a branch
// point and starting a new branch there; choices weighted by the prior's
// probability times exp(informedCorr) of the step when informed is set;
// restricted to points before tv and renormalised.
func cellLaw(s *Sampler, v pydt.NodeID, tv pydt.Time, informed bool) map[cellKey]float64 {
	tr, h, div := s.tr, s.h, s.div
	law := map[cellKey]float64{}
	var walk func(u pydt.NodeID, ta pydt.Time, reach float64)
	walk = func(u pydt.NodeID, ta pydt.Time, reach float64) {
		if !ta.Before(tv) {
			return
		}
		tu := tr.Time(u)
		end := tu
		if tv.Before(tu) {
			end = tv
		}
		rate := h.Rate(tr.Count(u))
		law[cellKey{node: u}] += reach * -math.Expm1(-rate*div.Increment(ta, end))
		if tr.IsLeaf(u) || !tu.Before(tv) {
			return
		}
		arrive := reach * math.Exp(-rate*div.Increment(ta, tu))
		m := float64(tr.Count(u)) + s.alpha
		ratio := func(c pydt.NodeID, i int) float64 {
			if !informed {
				return 1
			}
			tot := s.choices(u, v)
			return math.Exp(s.choiceRatio(u, c, i, tot))
		}
		i := 0
		for c := tr.FirstChild(u); c != pydt.NoNode; c = tr.NextSibling(c) {
			walk(c, tu, arrive*(float64(tr.Count(c))-s.beta)/m*ratio(c, i))
			i++
		}
		if w := s.alpha + s.beta*float64(tr.Degree(u)); w > 0 {
			law[cellKey{node: u, atom: true}] += arrive * w / m * ratio(pydt.NoNode, tr.Degree(u))
		}
	}
	walk(tr.Root(), pydt.Origin, 1)
	z := 0.0
	for _, p := range law {
		z += p
	}
	for k := range law {
		law[k] /= z
	}
	return law
}

// TestInformedProposalLaw checks the informed proposal of SubtreeMove
// against the law of its cells computed independently (cellLaw) from the
// generative process and the choice probabilities, for a leaf and a
// subtree on data, and checks that informedCorr of each proposed point is
// the log ratio of its proposal density to the prior's (the ratio of the
// cell laws, the time on an edge being drawn as the prior's).
func TestInformedProposalLaw(t *testing.T) {
	c := priorCase{"pydt", 0.5, 0.3, pydt.DivInv{C: 1}}
	rng := rand.New(rand.NewPCG(21, 22))
	s := dataSampler(t, c, 8, 2, rng)
	s.Informed = 1
	if err := s.m.SetVariance(0.3); err != nil {
		t.Fatal(err)
	}
	tr := s.tr
	var sub pydt.NodeID = pydt.NoNode
	for id := tr.NumLeaves(); id < tr.Cap(); id++ {
		if v := pydt.NodeID(id); tr.InUse(v) && v != tr.Root() {
			sub = v
			break
		}
	}
	if sub == pydt.NoNode {
		t.Fatal("no non-root branch point")
	}
	const draws = 60000
	for _, v := range []pydt.NodeID{3, sub} {
		old := s.m.Detach(v)
		tv := tr.Time(v)
		prior := cellLaw(s, v, tv, false)
		law := cellLaw(s, v, tv, true)
		differ := 0.0
		for k, p := range law {
			differ = max(differ, math.Abs(p-prior[k]))
		}
		if differ < 0.02 {
			t.Errorf("v=%d: the informed law is the prior's to %v: the test would not see the correction", v, differ)
		}
		counts := map[cellKey]float64{}
		for range draws {
			pos, corr, ok := s.propose(v, tv)
			if !ok {
				t.Fatalf("v=%d: no proposal", v)
			}
			k := cellKey{node: pos.Node, atom: pos.AtNode}
			counts[k]++
			if got := s.informedCorr(v, pos); !(math.Abs(got-corr) <= 1e-12*(1+math.Abs(corr))) {
				t.Fatalf("v=%d at %+v: informedCorr %v, proposal's own %v", v, pos, got, corr)
			}
		}
		// informedCorr against the cell laws: log(law/prior) - corr is the
		// same constant (the log ratio of the normalisers) in every cell.
		var ref float64
		first := true
		for k, p := range law {
			if p == 0 {
				continue
			}
			pos := pydt.Position{Node: k.node, AtNode: k.atom}
			if !k.atom {
				pos.Time = midTime(tr, k.node, tv)
			}
			d := math.Log(p/prior[k]) - s.informedCorr(v, pos)
			if first {
				ref, first = d, false
			} else if !(math.Abs(d-ref) <= 1e-9) {
				t.Errorf("v=%d, cell %+v: log law ratio less informedCorr %v, other cells %v", v, k, d, ref)
			}
		}
		for k, p := range law {
			se := math.Sqrt(p * (1 - p) / draws)
			if z := (counts[k]/draws - p) / se; !(math.Abs(z) <= zTol) || (p == 0 && counts[k] > 0) {
				t.Errorf("v=%d, cell %+v: frequency %.5f, law %.5f (z = %.1f)", v, k, counts[k]/draws, p, z)
			}
		}
		for k := range counts {
			if _, ok := law[k]; !ok {
				t.Errorf("v=%d: proposed cell %+v outside the law's support", v, k)
			}
		}
		s.m.Attach(v, old)
	}
}

// midTime returns a time inside the edge above u, before tv.
func midTime(tr *pydt.Tree, u pydt.NodeID, tv pydt.Time) pydt.Time {
	lo, hi := tr.ParentTime(u), tr.Time(u)
	if tv.Before(hi) {
		hi = tv
	}
	return pydt.TimeFromS((lo.S() + math.Min(hi.S(), lo.S()+50)) / 2)
}

// TestDDTLineHasNoDeadAtoms checks that for the DDT (α = β = 0, no mass at
// branch points) the line of PositionMove gives branch points no room: on
// main every branch point took AtomLen of zero density, on which the
// stepping out stopped.
func TestDDTLineHasNoDeadAtoms(t *testing.T) {
	for _, c := range []priorCase{{"ddt", 0, 0, pydt.DivInv{C: 1}}, {"pydt", 0.5, 0.3, pydt.DivInv{C: 1}}} {
		s := dataSampler(t, c, 30, 2, rand.New(rand.NewPCG(5, 5)))
		tr := s.tr
		v := pydt.NodeID(0)
		old := s.m.Detach(v)
		s.tv = tr.Time(v)
		s.seed = 1
		atoms, room := 0, 0.0
		p, ok := piece{node: tr.Root()}, true
		for ; ok; p, ok = s.nextPiece(p) {
			if p.atom {
				atoms++
				room += s.pieceLen(p)
			}
		}
		s.m.Attach(v, old)
		if atoms == 0 {
			t.Fatalf("%s: no atom piece on the line", c.name)
		}
		if want := float64(atoms) * s.AtomLen; c.alpha == 0 && room != 0 || c.alpha != 0 && !(math.Abs(room-want) <= 1e-12) {
			t.Errorf("%s: %d atoms take %v of the line", c.name, atoms, room)
		}
	}
}

// TestTilt checks the informed proposal's factor exp(λ (g - top)) against
// closed forms, and that with no usable score (λ set to 0 by choices, top
// infinite or NaN) every option keeps its prior weight rather than NaN.
func TestTilt(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name        string
		lam, g, top float64
		want        float64
	}{
		{"finite", 2, 1, 3, math.Exp(-4)},
		{"at the top", 1.5, -7, -7, 1},
		{"-Inf score below a finite top", 1, -inf, 0, 0},
		{"all scores -Inf", 0, -inf, -inf, 1},
		{"a NaN score", 0, nan, nan, 1},
		{"+Inf top", 0, 1, inf, 1},
	} {
		if got := tilt(tc.lam, tc.g, tc.top); got != tc.want {
			t.Errorf("%s: tilt(%v, %v, %v) = %v, want %v", tc.name, tc.lam, tc.g, tc.top, got, tc.want)
		}
	}
}
