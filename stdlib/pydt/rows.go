package pydt

import (
	"fmt"
	"strconv"
)

// MatchRows checks that tr, read by ParseNewick (or ReadNewickTrees,
// ForEachNewick) with labels, the row labels of a data set of n rows (nil
// when its rows have none), has exactly that data set's rows as its leaves:
// n leaves, and, when the rows have no labels, leaves named by the row
// numbers 1..n, each once (ParseNewick otherwise takes other names in
// order of appearance as the tree's own Labels). data names the data set
// in the error, e.g. "the data X".
func (tr *Tree) MatchRows(n int, labels []string, data string) error {
	if tr.NumLeaves() != n {
		return fmt.Errorf("has %d leaves but %s has %d rows", tr.NumLeaves(), data, n)
	}
	if labels == nil && tr.Labels != nil {
		return fmt.Errorf("has a leaf %q, but %s has no row labels, so the leaves must be its row numbers 1..%d, each once",
			badLeaf(tr.Labels, n), data, n)
	}
	return nil
}

// badLeaf returns the first leaf name that is not a row number in 1..n
// written in plain decimal, or else the first repeated one.
func badLeaf(names []string, n int) string {
	for _, s := range names {
		if k, err := strconv.Atoi(s); err != nil || k < 1 || k > n || strconv.Itoa(k) != s {
			return s
		}
	}
	seen := make(map[string]bool, len(names))
	for _, s := range names {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return names[0]
}
