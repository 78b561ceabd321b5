package treemove

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// TestInformedLocalRegion checks the two shortcuts of the informed
// LocalMove on random trees, for every non-root node and every piece of
// its line as a centre: the region's top is an ancestor (or itself) of
// every piece's node, and the target it scores, gridTarget (the
// likelihood from a bp.Region below the top, the prior's change below the
// top), differs from LocalMove's full target (LogLikIfAttached and
// attachTerms, independent walks to the root) by the same constant at
// every point of the region.
func TestInformedLocalRegion(t *testing.T) {
	for _, c := range ratioCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, 2))
			checked := 0
			for rep := range 4 {
				p := c.params()
				p.Dims = 2
				tr, x, err := sim.Draw(rng, 12+3*rep, p)
				if err != nil {
					t.Fatal(err)
				}
				s := newSampler(t, tr, c, 2, rng)
				if err := s.Model().ObserveMatrix(x[:2*tr.NumLeaves()]); err != nil {
					t.Fatal(err)
				}
				s.LocalGridRadius = 1 + rep%3
				m := s.Model()
				for id := range tr.Cap() {
					v := pydt.NodeID(id)
					if !tr.InUse(v) || v == tr.Root() {
						continue
					}
					old := m.Detach(v)
					n := tr.Count(v)
					s.tv = tr.Time(v)
					k := s.ball(piece{node: old.Node, atom: old.AtNode}, s.LocalGridRadius)
					centres := append([]piece(nil), s.lbuf[:k]...)
					for _, cp := range centres {
						s.rbuf = append(s.rbuf[:0], s.lbuf[:s.ball(cp, s.LocalGridRadius)]...)
						top := s.regionTop(cp)
						s.region = m.Region(v, top)
						// Reference offset: the point of smallest |target|, where
						// rounding is least.
						type pair struct {
							pos       pydt.Position
							got, want float64
						}
						var pts []pair
						ref, best := math.NaN(), math.Inf(1)
						for _, pc := range s.rbuf {
							if !below(tr, pc.node, top) {
								t.Fatalf("piece %+v of the region around %+v is not below its top %d", pc, cp, top)
							}
							pos := pydt.Position{Node: pc.node, AtNode: true}
							if !pc.atom {
								var ok bool
								if pos, ok = s.edgePoint(pc.node, s.psiEnd(pc.node)+rng.Float64()*(s.psiParent(pc.node)-s.psiEnd(pc.node))); !ok {
									continue
								}
							}
							got := s.gridTarget(pos, n, top)
							want := s.localLogTarget(pos, n, m.LogLikIfAttached(v, pos))
							if math.IsInf(want, -1) || math.IsInf(got, -1) {
								if got != want {
									t.Fatalf("v %d at %+v (region top %d): gridTarget %v, full target %v", v, pos, top, got, want)
								}
								continue
							}
							pts = append(pts, pair{pos, got, want})
							if math.Abs(want) < best {
								ref, best = want-got, math.Abs(want)
							}
						}
						for _, p := range pts {
							if d := p.want - p.got - ref; !(math.Abs(d) <= 1e-8*(1+math.Abs(p.want))) {
								t.Fatalf("v %d at %+v (region top %d): gridTarget %v, full target %v, offset %v, want %v",
									v, p.pos, top, p.got, p.want, p.want-p.got, ref)
							}
							checked++
						}
					}
					m.Attach(v, old)
				}
			}
			if checked < 1000 {
				t.Fatalf("only %d points checked", checked)
			}
		})
	}
}

func below(tr *pydt.Tree, x, top pydt.NodeID) bool {
	for a := x; a != pydt.NoNode; a = tr.Parent(a) {
		if a == top {
			return true
		}
	}
	return false
}
