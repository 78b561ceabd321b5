package bp

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Benchmark trees come from the generative process: "ddt" (c = 1,
// α = β = 0) is binary and the deepest (mean leaf depth ≈ 33 at N = 10⁴),
// "pydt" (c = 1, α = 0.5, β = 0.3) multifurcates (≈ 0.53 N branch points,
// mean depth ≈ 8 at N = 10⁴). They are built once and cloned.
var benchTrees sync.Map

var benchShapes = []struct {
	name           string
	c, alpha, beta float64
}{{"ddt", 1, 0, 0}, {"pydt", 1, 0.5, 0.3}}

func benchTree(shape, n int) *pydt.Tree {
	key := [2]int{shape, n}
	if tr, ok := benchTrees.Load(key); ok {
		return tr.(*pydt.Tree).Clone()
	}
	s := benchShapes[shape]
	tr := genPYDT(rand.New(rand.NewPCG(uint64(n), 99)), n, s.c, s.alpha, s.beta)
	benchTrees.Store(key, tr)
	return tr.Clone()
}

func benchModel(b *testing.B, shape, n, D int) *Model {
	b.Helper()
	tr := benchTree(shape, n)
	m := New(tr, D)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, n*D)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	if err := m.ObserveMatrix(x); err != nil {
		b.Fatal(err)
	}
	if err := m.Recompute(); err != nil {
		b.Fatal(err)
	}
	return m
}

var benchSizes = []int{100, 1000, 10000, 100000}

func forAll(b *testing.B, f func(b *testing.B, m *Model)) {
	for shape, s := range benchShapes {
		for _, n := range benchSizes {
			for _, D := range []int{2, 10} {
				b.Run(fmt.Sprintf("%s/N=%d/D=%d", s.name, n, D), func(b *testing.B) {
					m := benchModel(b, shape, n, D)
					f(b, m)
				})
			}
		}
	}
}

// BenchmarkRecompute is a full upward pass.
func BenchmarkRecompute(b *testing.B) {
	forAll(b, func(b *testing.B, m *Model) {
		for b.Loop() {
			_ = m.Recompute()
		}
	})
}

// randomLeafMove detaches a random leaf and re-attaches it at a random
// position (a branch point or a point on an edge), then reads LogLik.
func randomLeafMove(rng *rand.Rand, m *Model) {
	tr := m.Tree()
	v := pydt.NodeID(rng.IntN(tr.NumLeaves()))
	m.Detach(v)
	var pos pydt.Position
	for {
		u := pydt.NodeID(rng.IntN(tr.Cap()))
		if u == v || !tr.InUse(u) {
			continue
		}
		if !tr.IsLeaf(u) && rng.IntN(3) == 0 {
			pos = pydt.Position{Node: u, AtNode: true}
			break
		}
		lo, hi := tr.ParentTime(u), tr.Time(u)
		t := interp(lo, hi, 0.05+0.9*rng.Float64())
		if lo.Before(t) && t.Before(hi) {
			pos = pydt.Position{Node: u, Time: t}
			break
		}
	}
	m.Attach(v, pos)
	_ = m.LogLik()
}

// BenchmarkDetachAttach is one local move: Detach, Attach elsewhere, LogLik.
func BenchmarkDetachAttach(b *testing.B) {
	forAll(b, func(b *testing.B, m *Model) {
		rng := rand.New(rand.NewPCG(3, 4))
		for b.Loop() {
			randomLeafMove(rng, m)
		}
	})
}

// BenchmarkLogLikIfAttached scores one candidate position for a detached
// leaf.
func BenchmarkLogLikIfAttached(b *testing.B) {
	forAll(b, func(b *testing.B, m *Model) {
		rng := rand.New(rand.NewPCG(5, 6))
		tr := m.Tree()
		v := pydt.NodeID(0)
		m.Detach(v)
		const k = 1024
		cands := make([]pydt.Position, k)
		for i := range cands {
			cands[i] = randomPosition(rng, tr, v)
		}
		i := 0
		for b.Loop() {
			_ = m.LogLikIfAttached(v, cands[i%k])
			i++
		}
	})
}

// BenchmarkDetachReattach is the local update of a rejected subtree move:
// detach a random leaf and attach it where it was, then read LogLik. The
// tree keeps the shape drawn from the generative process.
func BenchmarkDetachReattach(b *testing.B) {
	forAll(b, func(b *testing.B, m *Model) {
		rng := rand.New(rand.NewPCG(7, 8))
		n := m.Tree().NumLeaves()
		for b.Loop() {
			v := pydt.NodeID(rng.IntN(n))
			old := m.Detach(v)
			m.Attach(v, old)
			_ = m.LogLik()
		}
	})
}

// BenchmarkTimeEval is the likelihood part of slice sampling one branch
// point's time: target the evaluator, score 8 candidate times.
func BenchmarkTimeEval(b *testing.B) {
	forAll(b, func(b *testing.B, m *Model) {
		rng := rand.New(rand.NewPCG(9, 10))
		tr := m.Tree()
		for b.Loop() {
			var v pydt.NodeID
			for {
				v = pydt.NodeID(tr.NumLeaves() + rng.IntN(tr.Cap()-tr.NumLeaves()))
				if tr.InUse(v) {
					break
				}
			}
			e := m.TimeEval(v)
			lo, hi := e.Bounds()
			for k := range 8 {
				_ = e.LogLik(interp(lo, hi, (float64(k)+0.5)/8))
			}
		}
	})
}

// BenchmarkNew builds a model and computes its messages (New,
// ObserveMatrix, Recompute): with -benchmem, B/op is the memory a kept
// model allocates, most of it held for the model's life.
func BenchmarkNew(b *testing.B) {
	for shape, s := range benchShapes {
		for _, n := range []int{1000, 10000} {
			for _, D := range []int{2, 10} {
				b.Run(fmt.Sprintf("%s/N=%d/D=%d", s.name, n, D), func(b *testing.B) {
					tr := benchTree(shape, n)
					x := make([]float64, n*D)
					rng := rand.New(rand.NewPCG(1, 2))
					for i := range x {
						x[i] = rng.NormFloat64()
					}
					b.ReportAllocs()
					for b.Loop() {
						m := New(tr, D)
						if err := m.ObserveMatrix(x); err != nil {
							b.Fatal(err)
						}
						if err := m.Recompute(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
