// Package bp does Gaussian belief propagation over the node locations of a
// Pitman-Yor diffusion tree.
//
// The model: every edge [a b] of the tree contributes N(x_b; x_a, (t_b −
// t_a) Σ) with Σ = diag(σ²_1, ..., σ²_D), the diffusion variances per
// dimension (all equal unless set with SetVariances), the path starts at the origin x = 0 at t = 0, and the leaves sit at
// t = 1. Each leaf i and dimension d receives evidence as a Gaussian message
// about x_{i,d}, given by a mean and a precision: an infinite precision for
// an observed value, zero for a missing one, anything in between for any other
// likelihood (an EP site, a data-augmentation draw, ...). The evidence is
// taken to be the normalised density N(mean; x_{i,d}, 1/precision), so that
// for observed leaves LogLik is the density of the data with every internal
// location integrated out. The tree code never knows which likelihood is
// attached.
//
// A Model keeps, for every node v and dimension d, the upward message about
// x_v from the subtree below v (a mean and a variance, +Inf variance meaning
// no information) and, per node, the log normaliser accumulated within the
// subtree. Every branch point also keeps a segment tree over its children's
// messages (seg.go), so that changing one child costs O(log K · D) for K
// children rather than O(K · D). Products are formed in mean-variance form,
// which needs no subtraction: local updates equal a full recomputation to
// rounding, however short the edges. Storage is flat and grows only when a
// branch point reaches a degree not seen before (amortised); hot paths do
// not allocate.
//
// Local operations (Detach, Attach, UpdatePath, SetTime) recompute only the
// messages on the changed paths, at cost O(depth · log K · D) (plus
// O(K_v · D) for the changed node v of SetTime); LogLikIfAttached scores a
// re-attachment point without touching the tree, and TimeEval scores
// candidate times of one branch point in O(K_v · D) each. Marginals runs
// the downward pass, SampleLocations draws every location jointly, and
// SuffStats and SuffStatsDims give the statistics of the Gibbs updates of a
// shared precision 1/σ² and of per-dimension precisions 1/σ²_d given
// sampled locations; for leaves observed exactly or missing, UnitStats
// splits LogLik into a power of σ²_d and a quadratic form in 1/σ²_d, the
// statistics of the same updates with the locations integrated out.
//
// Evaluating a subtree move costs three path updates and no allocation:
//
//	old := m.Detach(v)               // messages without v
//	ll := m.LogLikIfAttached(v, pos) // score the proposal, tree untouched
//	if accept(ll) {
//		m.Attach(v, pos)
//	} else {
//		m.Attach(v, old) // restores the tree and LogLik (to rounding)
//	}
//
// Attaching at pos, reading LogLik and, on rejection, detaching again and
// attaching at old works as well, at the cost of one more path update.
//
// Slice sampling a branch point's time costs one downward path walk, one
// O(K_v · D) evaluation per candidate and, if the time changes, one path
// update:
//
//	e := m.TimeEval(v)   // outside message of v
//	lo, hi := e.Bounds() // candidates lie strictly between
//	ll := e.LogLik(t)    // tree untouched
//	e.Commit(t)          // as m.SetTime(v, t)
//
// A full pass can be shared between two goroutines (SetWorkers; off by
// default), with the same results bit for bit.
//
// Evidence and variance setters take effect lazily: changes to a few leaves
// are propagated along their paths at the next query, while SetVariance,
// SetVariances, ObserveMatrix or many changed leaves trigger one full pass.
package bp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

var inf = math.Inf(1)

// relayoutBytes is the size of the node records (Cap·(2D+4)·8 bytes) from
// which Recompute moves them to breadth-first order: below it they fit in
// the caches and moving them costs more than it saves.
const relayoutBytes = 2 << 20

// ErrZeroEdge is wrapped by the errors reported for a tree with an edge
// whose lower end is not strictly after its upper end (an edge of zero,
// negative or NaN length in time), on which the model has no density. An
// edge between distinct times whose length underflows float64 is not one:
// its variance is 0.
var ErrZeroEdge = errors.New("bp: edge of non-positive length")

