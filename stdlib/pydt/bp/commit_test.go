package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCommitIsExact runs the same moves on two models of copies of one
// tree: one scores each position with LogLikIfAttached and then attaches
// there (copying the scored path for positions on edges), the other
// attaches without scoring (recomputing the path). Every record must
// agree bit for bit after every move, LogLik must equal the score bit for
// bit, and the copy must have been taken for every position on an edge.
// Some moves are rejected (attached back where they were), and full passes
// and time changes are interleaved.
func TestCommitIsExact(t *testing.T) {
	for _, tc := range treeCases {
		for _, relayout := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/relayout=%v", tc.name, relayout), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				tr := tc.gen(rng, 60)
				scored, plain := New(tr, 3), New(tr.Clone(), 3)
				if relayout {
					scored.relayoutBytes, plain.relayoutBytes = 0, 0
				}
				randomEvidence(t, rand.New(rand.NewPCG(9, 9)), scored, 0.2, 0.3)
				randomEvidence(t, rand.New(rand.NewPCG(9, 9)), plain, 0.2, 0.3)
				for _, m := range []*Model{scored, plain} {
					if err := m.Recompute(); err != nil {
						t.Fatal(err)
					}
				}
				commits := 0
				for step := range 300 {
					v := randomTreeNode(rng, tr)
					old := scored.Detach(v)
					plain.Detach(v)
					pos := randomPosition(rng, tr, v)
					ll := scored.LogLikIfAttached(v, pos)
					if rng.IntN(4) == 0 {
						pos = old // rejected: the undo
					}
					took := scored.committable(v, pos)
					if took != (!pos.AtNode && pos != old) {
						t.Fatalf("step %d: committable %v for %+v (old %+v)", step, took, pos, old)
					}
					scored.Attach(v, pos)
					plain.Attach(v, pos)
					sameRecords(t, plain, scored)
					if took {
						commits++
						if got := scored.LogLik(); math.Float64bits(got) != math.Float64bits(ll) {
							t.Fatalf("step %d: LogLik %v after the commit, LogLikIfAttached %v", step, got, ll)
						}
					}
					switch step % 50 {
					case 17:
						for _, m := range []*Model{scored, plain} {
							if err := m.Recompute(); err != nil {
								t.Fatal(err)
							}
						}
					case 33:
						// A time change on the path of the pending commit:
						// Attach must recompute.
						w := randomTreeNode(rng, tr)
						for tr.IsLeaf(w) {
							w = randomTreeNode(rng, tr)
						}
						// A new time between w's parent's and w's own is
						// before all of w's children's.
						lo, hi := tr.ParentTime(w), tr.Time(w)
						u := randomTreeNode(rng, tr)
						scored.Detach(u)
						plain.Detach(u)
						pu := randomPosition(rng, tr, u)
						_ = scored.LogLikIfAttached(u, pu)
						nt := interp(lo, hi, 0.5)
						if lo.Before(nt) && nt.Before(hi) && w != u {
							scored.SetTime(w, nt)
							plain.SetTime(w, nt)
						}
						if scored.committable(u, pu) && w != u && lo.Before(nt) && nt.Before(hi) {
							t.Fatal("a commit survived a time change")
						}
						scored.Attach(u, pu)
						plain.Attach(u, pu)
						sameRecords(t, plain, scored)
					}
				}
				if commits < 100 {
					t.Fatalf("only %d of 300 moves committed the scored path", commits)
				}
				if got, want := scored.LogLik(), fresh(t, scored); !relClose(got, want, 1e-12) {
					t.Fatalf("LogLik %v, a fresh model's full pass %v", got, want)
				}
			})
		}
	}
}
