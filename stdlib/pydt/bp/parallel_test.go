package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/internal/cputime"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// sameRecords fails unless a and b, two models of the same tree, hold the
// same records bit for bit: every node's own record and every record of
// every segment tree.
func sameRecords(t *testing.T, a, b *Model) {
	t.Helper()
	tr := a.Tree()
	if x, y := tr.Newick(), b.Tree().Newick(); x != y {
		t.Fatalf("trees differ:\n%s\n%s", x, y)
	}
	same := func(what string, v pydt.NodeID, x, y []float64) {
		t.Helper()
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				t.Fatalf("%s of node %d, entry %d: %v (first) != %v (second)", what, v, k, x[k], y[k])
			}
		}
	}
	for id := range tr.Cap() {
		v := pydt.NodeID(id)
		if !tr.InUse(v) {
			continue
		}
		same("record", v, a.node(v), b.node(v))
		c := a.seg.capOf(v)
		if c != b.seg.capOf(v) {
			t.Fatalf("node %d: %d slots (first) != %d (second)", v, c, b.seg.capOf(v))
		}
		for i := 2; i < c; i++ {
			x, _, _ := a.heapRec(a.seg.node[v], i)
			y, _, _ := b.heapRec(b.seg.node[v], i)
			same(fmt.Sprintf("heap record %d", i), v, x, y)
		}
	}
	if x, y := a.LogLik(), b.LogLik(); math.Float64bits(x) != math.Float64bits(y) {
		t.Fatalf("LogLik %v (first) != %v (second)", x, y)
	}
}

// TestParallelRecomputeIdentical checks that a full pass shared between
// two workers gives the records of the sequential pass bit for bit, with
// both record layouts, detached subtrees and leaves, missing and noisy
// evidence, and local updates in between; and that both workers and the
// part above the cut had work (so that the comparison is not vacuous).
func TestParallelRecomputeIdentical(t *testing.T) {
	for _, tc := range treeCases {
		for _, n := range []int{40, 600} {
			for _, D := range []int{1, 3} {
				for _, relayout := range []bool{false, true} {
					name := fmt.Sprintf("%s/N=%d/D=%d/relayout=%v", tc.name, n, D, relayout)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(n), uint64(D)))
						tr := tc.gen(rng, n)
						seq, par := New(tr, D), New(tr.Clone(), D) // the same node IDs
						seq.SetWorkers(1)
						par.SetWorkers(2)
						if relayout {
							seq.relayoutBytes, par.relayoutBytes = 0, 0
						}
						randomEvidence(t, rand.New(rand.NewPCG(5, 6)), seq, 0.2, 0.3)
						randomEvidence(t, rand.New(rand.NewPCG(5, 6)), par, 0.2, 0.3)
						for step := range 20 {
							// Detach a subtree (and sometimes a leaf) in both,
							// run full passes, compare, re-attach.
							v := randomTreeNode(rng, tr)
							seq.Detach(v)
							par.Detach(v)
							if err := seq.Recompute(); err != nil {
								t.Fatal(err)
							}
							if err := par.Recompute(); err != nil {
								t.Fatal(err)
							}
							sameRecords(t, seq, par)
							if step == 0 && n >= 600 {
								ps := &par.par
								if len(ps.pieces[0]) == 0 || len(ps.pieces[1]) == 0 || len(ps.top) == 0 {
									t.Fatalf("pieces %d and %d, %d nodes above the cut: a worker or the top had nothing to do",
										len(ps.pieces[0]), len(ps.pieces[1]), len(ps.top))
								}
							}
							pos := randomPosition(rng, tr, v)
							seq.Attach(v, pos)
							par.Attach(v, pos)
							sameRecords(t, seq, par)
						}
						if err := seq.Recompute(); err != nil {
							t.Fatal(err)
						}
						if err := par.Recompute(); err != nil {
							t.Fatal(err)
						}
						sameRecords(t, seq, par)
						if got, want := par.LogLik(), fresh(t, par); !relClose(got, want, 1e-12) {
							t.Fatalf("LogLik %v, a fresh model's full pass %v", got, want)
						}
					})
				}
			}
		}
	}
}

// TestPassWorkers checks the setting of SetWorkers: one worker unless two
// or more are asked for, at most two.
func TestPassWorkers(t *testing.T) {
	m := New(pydt.New(2), 10)
	for _, tc := range []struct{ set, want int }{{-1, 1}, {0, 1}, {1, 1}, {2, 2}, {8, 2}} {
		m.SetWorkers(tc.set)
		if got := m.passWorkers(); got != tc.want {
			t.Errorf("SetWorkers(%d): %d workers, want %d", tc.set, got, tc.want)
		}
	}
}

// BenchmarkRecomputeWorkers is BenchmarkRecompute with one and two
// workers, to find where sharing the pass pays. Besides the
// wall time per pass it reports the process's CPU time per pass
// (cpu-ns/op): the second worker saves wall time only if it finds a free
// core, and costs CPU either way.
func BenchmarkRecomputeWorkers(b *testing.B) {
	for shape, s := range benchShapes {
		for _, n := range []int{300, 1000, 3000, 10000, 100000} {
			for _, D := range []int{2, 10} {
				for _, w := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/N=%d/D=%d/w=%d", s.name, n, D, w), func(b *testing.B) {
						m := benchModel(b, shape, n, D)
						m.SetWorkers(w)
						c0 := cputime.Process()
						for b.Loop() {
							_ = m.Recompute()
						}
						b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
					})
				}
			}
		}
	}
}
