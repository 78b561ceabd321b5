package inference

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// probitSubtreeStep is a joint move of the tree and the auxiliaries u of a
// threshold likelihood (Probit): subtree moves in the non-centred
// (Geweke-Hajivassiliou-Keane) coordinates of the moved leaves' u, so that
// the tree moves no longer condition on u, which given the tree carries far
// more than Y (docs/probit-mixing.md, "Subtree moves with u transported").
//
// Given the tree T and the variances, the columns are independent and a
// column's observed auxiliaries are u ~ N(0, K), K = σ²C + I, restricted to
// the orthant of Y's signs. For a subtree S (k leaves) attached at the
// point a (time t_a) of the remaining tree T_r, order the leaves outside S
// first and S's leaves last, by index. By the chain rule p(u | T) =
// p(u_{-S} | T_r) p(u_S | u_{-S}, T): the first factor, and the sequential
// conditionals of every leaf outside S, are the same for every attachment
// point. Given u_{-S}, the location x_a at the attachment point is
// Gaussian, N(μ_d, w_d) (bp.Model.PointMarginal: the evidence of T_r, u with
// unit noise), and
//
//	u_S | u_{-S}, T ~ N(μ_d 1, w_d 11ᵀ + σ²_d W + I),  W_ij = t(lca(i, j)) − t_a
//
// (W_ii = 1 − t_a): one k×k Cholesky factor L per column, shared by the
// columns with the same w_d and σ²_d (all, without missing data). GHK
// encodes u_S under T into the quantiles ξ of each u_j in its truncated
// conditional given the earlier ones, and decodes ξ under T' = T_r + S at
// the proposed point into u'_S. The map u_S → u'_S is the inverse of the
// reverse move's (same S, same T_r), with Jacobian Π_j f_j(u_j)/f'_j(u'_j),
// f_j = N(u_j; m_j, L_jj²)/Φ_j the truncated conditionals, so the
// Metropolis-Hastings ratio is
//
//	[p(T') q(T | T_r)] / [p(T) q(T' | T_r)] · (N+I−1)/(N+I'−1) · Π_{j∈S, d} Φ'_jd / Φ_jd,
//
// Φ_jd = Φ(Side(y_jd)·m_jd/L_jj) the probability of u_jd's sign given the
// earlier entries: the densities of u cancel against the Jacobian. The
// proposal is the prior's one-point process (treemove.JointSubtreeMove),
// whose prior and proposal terms are those of the tree's subtree move.
//
// Cost per proposal: two PointMarginal queries (O(depth·D)), two k×k
// Cholesky factors per distinct (w_d, σ²_d), and O(k²·D) plus a few special
// functions per entry for the GHK passes. Subtrees of more than
// subtreeMaxLeaves leaves are not moved (their draws are null moves).
type probitSubtreeStep struct {
	k  int    // the PYDT's index in Model.Trees
	of string // " of Y" in a model with several PYDTs
	// maxLeaves bounds the size of the moved subtrees; perLeaf is the
	// number of proposals per leaf and update.
	maxLeaves int
	perLeaf   float64
}

// subtreeMaxLeaves bounds the subtrees probitSubtreeStep moves: the
// Cholesky factors cost k³ per distinct column, the GHK passes k² per
// column.
const subtreeMaxLeaves = 8

// probitSubtree returns the joint subtree move of the k-th PYDT when its
// leaf factor is a stdlib.ThresholdLeaf with data (the condition of
// hmc(u)).
func probitSubtree(m *Model, k int) (Updater, bool) {
	b := m.Trees[k]
	if b.Threshold() == nil || b.Data == nil || b.index != nil {
		return nil, false
	}
	return &probitSubtreeStep{k: k, of: dataOf(m, k), maxLeaves: subtreeMaxLeaves, perLeaf: 1}, true
}

// Name is "ghk(tree, u)": the tree moved with u in its non-centred
// (Geweke-Hajivassiliou-Keane) coordinates.
func (p *probitSubtreeStep) Name() string { return "ghk(tree, u" + p.of + ")" }

func (p *probitSubtreeStep) Explain() string {
	return fmt.Sprintf("subtree moves of at most %d leaves (re-attachment by the generative process, Metropolis-Hastings) "+
		"with the moved leaves' auxiliaries u%s carried in their non-centred coordinates (GHK quantiles given the other leaves): "+
		"the tree moves without conditioning on u; the target is the prior times Π Φ, the probability of each moved sign",
		p.maxLeaves, p.of)
}

