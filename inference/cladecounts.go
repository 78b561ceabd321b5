package inference

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Bounded clade counts
//
// A long chain on many rows keeps finding clades it has not seen before
// (about a thousand per kept tree at N = 10,000 far from stationarity), so
// an exact count of every clade takes memory that grows with the run.
// CladeCounts therefore counts clades with the Misra–Gries frequent-items
// summary, in the mergeable form of Agarwal et al. (2012, "Mergeable
// summaries"): at most a fixed number of counters (a capacity k, by default
// proportional to N); when they overflow, the (k+1)-th largest count c* is
// subtracted from every counter and the counters at or below zero are
// dropped. Every clade's counter is then at most its true count and at
// least its true count minus the error d, the sum of the c* subtracted
// (Err); each subtraction removes at least (k+1)·c* from the counters,
// whose total never exceeds the m clade occurrences counted, so
// d ≤ m/(k+1) ≤ T(N−1)/(k+1) for T trees on N leaves. With k ≥ 10(N−1),
// d < T/10: every clade in more than a tenth of the trees keeps a counter.
// Until the counters first overflow, d = 0 and the counts are exact, as
// they were before the counts were bounded.
//
// The summaries need exact counts, and get them with a further pass over
// the trees (a TreeSource replays them), which recounts every clade that
// kept a counter; a clade without one is then known to be in at least one
// tree (the one it is met in) and at most d. See Summaries for how the
// majority-rule consensus and the clade credibilities stay exact, and how
// the tree of maximum expected accuracy is found exactly or reported with
// a bound on what it may miss (SummaryTree.Gap).

// CladeCapacityPerLeaf is the default number of counters per leaf of
// CladeCounts: with k = 10(N−1) counters, every clade in more than a tenth
// of a chain's trees keeps its counter (d < T/10), as the average standard
// deviation of split frequencies needs (MinSplitFreq).
const CladeCapacityPerLeaf = 10

// CladeCapacityMin is the least default capacity of CladeCounts, so that
// runs on few rows keep every clade, and their counts stay exact, for
// about 196,000 distinct clades (1.5 to 3 times the capacity are held
// before the counters are reduced).
const CladeCapacityMin = 1 << 17

// CladeCapacity returns the default capacity of CladeCounts for trees on n
// leaves: max(CladeCapacityPerLeaf·(n−1), CladeCapacityMin) counters.
// The counters take 20 bytes each in a table of a power of two slots, at
// most three-quarters full, that holds 1.5 to 3 times the capacity before
// they are reduced: 5.2 MB up to n = 13,108 and 42 MB at n = 10⁵.
func CladeCapacity(n int) int {
	return max(CladeCapacityPerLeaf*(n-1), CladeCapacityMin)
}

// cladeTable is an open-addressing hash table from clade keys to counts,
// with linear probing; a count of 0 marks an empty slot. Keys are never
// deleted one by one: the table is rebuilt when it is reduced.
type cladeTable struct {
	keys  []cladeKey
	count []uint32
	shift uint
	live  int
}

func (t *cladeTable) slot(k cladeKey) int {
	h := (k[0] ^ bits.RotateLeft64(k[1], 29)) * 0x9e3779b97f4a7c15
	mask := len(t.keys) - 1
	i := int(h >> t.shift)
	for t.count[i] != 0 && t.keys[i] != k {
		i = (i + 1) & mask
	}
	return i
}

// get returns the count of k, 0 when it has none.
func (t *cladeTable) get(k cladeKey) uint32 {
	if t.live == 0 {
		return 0
	}
	return t.count[t.slot(k)]
}

// has reports whether k has a counter.
func (t *cladeTable) has(k cladeKey) bool { return t.get(k) != 0 }

// add adds x > 0 to the count of k, making room as needed.
func (t *cladeTable) add(k cladeKey, x uint32) {
	if len(t.keys) == 0 {
		t.resize(16)
	}
	i := t.slot(k)
	if t.count[i] == 0 {
		if 4*(t.live+1) > 3*len(t.keys) {
			t.resize(2 * len(t.keys))
			i = t.slot(k)
		}
		t.keys[i] = k
		t.live++
	}
	t.count[i] += x
}

