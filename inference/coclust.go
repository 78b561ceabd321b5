package inference

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// CoclustDefaultMax is the largest number of rows for which Run writes
// coclust.csv and summary.nwk unless asked (Config.Coclust): the
// accumulator takes 2·N·(N−1) bytes, average linkage 8·N² more (40 MB in
// all at N = 2000), and the file about 10·N² bytes.
const CoclustDefaultMax = 2000

// Coclust accumulates, over a sample of trees on the same N leaves, the
// time of the lowest common ancestor (LCA) of every pair of rows, whose
// posterior mean it reports: a similarity in [0, 1] (1 − it is a distance;
// rows that stay together until late in the diffusion have a mean LCA time
// near 1). Each tree costs O(N²) with no LCA queries: walking up from each
// leaf, every other leaf is assigned its LCA with it once, at the ancestor
// where it joins (about 1 ms per tree at N = 1000).
//
// The sums, of 1 − t (so that LCA times close to 1 keep their relative
// precision), are kept in float32, one per unordered pair of rows: O(N²)
// memory, 2·N·(N−1) bytes. A mean has a relative rounding error of about
// 1e-5 after 10^5 trees. Accumulators over the same
// rows merge (Merge).
type Coclust struct {
	n     int
	sum   []float32 // pair i > j at i(i-1)/2 + j
	trees int64

	post []pydt.NodeID
	lo   []int32 // first position of a subtree's leaves in leaf
	leaf []int32 // leaves in post-order
	row  []float32
}

// NewCoclust returns an empty accumulator for trees with n leaves.
func NewCoclust(n int) (*Coclust, error) {
	if n < 1 {
		return nil, fmt.Errorf("coclust: need at least one leaf, got %d", n)
	}
	return &Coclust{n: n, sum: make([]float32, n*(n-1)/2)}, nil
}

// Trees returns the number of trees added.
func (c *Coclust) Trees() int { return int(c.trees) }

// NumLeaves returns N.
func (c *Coclust) NumLeaves() int { return c.n }

// Add adds the LCA times of tr.
func (c *Coclust) Add(tr *pydt.Tree) error {
	if tr.NumLeaves() != c.n {
		return fmt.Errorf("coclust: tree has %d leaves, want %d", tr.NumLeaves(), c.n)
	}
	if cap(c.lo) < tr.Cap() {
		c.lo = make([]int32, tr.Cap())
	}
	c.lo = c.lo[:tr.Cap()]
	c.leaf = c.leaf[:0]
	c.post = tr.PostOrder(c.post[:0])
	// In post-order a subtree is a contiguous block that starts with its
	// first child's block, so its leaves are contiguous in c.leaf.
	for _, v := range c.post {
		if tr.IsLeaf(v) {
			c.lo[v] = int32(len(c.leaf))
			c.leaf = append(c.leaf, int32(v))
		} else {
			c.lo[v] = c.lo[tr.FirstChild(v)]
		}
	}
	// Row i of the triangle holds the pairs (i, j < i). Walking up from
	// leaf i, the leaves that join it at ancestor a are those below a but
	// not below the previous ancestor: two ranges of c.leaf. Their times
	// are written to a scratch row (in L1 cache), whose first i entries
	// are then added to the triangle's row in order.
	if cap(c.row) < c.n {
		c.row = make([]float32, c.n)
	}
	row := c.row[:c.n]
	for i := 1; i < c.n; i++ {
		v := pydt.NodeID(i)
		plo, phi := c.lo[v], c.lo[v]+1
		for a := tr.Parent(v); a != pydt.NoNode; a = tr.Parent(a) {
			t := float32(tr.Time(a).OneMinus())
			lo, hi := c.lo[a], c.lo[a]+int32(tr.Count(a))
			for _, j := range c.leaf[lo:plo] {
				row[j] = t
			}
			for _, j := range c.leaf[phi:hi] {
				row[j] = t
			}
			plo, phi = lo, hi
		}
		dst := c.sum[i*(i-1)/2 : i*(i-1)/2+i]
		for j, t := range row[:i] {
			dst[j] += t
		}
	}
	c.trees++
	return nil
}

// Merge adds the sums of o, made over trees on the same rows, to c.
func (c *Coclust) Merge(o *Coclust) error {
	if o.n != c.n {
		return fmt.Errorf("coclust: cannot merge %d rows into %d", o.n, c.n)
	}
	for k, s := range o.sum {
		c.sum[k] += s
	}
	c.trees += o.trees
	return nil
}

// MeanTime returns the posterior mean time of the LCA of rows i and j
// (0-based): 1 when i == j, NaN when no tree was added.
func (c *Coclust) MeanTime(i, j int) float64 {
	return 1 - c.MeanDistance(i, j)
}

// MeanDistance returns 1 − MeanTime(i, j), the posterior mean of 1 − t at
// the LCA of rows i and j, with the relative precision of float32 even
// when it is tiny: 0 when i == j, NaN when no tree was added.
func (c *Coclust) MeanDistance(i, j int) float64 {
	if c.trees == 0 {
		return math.NaN()
	}
	if i == j {
		return 0
	}
	if i < j {
		i, j = j, i
	}
	return float64(c.sum[i*(i-1)/2+j]) / float64(c.trees)
}

// WriteCSV writes the N×N matrix of mean LCA times as CSV: a header of an
// empty cell and the row names, then one line per row, its name first;
// the diagonal is 1. names gives the rows' names (nil for 1..N). pandas
// reads it with read_csv(path, index_col=0), R with
// read.csv(path, row.names = 1, check.names = FALSE); as.dist(1 - m) is
// then a distance for hclust.
func (c *Coclust) WriteCSV(w io.Writer, names []string) error {
	if c.trees == 0 {
		return fmt.Errorf("coclust: no trees added")
	}
	if names != nil && len(names) != c.n {
		return fmt.Errorf("coclust: %d names for %d rows", len(names), c.n)
	}
	name := func(i int) string {
		if names != nil && names[i] != "" {
			return csvField(names[i])
		}
		return strconv.Itoa(i + 1)
	}
	bw := bufio.NewWriter(w)
	var line []byte
	for i := range c.n {
		line = append(line, ',')
		line = append(line, name(i)...)
	}
	line = append(line, '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	for i := range c.n {
		line = append(line[:0], name(i)...)
		for j := range c.n {
			line = append(line, ',')
			line = strconv.AppendFloat(line, c.MeanTime(i, j), 'g', 7, 64) // float32's precision
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
