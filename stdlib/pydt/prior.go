package pydt

import (
	"fmt"
	"math"
)

// This file holds the prior density of a PYDT's tree structure and divergence
// times (Knowles & Ghahramani 2011, Section 3, with erratum 1 of the notes:
// the factor Gamma(1-beta)^(K_b-1) the printed structure term drops).
//
// For a tree whose internal node b has K_b children holding n_1..n_K leaves,
// m_b = sum n_l, the log density is the sum over internal nodes b of
//
//	log a(t_b) + sum_{k=3..K_b} log(alpha + (k-1) beta)
//	  + sum_l lgamma(n_l - beta) - lgamma(m_b + alpha) - (K_b-1) lgamma(1-beta)
//	  + (A(t_a) - A(t_b)) H_{m_b - 1}
//
// where a is b's parent (t_a = 0 for the root) and H is the table of
// Harmonic. Regrouping the last term by node gives the equivalent
// node-local form -A(t_b) J_b, J_b = H_{m_b-1} - sum_l H_{n_l-1}, in which t_b
// appears in node b's term only.

// CheckPrior reports whether (alpha, beta, div) are valid prior parameters,
// with an error naming the offending value.
func CheckPrior(alpha, beta float64, div Divergence) error {
	if err := CheckPitmanYor(alpha, beta); err != nil {
		return err
	}
	if div == nil {
		return fmt.Errorf("pydt: no divergence function")
	}
	if err := div.Check(); err != nil {
		return fmt.Errorf("pydt: divergence function %v: %w", div, err)
	}
	return nil
}

// LogPrior returns the log density of the tree structure and divergence times
// of tr under the PYDT with concentration alpha, discount beta and divergence
// function div. Every internal node contributes NodeLogPrior. h is a
// scratch table: it is reset to (alpha, beta) if it holds other parameters,
// and extended to the number of leaves.
//
// It returns -Inf when the density is zero: parameters outside their range
// (see CheckPrior), an empty tree, a branch point with fewer than two
// children, times not strictly increasing down the tree, a branch point at
// t = 1, or a multifurcation where alpha + 2 beta = 0. Subtrees detached from
// tr are ignored. It does not allocate once h is large enough.
func LogPrior(tr *Tree, alpha, beta float64, div Divergence, h *Harmonic) float64 {
	lp, sumS := logPriorS(tr, alpha, beta, div, h)
	return lp + sumS
}

// LogPriorS returns the log density of the tree structure and of the
// divergence times in the coordinates s_b = -log(1-t_b) that Time keeps:
// LogPrior less the Jacobian Σ_b s_b, formed without it. Where times lie
// close to t = 1, log a(t) and Σ_b s_b are large (s beyond 1e15 makes them
// swamp every other term in float64), while this density keeps its
// precision: it is the one to use as an MCMC target, for updates of the
// times in s and of any parameter (the Jacobian does not depend on them).
// Each branch point contributes, in the edge form of NodeEdgeLogPrior,
//
//	log dA/ds(t_b) + [structure of b] - (A(t_b) - A(t_a)) H_{m_b-1},
//
// the increments from Divergence.Increment. Its domain is LogPrior's.
func LogPriorS(tr *Tree, alpha, beta float64, div Divergence, h *Harmonic) float64 {
	lp, _ := logPriorS(tr, alpha, beta, div, h)
	return lp
}

// logPriorS returns LogPriorS and Σ_b s_b.
func logPriorS(tr *Tree, alpha, beta float64, div Divergence, h *Harmonic) (lp, sumS float64) {
	if tr.Root() == NoNode || CheckPrior(alpha, beta, div) != nil || !h.use(alpha, beta) {
		return math.Inf(-1), 0
	}
	h.Grow(tr.Count(tr.Root()))
	lg1b := lgamma(1 - beta)
	inv, isInv := div.(DivInv)
	logC := 0.0
	if isInv {
		logC = math.Log(inv.C)
	}
	root := tr.Root()
	for v := root; v != NoNode; v = priorNext(tr, root, v) {
		if tr.IsLeaf(v) {
			continue
		}
		s := nodeStructureCached(tr, v, lg1b, h)
		// Checking each branch point against its parent covers every
		// internal edge; edges into leaves need t_b < 1 only.
		if math.IsInf(s, -1) || !timesOrdered(tr, v, false) {
			return math.Inf(-1), 0
		}
		ta, tb := tr.ParentTime(v), tr.Time(v)
		var rate, inc float64
		if isInv {
			rate, inc = logC, inv.C*(tb.s-ta.s)
		} else {
			rate, inc = div.LogRateS(tb), div.Increment(ta, tb)
		}
		lp += s + rate - inc*h.H(tr.Count(v)-1)
		sumS += tb.s
	}
	return lp, sumS
}