// subtreeScratch is a chain's scratch space of probitSubtreeStep, and the
// treemove.JointScore it hands to the tree sampler.
type subtreeScratch struct {
	t     *chainTree
	y     []float64 // the data
	th    stdlib.ThresholdLeaf
	d     int
	stack []pydt.NodeID
	// leaves are S's leaves in index order, lca their lowest common
	// ancestors' times (k×k, off the diagonal).
	leaves []int
	lca    []pydt.Time
	// The Gaussian of the attachment point at the current and the proposed
	// position (D values each).
	mu0, w0, mu1, w1 []float64
	// Cholesky factors (k×k) and the matrix they factor.
	l0, l1, kmat []float64
	obs          []int     // per column: the positions in leaves observed
	q            []float64 // k per column: log quantiles
	up           []bool
	e            []float64   // k: the whitened entries of the column
	fresh, saved []float64   // k·D: the decoded u', and u kept for Revert
	last         []lastEntry // per column: its last entry, for Prepare
}

func (p *probitSubtreeStep) update(ch *Chain) error {
	t := ch.trees[p.k]
	b := t.b
	sc := &ch.probit.sub
	sc.t, sc.y, sc.th, sc.d = t, ch.st.Env.Values[b.Data.ID], b.Threshold(), b.D
	d := b.D
	sc.mu0, sc.w0 = grow(sc.mu0, d), grow(sc.w0, d)
	sc.mu1, sc.w1 = grow(sc.mu1, d), grow(sc.w1, d)
	n := max(1, int(p.perLeaf*float64(b.N)+0.5))
	for range n {
		proposed, accepted, err := t.moves.JointSubtreeMove(p.maxLeaves, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name(), err)
		}
		if proposed {
			ch.countStep(p.Name(), accepted)
		}
		if accepted {
			ch.jointAccepted++
		}
	}
	return nil
}