// resize rebuilds the table with size slots (a power of two).
func (t *cladeTable) resize(size int) {
	keys, count := t.keys, t.count
	t.keys, t.count = make([]cladeKey, size), make([]uint32, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.live = 0
	for i, x := range count {
		if x != 0 {
			j := t.slot(keys[i])
			t.keys[j], t.count[j] = keys[i], x
			t.live++
		}
	}
}

// slots returns the table's size, in slots.
func (t *cladeTable) slots() int { return len(t.keys) }

// each calls fn with every key and count, in slot order (which does not
// depend on the order the keys were added in only when no key was
// dropped; callers sort when it matters).
func (t *cladeTable) each(fn func(k cladeKey, x uint32)) {
	for i, x := range t.count {
		if x != 0 {
			fn(t.keys[i], x)
		}
	}
}

// reduce subtracts the (keep+1)-th largest count c* from every count,
// drops the counts that reach zero, and returns c* (0 when keep counts or
// fewer are held). At most keep counts remain.
func (t *cladeTable) reduce(keep int) uint32 {
	if t.live <= keep {
		return 0
	}
	xs := make([]uint32, 0, t.live)
	t.each(func(_ cladeKey, x uint32) { xs = append(xs, x) })
	slices.SortFunc(xs, func(a, b uint32) int { return cmp.Compare(b, a) })
	c := xs[keep]
	for i, x := range t.count {
		if x != 0 {
			if x <= c {
				t.count[i] = 0
			} else {
				t.count[i] = x - c
			}
		}
	}
	t.resize(len(t.keys)) // drop the emptied slots from the probe chains
	return c
}

// distinctSketch estimates the number of distinct clades seen once the
// counters have dropped some: it keeps the kmvSize smallest of their
// 64-bit hashes (K minimum values; relative standard error about
// 1/√kmvSize, 3%).
type distinctSketch struct {
	heap []uint64 // max-heap
	in   map[uint64]bool
}

const kmvSize = 1024

func mixKey(k cladeKey) uint64 {
	x := k[0] ^ bits.RotateLeft64(k[1], 31)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (s *distinctSketch) add(h uint64) {
	if s.in == nil {
		s.in = make(map[uint64]bool, kmvSize)
	}
	if s.in[h] {
		return
	}
	if len(s.heap) < kmvSize {
		s.heap = append(s.heap, h)
		s.in[h] = true
		for i := len(s.heap) - 1; i > 0; {
			p := (i - 1) / 2
			if s.heap[p] >= s.heap[i] {
				break
			}
			s.heap[p], s.heap[i] = s.heap[i], s.heap[p]
			i = p
		}
		return
	}
	if h >= s.heap[0] {
		return
	}
	delete(s.in, s.heap[0])
	s.in[h] = true
	s.heap[0] = h
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s.heap) && s.heap[l] > s.heap[m] {
			m = l
		}
		if r < len(s.heap) && s.heap[r] > s.heap[m] {
			m = r
		}
		if m == i {
			break
		}
		s.heap[m], s.heap[i] = s.heap[i], s.heap[m]
		i = m
	}
}

func (s *distinctSketch) estimate() int {
	if len(s.heap) < kmvSize {
		return len(s.heap)
	}
	return int(math.Round(float64(kmvSize-1) / (float64(s.heap[0]) / 0x1p64)))
}

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
// trees contain each clade (the set of leaves below a branch point), in
// memory that does not grow with the number of trees: at most 3 times its
// capacity of counters, 20 bytes each (see the package notes on
// bounded clade counts). Each counter is at most its clade's true count
// and at least that minus Err(); while Err() is 0 (Exact), every clade
// seen has its exact count. Counts from different samples of trees on the
// same rows merge (Merge), with the same guarantee. Summary trees are
// built with further passes over the trees (MaxAccuracy, Consensus,
// Summaries), which recount the clades they need exactly.
type CladeCounts struct {
	n     int
	keys  []cladeKey
	k     int // capacity
	tab   cladeTable
	err   int64 // d: how far below its true count a counter may be
	trees int64
	// recounted is set when every counter holds its clade's exact count
	// (recount), until the next Add or Merge.
	recounted bool
	// meaRounds is the most passes MaxAccuracy takes to score the
	// contending trees exactly (meaMaxRounds; tests change it).
	meaRounds int
	seen      distinctSketch

	// Scratch, by NodeID.
	ord  []pydt.NodeID
	node []cladeKey
}

// NewCladeCounts returns empty counts for trees with n leaves, with the
// default capacity CladeCapacity(n).
func NewCladeCounts(n int) (*CladeCounts, error) {
	return NewCladeCountsCapacity(n, CladeCapacity(n))
}

// NewCladeCountsCapacity returns empty counts for trees with n leaves that
// keep at most 1.5 to 3 times capacity counters. The summaries need capacity ≥
// 2(n−1) (the majority clades keep their counters), and the split
// frequencies of SummarizeChains capacity ≥ (n−1)/MinSplitFreq; both check
// the error they were left with, and return an error rather than an
// inexact result.
func NewCladeCountsCapacity(n, capacity int) (*CladeCounts, error) {
	if n < 1 {
		return nil, fmt.Errorf("clade counts: need at least one leaf, got %d", n)
	}
	if capacity < 1 {
		return nil, fmt.Errorf("clade counts: need a capacity of at least one counter, got %d", capacity)
	}
	return &CladeCounts{n: n, keys: leafKeys(n), k: capacity, meaRounds: meaMaxRounds}, nil
}

// Trees returns the number of trees counted.
func (c *CladeCounts) Trees() int { return int(c.trees) }

// Capacity returns the capacity the counts were made with.
func (c *CladeCounts) Capacity() int { return c.k }

// Err returns d: every clade's count is at least its true count minus d
// and at most its true count. A clade without a counter is in at most d
// trees.
func (c *CladeCounts) Err() int { return int(c.err) }

// Exact reports whether every clade seen has its exact count (Err() == 0).
func (c *CladeCounts) Exact() bool { return c.err == 0 }

