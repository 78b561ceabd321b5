package inference

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
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
// Clades are counted by CladeCounts in memory that grows with the number of
// distinct clades, not with the number of trees, and counts from separate
// chains or machines merge. Building the summaries takes two further
// passes over the trees (a TreeSource replays them), which find the leaves
// of the kept clades, gather the times and recount every kept clade
// exactly, so that a collision of the hash that keys the counts is
// detected, never silently used.

// TreeSource replays a sample of trees: it calls fn with each tree in turn,
// in the same order every time it is called, and stops at fn's first
// error, returning it.
type TreeSource func(fn func(tr *pydt.Tree) error) error

// NewickFiles returns a TreeSource that reads files of Newick trees, one
// tree per line as Run writes trees-K.nwk, in the memory of one tree.
// labels are the data's row labels, as ParseNewick takes them (nil when
// leaves are named by row number).
func NewickFiles(labels []string, paths ...string) TreeSource {
	return func(fn func(*pydt.Tree) error) error {
		for _, path := range paths {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			err = pydt.ForEachNewick(f, labels, fn)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
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

// cladeKey identifies a clade (a set of leaves) by two independent sums of
// random 64-bit keys, one per leaf: equal sets have equal keys, and two
// given distinct sets collide with probability 2^-128.
type cladeKey [2]uint64

// leafKeys returns the keys of n leaves. They are fixed (not drawn from a
// run's seed), so that counts made anywhere over the same rows merge.
func leafKeys(n int) []cladeKey {
	rng := rand.New(rand.NewPCG(0x6d6363, 0x636c616465))
	keys := make([]cladeKey, n)
	for i := range keys {
		keys[i] = cladeKey{rng.Uint64(), rng.Uint64()}
	}
	return keys
}

// CladeCounts counts, over a sample of trees on the same N leaves, how many
// trees contain each clade (the set of leaves below a branch point). It
// keeps one map entry, a 128-bit key and a count (about 45 bytes), per
// distinct clade, not per tree: its memory grows with the number of
// distinct clades seen. Counts from different samples of trees on the same
// rows merge (Merge). Summary trees are built with further passes over the
// trees (MaxAccuracy, Consensus, Summaries), which find the leaves of the
// clades they keep and recount those clades exactly.
type CladeCounts struct {
	n     int
	keys  []cladeKey
	count map[cladeKey]uint32
	trees int64

	// Scratch, by NodeID.
	ord  []pydt.NodeID
	node []cladeKey
}

// NewCladeCounts returns empty counts for trees with n leaves.
func NewCladeCounts(n int) (*CladeCounts, error) {
	if n < 1 {
		return nil, fmt.Errorf("clade counts: need at least one leaf, got %d", n)
	}
	return &CladeCounts{n: n, keys: leafKeys(n), count: map[cladeKey]uint32{}}, nil
}

// Trees returns the number of trees counted.
func (c *CladeCounts) Trees() int { return int(c.trees) }

// Distinct returns the number of distinct clades seen (leaves excluded).
func (c *CladeCounts) Distinct() int { return len(c.count) }

// NumLeaves returns N.
func (c *CladeCounts) NumLeaves() int { return c.n }

// nodeKeys computes the clade key of every node of tr into c.node and
// returns tr's post-order.
func (c *CladeCounts) nodeKeys(tr *pydt.Tree) []pydt.NodeID {
	if cap(c.node) < tr.Cap() {
		c.node = make([]cladeKey, tr.Cap())
	}
	c.node = c.node[:tr.Cap()]
	c.ord = tr.PostOrder(c.ord[:0])
	for _, v := range c.ord {
		if tr.IsLeaf(v) {
			c.node[v] = c.keys[v]
			continue
		}
		var k cladeKey
		for ch := tr.FirstChild(v); ch != pydt.NoNode; ch = tr.NextSibling(ch) {
			k[0] += c.node[ch][0]
			k[1] += c.node[ch][1]
		}
		c.node[v] = k
	}
	return c.ord
}

func (c *CladeCounts) checkLeaves(tr *pydt.Tree) error {
	if tr.NumLeaves() != c.n {
		return fmt.Errorf("clade counts: tree has %d leaves, want %d", tr.NumLeaves(), c.n)
	}
	return nil
}

// Add counts the clades of tr.
func (c *CladeCounts) Add(tr *pydt.Tree) error {
	if err := c.checkLeaves(tr); err != nil {
		return err
	}
	if c.trees == math.MaxUint32 {
		return fmt.Errorf("clade counts: more than %d trees", uint32(math.MaxUint32))
	}
	for _, v := range c.nodeKeys(tr) {
		if !tr.IsLeaf(v) {
			c.count[c.node[v]]++
		}
	}
	c.trees++
	return nil
}

// Merge adds the counts of o, made over trees on the same rows, to c.
func (c *CladeCounts) Merge(o *CladeCounts) error {
	if o.n != c.n {
		return fmt.Errorf("clade counts: cannot merge counts over %d leaves into counts over %d", o.n, c.n)
	}
	if c.trees+o.trees > math.MaxUint32 {
		return fmt.Errorf("clade counts: more than %d trees", uint32(math.MaxUint32))
	}
	for k, x := range o.count {
		c.count[k] += x
	}
	c.trees += o.trees
	return nil
}

// Credibility returns, for every branch point of tr, the fraction of the
// counted trees that contain its clade. The clades are matched by their
// 128-bit hash keys only.
func (c *CladeCounts) Credibility(tr *pydt.Tree) (map[pydt.NodeID]float64, error) {
	if err := c.checkLeaves(tr); err != nil {
		return nil, err
	}
	if c.trees == 0 {
		return nil, errors.New("clade counts: no trees counted")
	}
	out := map[pydt.NodeID]float64{}
	for _, v := range c.nodeKeys(tr) {
		if !tr.IsLeaf(v) {
			out[v] = float64(c.count[c.node[v]]) / float64(c.trees)
		}
	}
	return out, nil
}

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
	leaves []int32
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
		if tr.Count(m) == len(k.leaves) {
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
		if i, ok := s.byKey[c.node[v]]; ok && (s.mrca[i] != v || tr.Count(v) != len(s.cl[i].leaves)) {
			return ErrCladeCollision
		}
	}
	return nil
}

// build makes the summary tree, with each clade's exact recount checked
// against its hashed count.
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
		if k.present != int64(c.count[k.key]) {
			return nil, fmt.Errorf("%w: a clade counted in %d trees is in %d", ErrCladeCollision, c.count[k.key], k.present)
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
// the same trees as were counted, twice: to find the clades' leaves, and
// to place each branch point at the posterior mean time of the most recent
// common ancestor of its leaves and recount each clade exactly. It returns
// an error wrapping ErrCladeCollision if the recount disagrees with the
// hashed counts.
func (c *CladeCounts) Consensus(src TreeSource) (*SummaryTree, error) {
	_, cons, err := c.Summaries(src, false, true)
	return cons, err
}

// MaxAccuracy returns, among the counted trees, the one that maximises
// Σ (2p − 1) over its clades: the expected number of its clades that are in
// the true tree minus the expected number that are not (the first such
// tree when several tie). Unlike the consensus, it is as resolved as the
// sampled trees are. It replays the trees from src twice, as Consensus
// does: to score them, and to place each branch point at the posterior
// mean time of the most recent common ancestor of its leaves (over all
// trees) and recount its clades exactly.
func (c *CladeCounts) MaxAccuracy(src TreeSource) (*SummaryTree, error) {
	mea, _, err := c.Summaries(src, true, false)
	return mea, err
}

// Summaries returns MaxAccuracy's tree when mea is set and Consensus's when
// consensus is, with two passes over src in all.
func (c *CladeCounts) Summaries(src TreeSource, mea, consensus bool) (meaTree, consTree *SummaryTree, err error) {
	if c.trees == 0 {
		return nil, nil, errors.New("summary tree: no trees counted")
	}
	n := c.n
	// Pass 1: score the trees, and find the leaves of the majority clades.
	var cons []sumClade
	consIdx := map[cladeKey]int{}
	if consensus {
		for k, x := range c.count {
			if 2*int64(x) > c.trees {
				consIdx[k] = len(cons)
				cons = append(cons, sumClade{key: k})
			}
		}
	}
	var (
		best     = math.Inf(-1)
		bestTree *pydt.Tree
		trees    int64
		scratch  []pydt.NodeID
		labels   []string
	)
	err = src(func(tr *pydt.Tree) error {
		if err := c.checkLeaves(tr); err != nil {
			return err
		}
		if trees == 0 {
			labels = tr.Labels
		}
		trees++
		score := 0.0
		for _, v := range c.nodeKeys(tr) {
			if tr.IsLeaf(v) {
				continue
			}
			x, ok := c.count[c.node[v]]
			if !ok {
				return errors.New("a replayed tree has a clade that was not counted")
			}
			score += 2*float64(x)/float64(c.trees) - 1
			if i, ok := consIdx[c.node[v]]; ok {
				if cons[i].leaves == nil {
					cons[i].leaves = subtreeLeaves(tr, v, nil, &scratch)
				} else if len(cons[i].leaves) != tr.Count(v) {
					return ErrCladeCollision
				}
			}
		}
		if mea && score > best {
			best, bestTree = score, tr.Clone()
		}
		return nil
	})
	if err == nil && trees != c.trees {
		err = fmt.Errorf("the trees replayed (%d) are not the trees counted (%d)", trees, c.trees)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("summary tree: %w", err)
	}
	for _, k := range cons {
		if k.leaves == nil {
			return nil, nil, errors.New("summary tree: a counted clade is not in the replayed trees")
		}
	}
	var sets []*cladeSet
	if mea {
		var cl []sumClade
		for _, v := range c.nodeKeys(bestTree) {
			if !bestTree.IsLeaf(v) {
				cl = append(cl, sumClade{key: c.node[v], leaves: subtreeLeaves(bestTree, v, nil, &scratch)})
			}
		}
		s, err := newCladeSet(n, cl)
		if err != nil {
			return nil, nil, fmt.Errorf("summary tree: %w", err)
		}
		sets = append(sets, s)
	}
	if consensus {
		s, err := newCladeSet(n, cons)
		if err != nil {
			return nil, nil, fmt.Errorf("consensus: %w", err)
		}
		sets = append(sets, s)
	}
	// Pass 2: the times, and the exact recount.
	if n > 1 {
		var q treeLCA
		err = src(func(tr *pydt.Tree) error {
			c.nodeKeys(tr)
			q.reset(tr)
			for _, s := range sets {
				if err := s.observe(c, &q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("summary tree: %w", err)
		}
	}
	var out []*SummaryTree
	for _, s := range sets {
		st, err := s.build(c, labels)
		if err != nil {
			return nil, nil, fmt.Errorf("summary tree: %w", err)
		}
		out = append(out, st)
	}
	if mea {
		meaTree, out = out[0], out[1:]
	}
	if consensus {
		consTree = out[0]
	}
	return meaTree, consTree, nil
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

// justAfter returns the next representable time after t.
func justAfter(t pydt.Time) (pydt.Time, error) {
	var next pydt.Time
	if t.T() < 0.5 {
		next = pydt.TimeAt(math.Nextafter(t.T(), 1))
	} else {
		next = pydt.TimeFromOneMinus(math.Nextafter(t.OneMinus(), 0))
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
	// (matched by hash key); nil when Coclust is.
	Linkage *SummaryTree
	// MaxAccuracy is the sampled tree that maximises the expected number
	// of correct minus incorrect clades (CladeCounts.MaxAccuracy).
	MaxAccuracy *SummaryTree
	// Consensus is the majority-rule consensus tree, the maximiser of the
	// same quantity over all trees (CladeCounts.Consensus).
	Consensus *SummaryTree
	// Clades holds the clade counts, which merge with other samples'.
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
// tree), then twice more to build the clade summaries. Its memory
// does not grow with the number of trees beyond the number of distinct
// clades.
func SummarizeTrees(src TreeSource, n int, coclust bool) (*TreeSummary, error) {
	return SummarizeChains([]TreeSource{src}, n, coclust)
}

// SummarizeChains is SummarizeTrees over the trees of several chains
// together, one source per chain; with two chains or more it also reports
// the standard deviation of clade frequencies across them (SplitSD),
// counting each chain's clades apart (memory for the distinct clades of
// each chain, which are then pooled into the first chain's counts). It
// needs at least one source.
func SummarizeChains(chains []TreeSource, n int, coclust bool) (*TreeSummary, error) {
	if len(chains) == 0 {
		return nil, errors.New("summary tree: no chains")
	}
	out := &TreeSummary{}
	var err error
	if coclust {
		if out.Coclust, err = NewCoclust(n); err != nil {
			return nil, err
		}
	}
	per := make([]*CladeCounts, 0, len(chains))
	for _, src := range chains {
		cc, err := NewCladeCounts(n)
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
		per = append(per, cc)
	}
	if len(chains) >= 2 && !slices.ContainsFunc(per, func(c *CladeCounts) bool { return c.Trees() == 0 }) {
		sd, err := SplitFrequencySD(per, MinSplitFreq)
		if err != nil {
			return nil, err
		}
		out.SplitSD = &sd
	}
	// The first chain's counts become the pooled ones, so that the clades
	// are not held twice (a second map as large as the first for one
	// chain); the others are merged into them and are garbage after.
	counts := per[0]
	for _, cc := range per[1:] {
		if err := counts.Merge(cc); err != nil {
			return nil, err
		}
	}
	out.Clades = counts
	src := func(fn func(tr *pydt.Tree) error) error {
		for _, c := range chains {
			if err := c(fn); err != nil {
				return err
			}
		}
		return nil
	}
	if out.MaxAccuracy, out.Consensus, err = counts.Summaries(src, true, true); err != nil {
		return nil, err
	}
	if out.Coclust != nil {
		tr, err := out.Coclust.AverageLinkage()
		if err != nil {
			return nil, err
		}
		tr.Labels = out.Consensus.Tree.Labels
		cred, err := counts.Credibility(tr)
		if err != nil {
			return nil, err
		}
		out.Linkage = &SummaryTree{Tree: tr, Credibility: cred, Trees: counts.Trees()}
	}
	return out, nil
}
