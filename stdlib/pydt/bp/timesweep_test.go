package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestTimeSweep runs TimeSweep with a visit that checks the evaluator of
// each branch point against the independent reference (refLogLikOn: a
// fresh model on a copy of the tree as it stands, with the candidate time)
// at several times, then commits a random time (or, for some nodes, none);
// it checks that every branch point is visited once, each after its parent,
// and that the messages after the sweep equal a full recomputation.
func TestTimeSweep(t *testing.T) {
	cases := append(treeCases[:len(treeCases):len(treeCases)],
		treeCase{"hub", func(rng *rand.Rand, n int) *pydt.Tree { return hubTree(rng, n, n/2, false) }})
	for _, tc := range cases {
		for _, D := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/D=%d", tc.name, D), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(43, uint64(D)))
				tr := tc.gen(rng, 30)
				m := New(tr, D)
				if err := m.SetVariance(0.8); err != nil {
					t.Fatal(err)
				}
				observeFromPrior(t, rng, m, 0.2)
				randomEvidence(t, rng, m, 0.2, 0.3)
				for rep := range 3 {
					m.LogLik()
					visited := map[pydt.NodeID]bool{}
					m.TimeSweep(func(e *TimeEval) {
						v := e.Node()
						if visited[v] {
							t.Fatalf("rep %d: node %d visited twice", rep, v)
						}
						if p := tr.Parent(v); p != pydt.NoNode && !visited[p] {
							t.Fatalf("rep %d: node %d visited before its parent %d", rep, v, p)
						}
						visited[v] = true
						lo, hi := e.Bounds()
						if wlo, whi := timeBounds(tr, v); lo != wlo || hi != whi {
							t.Fatalf("Bounds of %d: (%v, %v), want (%v, %v)", v, lo, hi, wlo, whi)
						}
						for j := range 4 {
							tt := tr.Time(v)
							if j > 0 {
								tt = interp(lo, hi, rng.Float64())
							}
							if !lo.Before(tt) || !tt.Before(hi) {
								continue
							}
							got := e.LogLik(tt)
							ref := refLogLikOn(t, m, withTime(tr, v, tt))
							if !relClose(got, ref, 1e-10) {
								t.Fatalf("rep %d, node %d, t = %v: sweep evaluator %.15g, reference %.15g", rep, v, tt.T(), got, ref)
							}
						}
						if rng.IntN(4) > 0 {
							if tt := interp(lo, hi, 0.05+0.9*rng.Float64()); lo.Before(tt) && tt.Before(hi) {
								e.Commit(tt)
							}
						}
					})
					if want := tr.NumInternal(); len(visited) != want {
						t.Fatalf("rep %d: %d branch points visited, want %d", rep, len(visited), want)
					}
					if err := tr.Validate(); err != nil {
						t.Fatal(err)
					}
					if got, want := m.LogLik(), fresh(t, m); !relClose(got, want, 1e-12) && !(math.IsInf(got, -1) && math.IsInf(want, -1)) {
						t.Fatalf("rep %d: after the sweep LogLik %.15g, full pass %.15g", rep, got, want)
					}
				}
				// The local updates still work after a sweep.
				v := randomTreeNode(rng, tr)
				old := m.Detach(v)
				m.Attach(v, old)
				if got, want := m.LogLik(), fresh(t, m); !relClose(got, want, 1e-12) {
					t.Fatalf("detach and attach after the sweeps: LogLik %.15g, full pass %.15g", got, want)
				}
				e := m.TimeEval(tr.Root())
				if got, want := e.LogLik(tr.Time(tr.Root())), m.LogLik(); !relClose(got, want, 1e-10) {
					t.Fatalf("TimeEval after the sweeps: %.15g, LogLik %.15g", got, want)
				}
			})
		}
	}
}
