package bp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// msg returns the mean and variance of v's upward message.
func (m *Model) msg(v pydt.NodeID) (mean, variance []float64) {
	o := m.off(v)
	return m.nr[o : o+m.d], m.nr[o+m.d : o+2*m.d]
}

// prepareDown checks a destination of Cap()·D entries, fills it with NaN and
// leaves the nodes of the rooted tree in m.order, parents before children.
// It reports an edge of non-positive length as an error.
func (m *Model) prepareDown(what string, dst ...[]float64) error {
	m.flush()
	want := m.tr.Cap() * m.d
	for _, s := range dst {
		if len(s) != want {
			return fmt.Errorf("bp: %s needs slices of length Cap()·D = %d, got %d", what, want, len(s))
		}
		for i := range s {
			s[i] = math.NaN()
		}
	}
	if m.tr.Root() == pydt.NoNode {
		m.order = m.order[:0]
		return nil
	}
	if ll := m.LogLik(); math.IsInf(ll, 0) || math.IsNaN(ll) {
		err := m.Err()
		if err == nil {
			err = fmt.Errorf("%w: exactly observed values differ across edges whose length underflows float64", ErrNoDensity)
		}
		return fmt.Errorf("bp: %s: %w", what, err)
	}
	m.order = m.tr.PreOrder(m.order[:0])
	return nil
}

// parentIn returns the entries of c's parent in x (indexed v*D+d, as the
// downward pass writes them) and the parent's time; for the root, those of
// the origin: location 0 exactly (variance 0), at time 0.
func (m *Model) parentIn(c pydt.NodeID, x []float64) ([]float64, pydt.Time) {
	p := m.tr.Parent(c)
	if p == pydt.NoNode {
		return m.orig[:m.d], pydt.Origin // zeros
	}
	i := int(p) * m.d
	return x[i : i+m.d], m.tr.Time(p)
}

// Marginals runs the downward pass and writes, for every node v of the tree
// and dimension d, the posterior mean and variance of x_{v,d} given all the
// evidence to mean[v*D+d] and variance[v*D+d]. Both slices must have length
// Cap()·D; entries of nodes that are not in the tree below the root are set
// to NaN. Observed leaf entries get their value and variance 0. Cost O(N·D),
// no allocation.
func (m *Model) Marginals(mean, variance []float64) error {
	if err := m.prepareDown("Marginals", mean, variance); err != nil {
		return err
	}
	tr, d := m.tr, m.d
	// x_c given x_p and the evidence below c is N(k x_p + (1-k) m_c, s k)
	// with k = v_c/(v_c+s); the marginal follows by averaging over x_p. The
	// root's parent is the origin: x = 0 exactly.
	s2 := m.s2
	for _, c := range m.order {
		pm, tp := m.parentIn(c, mean)
		pv, _ := m.parentIn(c, variance)
		l := tr.Time(c).Since(tp)
		i := int(c) * d
		cm, cv := m.msg(c)
		om, ov := mean[i:i+d], variance[i:i+d]
		for k := range pm {
			s := s2[k] * l
			v := cv[k]
			if v == inf {
				om[k], ov[k] = pm[k], pv[k]+s
				continue
			}
			if v == 0 {
				// Exact evidence below (an edge of zero length included).
				om[k], ov[k] = cm[k], 0
				continue
			}
			w := v / (v + s)
			om[k] = w*pm[k] + s/(v+s)*cm[k]
			ov[k] = w*w*pv[k] + s*w
		}
	}
	return nil
}

// SampleLocations draws all node locations jointly from their posterior
// given the evidence, by backward sampling: each node, parents first, given
// its parent's draw (the origin x = 0 for the root) and its own upward
// message. It writes x_{v,d} to dst[v*D+d]; dst must have length Cap()·D,
// and entries of nodes not in the tree below the root are set to NaN.
// Observed leaf entries get their observed values; missing leaf entries
// (and leaves with finite-precision evidence) get draws from their
// conditional, which is how imputation works. No allocation.
func (m *Model) SampleLocations(rng *rand.Rand, dst []float64) error {
	if err := m.prepareDown("SampleLocations", dst); err != nil {
		return err
	}
	tr, d := m.tr, m.d
	s2 := m.s2
	for _, c := range m.order {
		px, tp := m.parentIn(c, dst)
		l := tr.Time(c).Since(tp)
		i := int(c) * d
		cm, cv := m.msg(c)
		ox := dst[i : i+d]
		for k := range px {
			s := s2[k] * l
			sd := math.Sqrt(s)
			v := cv[k]
			switch {
			case v == inf:
				ox[k] = px[k] + sd*rng.NormFloat64()
			case v == 0:
				ox[k] = cm[k]
			default:
				w := v / (v + s)
				ox[k] = w*px[k] + s/(v+s)*cm[k] + math.Sqrt(s*w)*rng.NormFloat64()
			}
		}
	}
	return nil
}

