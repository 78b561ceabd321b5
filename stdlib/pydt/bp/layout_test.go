package bp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestRelayoutWithDetached runs full passes (which move every record to
// breadth-first order) while subtrees are detached, and local updates
// between them, and compares every LogLik with a fresh model's full pass
// and with LogLikIfAttached: records of detached subtrees and of detached
// leaves must survive the relayout.
func TestRelayoutWithDetached(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, tc := range treeCases {
		for _, relayout := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/relayout=%v", tc.name, relayout), func(t *testing.T) {
				tr := tc.gen(rng, 40)
				m := New(tr, 2)
				if relayout {
					m.relayoutBytes = 0 // always move the records
				}
				randomEvidence(t, rng, m, 0.2, 0.3)
				if err := m.Recompute(); err != nil {
					t.Fatal(err)
				}
				for step := range 100 {
					v := randomTreeNode(rng, tr)
					m.Detach(v)
					var leaf pydt.NodeID = pydt.NoNode
					if rng.IntN(2) == 0 && !tr.IsLeaf(tr.Root()) {
						// A detached leaf as well, elsewhere in the tree.
						for range 10 {
							u := randomTreeNode(rng, tr)
							if tr.IsLeaf(u) && tr.Degree(tr.Parent(u)) >= 2 {
								leaf = u
								m.Detach(leaf)
								break
							}
						}
					}
					if err := m.Recompute(); err != nil {
						t.Fatal(err)
					}
					if leaf != pydt.NoNode {
						m.Attach(leaf, randomPosition(rng, tr, leaf))
					}
					pos := randomPosition(rng, tr, v)
					guess := m.LogLikIfAttached(v, pos)
					m.Attach(v, pos)
					got, want := m.LogLik(), fresh(t, m)
					if !relClose(got, want, 1e-12) || !relClose(guess, got, 1e-12) {
						t.Fatalf("step %d: LogLik %.15g, LogLikIfAttached %.15g, full pass %.15g", step, got, guess, want)
					}
					checkSeg(t, m)
				}
			})
		}
	}
}