// collect sets sc.leaves to the leaves below v in index order and sc.lca
// to their pairwise lowest common ancestors' times.
func (sc *subtreeScratch) collect(tr *pydt.Tree, v pydt.NodeID) {
	sc.leaves = sc.leaves[:0]
	sc.stack = append(sc.stack[:0], v)
	for len(sc.stack) > 0 {
		x := sc.stack[len(sc.stack)-1]
		sc.stack = sc.stack[:len(sc.stack)-1]
		if tr.IsLeaf(x) {
			sc.leaves = append(sc.leaves, int(x))
			continue
		}
		for c := tr.FirstChild(x); c != pydt.NoNode; c = tr.NextSibling(c) {
			sc.stack = append(sc.stack, c)
		}
	}
	ls := sc.leaves
	for i := 1; i < len(ls); i++ { // insertion sort: k is small
		for j := i; j > 0 && ls[j] < ls[j-1]; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	k := len(ls)
	sc.lca = grow(sc.lca, k*k)
	for i := range k {
		for j := i + 1; j < k; j++ {
			a := lowestCommon(tr, pydt.NodeID(ls[i]), pydt.NodeID(ls[j]))
			sc.lca[i*k+j], sc.lca[j*k+i] = tr.Time(a), tr.Time(a)
		}
	}
}

// lowestCommon returns the lowest common ancestor of a and b.
func lowestCommon(tr *pydt.Tree, a, b pydt.NodeID) pydt.NodeID {
	for x := a; x != pydt.NoNode; x = tr.Parent(x) {
		for y := b; y != pydt.NoNode; y = tr.Parent(y) {
			if x == y {
				return x
			}
		}
	}
	return pydt.NoNode
}

// attachTime returns the time of the attachment point pos.
func attachTime(tr *pydt.Tree, pos pydt.Position) pydt.Time {
	if pos.AtNode {
		return tr.Time(pos.Node)
	}
	return pos.Time
}

// factorAt writes into l the Cholesky factor of w·11ᵀ + s2·W + I over the
// observed positions sc.obs of S's leaves, W_ij = t(lca) − ta (1 − ta on
// the diagonal), and reports false when it is not numerically positive
// definite.
func (sc *subtreeScratch) factorAt(l []float64, ta pydt.Time, w, s2 float64) bool {
	k, m := len(sc.leaves), len(sc.obs)
	km := sc.kmat[:m*m]
	diag := pydt.Leaf.Since(ta)
	for a, i := range sc.obs {
		for c, j := range sc.obs[:a+1] {
			x := diag
			if i != j {
				x = sc.lca[i*k+j].Since(ta)
			}
			v := w + s2*x
			if a == c {
				v++
			}
			km[a*m+c] = v
		}
	}
	return choleskyDense(l, km, m)
}

// choleskyDense writes into l the lower Cholesky factor of the m×m matrix
// a (lower triangle read, row major) and reports false when a is not
// numerically positive definite. l may be a itself: each entry of a is
// read just before the same entry of l is written.
func choleskyDense(l, a []float64, m int) bool {
	for j := range m {
		for i := j; i < m; i++ {
			s := a[i*m+j]
			li, lj := l[i*m:i*m+j], l[j*m:j*m+j]
			for k := range j {
				s -= li[k] * lj[k]
			}
			if i == j {
				if !(s > 0) || math.IsInf(s, 1) {
					return false
				}
				l[j*m+j] = math.Sqrt(s)
			} else {
				l[i*m+j] = s / l[j*m+j]
			}
		}
	}
	return true
}

// Ratio returns log Π Φ'_jd/Φ_jd for moving the detached subtree v from old
// to pos, and keeps what Prepare needs; -Inf when u_S is outside the
// orthant, a covariance cannot be factorised or a decoded entry is not
// finite or on the wrong side (rounding far in a tail).
//
// Φ_j needs only the conditional mean m_j, that is the whitened entries
// before j: the current side costs one log Φ per entry, and the proposed
// side decodes every entry of a column but the last, whose quantile and
// decoding only an accepted proposal needs (Prepare). For a single leaf
// (k = 1, half the proposals) the ratio is then two log Φ per column.
func (sc *subtreeScratch) Ratio(v pydt.NodeID, old, pos pydt.Position) float64 {
	t := sc.t
	tr, lik := t.Tree, t.lik
	sc.collect(tr, v)
	if err := lik.PointMarginal(old, sc.mu0, sc.w0); err != nil {
		return math.Inf(-1)
	}
	if err := lik.PointMarginal(pos, sc.mu1, sc.w1); err != nil {
		return math.Inf(-1)
	}
	k, d := len(sc.leaves), sc.d
	t0, t1 := attachTime(tr, old), attachTime(tr, pos)
	sc.l0, sc.l1, sc.kmat = grow(sc.l0, k*k), grow(sc.l1, k*k), grow(sc.kmat, k*k)
	sc.q, sc.up, sc.e = grow(sc.q, k), grow(sc.up, k), grow(sc.e, k)
	sc.fresh = grow(sc.fresh, k*d)
	sc.last = grow(sc.last, d)
	s2s := lik.Variances()
	// The factors of the previous column, reused while the column's
	// observed rows, w and σ² are the same.
	keyFull, keyW0, keyW1, keyS2 := false, math.NaN(), math.NaN(), math.NaN()
	sum := 0.0
	for dim := range d {
		sc.obs = sc.obs[:0]
		for j, i := range sc.leaves {
			if !math.IsNaN(sc.y[i*d+dim]) {
				sc.obs = append(sc.obs, j)
			}
		}
		m := len(sc.obs)
		sc.last[dim].j = -1
		if m == 0 {
			continue
		}
		full, s2 := m == k, s2s[dim]
		if !full || !keyFull || sc.w0[dim] != keyW0 || sc.w1[dim] != keyW1 || s2 != keyS2 {
			if !sc.factorAt(sc.l0, t0, sc.w0[dim], s2) || !sc.factorAt(sc.l1, t1, sc.w1[dim], s2) {
				return math.Inf(-1)
			}
			keyFull, keyW0, keyW1, keyS2 = full, sc.w0[dim], sc.w1[dim], s2
		}
		// Encode u_S under the current attachment point: the quantiles
		// of all but the last entry now, the last one's in Prepare.
		l := sc.l0
		lst := &sc.last[dim]
		for a, j := range sc.obs {
			i := sc.leaves[j]
			mu := addCondMean(sc.mu0[dim], l[a*m:a*m+a], sc.e[:a])
			s, ljj := sc.th.Side(sc.y[i*d+dim]), l[a*m+a]
			e := (t.aux[i*d+dim] - mu) / ljj
			lo := -s * mu / ljj
			if !(s*e > lo) || math.IsInf(e, 0) {
				return math.Inf(-1) // outside the orthant
			}
			lpa := stdlib.LogNormCDF(-lo)
			sum -= lpa
			sc.e[a] = e
			if a == m-1 {
				lst.j, lst.lo, lst.e, lst.lpa, lst.s = j, lo, s*e, lpa, s
				break
			}
			sc.q[a], sc.up[a] = ghkEncode(lo, s*e, lpa)
			if !(sc.q[a] <= 0) {
				return math.Inf(-1)
			}
		}
		// Decode under the proposed one, all but the last entry.
		l = sc.l1
		for a, j := range sc.obs {
			i := sc.leaves[j]
			mu := addCondMean(sc.mu1[dim], l[a*m:a*m+a], sc.e[:a])
			s, ljj := sc.th.Side(sc.y[i*d+dim]), l[a*m+a]
			lo := -s * mu / ljj
			if a == m-1 {
				sum += stdlib.LogNormCDF(-lo)
				lst.mu, lst.ljj, lst.lo1 = mu, ljj, lo
				break
			}
			lpa, e := ghkStep(lo, sc.q[a], sc.up[a])
			e *= s
			u := mu + ljj*e
			if !(s*u > 0) || math.IsInf(u, 0) {
				return math.Inf(-1)
			}
			sum += lpa
			sc.e[a] = e
			sc.fresh[j*d+dim] = u
		}
	}
	if math.IsNaN(sum) {
		return math.Inf(-1)
	}
	return sum
}

// lastEntry is what Ratio keeps of the last observed entry of a column of
// S for Prepare: its position j in S's leaves (-1: none), its truncation
// point lo, whitened value e (times its side s) and log Φ(−lo) under the
// current attachment point, and its conditional mean, Cholesky diagonal
// and truncation point under the proposed one.
type lastEntry struct {
	j             int
	lo, e, lpa, s float64
	mu, ljj, lo1  float64
}

// Prepare encodes and decodes the last entry of every column of S, which
// Ratio left for an accepted proposal, and reports false (the proposal is
// then refused) when a decoded entry is not finite or on the wrong side.
func (sc *subtreeScratch) Prepare(pydt.NodeID) bool {
	d := sc.d
	for dim := range d {
		lst := &sc.last[dim]
		if lst.j < 0 {
			continue
		}
		q, up := ghkEncode(lst.lo, lst.e, lst.lpa)
		if !(q <= 0) {
			return false
		}
		_, e := ghkStep(lst.lo1, q, up)
		u := lst.mu + lst.ljj*lst.s*e
		if !(lst.s*u > 0) || math.IsInf(u, 0) || math.IsNaN(u) {
			return false
		}
		sc.fresh[lst.j*d+dim] = u
	}
	return true
}

// Commit writes the decoded auxiliaries of S's leaves and their evidence
// (mean u, precision 1, as hmc(u) does), keeping the old ones for Revert.
func (sc *subtreeScratch) Commit(pydt.NodeID) error {
	return sc.swap(true)
}

// Revert puts back the auxiliaries and evidence Commit replaced.
func (sc *subtreeScratch) Revert(pydt.NodeID) error {
	return sc.swap(false)
}

// swap sets the observed auxiliaries of S's leaves to sc.fresh (commit),
// saving them in sc.saved, or back to sc.saved.
func (sc *subtreeScratch) swap(commit bool) error {
	t, d := sc.t, sc.d
	sc.saved = grow(sc.saved, len(sc.leaves)*d)
	for j, i := range sc.leaves {
		for dim := range d {
			k := i*d + dim
			if math.IsNaN(sc.y[k]) {
				continue
			}
			u := sc.saved[j*d+dim]
			if commit {
				sc.saved[j*d+dim] = t.aux[k]
				u = sc.fresh[j*d+dim]
			}
			t.aux[k] = u
			if err := t.lik.SetEvidence(pydt.NodeID(i), dim, u, 1); err != nil {
				return err
			}
		}
	}
	return nil
}
