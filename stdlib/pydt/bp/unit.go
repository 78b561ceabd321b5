package bp

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ErrNotExact is wrapped by the error UnitStats reports when a leaf has
// evidence of finite, positive precision (noise): the log likelihood then
// does not split into a power of the diffusion variance and a quadratic
// form in its reciprocal.
var ErrNotExact = errors.New("bp: evidence neither exact nor missing")

// UnitStats splits the log likelihood of leaves that are each observed
// exactly or missing (evidence of infinite or zero precision, per
// dimension) by its dependence on the diffusion variances. Every variance
// of the model is then σ²_d times an edge length, so that
//
//	LogLik = Σ_d [ c[d] − (n[d]/2) log σ²_d − q[d] / (2 σ²_d) ],
//
// where n[d] is the number of observed entries in dimension d, and, with
// K the covariance of those entries at unit variance (K_ij = t of the
// lowest common ancestor of leaves i and j) and x_d their values,
// q[d] = x_dᵀ K⁻¹ x_d and c[d] = −(n[d]/2) log 2π − (1/2) log det K.
// None of them depends on the model's variances. With a Gamma(a, b)
// prior on a precision 1/σ² shared by every dimension, its conditional
// given the tree, the locations integrated out, is therefore
// Gamma(a + Σn/2, b + Σq/2).
//
// UnitStats writes q, c and n, each of length D, from one pass over the
// tree planted at the root (detached subtrees do not count), O(N·D)
// without allocation once the model has made one such pass. It neither
// reads nor changes the messages. It returns an error, with q, c and n
// zero, when a leaf's evidence has finite positive precision (wrapping
// ErrNotExact), when an edge has non-positive length (ErrZeroEdge), and
// when exactly observed values meet through edges of length 0 (lengths
// that underflow float64: ErrNoDensity, the density being 0 or infinite).
func (m *Model) UnitStats(q, c []float64, n []int) error {
	if len(q) != m.d || len(c) != m.d || len(n) != m.d {
		return fmt.Errorf("bp: UnitStats needs q, c and n of length D = %d, got %d, %d and %d", m.d, len(q), len(c), len(n))
	}
	zero := func() {
		clear(q)
		clear(c)
		clear(n)
	}
	zero()
	if err := m.unitStats(q, c, n); err != nil {
		zero()
		return err
	}
	return nil
}

func (m *Model) unitStats(q, c []float64, n []int) error {
	tr, D := m.tr, m.d
	root := tr.Root()
	if root == pydt.NoNode {
		return nil
	}
	if len(m.unit) < tr.Cap()*2*D {
		m.unit = make([]float64, tr.Cap()*2*D)
	}
	// u holds per node the mean (D values) and the variance (D values) of
	// the upward message at unit variance, +Inf for no information.
	u := m.unit
	rec := func(v pydt.NodeID) ([]float64, []float64) {
		o := int(v) * 2 * D
		return u[o : o+D], u[o+D : o+2*D]
	}
	// logDet accumulates Σ log(tot) per dimension in c until the end.
	var err error
	mergeIn := func(am, av []float64, bm, bv []float64, l float64) {
		for d := range D {
			y := bv[d] + l
			if y == inf {
				continue
			}
			x := av[d]
			if x == inf {
				am[d], av[d] = bm[d], y
				continue
			}
			tot := x + y
			diff := bm[d] - am[d]
			if !(tot > 0) {
				if err == nil {
					if diff != 0 {
						err = fmt.Errorf("%w: exactly observed values differ where they meet through edges of length 0 (times with 1-t below 5e-324): zero density", ErrNoDensity)
					} else {
						err = fmt.Errorf("%w: exactly observed values coincide where they meet through edges of length 0 (times with 1-t below 5e-324): infinite density", ErrNoDensity)
					}
				}
				continue
			}
			q[d] += diff * diff / tot
			c[d] += math.Log(tot)
			n[d]++
			w := x / tot
			am[d] += w * diff
			av[d] = w * y
		}
	}
	m.order = tr.PreOrder(m.order[:0])
	for i := len(m.order) - 1; i >= 0; i-- {
		v := m.order[i]
		am, av := rec(v)
		if tr.IsLeaf(v) {
			for d := range D {
				mean, prec := m.Evidence(v, d)
				switch {
				case prec == 0:
					am[d], av[d] = 0, inf
				case math.IsInf(prec, 1):
					am[d], av[d] = mean, 0
				default:
					return fmt.Errorf("%w: leaf %s, dimension %d, has evidence of precision %v", ErrNotExact, tr.Label(v), d, prec)
				}
			}
			continue
		}
		for d := range D {
			am[d], av[d] = 0, inf
		}
		tv := tr.Time(v)
		for ch := tr.FirstChild(v); ch != pydt.NoNode; ch = tr.NextSibling(ch) {
			tc := tr.Time(ch)
			if !tv.Before(tc) {
				return m.edgeError(ch, tr.BranchLength(ch))
			}
			bm, bv := rec(ch)
			mergeIn(am, av, bm, bv, tc.Since(tv))
		}
		if err != nil {
			return err
		}
	}
	// The root's message meets the origin, x = 0 exactly, through the
	// edge from t = 0.
	tr0 := tr.Time(root)
	if !pydt.Origin.Before(tr0) {
		return m.edgeError(root, tr.BranchLength(root))
	}
	am, av := rec(root)
	zeros := m.unitZero() // the origin's message: mean 0, variance 0
	mergeIn(am, av, zeros, zeros, tr0.T())
	if err != nil {
		return err
	}
	for d := range D {
		c[d] = -0.5 * (float64(n[d])*log2Pi + c[d])
	}
	return nil
}

// unitZero returns D zeros (scratch of UnitStats).
func (m *Model) unitZero() []float64 {
	if len(m.unitZ) != m.d {
		m.unitZ = make([]float64, m.d)
	}
	clear(m.unitZ)
	return m.unitZ
}
