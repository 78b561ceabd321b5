package inference

import (
	"cmp"
	"errors"
	"fmt"
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
// Each branch point's time is the posterior mean of the time of the most
// recent common ancestor of its leaves, taken over every sampled tree (not
// only those that contain the clade), so a branch point always comes
// before its descendants. Its credibility p is written as its Newick label.
//
// Clades are counted by CladeCounts in memory that grows with the number of
// distinct clades, not with the number of trees, and counts from separate
// chains or machines merge. Building a summary takes further passes over
// the trees (a TreeSource replays them), which gather the times and
// recount every summary clade exactly, so that a collision of the hash
// that keys the counts is detected, never silently used.

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

// cladeRec is one distinct clade: its key, in how many trees it was seen,
// its number of leaves, and the clades of its children in the first tree
// it was seen in (kids[off:off+deg]), from which its leaves are recovered.
type cladeRec struct {
	key      cladeKey
	count    int64
	size     int32
	off, deg int32
}

// CladeCounts counts, over a sample of trees on the same N leaves, how many
// trees contain each clade (the set of leaves below a branch point). It
// keeps one record of about 40 bytes per distinct clade, not per tree:
// its memory grows with the number of distinct clades seen. Counts from
// different samples of trees on the same rows merge (Merge), and a
// majority-rule consensus is built with a second pass (Consensus).
//
// Clade IDs: leaf i is clade i; recorded clades are N, N+1, ... in order
// of first appearance, and a clade's children always have smaller IDs.
type CladeCounts struct {
	n     int
	keys  []cladeKey
	index map[cladeKey]int32
	recs  []cladeRec
	kids  []int32
	trees int64

	// Scratch for Add, by NodeID.
	ord  []pydt.NodeID
	node []cladeKey
	ids  []int32
}

// NewCladeCounts returns empty counts for trees with n leaves.
func NewCladeCounts(n int) (*CladeCounts, error) {
	if n < 1 {
		return nil, fmt.Errorf("clade counts: need at least one leaf, got %d", n)
	}
	return &CladeCounts{n: n, keys: leafKeys(n), index: map[cladeKey]int32{}}, nil
}

// Trees returns the number of trees counted.
func (c *CladeCounts) Trees() int { return int(c.trees) }

// Distinct returns the number of distinct clades seen (leaves excluded).
func (c *CladeCounts) Distinct() int { return len(c.recs) }

// NumLeaves returns N.
func (c *CladeCounts) NumLeaves() int { return c.n }

// nodeKeys computes the clade key of every node of tr into c.node and
// returns tr's post-order.
func (c *CladeCounts) nodeKeys(tr *pydt.Tree) []pydt.NodeID {
	if cap(c.node) < tr.Cap() {
		c.node = make([]cladeKey, tr.Cap())
		c.ids = make([]int32, tr.Cap())
	}
	c.node, c.ids = c.node[:tr.Cap()], c.ids[:tr.Cap()]
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
	for _, v := range c.nodeKeys(tr) {
		if tr.IsLeaf(v) {
			c.ids[v] = int32(v)
			continue
		}
		k := c.node[v]
		idx, ok := c.index[k]
		if !ok {
			idx = int32(len(c.recs))
			off := int32(len(c.kids))
			for ch := tr.FirstChild(v); ch != pydt.NoNode; ch = tr.NextSibling(ch) {
				c.kids = append(c.kids, c.ids[ch])
			}
			c.recs = append(c.recs, cladeRec{key: k, size: int32(tr.Count(v)), off: off, deg: int32(len(c.kids)) - off})
			c.index[k] = idx
		} else if c.recs[idx].size != int32(tr.Count(v)) {
			return fmt.Errorf("clade counts: %w", ErrCladeCollision)
		}
		c.recs[idx].count++
		c.ids[v] = int32(c.n) + idx
	}
	c.trees++
	return nil
}

// Merge adds the counts of o, made over trees on the same rows, to c.
func (c *CladeCounts) Merge(o *CladeCounts) error {
	if o.n != c.n {
		return fmt.Errorf("clade counts: cannot merge counts over %d leaves into counts over %d", o.n, c.n)
	}
	trans := make([]int32, len(o.recs)) // o's record index -> c's clade ID
	id := func(x int32) int32 {
		if x < int32(o.n) {
			return x
		}
		return trans[x-int32(o.n)]
	}
	for i, r := range o.recs {
		idx, ok := c.index[r.key]
		if !ok {
			idx = int32(len(c.recs))
			off := int32(len(c.kids))
			for _, k := range o.kids[r.off : r.off+r.deg] {
				c.kids = append(c.kids, id(k))
			}
			c.recs = append(c.recs, cladeRec{key: r.key, size: r.size, off: off, deg: r.deg})
			c.index[r.key] = idx
		} else if c.recs[idx].size != r.size {
			return fmt.Errorf("clade counts: %w", ErrCladeCollision)
		}
		c.recs[idx].count += r.count
		trans[i] = int32(c.n) + idx
	}
	c.trees += o.trees
	return nil
}

// leaves appends the leaves of clade id to buf.
func (c *CladeCounts) leaves(id int32, buf []int32) []int32 {
	stack := []int32{id}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x < int32(c.n) {
			buf = append(buf, x)
			continue
		}
		r := c.recs[x-int32(c.n)]
		stack = append(stack, c.kids[r.off:r.off+r.deg]...)
	}
	return buf
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
			p := 0.0
			if idx, ok := c.index[c.node[v]]; ok {
				p = float64(c.recs[idx].count) / float64(c.trees)
			}
			out[v] = p
		}
	}
	return out, nil
}