// ErrNoDensity is wrapped by the errors reported when the evidence has no
// finite density given the tree: exactly observed values that meet
// through edges of variance 0 (lengths that underflow float64) differ (zero
// density) or coincide (a point mass: LogLik is +Inf).
var ErrNoDensity = errors.New("bp: no finite density")

// Model holds the messages of Gaussian belief propagation on a tree. It
// refers to the tree it was built with: change the tree through the Model's
// Detach, Attach and SetTime (or call UpdatePath or Recompute after changing
// it directly) so that the messages stay current.
//
// A Model is not safe for concurrent use.
type Model struct {
	tr *pydt.Tree
	d  int // dimensions
	rs int // record size 2d+4
	// s2 holds the diffusion variance σ²_d of each dimension; an edge of
	// length l adds s2[d]·l to the variance of a message in dimension d.
	s2 []float64
	sq []float64 // scratch for SuffStats, d values

	// nr holds one record per node, at off(v): the mean (d values) and the
	// variance (d values) of the upward message about x_v from the subtree
	// below v, then S and P, the log normaliser of that subtree being
	// S - log(P)/2 (see merge), then a copy of v's time as s = -log(1-t)
	// and 1-t, so
	// that a child's message through its edge is read from one place. For a leaf the record holds the evidence
	// (variance 1/precision) with S = 0, P = 1. The message from the
	// subtree is exp(lz) ∏_d N(x_{v,d}; mean, variance), dimensions of
	// infinite variance contributing a factor of 1; lz is -Inf when the
	// subtree has an edge of non-positive length.
	nr []float64

	// Recompute lays the records out afresh in breadth-first order of the
	// tree (see relayout), through this second buffer; a node's record is
	// at m.seg.node[v].rec·rs (see off). Local updates keep records where
	// they are.
	nr2    []float64
	newRec []int32
	// relayoutBytes is the size of the records from which Recompute
	// lays them out afresh: the constant relayoutBytes, which tests lower
	// to cover both layouts.
	relayoutBytes int
	// Per position of m.order during Recompute: the slot in the parent's
	// segment tree, the old record index, the time (branch points).
	jslot, oldRec []int32
	tm            []pydt.Time

	// Per branch point, a segment tree over its children (see seg.go).
	seg segStore

	// Deferred work: stale asks for a full recomputation; pending lists
	// leaves whose evidence changed since the last update.
	stale     bool
	pending   []pydt.NodeID
	isPending []bool
	gen       uint64 // counts changes, to catch stale TimeEvals
	timeEvals int    // calls of TimeEval.LogLik, see TimeEvaluations

	order  []pydt.NodeID // traversal buffer, capacity Cap()
	lo, hi []int32       // children of order[i] are order[lo[i]:hi[i]]
	path   []pydt.NodeID // ancestors, for TimeEval

	// Constant records: no information (empty), no information with
	// S = -Inf (dead, a child across an edge of non-positive length), and
	// the origin x = 0 exactly (orig); and a scratch record.
	empty, dead, orig, scr []float64
	te                     TimeEval
	rg                     Region    // the region evaluator (region.go)
	outs                   []float64 // outside messages of TimeSweep, a record per node

	jr journal // undo log of the last Detach (undo.go)

	// Full passes on several goroutines (parallel.go): the setting of
	// SetWorkers, the positions of m.order at which a tree starts, and
	// the scratch.
	workers int
	starts  []int32
	par     parState

	cp commitPath // the records of the last LogLikIfAttached (commit.go)

	pt, pt2 []float64 // scratch records of PointMarginal (point.go)

	// el caches, per record index, the edge length from a parent at time
	// s to the child whose record it is, at time sc: s, sc and the length
	// (see childRec).
	el []float64

	// unit holds per node the upward message at unit variance (2D
	// values) for UnitStats, and unitZ D zeros.
	unit, unitZ []float64
}