// SuffStats returns the sufficient statistics of the Gibbs update of the
// precision 1/σ² shared by every dimension, given the locations x (indexed
// v*D+d, as SampleLocations writes them): ss = Σ ||x_b − x_a||² / (2 (t_b −
// t_a)) over every edge [a b] of the tree, the edge from the origin (x = 0,
// t = 0) to the root included, and n, the number of (edge, dimension) terms
// in that sum. With a Gamma(a, b) prior on 1/σ² the conditional is
// Gamma(a + n/2, b + ss) (NOTES.md, erratum 3). It is the sum over d of
// what SuffStatsDims gives; it does not depend on the model's variances.
//
// Every location drawn by SampleLocations counts, missing leaf entries
// included, so n = (number of edges)·D. To integrate some locations out
// instead, set them to NaN: a term whose lower end is NaN is skipped. The
// locations below a NaN entry must then be NaN too (an error otherwise).
// An edge whose length underflows float64 to 0 (both ends beyond
// 1-t ≈ 5e-324) is skipped too: its two ends are drawn equal, and the
// ratio ||x_b − x_a||²/(t_b − t_a) it would contribute is not
// representable. Edges whose lower end is not strictly after the upper are
// an error naming the node.
func (m *Model) SuffStats(x []float64) (ss float64, n int, err error) {
	err = m.eachEdge(x, "SuffStats", func(l float64, sq []float64) {
		var part float64
		for _, q := range sq {
			if !math.IsNaN(q) {
				part += q
				n++
			}
		}
		ss += part / (2 * l)
	})
	if err != nil {
		return 0, 0, err
	}
	return ss, n, nil
}

// SuffStatsDims is SuffStats per dimension, for the Gibbs update of
// per-dimension precisions 1/σ²_d (see SetVariances): it writes ss[d] =
// Σ (x_{b,d} − x_{a,d})² / (2 (t_b − t_a)) over the edges [a b] of the
// tree, the edge from the origin included, and n[d], the number of terms
// in that sum. With independent Gamma(a_d, b_d) priors on the precisions,
// the conditional of 1/σ²_d given the locations is Gamma(a_d + n[d]/2,
// b_d + ss[d]). ss and n must have length D; they are overwritten. NaN
// locations and edges of zero length are skipped, and edges of
// non-positive length are an error, as in SuffStats. No allocation.
func (m *Model) SuffStatsDims(x, ss []float64, n []int) error {
	if len(ss) != m.d || len(n) != m.d {
		return fmt.Errorf("bp: SuffStatsDims needs ss and n of length D = %d, got %d and %d", m.d, len(ss), len(n))
	}
	for k := range ss {
		ss[k], n[k] = 0, 0
	}
	err := m.eachEdge(x, "SuffStatsDims", func(l float64, sq []float64) {
		for k, q := range sq {
			if !math.IsNaN(q) {
				ss[k] += q / (2 * l)
				n[k]++
			}
		}
	})
	if err != nil {
		for k := range ss {
			ss[k], n[k] = 0, 0
		}
	}
	return err
}

// eachEdge calls fn for every edge [a b] of the tree below the root (the
// edge from the origin to the root included) whose length l is not 0, with
// sq[k] = (x_{b,k} − x_{a,k})², or NaN where x_{b,k} is NaN; sq is scratch
// space valid during the call. It checks x's length and reports an edge of
// non-positive length, or a NaN location above one that is not, as an
// error for the method what.
func (m *Model) eachEdge(x []float64, what string, fn func(l float64, sq []float64)) error {
	tr, d := m.tr, m.d
	if len(x) != tr.Cap()*d {
		return fmt.Errorf("bp: %s needs locations of length Cap()·D = %d, got %d", what, tr.Cap()*d, len(x))
	}
	if tr.Root() == pydt.NoNode {
		return nil
	}
	sq := m.sq
	m.order = tr.PreOrder(m.order[:0])
	for _, b := range m.order {
		a := tr.Parent(b)
		if !tr.ParentTime(b).Before(tr.Time(b)) {
			return m.edgeError(b, tr.BranchLength(b))
		}
		l := tr.BranchLength(b)
		if l == 0 {
			continue
		}
		xb := x[int(b)*d : int(b)*d+d]
		for k, xv := range xb {
			if math.IsNaN(xv) {
				sq[k] = xv
				continue
			}
			xa := 0.0
			if a != pydt.NoNode {
				xa = x[int(a)*d+k]
				if math.IsNaN(xa) {
					return fmt.Errorf("bp: %s: location of node %d, dimension %d, is NaN but its child %d's is not", what, a, k, b)
				}
			}
			diff := xv - xa
			sq[k] = diff * diff
		}
		fn(l, sq)
	}
	return nil
}