// SummaryTree is a summary of a sample of trees: a tree whose branch points
// carry their posterior clade credibility.
type SummaryTree struct {
	// Tree is the majority-rule consensus tree, with each branch point at
	// the posterior mean time of the most recent common ancestor of its
	// leaves.
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
	var sum float64
	for _, p := range s.Credibility {
		sum += 2*p - 1
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

// consClade is a clade of the consensus tree being built.
type consClade struct {
	rec    int32   // index into CladeCounts.recs
	size   int     // leaves
	parent int     // consensus index, -1 for the root
	kids   []int   // consensus children
	direct []int32 // leaves whose smallest consensus clade this is
	// Gathered by the second pass.
	present int64
	sumT    float64
	sumU    float64 // Σ (1-t)
	logU    logSum  // log Σ (1-t), for when sumU underflows
}

// Consensus builds the majority-rule consensus tree of the counted trees
// (see the package notes on tree summaries): it keeps every clade found in
// more than half of them, and replays them from src, which must give the
// same trees as were counted, to place each branch point at the posterior
// mean time of the most recent common ancestor of its leaves and to
// recount each kept clade exactly. It returns an error wrapping
// ErrCladeCollision if the recount disagrees with the hashed counts.
func (c *CladeCounts) Consensus(src TreeSource) (*SummaryTree, error) {
	if c.trees == 0 {
		return nil, errors.New("consensus: no trees counted")
	}
	var recs []int32
	for i, r := range c.recs {
		if 2*r.count > c.trees {
			recs = append(recs, int32(i))
		}
	}
	s, err := c.summarize(recs, src)
	if err != nil {
		return nil, fmt.Errorf("consensus: %w", err)
	}
	return s, nil
}

// MaxAccuracy returns, among the counted trees, the one that maximises
// Σ (2p − 1) over its clades: the expected number of its clades that are in
// the true tree minus the expected number that are not (the first such
// tree when several tie). Unlike the consensus, it is as resolved as the
// sampled trees are. It replays the trees from src twice: once to score
// them, once to place each branch point at the posterior mean time of the
// most recent common ancestor of its leaves (over all trees) and to
// recount its clades exactly, as Consensus does.
func (c *CladeCounts) MaxAccuracy(src TreeSource) (*SummaryTree, error) {
	if c.trees == 0 {
		return nil, errors.New("summary tree: no trees counted")
	}
	best := math.Inf(-1)
	var recs []int32
	err := src(func(tr *pydt.Tree) error {
		if err := c.checkLeaves(tr); err != nil {
			return fmt.Errorf("summary tree: %w", err)
		}
		score := 0.0
		ord := c.nodeKeys(tr)
		for _, v := range ord {
			if !tr.IsLeaf(v) {
				idx, ok := c.index[c.node[v]]
				if !ok {
					return errors.New("summary tree: a replayed tree has a clade that was not counted")
				}
				score += 2*float64(c.recs[idx].count)/float64(c.trees) - 1
			}
		}
		if score > best {
			best = score
			recs = recs[:0]
			for _, v := range ord {
				if !tr.IsLeaf(v) {
					recs = append(recs, c.index[c.node[v]])
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s, err := c.summarize(recs, src)
	if err != nil {
		return nil, fmt.Errorf("summary tree: %w", err)
	}
	return s, nil
}

// summarize builds the tree of the compatible clades recs (record indices,
// the root clade among them), replaying the trees from src to place each
// branch point at the posterior mean time of the most recent common
// ancestor of its leaves and to recount each clade exactly.
func (c *CladeCounts) summarize(recs []int32, src TreeSource) (*SummaryTree, error) {
	n := c.n
	var cl []consClade
	for _, i := range recs {
		cl = append(cl, consClade{rec: i, size: int(c.recs[i].size), logU: newLogSum()})
	}
	// Larger clades first: a clade's parent comes before it. The root
	// clade, in every tree, is first.
	slices.SortStableFunc(cl, func(a, b consClade) int { return cmp.Compare(b.size, a.size) })
	if n > 1 && (len(cl) == 0 || cl[0].size != n) {
		return nil, fmt.Errorf("%w: the root clade is missing", ErrCladeCollision)
	}
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	byKey := make(map[cladeKey]int, len(cl))
	var buf []int32
	for i := range cl {
		buf = c.leaves(int32(n)+cl[i].rec, buf[:0])
		p := owner[buf[0]]
		for _, l := range buf {
			if owner[l] != p {
				return nil, fmt.Errorf("%w: the clades overlap", ErrCladeCollision)
			}
			owner[l] = i
		}
		cl[i].parent = p
		if p >= 0 {
			cl[p].kids = append(cl[p].kids, i)
		}
		byKey[c.recs[cl[i].rec].key] = i
	}
	for l, o := range owner {
		if o >= 0 {
			cl[o].direct = append(cl[o].direct, int32(l))
		}
	}

	// Second pass: the MRCA of every consensus clade in every tree.
	var (
		trees int64
		depth []int32
		pre   []pydt.NodeID
		mrca  = make([]pydt.NodeID, len(cl))
	)
	lca := func(tr *pydt.Tree, x, y pydt.NodeID) pydt.NodeID {
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
	var labels []string
	err := src(func(tr *pydt.Tree) error {
		if err := c.checkLeaves(tr); err != nil {
			return err
		}
		if trees == 0 {
			labels = tr.Labels
		}
		if n == 1 {
			trees++
			return nil
		}
		if cap(depth) < tr.Cap() {
			depth = make([]int32, tr.Cap())
		}
		depth = depth[:tr.Cap()]
		pre = tr.PreOrder(pre[:0])
		for _, v := range pre {
			if p := tr.Parent(v); p != pydt.NoNode {
				depth[v] = depth[p] + 1
			} else {
				depth[v] = 0
			}
		}
		for i := len(cl) - 1; i >= 0; i-- { // children before parents
			k := &cl[i]
			m := pydt.NoNode
			for _, l := range k.direct {
				if m == pydt.NoNode {
					m = pydt.NodeID(l)
				} else {
					m = lca(tr, m, pydt.NodeID(l))
				}
			}
			for _, j := range k.kids {
				if m == pydt.NoNode {
					m = mrca[j]
				} else {
					m = lca(tr, m, mrca[j])
				}
			}
			mrca[i] = m
			if tr.Count(m) == k.size {
				k.present++
			}
			tm := tr.Time(m)
			k.sumT += tm.T()
			k.sumU += tm.OneMinus()
			k.logU.add(tm.LogOneMinus())
		}
		// Every node whose key is a consensus clade's must be that clade.
		for _, v := range c.nodeKeys(tr) {
			if tr.IsLeaf(v) {
				continue
			}
			if i, ok := byKey[c.node[v]]; ok && (mrca[i] != v || tr.Count(v) != cl[i].size) {
				return ErrCladeCollision
			}
		}
		trees++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if trees != c.trees {
		return nil, fmt.Errorf("the trees replayed (%d) are not the trees counted (%d)", trees, c.trees)
	}
	for i := range cl {
		if cl[i].present != c.recs[cl[i].rec].count {
			return nil, fmt.Errorf("%w: a clade counted in %d trees is in %d", ErrCladeCollision, c.recs[cl[i].rec].count, cl[i].present)
		}
	}

	// Build the tree, parents first.
	tr := pydt.New(n)
	tr.Labels = labels
	out := &SummaryTree{Tree: tr, Credibility: map[pydt.NodeID]float64{}, Trees: int(trees)}
	if n == 1 {
		tr.Plant(0)
		return out, nil
	}
	ids := make([]pydt.NodeID, len(cl))
	times := make([]pydt.Time, len(cl))
	for i := range cl {
		k := &cl[i]
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
}

// SummarizeTrees reads a sample of trees on n leaves from src: once to
// count clades (and, when coclust is set, to accumulate the mean LCA time
// of every pair of rows, in O(n²) memory, and build the average-linkage
// tree), then three more times to build the clade summaries. Its memory
// does not grow with the number of trees beyond the number of distinct
// clades.
func SummarizeTrees(src TreeSource, n int, coclust bool) (*TreeSummary, error) {
	counts, err := NewCladeCounts(n)
	if err != nil {
		return nil, err
	}
	out := &TreeSummary{Clades: counts}
	if coclust {
		if out.Coclust, err = NewCoclust(n); err != nil {
			return nil, err
		}
	}
	err = src(func(tr *pydt.Tree) error {
		if err := counts.Add(tr); err != nil {
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
	if out.MaxAccuracy, err = counts.MaxAccuracy(src); err != nil {
		return nil, err
	}
	if out.Consensus, err = counts.Consensus(src); err != nil {
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
