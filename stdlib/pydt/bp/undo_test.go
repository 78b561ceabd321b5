package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestUndoDetach checks the journal path of Attach: a Detach followed by
// scoring candidates and attaching back where Detach said must restore
// LogLik bit for bit and leave consistent segment trees, so that later local
// updates (accepted moves, time changes) still agree with a full pass, the
// independent answer. Hub trees exercise blocks that shrink on Detach (the
// journal is then dropped) and the splice case at branch points of degree
// two; a journal too small for the path (the first deep paths before a
// Recompute) exercises the fallback.
func TestUndoDetach(t *testing.T) {
	cases := append(treeCases[:len(treeCases):len(treeCases)],
		treeCase{"hub", func(rng *rand.Rand, _ int) *pydt.Tree { return hubTree(rng, 80, 40, false) }})
	for ci, tc := range cases {
		for _, D := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/D=%d", tc.name, D), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(D)))
				tr := tc.gen(rng, 60)
				m := New(tr, D)
				if D == 3 {
					m.relayoutBytes = 0 // full passes move the records
				}
				if err := m.SetVariance(0.8); err != nil {
					t.Fatal(err)
				}
				if D == 3 {
					setVariances(t, m, spreadVariances(rng, D))
				}
				randomEvidence(t, rng, m, 0.2, 0.2)
				if err := m.Recompute(); err != nil {
					t.Fatal(err)
				}
				undone := 0
				for step := range 400 {
					before := m.LogLik()
					v := randomTreeNode(rng, tr)
					old := m.Detach(v)
					ok := m.jr.valid
					for range 3 {
						_ = m.LogLikIfAttached(v, randomPosition(rng, tr, v))
					}
					if rng.IntN(4) == 0 {
						// Accept: a normal attach elsewhere.
						m.Attach(v, randomPosition(rng, tr, v))
					} else {
						m.Attach(v, old)
						got := m.LogLik()
						if ok {
							undone++
							if got != before {
								t.Fatalf("step %d: LogLik %.17g after undo, %.17g before", step, got, before)
							}
						} else if !relClose(got, before, 1e-12) {
							t.Fatalf("step %d: LogLik %.17g after re-attaching, %.17g before", step, got, before)
						}
					}
					if rng.IntN(5) == 0 { // a time change between moves
						u := randomTreeNode(rng, tr)
						if tr.IsLeaf(u) {
							u = tr.Parent(u)
						}
						lo, hi := timeBounds(tr, u)
						m.SetTime(u, interp(lo, hi, 0.1+0.8*rng.Float64()))
					}
					if err := tr.Validate(); err != nil {
						t.Fatal(err)
					}
					checkSeg(t, m)
					if step%50 == 0 {
						if err := m.Recompute(); err != nil {
							t.Fatal(err)
						}
					}
					if step%10 == 0 {
						if got, want := m.LogLik(), fresh(t, m); !relClose(got, want, 1e-10) {
							t.Fatalf("step %d: LogLik %.15g, full pass %.15g", step, got, want)
						}
					}
				}
				if undone == 0 {
					t.Fatal("no Detach was undoable: the journal path was not exercised")
				}
			})
		}
	}
}

// TestUndoIsExact checks that an undone Detach leaves every message and
// log normaliser exactly as it was.
func TestUndoIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	tr := genPYDT(rng, 50, 1.5, 1, 0.4)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0.2, 0.2)
	if err := m.Recompute(); err != nil {
		t.Fatal(err)
	}
	// Values per node ID (the tree's child order changes: v comes back
	// as its parent's last child).
	snapshot := func() map[pydt.NodeID][5]float64 {
		out := map[pydt.NodeID][5]float64{}
		for _, u := range tr.PreOrder(nil) {
			var r [5]float64
			for d := range 2 {
				r[2*d], r[2*d+1] = m.Message(u, d)
			}
			r[4] = m.SubtreeLogZ(u)
			out[u] = r
		}
		return out
	}
	exact := 0
	for step := range 200 {
		v := randomTreeNode(rng, tr)
		before := snapshot()
		old := m.Detach(v)
		ok := m.jr.valid
		_ = m.LogLikIfAttached(v, randomPosition(rng, tr, v))
		m.Attach(v, old)
		after := snapshot()
		if !ok {
			continue
		}
		if len(after) != len(before) {
			t.Fatalf("step %d: %d nodes after undo, %d before", step, len(after), len(before))
		}
		same := true
		for u := range before {
			if _, in := after[u]; !in {
				same = false // the spliced branch point came back under another ID
			}
		}
		if !same {
			continue
		}
		exact++
		for u, b := range before {
			a := after[u]
			for i := range b {
				if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
					t.Fatalf("step %d: node %d value %d is %v after undo, %v before", step, u, i, a[i], b[i])
				}
			}
		}
	}
	if exact < 100 {
		t.Fatalf("only %d of 200 detachments were undoable", exact)
	}
}
