package cluster

import (
	"errors"
	"fmt"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// A Partition assigns each data row a cluster: p[i] is the cluster of row
// i, numbered 1, 2, ... in order of each cluster's first row, so that two
// equal partitions are equal slices.
type Partition []int

// NumClusters returns the number of clusters of p.
func (p Partition) NumClusters() int {
	k := 0
	for _, c := range p {
		k = max(k, c)
	}
	return k
}

// canonical renumbers the clusters of p in order of their first row, in
// place, and returns p.
func canonical(p []int) Partition {
	ids := map[int]int{}
	for i, c := range p {
		id, ok := ids[c]
		if !ok {
			id = len(ids) + 1
			ids[c] = id
		}
		p[i] = id
	}
	return p
}

// checkTree returns an error unless tr is a whole tree: a root above all
// of its leaves.
func checkTree(tr *pydt.Tree) error {
	if tr.Root() == pydt.NoNode {
		return errors.New("the tree has no root")
	}
	if tr.Count(tr.Root()) != tr.NumLeaves() {
		return fmt.Errorf("the tree holds %d of its %d leaves", tr.Count(tr.Root()), tr.NumLeaves())
	}
	return nil
}

// CutAtTime returns the flat clusters of tr at time t: the leaf sets of
// the subtrees that cross the horizontal line at t. A branch point at a
// time at or before t is split (its children are in different clusters);
// one after t is not. So t = 0 gives one cluster, and a t at or after the
// last branch point gives every row its own cluster. t must be in [0, 1].
func CutAtTime(tr *pydt.Tree, t float64) (Partition, error) {
	if !(t >= 0 && t <= 1) {
		return nil, fmt.Errorf("cut: time %v is not in [0, 1]", t)
	}
	if err := checkTree(tr); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	return cutAt(tr, pydt.TimeAt(t)), nil
}

// cutAt cuts tr at t: a branch point whose time is not after t is split.
func cutAt(tr *pydt.Tree, t pydt.Time) Partition {
	p := make([]int, tr.NumLeaves())
	label := make([]int, tr.Cap()) // cluster of each node, 0 while unset
	next := 0
	for _, v := range tr.PreOrder(nil) {
		par := tr.Parent(v)
		switch {
		case par != pydt.NoNode && label[par] != 0:
			label[v] = label[par] // inside a cluster
		case tr.IsLeaf(v) || t.Before(tr.Time(v)):
			next++ // the topmost node of a cluster
			label[v] = next
		}
		if tr.IsLeaf(v) {
			p[v] = label[v]
		}
	}
	return canonical(p)
}

// KCut is the result of CutK.
type KCut struct {
	// Partition is the cut.
	Partition Partition
	// Time is the latest time at which the tree has Partition's clusters:
	// the time of the last branch point split (0 when none is).
	Time float64
	// At is the same time as a pydt.Time, exactly that of the branch
	// point (pydt.Origin when none is split).
	At pydt.Time
	// Exact reports whether the cut has exactly the K clusters asked for.
	// It has more when the branch point(s) that reach K split into more
	// than the clusters missing: a multifurcation, or branch points at the
	// same time.
	Exact bool
}

// CutK returns the cut of tr with the fewest clusters at least k: tr is
// cut at the time of its j-th earliest branch point, j the least for which
// that gives k clusters or more. Branch points at equal times are split
// together, and a branch point with c children adds c − 1 clusters, so
// when a multifurcation (or a tie) jumps past k the cut has more than k
// clusters and Exact is false. k must be in 1..N.
func CutK(tr *pydt.Tree, k int) (*KCut, error) {
	n := tr.NumLeaves()
	if k < 1 || k > n {
		return nil, fmt.Errorf("cut: %d clusters asked for a tree of %d leaves (need 1 to %d)", k, n, n)
	}
	if err := checkTree(tr); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	var inner []pydt.NodeID
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) {
			inner = append(inner, v)
		}
	}
	slices.SortStableFunc(inner, func(a, b pydt.NodeID) int {
		ta, tb := tr.Time(a), tr.Time(b)
		switch {
		case ta.Before(tb):
			return -1
		case tb.Before(ta):
			return 1
		}
		return 0
	})
	clusters, at := 1, pydt.Origin
	for i := 0; clusters < k && i < len(inner); {
		at = tr.Time(inner[i])
		for ; i < len(inner) && tr.Time(inner[i]) == at; i++ {
			clusters += tr.Degree(inner[i]) - 1
		}
	}
	if clusters < k {
		// Only a degenerate tree (a branch point at t = 1) gets here.
		return nil, fmt.Errorf("cut: the tree has only %d clusters at its last branch point, %d asked", clusters, k)
	}
	p := cutAt(tr, at)
	return &KCut{Partition: p, Time: at.T(), At: at, Exact: p.NumClusters() == k}, nil
}