// New returns a Model for tr with dims dimensions per location, variance
// σ²_d = 1 in every dimension and no evidence (every leaf missing). It panics if dims < 1.
func New(tr *pydt.Tree, dims int) *Model {
	if dims < 1 {
		panic(fmt.Sprintf("bp.New: need at least one dimension, got %d", dims))
	}
	c := tr.Cap()
	n := tr.NumLeaves()
	rs := 2*dims + 4
	m := &Model{
		tr:     tr,
		d:      dims,
		rs:     rs,
		s2:     make([]float64, dims),
		sq:     make([]float64, dims),
		nr:     make([]float64, c*rs),
		nr2:    make([]float64, c*rs),
		el:     make([]float64, 3*c),
		newRec: make([]int32, c),

		relayoutBytes: relayoutBytes,
		jslot:         make([]int32, c),
		oldRec:        make([]int32, c),
		tm:            make([]pydt.Time, c),
		pending:       make([]pydt.NodeID, 0, n),
		isPending:     make([]bool, n),
		order:         make([]pydt.NodeID, 0, c),
		lo:            make([]int32, c),
		hi:            make([]int32, c),
		path:          make([]pydt.NodeID, 0, c),
		empty:         make([]float64, rs),
		dead:          make([]float64, rs),
		orig:          make([]float64, rs),
		scr:           make([]float64, rs),
		pt:            make([]float64, rs),
		pt2:           make([]float64, rs),
	}
	for k := range dims {
		m.empty[dims+k], m.dead[dims+k] = inf, inf
		m.s2[k] = 1
	}
	m.empty[2*dims+1], m.dead[2*dims+1], m.orig[2*dims+1], m.scr[2*dims+1] = 1, 1, 1, 1
	m.dead[2*dims] = math.Inf(-1)
	for v := range c {
		r := m.nr[v*rs : v*rs+rs]
		for k := range dims {
			r[dims+k] = inf
		}
		r[2*dims+1] = 1
		t := tr.Time(pydt.NodeID(v))
		r[2*dims+2], r[2*dims+3] = t.S(), t.OneMinus()
	}
	m.seg.init(c, dims)
	for v := range c {
		m.seg.node[v].rec = int32(v)
	}
	m.te.m = m
	m.te.out = make([]float64, rs)
	m.te.scr = make([]float64, rs)
	m.stale = true
	return m
}

// Tree returns the tree the model is built on.
func (m *Model) Tree() *pydt.Tree { return m.tr }

// TimeEvaluations returns the number of likelihood evaluations made by the
// model's time evaluator (TimeEval.LogLik) since New: the unit of work of
// slice sampling a time, for measuring what a sampler spends.
func (m *Model) TimeEvaluations() int { return m.timeEvals }

// Dims returns the number of dimensions D.
func (m *Model) Dims() int { return m.d }

// Variance returns the diffusion variance σ² shared by every dimension, or
// NaN when the dimensions' variances differ (see Variances).
func (m *Model) Variance() float64 {
	v := m.s2[0]
	for _, x := range m.s2[1:] {
		if x != v {
			return math.NaN()
		}
	}
	return v
}

// Variances returns the diffusion variance σ²_d of every dimension. The
// slice belongs to the model: do not modify it, and copy it to keep it
// across SetVariance or SetVariances.
func (m *Model) Variances() []float64 { return m.s2 }

// SetVariance sets the diffusion variance of every dimension to σ². Every
// message depends on it, so the next query recomputes them all (O(N·D)),
// unless it is unchanged. It returns an error unless σ² is positive and
// finite.
func (m *Model) SetVariance(sigma2 float64) error {
	if err := checkVariance(sigma2, -1); err != nil {
		return err
	}
	changed := false
	for k, x := range m.s2 {
		if x != sigma2 {
			m.s2[k], changed = sigma2, true
		}
	}
	m.changedVariance(changed)
	return nil
}

// SetVariances sets the diffusion variance σ²_d of each dimension d to
// s2[d], as Neal's Dirichlet diffusion tree learns a scale per dimension:
// every edge [a b] then contributes N(x_{b,d}; x_{a,d}, σ²_d (t_b − t_a))
// in dimension d. Like SetVariance it makes the next query recompute every
// message, unless nothing changed. It returns an error, and changes
// nothing, unless s2 has length D and every entry is positive and finite.
func (m *Model) SetVariances(s2 []float64) error {
	if len(s2) != m.d {
		return fmt.Errorf("bp: %d variances for %d dimensions", len(s2), m.d)
	}
	for k, x := range s2 {
		if err := checkVariance(x, k); err != nil {
			return err
		}
	}
	changed := false
	for k, x := range s2 {
		if m.s2[k] != x {
			m.s2[k], changed = x, true
		}
	}
	m.changedVariance(changed)
	return nil
}

