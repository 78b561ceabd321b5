package bp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// denseUnitStats returns, per dimension, q = xᵀ K⁻¹ x, c = −(n/2) log 2π −
// (1/2) log det K and n for the observed entries x of that dimension, K
// their covariance at unit variance (t of the lowest common ancestor),
// by a Cholesky factorisation of the dense matrix.
func denseUnitStats(t *testing.T, m *Model) (q, c []float64, n []int) {
	t.Helper()
	D := m.Dims()
	q, c, n = make([]float64, D), make([]float64, D), make([]int, D)
	for d := range D {
		rows, y, _ := observedRows(m, d)
		if len(rows) == 0 {
			continue
		}
		var ch mat.Cholesky
		if !ch.Factorize(densetest.Cov(m.Tree(), 1, rows, nil)) {
			t.Fatal("dense covariance not positive definite")
		}
		z := mat.NewVecDense(len(y), nil)
		if err := ch.SolveVecTo(z, mat.NewVecDense(len(y), y)); err != nil {
			t.Fatal(err)
		}
		q[d] = mat.Dot(mat.NewVecDense(len(y), y), z)
		n[d] = len(rows)
		c[d] = -0.5*float64(n[d])*math.Log(2*math.Pi) - 0.5*ch.LogDet()
	}
	return q, c, n
}

// TestUnitStatsMatchesDense checks UnitStats against dense linear algebra
// (xᵀK⁻¹x, log det K, the count of observed entries), with missing entries
// that must not count in n, and checks that the split reproduces LogLik at
// spread per-dimension variances.
func TestUnitStatsMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 8))
	for _, tc := range treeCases {
		for _, N := range []int{1, 2, 3, 7, 25} {
			for _, D := range []int{1, 3} {
				for _, pMiss := range []float64{0, 0.3, 1} {
					t.Run(fmt.Sprintf("%s/N=%d/D=%d/miss=%v", tc.name, N, D, pMiss), func(t *testing.T) {
						tr := tc.gen(rng, N)
						m := New(tr, D)
						randomEvidence(t, rng, m, pMiss, 0)
						s2 := spreadVariances(rng, D)
						setVariances(t, m, s2)
						q, c, n := make([]float64, D), make([]float64, D), make([]int, D)
						if err := m.UnitStats(q, c, n); err != nil {
							t.Fatal(err)
						}
						wq, wc, wn := denseUnitStats(t, m)
						ll := 0.0
						for d := range D {
							if n[d] != wn[d] || !relClose(q[d], wq[d], 1e-9) || !relClose(c[d], wc[d], 1e-9) {
								t.Errorf("dim %d: q %.15g c %.15g n %d, dense %.15g %.15g %d", d, q[d], c[d], n[d], wq[d], wc[d], wn[d])
							}
							ll += c[d] - 0.5*float64(n[d])*math.Log(s2[d]) - q[d]/(2*s2[d])
						}
						if got := m.LogLik(); !relClose(ll, got, 1e-9) {
							t.Errorf("split log likelihood %.15g, LogLik %.15g", ll, got)
						}
					})
				}
			}
		}
	}
}

// TestUnitStatsCounts checks n by counting: every observed entry, no
// missing one.
func TestUnitStatsCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 9))
	const N, D = 40, 3
	tr := genPYDT(rng, N, 1, 0, 0)
	m := New(tr, D)
	want := make([]int, D)
	for i := range N {
		for d := range D {
			x := rng.NormFloat64()
			if (i+d)%3 == 0 {
				x = math.NaN()
			} else {
				want[d]++
			}
			if err := m.Observe(pydt.NodeID(i), d, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	q, c, n := make([]float64, D), make([]float64, D), make([]int, D)
	if err := m.UnitStats(q, c, n); err != nil {
		t.Fatal(err)
	}
	for d := range D {
		if n[d] != want[d] {
			t.Errorf("dim %d: n = %d, want %d observed entries", d, n[d], want[d])
		}
	}
}

// TestUnitStatsRefuses checks the errors: noisy evidence, slices of the
// wrong length, an edge of zero length, and exactly observed values that
// meet through edges whose length underflows.
func TestUnitStatsRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 10))
	tr := genPYDT(rng, 8, 1, 0, 0)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0.2, 0)
	q, c, n := make([]float64, 2), make([]float64, 2), make([]int, 2)
	if err := m.UnitStats(q[:1], c, n); err == nil {
		t.Error("short q: no error")
	}
	if err := m.SetEvidence(3, 1, 0.5, 2); err != nil {
		t.Fatal(err)
	}
	if err := m.UnitStats(q, c, n); !errors.Is(err, ErrNotExact) {
		t.Errorf("noisy evidence: error %v, want ErrNotExact", err)
	}
	if q[0] != 0 || c[0] != 0 || n[0] != 0 {
		t.Errorf("after an error q, c, n = %v, %v, %v, want zeros", q, c, n)
	}
	if err := m.Observe(3, 1, 0.5); err != nil {
		t.Fatal(err)
	}
	if err := m.UnitStats(q, c, n); err != nil {
		t.Fatal(err)
	}
	// A branch point at its parent's time.
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) && v != tr.Root() {
			old := tr.Time(v)
			tr.SetTime(v, tr.ParentTime(v))
			if err := m.UnitStats(q, c, n); !errors.Is(err, ErrZeroEdge) {
				t.Errorf("zero-length edge: error %v, want ErrZeroEdge", err)
			}
			tr.SetTime(v, old)
			break
		}
	}
	// ((1,2)@s=900, 3)@t=0.5: leaves 1 and 2 meet through edges of length
	// 0 in float64.
	tr3 := pydt.New(3)
	tr3.Plant(0)
	tr3.Attach(2, pydt.Position{Node: 0, Time: pydt.TimeAt(0.5)})
	tr3.Attach(1, pydt.Position{Node: 0, Time: pydt.TimeFromS(900)})
	m3 := New(tr3, 1)
	q1, c1, n1 := make([]float64, 1), make([]float64, 1), make([]int, 1)
	for _, y := range [][]float64{{0.3, -0.4, 1.1}, {0.3, 0.3, 1.1}} {
		for i, v := range y {
			if err := m3.Observe(pydt.NodeID(i), 0, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := m3.UnitStats(q1, c1, n1); !errors.Is(err, ErrNoDensity) {
			t.Errorf("values %v meeting through underflowing edges: error %v, want ErrNoDensity", y, err)
		}
	}
	// The same tree with leaf 2 missing has a density.
	if err := m3.Observe(1, 0, math.NaN()); err != nil {
		t.Fatal(err)
	}
	if err := m3.UnitStats(q1, c1, n1); err != nil || n1[0] != 2 {
		t.Errorf("leaf 2 missing: n = %d, error %v; want 2, nil", n1[0], err)
	}
}