// NodeLogPrior returns the log prior factor of the internal node b in its
// node-local form:
//
//	log a(t_b) + [structure of b] - A(t_b) J_b,
//
// [structure of b] being NodeLogStructure. The sum over all internal nodes is
// LogPrior, and b's time t_b appears in no other node's term, so a sampler
// that moves t_b alone needs only this term, at O(K_b) cost. J_b depends only
// on the leaf counts of b and of its children, so after a subtree move only
// the nodes on the paths to the detach and attach points (and a created or
// removed branch point) change.
//
// It returns -Inf when b has fewer than two children or its time is not
// strictly between its parent's and every child's. alpha, beta and div must
// be valid (CheckPrior); h is reset to (alpha, beta) if it differs.
func NodeLogPrior(tr *Tree, b NodeID, alpha, beta float64, div Divergence, h *Harmonic) float64 {
	if !h.use(alpha, beta) {
		return math.Inf(-1)
	}
	return nodeLogPrior(tr, b, lgamma(1-beta), newDivEval(div), h, true)
}

// nodeLogPrior is NodeLogPrior given lg1b = lgamma(1-beta); it checks b's
// time against its children's only when children is set.
func nodeLogPrior(tr *Tree, b NodeID, lg1b float64, ev divEval, h *Harmonic, children bool) float64 {
	s := nodeStructureCached(tr, b, lg1b, h)
	if math.IsInf(s, -1) {
		return s
	}
	if !timesOrdered(tr, b, children) {
		return math.Inf(-1)
	}
	logRate, cum := ev.eval(tr.Time(b))
	return s + logRate - cum*nodeJ(tr, b, h)
}

// divEval evaluates log a(t) and A(t) together, with a single logarithm for
// DivInv, the paper's divergence function; the values are those of the
// Divergence methods, bit for bit.
type divEval struct {
	div     Divergence
	inv     bool
	c, logC float64
}

func newDivEval(div Divergence) divEval {
	if d, ok := div.(DivInv); ok {
		return divEval{div: div, inv: true, c: d.C, logC: math.Log(d.C)}
	}
	return divEval{div: div}
}

func (e divEval) eval(t Time) (logRate, cumulative float64) {
	if e.inv {
		l := t.LogOneMinus()
		return e.logC - l, -e.c * l
	}
	return e.div.LogRate(t), e.div.Cumulative(t)
}

// NodeEdgeLogPrior returns the log prior factor of the internal node b in its
// edge form: log a(t_b) + [structure of b] + (A(t_a) - A(t_b)) H_{m_b-1}, the
// last term being the probability that the m_b - 1 points after the first
// did not diverge on the edge [a b] into b (a is b's parent, or the origin).
// The sum over all internal nodes is LogPrior. Its domain checks and
// preconditions are those of NodeLogPrior, except that only the edge into b
// is checked for order.
func NodeEdgeLogPrior(tr *Tree, b NodeID, alpha, beta float64, div Divergence, h *Harmonic) float64 {
	if !h.use(alpha, beta) {
		return math.Inf(-1)
	}
	s := nodeStructureCached(tr, b, lgamma(1-beta), h)
	if math.IsInf(s, -1) {
		return s
	}
	if !timesOrdered(tr, b, false) {
		return math.Inf(-1)
	}
	ta, tb := tr.ParentTime(b), tr.Time(b)
	return s + div.LogRate(tb) - div.Increment(ta, tb)*h.H(tr.Count(b)-1)
}

