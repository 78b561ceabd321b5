package inference

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Tree summaries
//
// For a tree S with clades C, the expected number of its clades that are in
// the true tree minus the expected number that are not is Σ_{C∈S} (2p(C) −
// 1), where p(C) is the posterior probability of clade C (its frequency in
// the sample); maximising it minimises the expected Robinson–Foulds
// distance to the true tree. Over all trees, multifurcating ones included,
// it is maximised by the majority-rule consensus, which keeps every clade
// with p > 1/2 and no other; those clades are always compatible (two clades
// each in more than half of the trees are together in some tree), so the
// consensus is the exact maximiser, not a search (CladeCounts.Consensus).
// Among the sampled trees, the maximiser is found by scoring each
// (CladeCounts.MaxAccuracy); it is as resolved as the sampled trees are
// where they agree. Unlike the maximum clade credibility tree, which
// multiplies clade frequencies and so prefers trees with fewer clades (a
// star tree scores best), both gain from every clade with p > 1/2; both
// leave out clades with p < 1/2, which cost more than they gain.
//
// Where exact clades are rarely repeated (tens of rows or more), both are
// unresolved exactly where a dendrogram is wanted. A run's summary.nwk is
// therefore the average-linkage tree of the posterior mean LCA times
// (Coclust.AverageLinkage), which approximately minimises the posterior
// expected squared error of the LCA times over pairs of rows; see
// docs/summaries.md for a comparison on labelled data.
//
// In the clade summaries each branch point's time is the posterior mean of
// the time of the most recent common ancestor of its leaves, taken over
// every sampled tree (not
// only those that contain the clade), so a branch point always comes
// before its descendants. Its credibility p is written as its Newick label.
//
// Clades are counted by CladeCounts in memory bounded by a capacity
// proportional to N, not by the number of trees or of distinct clades
// (see the notes on bounded clade counts), and counts from separate chains
// or machines merge. Building the summaries takes further passes over the
// trees (a TreeSource replays them), which recount the counted clades
// exactly when the counters have overflowed, find the leaves of the kept
// clades, gather the times and recount every kept clade exactly, so that
// every credibility written is an exact count and a collision of the hash
// that keys the counts is detected, never silently used.

// TreeSource replays a sample of trees: it calls fn with each tree in turn,
// in the same order every time it is called, and stops at fn's first
// error, returning it.
type TreeSource func(fn func(tr *pydt.Tree) error) error

