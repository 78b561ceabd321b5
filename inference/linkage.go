package inference

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// AverageLinkage returns the average-linkage (UPGMA) tree of the rows
// under the distance 1 − (posterior mean LCA time): the two groups of rows
// whose pairs have the latest mean LCA time on average are joined first,
// at that time, and so on up to the root. The squared error of a tree S
// against the true tree's LCA times, Σ over pairs of (t_S − t)², has
// posterior expectation Σ (t_S − E t)² plus a constant, so the best tree
// under that loss is the one whose LCA times are closest to the posterior
// means; average linkage is the standard approximation to that fit (the
// exact fit is NP-hard). Unlike the clade-based summaries, it is fully
// resolved: a branch point splits in two except where groups join at the
// same distance, which become one multifurcating branch point. It costs
// O(N²) time (nearest-neighbour chains) and N² float64 of memory.
//
// Every branch point's time is its join time, which is never later than
// its children's; float32 sums keep joins closer to t = 1 than 1e-38 apart
// only as a multifurcation.
func (c *Coclust) AverageLinkage() (*pydt.Tree, error) {
	if c.trees == 0 {
		return nil, errors.New("average linkage: no trees added")
	}
	return averageLinkage(c.n, c.MeanDistance)
}

// averageLinkage builds the average-linkage tree of n rows under the
// distance dist(i, j) = 1 − t, for i > j.
func averageLinkage(n int, dist func(i, j int) float64) (*pydt.Tree, error) {
	tr := pydt.New(n)
	if n == 1 {
		tr.Plant(0)
		return tr, nil
	}
	// Working distances between the active groups, a full matrix so that
	// rows are contiguous.
	d := make([]float64, n*n)
	for i := range n {
		for j := range i {
			x := dist(i, j)
			d[i*n+j], d[j*n+i] = x, x
		}
	}
	// Groups: slot i holds a group while active; node[i] is its node in
	// the tree under construction, size[i] its number of rows.
	type gnode struct {
		kids  []int   // node indices; leaves are 0..n-1
		dist  float64 // join distance (1 − t); 0 for a leaf
		first int     // smallest row below
	}
	nodes := make([]gnode, n, 2*n-1)
	node := make([]int, n)
	size := make([]float64, n)
	active := make([]bool, n)
	for i := range n {
		node[i], size[i], active[i] = i, 1, true
	}
	join := func(a, b int, dist float64) int {
		// A join is never later than the joins below it: average linkage
		// is monotone, and only rounding in the averaged distances can
		// put a join a few ulps after a child's (with many tied distances,
		// as a coclustering of few trees has, that made an invalid tree).
		for _, x := range []int{node[a], node[b]} {
			if x >= n {
				dist = max(dist, nodes[x].dist)
			}
		}
		// A branch point is strictly between t = 0 and t = 1.
		dist = min(max(dist, math.SmallestNonzeroFloat64), math.Nextafter(1, 0))
		var kids []int
		at := pydt.TimeFromOneMinus(dist)
		for _, x := range []int{node[a], node[b]} {
			// A child group joined no later than this one, as the tree
			// stores times (distinct distances can share one s = −log(1−t)),
			// is the same branch point: a multifurcation.
			if x >= n && !at.Before(pydt.TimeFromOneMinus(nodes[x].dist)) {
				kids = append(kids, nodes[x].kids...)
			} else {
				kids = append(kids, x)
			}
		}
		// Children in the order of their first rows, for readable output.
		first := func(x int) int {
			if x < n {
				return x
			}
			return nodes[x].first
		}
		slices.SortFunc(kids, func(x, y int) int { return first(x) - first(y) })
		nodes = append(nodes, gnode{kids: kids, dist: dist, first: first(kids[0])})
		return len(nodes) - 1
	}
	var chain []int
	for left := n; left > 1; {
		if len(chain) == 0 {
			for i := range n {
				if active[i] {
					chain = append(chain, i)
					break
				}
			}
		}
		a := chain[len(chain)-1]
		best, bestD := -1, math.Inf(1)
		if len(chain) >= 2 {
			best = chain[len(chain)-2]
			bestD = d[a*n+best]
		}
		row := d[a*n : a*n+n]
		for k, x := range row {
			if active[k] && k != a && x < bestD {
				best, bestD = k, x
			}
		}
		if len(chain) < 2 || best != chain[len(chain)-2] {
			chain = append(chain, best)
			continue
		}
		// a and b are reciprocal nearest neighbours: join them into slot a.
		b := best
		chain = chain[:len(chain)-2]
		sa, sb := size[a], size[b]
		for k := range n {
			if active[k] && k != a && k != b {
				x := (sa*d[a*n+k] + sb*d[b*n+k]) / (sa + sb)
				d[a*n+k], d[k*n+a] = x, x
			}
		}
		node[a] = join(a, b, bestD)
		size[a] = sa + sb
		active[b] = false
		left--
	}
	// Build the tree from the root down.
	root := len(nodes) - 1
	ids := make([]pydt.NodeID, len(nodes))
	stack := []int{root}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x < n {
			continue
		}
		ids[x] = tr.NewInternal(pydt.TimeFromOneMinus(nodes[x].dist))
		stack = append(stack, nodes[x].kids...)
	}
	for x := n; x < len(nodes); x++ {
		if x != root && ids[x] == 0 {
			continue // absorbed into its parent
		}
		for _, k := range nodes[x].kids {
			if k < n {
				tr.AddChild(ids[x], pydt.NodeID(k))
			} else {
				tr.AddChild(ids[x], ids[k])
			}
		}
	}
	tr.SetRoot(ids[root])
	tr.Recount()
	if err := tr.Validate(); err != nil {
		return nil, fmt.Errorf("average linkage: %w", err)
	}
	return tr, nil
}