// LogStructure returns the part of LogPrior that depends on the tree
// structure alone, summed over the internal nodes b:
//
//	sum_{k=3..K_b} log(alpha + (k-1) beta) + sum_l lgamma(n_l - beta)
//	  - lgamma(m_b + alpha) - (K_b-1) lgamma(1-beta).
//
// It is not the whole dependence of the prior on (alpha, beta): the
// not-diverging terms depend on them through H; see AlphaBetaStats for the
// full conditional of (alpha, beta). It returns -Inf outside the parameter
// range, for an empty tree, for branch points with fewer than two children,
// and for multifurcations when alpha + 2 beta = 0.
func LogStructure(tr *Tree, alpha, beta float64) float64 {
	if tr.Root() == NoNode || CheckPitmanYor(alpha, beta) != nil {
		return math.Inf(-1)
	}
	lg1b := lgamma(1 - beta)
	root := tr.Root()
	total := 0.0
	for v := root; v != NoNode; v = priorNext(tr, root, v) {
		if !tr.IsLeaf(v) {
			total += nodeStructure(tr, v, alpha, beta, lg1b)
		}
	}
	return total
}

// NodeLogStructure returns the structure term of the internal node b (see
// LogStructure), or -Inf when it is impossible or (alpha, beta) are invalid.
func NodeLogStructure(tr *Tree, b NodeID, alpha, beta float64) float64 {
	if CheckPitmanYor(alpha, beta) != nil {
		return math.Inf(-1)
	}
	return nodeStructure(tr, b, alpha, beta, lgamma(1-beta))
}

// nodeStructure is the structure term of b given lg1b = lgamma(1-beta).
func nodeStructure(tr *Tree, b NodeID, alpha, beta, lg1b float64) float64 {
	k := tr.Degree(b)
	if k < 2 {
		return math.Inf(-1)
	}
	s := 0.0
	for j := 3; j <= k; j++ {
		x := alpha + float64(j-1)*beta
		if !(x > 0) {
			return math.Inf(-1)
		}
		s += math.Log(x)
	}
	leaves := 0
	for c := tr.FirstChild(b); c != NoNode; c = tr.NextSibling(c) {
		if n := tr.Count(c); n == 1 {
			leaves++
		} else {
			s += lgamma(float64(n) - beta)
		}
	}
	// Leaf children give lgamma(1-beta) each, against (K-1) lgamma(1-beta).
	s -= float64(k-1-leaves) * lg1b
	return s - lgamma(float64(tr.Count(b))+alpha)
}

// nodeStructureCached is nodeStructure with the log-gammas and the
// new-branch product taken from h's caches.
func nodeStructureCached(tr *Tree, b NodeID, lg1b float64, h *Harmonic) float64 {
	k := tr.Degree(b)
	if k < 2 {
		return math.Inf(-1)
	}
	s := h.logMulti(k)
	leaves := 0
	for c := tr.FirstChild(b); c != NoNode; c = tr.NextSibling(c) {
		if n := tr.Count(c); n == 1 {
			leaves++
		} else {
			s += h.LogGammaMinusBeta(n)
		}
	}
	s -= float64(k-1-leaves) * lg1b
	return s - h.LogGammaPlusAlpha(tr.Count(b))
}

// NodeJ returns J_b = H_{m_b-1} - sum_l H_{n_l-1} for the internal node b
// under (alpha, beta), resetting h if it holds other parameters. It is the
// coefficient of -A(t_b) in b's log prior. J_b can be negative (for counts
// 2, 2 when beta = 0, say), but sum_b J_b A(t_b) is a sum over edges of
// (A(t_b) - A(t_a)) H_{m_b-1} and so positive. It panics if (alpha,
// beta) are invalid.
func NodeJ(tr *Tree, b NodeID, alpha, beta float64, h *Harmonic) float64 {
	if !h.use(alpha, beta) {
		panic(fmt.Sprintf("pydt: NodeJ: %v", CheckPitmanYor(alpha, beta)))
	}
	return nodeJ(tr, b, h)
}

func nodeJ(tr *Tree, b NodeID, h *Harmonic) float64 {
	j := h.H(tr.Count(b) - 1)
	for c := tr.FirstChild(b); c != NoNode; c = tr.NextSibling(c) {
		if n := tr.Count(c); n > 1 {
			j -= h.sum[n-1] // n-1 < m-1 is in the table
		}
	}
	return j
}