// checkVariance reports a variance that is not positive and finite; d is
// its dimension, or -1 for one shared by all.
func checkVariance(s2 float64, d int) error {
	if s2 > 0 && !math.IsInf(s2, 1) {
		return nil
	}
	if d < 0 {
		return fmt.Errorf("bp: variance must be positive and finite, got %v", s2)
	}
	return fmt.Errorf("bp: variance of dimension %d must be positive and finite, got %v", d, s2)
}

// changedVariance marks every message stale if changed.
func (m *Model) changedVariance(changed bool) {
	if changed {
		m.stale = true
		m.gen++
	}
}

// SetEvidence sets the Gaussian message about x_{leaf,d}: the factor
// N(mean; x, 1/prec). prec = +Inf observes x = mean exactly; prec = 0 removes
// the evidence (mean is then ignored). The change takes effect lazily: the
// next query updates the paths from the changed leaves to the root, or
// recomputes everything when many leaves changed.
func (m *Model) SetEvidence(leaf pydt.NodeID, d int, mean, prec float64) error {
	if leaf < 0 || int(leaf) >= m.tr.NumLeaves() {
		return fmt.Errorf("bp: evidence for node %d, which is not a leaf (N = %d)", leaf, m.tr.NumLeaves())
	}
	if d < 0 || d >= m.d {
		return fmt.Errorf("bp: evidence for dimension %d of leaf %s, outside 0..%d", d, m.tr.Label(leaf), m.d-1)
	}
	if !(prec >= 0) {
		return fmt.Errorf("bp: evidence precision %v for leaf %s, dimension %d, is negative or NaN", prec, m.tr.Label(leaf), d)
	}
	i := m.off(leaf) + d
	if prec == 0 {
		m.nr[i], m.nr[i+m.d] = 0, inf
	} else {
		if math.IsNaN(mean) || math.IsInf(mean, 0) {
			return fmt.Errorf("bp: evidence mean %v for leaf %s, dimension %d, is not finite", mean, m.tr.Label(leaf), d)
		}
		m.nr[i], m.nr[i+m.d] = mean, 1/prec
	}
	m.touch(leaf)
	return nil
}

// Evidence returns the evidence about x_{leaf,d} as a mean and a precision
// (+Inf observed, 0 missing).
func (m *Model) Evidence(leaf pydt.NodeID, d int) (mean, prec float64) {
	i := m.off(leaf) + d
	return m.nr[i], 1 / m.nr[i+m.d]
}

// Observe sets x_{leaf,d} as observed to be x, or as missing when x is NaN.
func (m *Model) Observe(leaf pydt.NodeID, d int, x float64) error {
	if math.IsNaN(x) {
		return m.SetEvidence(leaf, d, 0, 0)
	}
	return m.SetEvidence(leaf, d, x, inf)
}

// ObserveMatrix observes all leaves from a row-major N×D slice: row i holds
// leaf i, and NaN marks a missing value. The next query recomputes every
// message.
func (m *Model) ObserveMatrix(x []float64) error {
	n := m.tr.NumLeaves()
	if len(x) != n*m.d {
		return fmt.Errorf("bp: data of length %d for %d leaves × %d dimensions", len(x), n, m.d)
	}
	return m.observeAll(func(i, j int) float64 { return x[i*m.d+j] })
}

// ObserveMat is ObserveMatrix for a gonum matrix with N rows and D columns.
func (m *Model) ObserveMat(x mat.Matrix) error {
	r, c := x.Dims()
	if r != m.tr.NumLeaves() || c != m.d {
		return fmt.Errorf("bp: data matrix is %d×%d, want %d×%d", r, c, m.tr.NumLeaves(), m.d)
	}
	return m.observeAll(x.At)
}