// NewickFiles returns a TreeSource that reads files of Newick trees, one
// tree per line as Run writes trees-K.nwk, in the memory of one tree.
// labels are the row labels of the data's n rows, as ParseNewick takes
// them (nil when leaves are named by row number). Each file is bounded by
// bounded.MaxNewickBytes, and each tree must have the data's rows as its
// leaves (pydt.Tree.MatchRows) and be valid: an error names the file and
// the tree's number in it (from 1).
func NewickFiles(n int, labels []string, paths ...string) TreeSource {
	return func(fn func(*pydt.Tree) error) error {
		for _, path := range paths {
			_, err := forEachCheckedTree(path, n, labels, "the data", func(_ int, tr *pydt.Tree) error { return fn(tr) })
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// TreeSlice returns a TreeSource over trees held in memory.
func TreeSlice(trees []*pydt.Tree) TreeSource {
	return func(fn func(*pydt.Tree) error) error {
		for _, tr := range trees {
			if err := fn(tr); err != nil {
				return err
			}
		}
		return nil
	}
}

// ErrCladeCollision is returned when two different clades were found to
// share a hash key: about one chance in 2^128 per pair of clades. The
// counts cannot be trusted and no summary is made.
var ErrCladeCollision = errors.New("clade hash collision")

// SummaryTree is a summary of a sample of trees: a tree whose branch points
// carry their posterior clade credibility.
type SummaryTree struct {
	// Tree is the summary tree.
	Tree *pydt.Tree
	// Credibility is, for each branch point of Tree, the fraction of the
	// sampled trees that contain its clade (1 for the root).
	Credibility map[pydt.NodeID]float64
	// Trees is the number of sampled trees summarised.
	Trees int
	// Gap is, for CladeCounts.MaxAccuracy's tree, 0 when it is the exact
	// maximiser of Σ (2p − 1) among the sampled trees; when the clade
	// counters overflowed and some trees could not be scored exactly
	// within the passes allowed, it is the most by which one of them may
	// exceed the tree's Σ (2p − 1). 0 for the other summaries.
	Gap float64
}

// Newick returns the summary tree in Newick format with each branch
// point's credibility as its label, e.g. "((a:0.4,b:0.4)0.93:0.3,c:0.7)1:0.3;",
// which ape's read.tree reads as node labels and Bio.Phylo as confidences.
func (s *SummaryTree) Newick() string {
	return string(s.Tree.AppendNewickLabeled(nil, func(v pydt.NodeID) string {
		return strconv.FormatFloat(s.Credibility[v], 'g', -1, 64)
	}))
}

// ExpectedCorrect returns Σ (2p − 1) over the summary tree's clades, the
// root included: the posterior expected number of its clades that are in
// the true tree minus the expected number that are not.
func (s *SummaryTree) ExpectedCorrect() float64 {
	// Sum in node order, not map order, so that the result is the same to
	// the last digit on every run.
	var sum float64
	for _, v := range slices.Sorted(maps.Keys(s.Credibility)) {
		sum += 2*s.Credibility[v] - 1
	}
	return sum
}

// logSum accumulates log Σ exp(x) without overflow or underflow.
type logSum struct{ max, sum float64 }

func newLogSum() logSum { return logSum{max: math.Inf(-1)} }

func (l *logSum) add(x float64) {
	switch {
	case math.IsInf(x, -1):
	case x > l.max:
		l.sum = l.sum*math.Exp(l.max-x) + 1
		l.max = x
	default:
		l.sum += math.Exp(x - l.max)
	}
}

func (l *logSum) value() float64 { return l.max + math.Log(l.sum) }

// sumClade is a clade of a summary tree being built.
type sumClade struct {
	key    cladeKey
	leaves []int32 // sorted; dropped (nil) once the set is built
	size   int     // number of leaves
	node   pydt.NodeID
	parent int     // index in the set, -1 for the root
	kids   []int   // child clades
	direct []int32 // leaves whose smallest clade this is
	// Gathered by the pass over the trees.
	present int64
	sumT    float64
	sumU    float64 // Σ (1-t)
	logU    logSum  // log Σ (1-t), for when sumU underflows
}

// cladeSet is the set of compatible clades of a summary tree, the root
// clade first, each after its parent.
type cladeSet struct {
	cl    []sumClade
	byKey map[cladeKey]int
	mrca  []pydt.NodeID
}

// newCladeSet arranges compatible clades (the root clade among them) into
// a tree.
func newCladeSet(n int, cl []sumClade) (*cladeSet, error) {
	// Larger clades first, so that a clade's parent comes before it; then
	// by smallest row, so that the order does not depend on how the clades
	// were found (map order).
	for i := range cl {
		slices.Sort(cl[i].leaves)
	}
	slices.SortFunc(cl, func(a, b sumClade) int {
		if c := cmp.Compare(len(b.leaves), len(a.leaves)); c != 0 {
			return c
		}
		return cmp.Compare(a.leaves[0], b.leaves[0])
	})
	if n > 1 && (len(cl) == 0 || len(cl[0].leaves) != n) {
		return nil, fmt.Errorf("%w: the root clade is missing", ErrCladeCollision)
	}
	s := &cladeSet{cl: cl, byKey: make(map[cladeKey]int, len(cl)), mrca: make([]pydt.NodeID, len(cl))}
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	for i := range cl {
		k := &cl[i]
		p := owner[k.leaves[0]]
		for _, l := range k.leaves {
			if owner[l] != p {
				return nil, fmt.Errorf("%w: the clades overlap", ErrCladeCollision)
			}
			owner[l] = i
		}
		k.parent, k.logU = p, newLogSum()
		if p >= 0 {
			cl[p].kids = append(cl[p].kids, i)
		}
		s.byKey[k.key] = i
	}
	// Only the leaves directly below each clade are needed from here on
	// (nested clades' leaf lists can take O(N²) memory in all).
	for i := range cl {
		cl[i].size, cl[i].leaves = len(cl[i].leaves), nil
	}
	for l, o := range owner {
		if o >= 0 {
			cl[o].direct = append(cl[o].direct, int32(l))
		}
	}
	return s, nil
}

// treeLCA answers lowest-common-ancestor queries on one tree by walking up
// from the deeper node.
type treeLCA struct {
	tr    *pydt.Tree
	depth []int32
	pre   []pydt.NodeID
}

func (q *treeLCA) reset(tr *pydt.Tree) {
	q.tr = tr
	if cap(q.depth) < tr.Cap() {
		q.depth = make([]int32, tr.Cap())
	}
	q.depth = q.depth[:tr.Cap()]
	q.pre = tr.PreOrder(q.pre[:0])
	for _, v := range q.pre {
		if p := tr.Parent(v); p != pydt.NoNode {
			q.depth[v] = q.depth[p] + 1
		} else {
			q.depth[v] = 0
		}
	}
}

func (q *treeLCA) lca(x, y pydt.NodeID) pydt.NodeID {
	tr, depth := q.tr, q.depth
	for depth[x] > depth[y] {
		x = tr.Parent(x)
	}
	for depth[y] > depth[x] {
		y = tr.Parent(y)
	}
	for x != y {
		x, y = tr.Parent(x), tr.Parent(y)
	}
	return x
}

// observe finds each clade's most recent common ancestor in the tree of q,
// whose clade keys c.nodeKeys has computed, accumulates its time and
// whether the clade is present, and checks that every node whose key is a
// clade's is that clade.
func (s *cladeSet) observe(c *CladeCounts, q *treeLCA) error {
	tr := q.tr
	for i := len(s.cl) - 1; i >= 0; i-- { // children before parents
		k := &s.cl[i]
		m := pydt.NoNode
		for _, l := range k.direct {
			if m == pydt.NoNode {
				m = pydt.NodeID(l)
			} else {
				m = q.lca(m, pydt.NodeID(l))
			}
		}
		for _, j := range k.kids {
			if m == pydt.NoNode {
				m = s.mrca[j]
			} else {
				m = q.lca(m, s.mrca[j])
			}
		}
		s.mrca[i] = m
		if tr.Count(m) == k.size {
			k.present++
		}
		tm := tr.Time(m)
		k.sumT += tm.T()
		k.sumU += tm.OneMinus()
		k.logU.add(tm.LogOneMinus())
	}
	for _, v := range c.ord {
		if tr.IsLeaf(v) {
			continue
		}
		if i, ok := s.byKey[c.node[v]]; ok && (s.mrca[i] != v || tr.Count(v) != s.cl[i].size) {
			return ErrCladeCollision
		}
	}
	return nil
}

// credibility returns the fraction of the observed trees that contain each
// clade, by the clades' nodes (sumClade.node), with each recount checked
// against the clade's count where that is known exactly.
func (s *cladeSet) credibility(c *CladeCounts) (map[pydt.NodeID]float64, error) {
	out := make(map[pydt.NodeID]float64, len(s.cl))
	for i := range s.cl {
		k := &s.cl[i]
		if x, ok := c.exactCount(k.key); ok && int64(x) != k.present {
			return nil, fmt.Errorf("%w: a clade counted in %d trees is in %d", ErrCladeCollision, x, k.present)
		}
		out[k.node] = float64(k.present) / float64(c.trees)
	}
	return out, nil
}

// build makes the summary tree, with each clade's exact recount checked
// against its hashed count where that is exact.
func (s *cladeSet) build(c *CladeCounts, labels []string) (*SummaryTree, error) {
	n, trees := c.n, c.trees
	tr := pydt.New(n)
	tr.Labels = labels
	out := &SummaryTree{Tree: tr, Credibility: map[pydt.NodeID]float64{}, Trees: int(trees)}
	if n == 1 {
		tr.Plant(0)
		return out, nil
	}
	ids := make([]pydt.NodeID, len(s.cl))
	times := make([]pydt.Time, len(s.cl))
	for i := range s.cl {
		k := &s.cl[i]
		if x, ok := c.exactCount(k.key); ok && int64(x) != k.present {
			return nil, fmt.Errorf("%w: a clade counted in %d trees is in %d", ErrCladeCollision, x, k.present)
		}
		t, err := meanTime(k.sumT, k.sumU, k.logU, trees)
		if err != nil {
			return nil, err
		}
		if k.parent >= 0 && !times[k.parent].Before(t) {
			// Equal in floating point (the exact means are ordered).
			if t, err = justAfter(times[k.parent]); err != nil {
				return nil, err
			}
		}
		times[i] = t
		ids[i] = tr.NewInternal(t)
		out.Credibility[ids[i]] = float64(k.present) / float64(trees)
		if k.parent >= 0 {
			tr.AddChild(ids[k.parent], ids[i])
		}
		for _, l := range k.direct {
			tr.AddChild(ids[i], pydt.NodeID(l))
		}
	}
	tr.SetRoot(ids[0])
	tr.Recount()
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// subtreeLeaves appends the leaves below v to buf.
func subtreeLeaves(tr *pydt.Tree, v pydt.NodeID, buf []int32, scratch *[]pydt.NodeID) []int32 {
	*scratch = tr.PostOrderFrom(v, (*scratch)[:0])
	for _, u := range *scratch {
		if tr.IsLeaf(u) {
			buf = append(buf, int32(u))
		}
	}
	return buf
}

// Consensus builds the majority-rule consensus tree of the counted trees
// (see the package notes on tree summaries): it keeps every clade found in
// more than half of them. It replays the trees from src, which must give
// the same trees as were counted, two or three times (see Summaries). It
// returns an error wrapping ErrCladeCollision if the recount disagrees
// with the hashed counts.
func (c *CladeCounts) Consensus(src TreeSource) (*SummaryTree, error) {
	_, cons, err := c.Summaries(src, false, true)
	return cons, err
}

// MaxAccuracy returns, among the counted trees, the one that maximises
// Σ (2p − 1) over its clades: the expected number of its clades that are in
// the true tree minus the expected number that are not (the first such
// tree when several tie). Unlike the consensus, it is as resolved as the
// sampled trees are. It replays the trees from src as Summaries does:
// to score them, and to place each branch point at the posterior mean time
// of the most recent common ancestor of its leaves (over all trees) and
// recount its clades exactly.
func (c *CladeCounts) MaxAccuracy(src TreeSource) (*SummaryTree, error) {
	mea, _, err := c.Summaries(src, true, false)
	return mea, err
}

// Summaries returns MaxAccuracy's tree when mea is set and Consensus's when
// consensus is. It replays the trees from src, which must give the trees
// counted: while the counts are exact (Exact), twice (to score the trees
// and find the majority clades' leaves, then to gather the times and
// recount the summaries' clades). Otherwise it first recounts every
// counted clade exactly; a clade without a counter is then in at most
// Err() trees, so the consensus is exact when 2·Err() ≤ Trees() (it
// returns an error otherwise), and a tree's score is known to within the
// bounds its uncounted clades allow (each in at least one tree and at most
// Err()). The trees whose upper bound reaches the best lower bound are
// then scored exactly, by recounting their uncounted clades with further
// passes (as many of those clades at a time as a quarter of the capacity,
// highest upper bound first), up to meaMaxRounds passes: the tree
// returned is the exact maximiser, unless some trees were still left
// unscored, which its Gap reports. A last pass fetches it when it was not
// the best one seen while scoring. Every credibility of the trees
// returned is an exact count.
func (c *CladeCounts) Summaries(src TreeSource, mea, consensus bool) (meaTree, consTree *SummaryTree, err error) {
	meaTree, consTree, _, err = c.summaries(src, mea, consensus, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("summary tree: %w", err)
	}
	return meaTree, consTree, nil
}

// meaPending is a sampled tree whose score is not known exactly yet: known
// is the sum of 2x − T over its clades with exact counts x, u the number
// of its other clades, and keys those clades once collected.
type meaPending struct {
	idx   int64
	known int64
	u     int64
	keys  []cladeKey
	round int  // the pass in which keys were collected
	want  bool // collect keys in the next pass
}

// meaMaxRounds is the number of passes over the trees that MaxAccuracy
// may take, beyond the scoring pass, to score exactly the trees that may
// be the best.
const meaMaxRounds = 4

// meaSearch finds the sampled tree of largest Σ (2x − T) over its clades
// (x a clade's count in the T trees: T times Σ (2p − 1), an integer, so
// that ties are exact and go to the first tree).
type meaSearch struct {
	t, d     int64
	bestIdx  int64 // -1 when none is known
	best     int64
	bestTree *pydt.Tree // a clone of tree bestIdx, nil when it must be fetched
	lower    int64      // the largest lower bound of a tree's score
	pending  []meaPending
	pruned   int
	budget   int        // keys that may still be collected
	round    int        // the current pass: 0 the scoring pass, then 1, 2, …
	rounds   int        // the most passes after the scoring pass
	cur      cladeTable // keys being counted this pass: count+1
	next     cladeTable // keys collected this pass, counted in the next
}

func (m *meaSearch) lo(p *meaPending) int64 { return p.known + p.u*(2-m.t) }
func (m *meaSearch) hi(p *meaPending) int64 { return p.known + p.u*(2*m.d-m.t) }

// exact records that tree idx has score x; tr, when not nil, is the tree.
func (m *meaSearch) exact(idx, x int64, tr *pydt.Tree) {
	if m.bestIdx < 0 || x > m.best || x == m.best && idx < m.bestIdx {
		m.bestIdx, m.best, m.bestTree = idx, x, nil
		if tr != nil {
			m.bestTree = tr.Clone()
		}
	}
	m.lower = max(m.lower, x)
}

// beats reports whether pending tree p may still score above the best
// (or equal it, coming first).
func (m *meaSearch) beats(p *meaPending) bool {
	h := m.hi(p)
	return h >= m.lower && (m.bestIdx < 0 || h > m.best || h == m.best && p.idx < m.bestIdx)
}

// prune drops the pending trees that cannot beat the best, returning their
// collected keys to the budget.
func (m *meaSearch) prune() {
	m.pending = slices.DeleteFunc(m.pending, func(p meaPending) bool {
		if !m.beats(&p) {
			m.budget += len(p.keys)
			return true
		}
		return false
	})
	m.pruned = len(m.pending)
}

// collect keeps the unknown clades of a pending tree for the next count,
// if the budget allows.
func (m *meaSearch) collect(p *meaPending, unknown []cladeKey) {
	if p.keys != nil || len(unknown) > m.budget {
		return
	}
	p.keys, p.round, p.want = slices.Clone(unknown), m.round, false
	m.budget -= len(unknown)
	for _, k := range unknown {
		if !m.next.has(k) {
			m.next.add(k, 1)
		}
	}
}

// score scores a tree during the scoring pass, and collects the unknown
// clades of the trees that may be the best while the budget allows.
func (m *meaSearch) score(idx, known int64, unknown []cladeKey, tr *pydt.Tree) {
	if len(unknown) == 0 {
		m.exact(idx, known, tr)
		return
	}
	p := meaPending{idx: idx, known: known, u: int64(len(unknown))}
	m.lower = max(m.lower, m.lo(&p))
	if !m.beats(&p) {
		return
	}
	m.collect(&p, unknown)
	m.pending = append(m.pending, p)
	if len(m.pending) > 2*m.pruned+64 {
		m.prune()
	}
}

// choose marks the pending trees whose clades the next pass collects:
// those of highest upper bound first, as many as the budget allows.
func (m *meaSearch) choose() {
	var idx []int
	for i := range m.pending {
		if m.pending[i].keys == nil {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(m.hi(&m.pending[b]), m.hi(&m.pending[a])) })
	room := m.budget
	for _, i := range idx {
		if p := &m.pending[i]; int(p.u) <= room {
			p.want, room = true, room-int(p.u)
		}
	}
}

// countPass counts the keys of cur in the trees of src; in the same pass
// it collects the unknown clades of the pending trees chosen.
func (m *meaSearch) countPass(c *CladeCounts, src TreeSource) error {
	var (
		idx     int64
		j       int // next pending tree, in tree order
		unknown []cladeKey
	)
	slices.SortFunc(m.pending, func(a, b meaPending) int { return cmp.Compare(a.idx, b.idx) })
	return src(func(tr *pydt.Tree) error {
		if err := c.checkLeaves(tr); err != nil {
			return err
		}
		collect := j < len(m.pending) && m.pending[j].idx == idx && m.pending[j].want
		unknown = unknown[:0]
		for _, v := range c.nodeKeys(tr) {
			if tr.IsLeaf(v) {
				continue
			}
			k := c.node[v]
			if m.cur.live > 0 {
				if i := m.cur.slot(k); m.cur.count[i] != 0 {
					m.cur.count[i]++
				}
			}
			if _, ok := c.exactCount(k); collect && !ok {
				unknown = append(unknown, k)
			}
		}
		if collect {
			m.collect(&m.pending[j], unknown)
		}
		for j < len(m.pending) && m.pending[j].idx <= idx {
			j++
		}
		idx++
		return nil
	})
}

// resolve scores the pending trees exactly, with passes over src, until
// none can beat the best or m.rounds passes are done (more if no tree was
// scored exactly yet); then, if the best tree was not kept,
// it fetches it with one more pass. It returns 0 when the best is the
// exact maximiser, and otherwise the most by which a tree left unscored
// may exceed it, in units of Σ (2p − 1).
func (m *meaSearch) resolve(c *CladeCounts, src TreeSource) (gap float64, err error) {
	for {
		// The keys collected so far are counted in the next pass.
		m.cur, m.next = m.next, cladeTable{}
		m.prune()
		// The limit on passes applies once some tree is scored exactly.
		if len(m.pending) == 0 || m.round >= m.rounds && m.bestIdx >= 0 {
			break
		}
		m.round++
		m.choose()
		if err := m.countPass(c, src); err != nil {
			return 0, err
		}
		m.pending = slices.DeleteFunc(m.pending, func(p meaPending) bool {
			if p.keys == nil || p.round == m.round {
				return false // not counted yet
			}
			x := p.known
			for _, k := range p.keys {
				x += 2*int64(m.cur.get(k)-1) - m.t
			}
			m.exact(p.idx, x, nil)
			m.budget += len(p.keys)
			return true
		})
	}
	for i := range m.pending {
		gap = max(gap, float64(m.hi(&m.pending[i])-m.best)/float64(m.t))
	}
	m.pending, m.cur, m.next = nil, cladeTable{}, cladeTable{}
	if m.bestTree == nil && m.bestIdx >= 0 {
		var idx int64
		err := src(func(tr *pydt.Tree) error {
			if idx == m.bestIdx {
				m.bestTree = tr.Clone()
			}
			idx++
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	if m.bestTree == nil {
		return 0, errors.New("the trees replayed are not the trees counted")
	}
	return gap, nil
}

// splitCounts counts, per chain, the clades that may reach MinSplitFreq in
// some chain, for SplitSD.
type splitCounts struct {
	chains int
	index  cladeTable // key → its index + 1
	keys   []cladeKey
	count  []uint32 // count[i·chains + chain]
	trees  []int64
}

// candidates adds the clades of one chain's counts that may be in at
// least a fraction minFreq of its trees, or fails when the counts cannot
// tell (a clade without a counter may be that frequent).
func (s *splitCounts) candidates(c *CladeCounts, minFreq float64) error {
	need := minFreq * float64(c.trees)
	if float64(c.err) >= need {
		return fmt.Errorf("clade counts: a capacity of %d counters is too small for the split frequencies of %d trees on %d leaves (error %d)",
			c.k, c.trees, c.n, c.err)
	}
	var add []cladeKey
	c.tab.each(func(k cladeKey, x uint32) {
		if float64(x)+float64(c.err) >= need && !s.index.has(k) {
			add = append(add, k)
		}
	})
	// In key order, so that the indices do not depend on slot order.
	slices.SortFunc(add, func(a, b cladeKey) int {
		if r := cmp.Compare(a[0], b[0]); r != 0 {
			return r
		}
		return cmp.Compare(a[1], b[1])
	})
	for _, k := range add {
		s.keys = append(s.keys, k)
		s.index.add(k, uint32(len(s.keys)))
	}
	return nil
}

func (s *splitCounts) add(chain int, k cladeKey) {
	if i := s.index.get(k); i != 0 {
		s.count[int(i-1)*s.chains+chain]++
	}
}

// summaries is Summaries over the concatenation of the sources, which
// also recounts the clades of linkage (when not nil) for its credibility
// and, when split is not nil, counts its clades per source.
func (c *CladeCounts) summaries(src TreeSource, mea, consensus bool, linkage *pydt.Tree, split *splitCounts, chains ...TreeSource) (meaTree, consTree, linkTree *SummaryTree, err error) {
	if c.trees == 0 {
		return nil, nil, nil, errors.New("no trees counted")
	}
	if chains == nil {
		chains = []TreeSource{src}
	}
	src = func(fn func(*pydt.Tree) error) error {
		for _, ch := range chains {
			if err := ch(fn); err != nil {
				return err
			}
		}
		return nil
	}
	if !c.Exact() && !c.recounted {
		if err := c.recount(src); err != nil {
			return nil, nil, nil, err
		}
	}
	if consensus && 2*c.err > c.trees {
		return nil, nil, nil, fmt.Errorf("a capacity of %d counters is too small for the consensus of %d trees on %d leaves (error %d)", c.k, c.trees, c.n, c.err)
	}
	n := c.n
	// Pass 1: score the trees, find the leaves of the majority clades, and
	// count the split frequencies' clades per chain.
	var cons []sumClade
	consIdx := map[cladeKey]int{}
	if consensus {
		c.tab.each(func(k cladeKey, x uint32) {
			if 2*int64(x) > c.trees {
				consIdx[k] = len(cons)
				cons = append(cons, sumClade{key: k})
			}
		})
	}
	if split != nil {
		split.trees = make([]int64, split.chains)
		split.count = make([]uint32, len(split.keys)*split.chains)
	}
	search := meaSearch{t: c.trees, d: c.err, bestIdx: -1, lower: math.MinInt64, budget: max(c.k/4, n), rounds: c.meaRounds}
	var (
		trees   int64
		scratch []pydt.NodeID
		labels  []string
		unknown []cladeKey
	)
	for ci, ch := range chains {
		err = ch(func(tr *pydt.Tree) error {
			if err := c.checkLeaves(tr); err != nil {
				return err
			}
			if trees == 0 {
				labels = tr.Labels
			}
			if split != nil {
				split.trees[ci]++
			}
			var known int64
			unknown = unknown[:0]
			for _, v := range c.nodeKeys(tr) {
				if tr.IsLeaf(v) {
					continue
				}
				k := c.node[v]
				if split != nil {
					split.add(ci, k)
				}
				x, ok := c.exactCount(k)
				if !ok {
					if c.Exact() {
						return errors.New("a replayed tree has a clade that was not counted")
					}
					unknown = append(unknown, k)
					continue
				}
				known += 2*int64(x) - c.trees
				if i, ok := consIdx[k]; ok {
					if cons[i].leaves == nil {
						cons[i].leaves = subtreeLeaves(tr, v, nil, &scratch)
					} else if len(cons[i].leaves) != tr.Count(v) {
						return ErrCladeCollision
					}
				}
			}
			if mea {
				search.score(trees, known, unknown, tr)
			}
			trees++
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if trees != c.trees {
		return nil, nil, nil, fmt.Errorf("the trees replayed (%d) are not the trees counted (%d)", trees, c.trees)
	}
	for _, k := range cons {
		if k.leaves == nil {
			return nil, nil, nil, errors.New("a counted clade is not in the replayed trees")
		}
	}
	var sets []*cladeSet
	var gap float64
	if mea {
		if gap, err = search.resolve(c, src); err != nil {
			return nil, nil, nil, err
		}
		best := search.bestTree
		var cl []sumClade
		for _, v := range c.nodeKeys(best) {
			if !best.IsLeaf(v) {
				cl = append(cl, sumClade{key: c.node[v], leaves: subtreeLeaves(best, v, nil, &scratch)})
			}
		}
		s, err := newCladeSet(n, cl)
		if err != nil {
			return nil, nil, nil, err
		}
		sets = append(sets, s)
	}
	if consensus {
		s, err := newCladeSet(n, cons)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("consensus: %w", err)
		}
		sets = append(sets, s)
	}
	var link *cladeSet
	if linkage != nil && n > 1 {
		var cl []sumClade
		for _, v := range c.nodeKeys(linkage) {
			if !linkage.IsLeaf(v) {
				cl = append(cl, sumClade{key: c.node[v], node: v, leaves: subtreeLeaves(linkage, v, nil, &scratch)})
			}
		}
		if link, err = newCladeSet(n, cl); err != nil {
			return nil, nil, nil, err
		}
	}
	// Pass 2: the times, and the exact recount.
	if n > 1 {
		var q treeLCA
		err = src(func(tr *pydt.Tree) error {
			c.nodeKeys(tr)
			q.reset(tr)
			for _, s := range append(sets, link) {
				if s == nil {
					continue
				}
				if err := s.observe(c, &q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	var out []*SummaryTree
	for _, s := range sets {
		st, err := s.build(c, labels)
		if err != nil {
			return nil, nil, nil, err
		}
		out = append(out, st)
	}
	if mea {
		meaTree, out = out[0], out[1:]
		meaTree.Gap = gap
	}
	if consensus {
		consTree = out[0]
	}
	if linkage != nil {
		linkTree = &SummaryTree{Tree: linkage, Credibility: map[pydt.NodeID]float64{}, Trees: int(c.trees)}
		if link != nil { // one row: no branch point
			if linkTree.Credibility, err = link.credibility(c); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return meaTree, consTree, linkTree, nil
}

// meanTime is the time whose t is sumT/n and whose 1-t is sumU/n (or
// exp(logU)/n when sumU underflows to a subnormal or zero), taking
// whichever of t and 1-t is the more precise.
func meanTime(sumT, sumU float64, logU logSum, n int64) (pydt.Time, error) {
	if m := sumT / float64(n); m <= 0.5 {
		return pydt.TimeAt(m), nil
	}
	if u := sumU / float64(n); u >= 0x1p-1000 {
		return pydt.TimeFromOneMinus(u), nil
	}
	l := logU.value() - math.Log(float64(n))
	t := pydt.TimeFromLogOneMinus(l)
	if !t.Valid() || !t.Before(pydt.Leaf) {
		return pydt.Time{}, fmt.Errorf("mean divergence time with log(1-t) = %v is not representable before t = 1", l)
	}
	return t, nil
}

// justAfter returns the nearest time after t that float64 represents as
// a t (below one half) or as a 1-t, so that it keeps its order when written
// in Newick. Times are kept in s = -log(1-t), whose spacing can be coarser
// than that of 1-t (near t = 0.997 a step in 1-t moves s by a quarter of
// its spacing), so the step is repeated until s moves; should that fail,
// the next s itself is taken.
func justAfter(t pydt.Time) (pydt.Time, error) {
	next := t
	if t.T() < 0.5 {
		for x, k := t.T(), 0; k < 64 && !t.Before(next); k++ {
			x = math.Nextafter(x, 1)
			next = pydt.TimeAt(x)
		}
	} else {
		for u, k := t.OneMinus(), 0; k < 64 && !t.Before(next); k++ {
			u = math.Nextafter(u, 0)
			next = pydt.TimeFromOneMinus(u)
		}
	}
	if !t.Before(next) || !next.Before(pydt.Leaf) { // or 1-t underflowed
		next = pydt.TimeFromS(math.Nextafter(t.S(), math.Inf(1)))
	}
	if !t.Before(next) || !next.Before(pydt.Leaf) {
		return pydt.Time{}, fmt.Errorf("no representable time between t = %v and its branch point's children", t.T())
	}
	return next, nil
}

// TreeSummary is what SummarizeTrees finds in a sample of trees.
type TreeSummary struct {
	// Linkage is the average-linkage tree of the posterior mean LCA times
	// (Coclust.AverageLinkage), labelled with its clades' frequencies
	// (recounted exactly); nil when Coclust is.
	Linkage *SummaryTree
	// MaxAccuracy is the sampled tree that maximises the expected number
	// of correct minus incorrect clades (CladeCounts.MaxAccuracy).
	MaxAccuracy *SummaryTree
	// Consensus is the majority-rule consensus tree, the maximiser of the
	// same quantity over all trees (CladeCounts.Consensus).
	Consensus *SummaryTree
	// Clades holds the pooled clade counts, which merge with other
	// samples'.
	Clades *CladeCounts
	// Coclust holds the posterior mean LCA time of every pair of rows, or
	// is nil when it was not asked for.
	Coclust *Coclust
	// SplitSD is the standard deviation of clade frequencies across
	// chains (SplitFrequencySD with MinSplitFreq), or nil for one chain.
	SplitSD *SplitSD
}

// SummarizeTrees reads a sample of trees on n leaves from src: once to
// count clades (and, when coclust is set, to accumulate the mean LCA time
// of every pair of rows, in O(n²) memory, and build the average-linkage
// tree), then twice more to build the clade summaries (or more, see
// CladeCounts.Summaries). Its memory does not grow with the number of
// trees.
func SummarizeTrees(src TreeSource, n int, coclust bool) (*TreeSummary, error) {
	return SummarizeChains([]TreeSource{src}, n, coclust)
}

// SummarizeChains is SummarizeTrees over the trees of several chains
// together, one source per chain; with two chains or more it also reports
// the standard deviation of clade frequencies across them (SplitSD). Each
// chain's clades are counted apart (CladeCounts with the default
// capacity), and the clades that may reach MinSplitFreq in it are noted;
// the counts are then merged into the first chain's, and the noted clades
// are recounted exactly per chain in the scoring pass. It needs at least
// one source.
func SummarizeChains(chains []TreeSource, n int, coclust bool) (*TreeSummary, error) {
	return summarizeChains(chains, n, coclust, CladeCapacity(n))
}

// summarizeChains is SummarizeChains with the given capacity; every error
// it returns names the summary tree once.
func summarizeChains(chains []TreeSource, n int, coclust bool, capacity int) (*TreeSummary, error) {
	s, err := summarizeChainsCapacity(chains, n, coclust, capacity)
	if err != nil {
		return nil, fmt.Errorf("summary tree: %w", err)
	}
	return s, nil
}

func summarizeChainsCapacity(chains []TreeSource, n int, coclust bool, capacity int) (*TreeSummary, error) {
	if len(chains) == 0 {
		return nil, errors.New("no chains")
	}
	out := &TreeSummary{}
	var err error
	if coclust {
		if out.Coclust, err = NewCoclust(n); err != nil {
			return nil, err
		}
	}
	var split *splitCounts
	if len(chains) >= 2 {
		split = &splitCounts{chains: len(chains)}
	}
	var counts *CladeCounts
	allTrees := true
	for _, src := range chains {
		cc, err := NewCladeCountsCapacity(n, capacity)
		if err != nil {
			return nil, err
		}
		err = src(func(tr *pydt.Tree) error {
			if err := cc.Add(tr); err != nil {
				return err
			}
			if out.Coclust != nil {
				return out.Coclust.Add(tr)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if cc.trees == 0 {
			allTrees = false
		} else if split != nil {
			if err := split.candidates(cc, MinSplitFreq); err != nil {
				return nil, err
			}
		}
		// The first chain's counts become the pooled ones, so that the
		// clades are not held twice; the others are merged into them and
		// are garbage after.
		if counts == nil {
			counts = cc
		} else if err := counts.Merge(cc); err != nil {
			return nil, err
		}
	}
	if !allTrees {
		split = nil
	}
	out.Clades = counts
	if counts.trees == 0 {
		return nil, errors.New("no trees counted")
	}
	var linkage *pydt.Tree
	if out.Coclust != nil {
		if linkage, err = out.Coclust.AverageLinkage(); err != nil {
			return nil, err
		}
	}
	var link *SummaryTree
	if out.MaxAccuracy, out.Consensus, link, err = counts.summaries(nil, true, true, linkage, split, chains...); err != nil {
		return nil, err
	}
	if linkage != nil {
		linkage.Labels = out.Consensus.Tree.Labels
		out.Linkage = link
	}
	if split != nil {
		sd := split.sd(counts.keys, MinSplitFreq)
		out.SplitSD = &sd
	}
	return out, nil
}
