package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestRegionMatchesLogLikIfAttached scores many positions below a random
// node with one Region and compares each with LogLikIfAttached, an
// independent walk to the root: the two form the same products in
// different orders, so they agree to rounding. Evidence is partly missing
// and noisy, variances differ per dimension, and the region's top ranges
// from the root to the position's own node.
func TestRegionMatchesLogLikIfAttached(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 8))
	for _, tc := range treeCases {
		for _, dc := range dimCases {
			t.Run(fmt.Sprintf("%s/%s", tc.name, dc), func(t *testing.T) {
				tr := tc.gen(rng, 40)
				m := New(tr, dc.D)
				if dc.perDim {
					setVariances(t, m, spreadVariances(rng, dc.D))
				}
				randomEvidence(t, rng, m, 0.3, 0.2)
				if err := m.Recompute(); err != nil {
					t.Fatal(err)
				}
				scored := 0
				for range 60 {
					v := randomTreeNode(rng, tr)
					old := m.Detach(v)
					// The top: an ancestor (or the node itself) of a
					// random valid position's node, chosen uniformly on
					// its path to the root.
					pos := randomPosition(rng, tr, v)
					var path []pydt.NodeID
					for a := pos.Node; a != pydt.NoNode; a = tr.Parent(a) {
						path = append(path, a)
					}
					top := path[rng.IntN(len(path))]
					r := m.Region(v, top)
					for range 12 {
						p := randomPosition(rng, tr, v)
						if !below(tr, p.Node, top) {
							continue
						}
						got := r.LogLik(p)
						want := m.LogLikIfAttached(v, p)
						if !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
							t.Fatalf("v %d at %+v, top %d: Region %v, LogLikIfAttached %v", v, p, top, got, want)
						}
						scored++
					}
					if below(tr, old.Node, top) {
						if got, want := r.LogLik(old), m.LogLikIfAttached(v, old); !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
							t.Fatalf("v %d at its old point %+v: Region %v, LogLikIfAttached %v", v, old, got, want)
						}
					}
					m.Attach(v, old)
				}
				if scored < 200 {
					t.Fatalf("only %d positions scored", scored)
				}
			})
		}
	}
}

// TestRegionEdgeCases: an invalid time scores -Inf, a point outside the
// region's top and a stale region panic, and scoring allocates nothing.
func TestRegionEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 21))
	tr := genPYDT(rng, 30, 1, 0, 0)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0.1, 0.1)
	if err := m.Recompute(); err != nil {
		t.Fatal(err)
	}
	v := randomTreeNode(rng, tr)
	for !tr.IsLeaf(v) {
		v = randomTreeNode(rng, tr)
	}
	old := m.Detach(v)
	r := m.Region(v, tr.Root())
	if ll := r.LogLik(pydt.Position{Node: old.Node, Time: tr.ParentTime(old.Node)}); !math.IsInf(ll, -1) {
		t.Errorf("at the top of an edge: %v, want -Inf", ll)
	}
	if a := testing.AllocsPerRun(50, func() {
		r = m.Region(v, tr.Root())
		r.LogLik(old)
	}); a != 0 {
		t.Errorf("%v allocations per region and score", a)
	}
	mustPanic(t, "outside the top", func() {
		m.Region(v, old.Node).LogLik(pydt.Position{Node: tr.Root(), AtNode: true})
	})
	r = m.Region(v, tr.Root())
	m.Attach(v, old)
	mustPanic(t, "stale", func() { r.LogLik(old) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}