// Distinct returns the number of distinct clades seen (leaves excluded,
// the root included): exact while Exact(), and otherwise an estimate
// (relative standard error about 3%).
func (c *CladeCounts) Distinct() int {
	if c.Exact() {
		return c.tab.live
	}
	return max(c.seen.estimate(), c.tab.live)
}

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

// limit is the number of counters held before they are reduced to the
// capacity: three-quarters of the smallest table size (a power of two)
// whose three-quarters are at least 1.5 times the capacity.
func (c *CladeCounts) limit() int {
	size := 16
	for 3*size < 6*c.k {
		size *= 2
	}
	return 3 * size / 4
}

// inc adds x to the count of k, reducing the counters when they overflow.
func (c *CladeCounts) inc(k cladeKey, x uint32) {
	if c.tab.live >= c.limit() && !c.tab.has(k) {
		c.err += int64(c.tab.reduce(c.k))
	}
	c.tab.add(k, x)
	c.seen.add(mixKey(k))
	c.recounted = false
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
			c.inc(c.node[v], 1)
		}
	}
	c.trees++
	return nil
}

// Merge adds the counts of o, made over trees on the same rows, to c, as
// if c had counted o's trees too: the errors add (plus whatever the merged
// counters' overflow subtracts), and with capacities of k counters each
// the merged error is still at most the clade occurrences of both samples
// over k+1. c keeps its capacity. o is not changed.
func (c *CladeCounts) Merge(o *CladeCounts) error {
	if o.n != c.n {
		return fmt.Errorf("clade counts: cannot merge counts over %d leaves into counts over %d", o.n, c.n)
	}
	if c.trees+o.trees > math.MaxUint32 {
		return fmt.Errorf("clade counts: more than %d trees", uint32(math.MaxUint32))
	}
	// Larger counts first, so that which counters survive an overflow
	// does not depend on o's slot order.
	type kx struct {
		k cladeKey
		x uint32
	}
	var all []kx
	o.tab.each(func(k cladeKey, x uint32) { all = append(all, kx{k, x}) })
	slices.SortFunc(all, func(a, b kx) int {
		if c := cmp.Compare(b.x, a.x); c != 0 {
			return c
		}
		if c := cmp.Compare(a.k[0], b.k[0]); c != 0 {
			return c
		}
		return cmp.Compare(a.k[1], b.k[1])
	})
	for _, e := range all {
		c.inc(e.k, e.x)
	}
	for _, h := range o.seen.heap {
		c.seen.add(h)
	}
	c.err += o.err
	c.trees += o.trees
	return nil
}

// exactCount returns the exact count of k and true, or false when c does
// not know it exactly (it may hold only a lower bound).
func (c *CladeCounts) exactCount(k cladeKey) (uint32, bool) {
	x := c.tab.get(k)
	return x, x != 0 && (c.err == 0 || c.recounted)
}

// Credibility returns, for every branch point of tr, the fraction of the
// counted trees that contain its clade. The clades are matched by their
// 128-bit hash keys only. It needs exact counts (Exact); SummarizeChains
// recounts the clades of the trees it writes instead.
func (c *CladeCounts) Credibility(tr *pydt.Tree) (map[pydt.NodeID]float64, error) {
	if err := c.checkLeaves(tr); err != nil {
		return nil, err
	}
	if c.trees == 0 {
		return nil, errors.New("clade counts: no trees counted")
	}
	if !c.Exact() {
		return nil, errors.New("clade counts: the counters overflowed, so the counts are not exact; recount the clades with a pass over the trees")
	}
	out := map[pydt.NodeID]float64{}
	for _, v := range c.nodeKeys(tr) {
		if !tr.IsLeaf(v) {
			out[v] = float64(c.tab.get(c.node[v])) / float64(c.trees)
		}
	}
	return out, nil
}

// recount replaces every counter by its clade's exact count, found with a
// pass over src (which must replay the trees counted). The error is
// unchanged: a clade without a counter is still in at most Err() trees.
// It leaves c unchanged on error.
func (c *CladeCounts) recount(src TreeSource) error {
	exact := make([]uint32, c.tab.slots())
	var trees int64
	err := src(func(tr *pydt.Tree) error {
		if err := c.checkLeaves(tr); err != nil {
			return err
		}
		trees++
		for _, v := range c.nodeKeys(tr) {
			if tr.IsLeaf(v) {
				continue
			}
			if i := c.tab.slot(c.node[v]); c.tab.count[i] != 0 {
				exact[i]++
			}
		}
		return nil
	})
	if err == nil && trees != c.trees {
		err = fmt.Errorf("the trees replayed (%d) are not the trees counted (%d)", trees, c.trees)
	}
	if err != nil {
		return err
	}
	for i, x := range c.tab.count {
		if x == 0 {
			continue
		}
		if exact[i] < x {
			return fmt.Errorf("%w: a clade counted at least %d times is in %d trees", ErrCladeCollision, x, exact[i])
		}
	}
	for i, x := range c.tab.count {
		if x != 0 {
			c.tab.count[i] = exact[i]
		}
	}
	c.recounted = true
	return nil
}