// observeAll observes x_{i,j} = at(i, j) for every leaf i and dimension j,
// NaN marking a missing value, unless a value is infinite.
func (m *Model) observeAll(at func(i, j int) float64) error {
	n := m.tr.NumLeaves()
	for i := range n {
		for j := range m.d {
			if math.IsInf(at(i, j), 0) {
				return fmt.Errorf("bp: infinite value for leaf %s, dimension %d", m.tr.Label(pydt.NodeID(i)), j)
			}
		}
	}
	for i := range n {
		for j := range m.d {
			k := m.off(pydt.NodeID(i)) + j
			if v := at(i, j); math.IsNaN(v) {
				m.nr[k], m.nr[k+m.d] = 0, inf
			} else {
				m.nr[k], m.nr[k+m.d] = v, 0
			}
		}
	}
	m.stale = true
	m.gen++
	return nil
}

// touch records that the evidence of leaf changed.
func (m *Model) touch(leaf pydt.NodeID) {
	m.gen++
	if m.stale || m.isPending[leaf] {
		return
	}
	if len(m.pending) == cap(m.pending) {
		m.stale = true
		return
	}
	m.isPending[leaf] = true
	m.pending = append(m.pending, leaf)
}

// flush brings every message up to date.
func (m *Model) flush() {
	if m.stale {
		m.Recompute()
		return
	}
	if len(m.pending) == 0 {
		return
	}
	// A path costs about depth·degree node visits; past a handful per
	// thousand leaves a full pass is cheaper.
	if len(m.pending)*64 > m.tr.NumLeaves() {
		m.Recompute()
		return
	}
	for _, leaf := range m.pending {
		m.isPending[leaf] = false
		m.propagate(leaf)
	}
	m.pending = m.pending[:0]
}

// Message returns the upward message about x_{v,d} from the subtree below v
// (for a leaf, its evidence) as a mean and a variance; the variance is +Inf
// when no leaf below v has evidence in dimension d.
func (m *Model) Message(v pydt.NodeID, d int) (mean, variance float64) {
	m.flush()
	i := m.off(v) + d
	return m.nr[i], m.nr[i+m.d]
}

// SubtreeLogZ returns the log normaliser of the subtree below v: the log of
// the integral over the locations strictly below v of the evidence and the
// edge densities within the subtree, less the Gaussian factors in x_v that
// Message reports. It is -Inf if the subtree has an edge of non-positive
// length.
func (m *Model) SubtreeLogZ(v pydt.NodeID) float64 {
	m.flush()
	i := m.off(v) + 2*m.d
	return m.nr[i] - 0.5*math.Log(m.nr[i+1])
}

// Err reports the first edge in the tree below the root whose lower end is
// not strictly after its upper end, naming its lower node, or, when
// LogLik is +Inf, that exactly observed values coincide through edges of
// variance 0 (ErrNoDensity); nil otherwise. A LogLik of -Inf on a valid
// tree is not an error: exactly observed values that differ across edges
// of variance 0 have zero density. It costs O(N).
func (m *Model) Err() error {
	tr := m.tr
	if tr.Root() == pydt.NoNode {
		return nil
	}
	m.order = tr.PreOrder(m.order[:0])
	for _, v := range m.order {
		if !tr.ParentTime(v).Before(tr.Time(v)) {
			return m.edgeError(v, tr.BranchLength(v))
		}
	}
	if ll := m.LogLik(); math.IsInf(ll, 1) {
		return fmt.Errorf("%w: log likelihood +Inf: exactly observed values coincide where their paths meet "+
			"through edges whose length underflows float64 (times with 1-t below 5e-324); "+
			"the density of exactly equal observations is infinite (use a noise model)", ErrNoDensity)
	}
	return nil
}

func (m *Model) edgeError(v pydt.NodeID, l float64) error {
	name := fmt.Sprintf("branch point %d", v)
	if m.tr.IsLeaf(v) {
		name = "leaf " + m.tr.Label(v)
	}
	return fmt.Errorf("%w: the edge above %s (%v, parent %v) has length %v",
		ErrZeroEdge, name, m.tr.Time(v), m.tr.ParentTime(v), l)
}

// Upward returns the upward message about x_v from the subtree below v as
// views of its means and variances (D values each; +Inf variance for no
// information), without copying: they are valid until the next change of
// the model and must not be modified. It serves the proposals of the tree
// moves, which score many nodes per move; Message reads one dimension.
func (m *Model) Upward(v pydt.NodeID) (mean, variance []float64) {
	m.flush()
	o := m.off(v)
	return m.nr[o : o+m.d], m.nr[o+m.d : o+2*m.d]
}