// CStats returns the sufficient statistics of the smoothness c for the
// divergence function a(t) = c/(1-t) (DivInv): the number of internal nodes
// and S = sum_b J_b (-log(1-t_b)). The log prior is then
// internal*log c - c*S + (terms free of c), so a Gamma(shape, rate) prior on c
// gives the Gibbs conditional Gamma(shape + internal, rate + S) (erratum 2 of
// the notes: the printed rate has the wrong sign). S >= 0, being also the
// sum over edges [a b] into internal nodes of (U(t_b) - U(t_a)) H_{m_b-1}. h is reset to (alpha,
// beta) if it holds other parameters; it panics if they are invalid.
func CStats(tr *Tree, alpha, beta float64, h *Harmonic) (internal int, s float64) {
	return CStatsFor(tr, alpha, beta, DivInv{C: 1}, h)
}

// CStatsFor is CStats for any divergence function unit(t) scaled by c,
// a(t) = c unit(t) (for example DivInvSq{C: 1}): it returns the number of
// internal nodes and S = sum_b J_b U(t_b), U being unit's cumulative,
// summed in its edge form sum_b (U(t_b) - U(t_a)) H_{m_b-1} (increments
// from Divergence.Increment, all non-negative: no cancellation where
// U is large).
func CStatsFor(tr *Tree, alpha, beta float64, unit Divergence, h *Harmonic) (internal int, s float64) {
	if !h.use(alpha, beta) {
		panic(fmt.Sprintf("pydt: CStats: %v", CheckPitmanYor(alpha, beta)))
	}
	root := tr.Root()
	if root == NoNode {
		return 0, 0
	}
	h.Grow(tr.Count(root))
	for v := root; v != NoNode; v = priorNext(tr, root, v) {
		if tr.IsLeaf(v) {
			continue
		}
		internal++
		s += unit.Increment(tr.ParentTime(v), tr.Time(v)) * h.H(tr.Count(v)-1)
	}
	return internal, s
}

// timesOrdered reports whether b's time is strictly after its parent's (or
// the origin) and before t = 1, and, when children is set, strictly before
// each child's.
func timesOrdered(tr *Tree, b NodeID, children bool) bool {
	tb := tr.Time(b)
	if tb.IsLeaf() || !tr.ParentTime(b).Before(tb) {
		return false
	}
	if !children {
		return true
	}
	for c := tr.FirstChild(b); c != NoNode; c = tr.NextSibling(c) {
		if !tb.Before(tr.Time(c)) {
			return false
		}
	}
	return true
}

// priorNext returns the node after v in a pre-order walk of the subtree
// rooted at root, or NoNode at the end. It allocates nothing.
func priorNext(tr *Tree, root, v NodeID) NodeID {
	if c := tr.FirstChild(v); c != NoNode {
		return c
	}
	for v != root {
		if s := tr.NextSibling(v); s != NoNode {
			return s
		}
		v = tr.Parent(v)
	}
	return NoNode
}

func lgamma(x float64) float64 {
	l, _ := math.Lgamma(x)
	return l
}

// AlphaBetaStats holds the statistics of a fixed tree that the prior needs as
// a function of (alpha, beta), for slice sampling or optimising them: the
// histograms of child counts, node counts and degrees, the not-diverging
// weights sum of A(t_b) - A(t_a) per edge count, and the sum of log a(t_b).
// LogPrior then costs the growth of the H table plus O(number of distinct
// counts), not O(N) calls of lgamma.
type AlphaBetaStats struct {
	possible bool
	logRate  float64 // sum_b log dA/ds(t_b)
	sumS     float64 // sum_b s_b
	sumKm1   int     // sum_b (K_b - 1) - (number of leaf children)
	maxCount int
	child    []countMult   // children with n >= 2: (n, multiplicity)
	node     []countMult   // internal nodes: (m_b, multiplicity)
	degree   []countMult   // (k, number of nodes with K_b >= k), k >= 3
	edge     []countWeight // (m, sum of A(t_b)-A(t_a) over edges into nodes with m_b = m)

	scratchInt   []int
	scratchFloat []float64
}

type countMult struct{ n, mult int }

type countWeight struct {
	n int
	w float64
}

// NewAlphaBetaStats computes the statistics of tr under div.
func NewAlphaBetaStats(tr *Tree, div Divergence) *AlphaBetaStats {
	s := &AlphaBetaStats{}
	s.Reset(tr, div)
	return s
}

