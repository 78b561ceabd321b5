package main

import (
	"fmt"
	"math"
	"os"

	"github.com/pydtlang/pydtlang/dataset"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// linkage is an agglomerative clustering criterion, applied through the
// Lance-Williams update of the distance between a merged cluster and every
// other cluster.
type linkage string

const (
	average  linkage = "average"  // UPGMA, on Euclidean distances
	complete linkage = "complete" // farthest neighbour, on Euclidean distances
	ward     linkage = "ward"     // Ward's minimum variance, on squared Euclidean distances
)

// agglomerate returns the binary tree that agglomerative clustering with
// linkage l builds on the rows of x (no missing values). The k-th merge
// (k = 1..N-1) gets the time 1 − k/N, so that the root is the last merge;
// only the topology is meaningful. It costs O(N³) time and O(N²) memory, a
// baseline for data sets of hundreds of rows, not a library routine.
func agglomerate(x [][]float64, l linkage) (*pydt.Tree, error) {
	n := len(x)
	if n < 2 {
		return nil, fmt.Errorf("linkage: need at least 2 rows, got %d", n)
	}
	d := make([][]float64, n)
	for i := range d {
		d[i] = make([]float64, n)
		for j := range i {
			var s float64
			for k := range x[i] {
				if math.IsNaN(x[i][k]) || math.IsNaN(x[j][k]) {
					return nil, fmt.Errorf("linkage: row %d or %d has a missing value", i+1, j+1)
				}
				t := x[i][k] - x[j][k]
				s += t * t
			}
			if l != ward {
				s = math.Sqrt(s)
			}
			d[i][j], d[j][i] = s, s
		}
	}
	tr := pydt.New(n)
	node := make([]pydt.NodeID, n) // the tree node of each active cluster
	size := make([]float64, n)
	active := make([]bool, n)
	for i := range node {
		node[i], size[i], active[i] = pydt.NodeID(i), 1, true
	}
	for step := 1; step < n; step++ {
		bi, bj, best := -1, -1, math.Inf(1)
		for i := range n {
			if !active[i] {
				continue
			}
			for j := i + 1; j < n; j++ {
				if active[j] && d[i][j] < best {
					bi, bj, best = i, j, d[i][j]
				}
			}
		}
		w := tr.NewInternal(pydt.TimeFromOneMinus(float64(step) / float64(n)))
		tr.AddChild(w, node[bi])
		tr.AddChild(w, node[bj])
		// Lance-Williams: the merged cluster takes slot bi.
		ni, nj := size[bi], size[bj]
		for k := range n {
			if !active[k] || k == bi || k == bj {
				continue
			}
			var nd float64
			switch l {
			case average:
				nd = (ni*d[bi][k] + nj*d[bj][k]) / (ni + nj)
			case complete:
				nd = math.Max(d[bi][k], d[bj][k])
			case ward:
				nk := size[k]
				nd = ((ni+nk)*d[bi][k] + (nj+nk)*d[bj][k] - nk*d[bi][bj]) / (ni + nj + nk)
			default:
				return nil, fmt.Errorf("linkage: unknown method %q", l)
			}
			d[bi][k], d[k][bi] = nd, nd
		}
		node[bi], size[bi], active[bj] = w, ni+nj, false
		if step == n-1 {
			tr.Plant(w)
		}
	}
	tr.Recount()
	return tr, nil
}

// writeLinkage writes the tree of linkage l of the rows of dataFile (its
// columns standardized when z) to out as Newick, its leaves named by the
// rows' labels.
func writeLinkage(dataFile string, l linkage, out string, z bool) error {
	switch l {
	case average, complete, ward:
	default:
		return fmt.Errorf("linkage: unknown method %q (average, complete or ward)", l)
	}
	m, err := dataset.ReadFile(dataFile)
	if err != nil {
		return err
	}
	if z {
		m = standardize(m)
	}
	tr, err := agglomerate(rows(m), l)
	if err != nil {
		return fmt.Errorf("%s: %w", dataFile, err)
	}
	if len(m.RowLabels) == m.Rows {
		tr.Labels = m.RowLabels
	}
	return os.WriteFile(out, []byte(tr.Newick()+"\n"), 0o644)
}
