// Package cluster makes flat clusters from trees and measures how well a
// tree recovers known classes of its leaves: cuts of a tree at a time or a
// number of clusters (CutAtTime, CutK), the Bayes choice of a partition
// from the cuts of a posterior sample of trees (CutTrees, CutSample.Best,
// under Binder's loss or the adjusted Rand index), and dendrogram purity.
// The samplers never call it.
package cluster

import (
	"fmt"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// DendrogramPurity returns the dendrogram purity of tr with respect to the
// classes of its leaves (Heller & Ghahramani, "Bayesian hierarchical
// clustering", ICML 2005): the average, over every unordered pair of
// distinct leaves of one class k, of the fraction of the leaves below the
// pair's lowest common ancestor that belong to class k. It is 1 exactly
// when every class is the leaf set of some subtree, whatever the tree does
// within and above the classes.
//
// class[i] is the class of leaf i (data row i), any non-negative number; a
// negative number marks an unlabelled leaf, which belongs to no pair but is
// counted in the leaf sets, lowering the purity of the subtrees that hold
// it. Trees may be multifurcating.
//
// The cost is O(N·K) time and O(N·K) memory for N leaves and K classes:
// each branch point sums, per class, the pairs whose lowest common ancestor
// it is, (n_k² − Σ_children n_{c,k}²)/2, weighted by its purity n_k/n. An
// error is returned when no class has two leaves (the purity is then
// undefined) or the classes do not match the tree.
func DendrogramPurity(tr *pydt.Tree, class []int) (float64, error) {
	n := tr.NumLeaves()
	if len(class) != n {
		return 0, fmt.Errorf("dendrogram purity: %d classes for a tree of %d leaves", len(class), n)
	}
	// Classes are renumbered 0..K-1 in order of appearance, so that the
	// histograms have one entry per class present.
	dense := make([]int, n)
	ids := map[int]int{}
	for i, c := range class {
		if c < 0 {
			dense[i] = -1
			continue
		}
		id, ok := ids[c]
		if !ok {
			id = len(ids)
			ids[c] = id
		}
		dense[i] = id
	}
	class = dense
	k := len(ids)
	size := make([]int, k)
	for _, c := range class {
		if c >= 0 {
			size[c]++
		}
	}
	var pairs float64
	for _, s := range size {
		pairs += float64(s) * float64(s-1) / 2
	}
	if pairs == 0 {
		return 0, fmt.Errorf("dendrogram purity: no class has two leaves")
	}
	if tr.Root() == pydt.NoNode {
		return 0, fmt.Errorf("dendrogram purity: the tree has no root")
	}
	if tr.Count(tr.Root()) != n {
		return 0, fmt.Errorf("dendrogram purity: the tree holds %d of its %d leaves", tr.Count(tr.Root()), n)
	}
	// counts[v] is the class histogram of the leaves below branch point v,
	// made when v is visited in post-order and returned to the pool once
	// its parent has absorbed it, so that at most O(depth) are live.
	counts := make([][]int, tr.Cap())
	var pool [][]int
	get := func() []int {
		if len(pool) == 0 {
			return make([]int, k)
		}
		h := pool[len(pool)-1]
		pool = pool[:len(pool)-1]
		clear(h)
		return h
	}
	var sum float64
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		h, sq := get(), get() // sq: Σ over children of n_{c,k}², per class
		leaves := 0
		for c := range tr.Children(v) {
			if tr.IsLeaf(c) {
				leaves++
				if cl := class[c]; cl >= 0 {
					h[cl]++
					sq[cl]++
				}
				continue
			}
			hc := counts[c]
			counts[c] = nil
			for j, x := range hc {
				h[j] += x
				sq[j] += x * x
			}
			leaves += tr.Count(c)
			pool = append(pool, hc)
		}
		for j, x := range h {
			// x² − Σ x_c² = 2 Σ_{c<c'} x_c x_c' is even: the pairs of class j
			// whose lowest common ancestor is v, counted twice.
			if p := x*x - sq[j]; p > 0 {
				sum += float64(p/2) * float64(x) / float64(leaves)
			}
		}
		pool = append(pool, sq)
		counts[v] = h
	}
	return sum / pairs, nil
}

// MeanDendrogramPurity returns the mean dendrogram purity of trees, an
// estimate of the posterior mean purity when they are draws from a
// posterior.
func MeanDendrogramPurity(trees []*pydt.Tree, class []int) (float64, error) {
	if len(trees) == 0 {
		return 0, fmt.Errorf("mean dendrogram purity: no trees")
	}
	var s float64
	for i, tr := range trees {
		p, err := DendrogramPurity(tr, class)
		if err != nil {
			return 0, fmt.Errorf("tree %d: %w", i+1, err)
		}
		s += p
	}
	return s / float64(len(trees)), nil
}