// Reset recomputes the statistics for tr under div, reusing storage.
func (s *AlphaBetaStats) Reset(tr *Tree, div Divergence) {
	s.possible = false
	s.logRate, s.sumS, s.sumKm1, s.maxCount = 0, 0, 0, 0
	s.child, s.node, s.degree, s.edge = s.child[:0], s.node[:0], s.degree[:0], s.edge[:0]
	root := tr.Root()
	if root == NoNode || div == nil || div.Check() != nil {
		return
	}
	n := tr.Count(root)
	s.maxCount = n
	size := n + 2
	if cap(s.scratchInt) < 3*size {
		s.scratchInt = make([]int, 3*size)
		s.scratchFloat = make([]float64, size)
	}
	childH, nodeH, degH := s.scratchInt[:size], s.scratchInt[size:2*size], s.scratchInt[2*size:3*size]
	w := s.scratchFloat[:size]
	clear(childH)
	clear(nodeH)
	clear(degH)
	clear(w)
	for v := root; v != NoNode; v = priorNext(tr, root, v) {
		if tr.IsLeaf(v) {
			continue
		}
		k := tr.Degree(v)
		if k < 2 || !timesOrdered(tr, v, true) {
			return
		}
		m := tr.Count(v)
		nodeH[m]++
		degH[k]++
		s.sumKm1 += k - 1
		for c := tr.FirstChild(v); c != NoNode; c = tr.NextSibling(c) {
			if nc := tr.Count(c); nc > 1 {
				childH[nc]++
			} else {
				s.sumKm1--
			}
		}
		tv := tr.Time(v)
		s.logRate += div.LogRateS(tv)
		s.sumS += tv.s
		w[m] += div.Increment(tr.ParentTime(v), tv)
	}
	for i := range size {
		if childH[i] > 0 {
			s.child = append(s.child, countMult{i, childH[i]})
		}
		if nodeH[i] > 0 {
			s.node = append(s.node, countMult{i, nodeH[i]})
		}
		if w[i] != 0 {
			s.edge = append(s.edge, countWeight{i, w[i]})
		}
	}
	// Number of nodes with degree >= k, for k >= 3.
	ge := 0
	for k := size - 1; k >= 3; k-- {
		ge += degH[k]
		if ge > 0 {
			s.degree = append(s.degree, countMult{k, ge})
		}
	}
	s.possible = true
}

// LogStructure returns LogStructure of the tree at (alpha, beta).
func (s *AlphaBetaStats) LogStructure(alpha, beta float64) float64 {
	if !s.possible || CheckPitmanYor(alpha, beta) != nil {
		return math.Inf(-1)
	}
	total := 0.0
	for _, d := range s.degree {
		x := alpha + float64(d.n-1)*beta
		if !(x > 0) {
			return math.Inf(-1)
		}
		total += float64(d.mult) * math.Log(x)
	}
	for _, c := range s.child {
		total += float64(c.mult) * lgamma(float64(c.n)-beta)
	}
	for _, c := range s.node {
		total -= float64(c.mult) * lgamma(float64(c.n)+alpha)
	}
	return total - float64(s.sumKm1)*lgamma(1-beta)
}

// LogPrior returns LogPrior of the tree at (alpha, beta) with the divergence
// function the statistics were computed under, resetting h to (alpha, beta)
// if it holds other parameters. It returns -Inf outside the parameter range
// and for impossible trees.
func (s *AlphaBetaStats) LogPrior(alpha, beta float64, h *Harmonic) float64 {
	return s.LogPriorS(alpha, beta, h) + s.sumS
}

// LogPriorS returns LogPriorS of the tree at (alpha, beta): LogPrior less
// the Jacobian Σ_b s_b, which does not depend on (alpha, beta) and would
// swamp the terms that do where times lie very close to t = 1. It is the
// target for updates of alpha and beta.
func (s *AlphaBetaStats) LogPriorS(alpha, beta float64, h *Harmonic) float64 {
	total := s.LogStructure(alpha, beta)
	if math.IsInf(total, -1) || !h.use(alpha, beta) {
		return math.Inf(-1)
	}
	// H by its closed form (Harmonic.ClosedH): O(distinct counts) per
	// evaluation, where growing the table for new (alpha, beta) cost
	// O(maxCount); the table only where the closed form cancels (alpha +
	// beta near 0).
	total += s.logRate
	for _, e := range s.edge {
		total -= e.w * h.hSum(e.n-1)
	}
	return total
}
