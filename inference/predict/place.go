package predict

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ClusterProbs returns, for a new point with observed value x (NaN entries
// missing), the posterior probability of each flat cluster of tr cut at
// time cut into part (part[i] the cluster, from 1, of row i): out[c] for
// cluster c, and out[0] for a new cluster of its own. A component of mx
// that joins the tree after the cut (on the path to a node below it) puts
// the point in that node's cluster; one that diverges at or before the
// cut, from an edge or at a branch point the cut splits, in a cluster of
// its own. mx must be tr's mixture (Tree), whose components record where
// they join it.
func ClusterProbs(mx *Mixture, tr *pydt.Tree, part []int, cut pydt.Time, x []float64) ([]float64, error) {
	if len(mx.Node) != mx.Len() || len(mx.At) != mx.Len() {
		return nil, fmt.Errorf("cluster probabilities: the mixture does not record where its components join the tree")
	}
	if len(part) != tr.NumLeaves() {
		return nil, fmt.Errorf("cluster probabilities: %d cluster labels for a tree of %d leaves", len(part), tr.NumLeaves())
	}
	k := 0
	for _, c := range part {
		if c < 1 {
			return nil, fmt.Errorf("cluster probabilities: cluster %d; clusters are numbered from 1", c)
		}
		k = max(k, c)
	}
	l := mx.logComp(x, nil)
	lz := logSumExp(l)
	if math.IsInf(lz, 0) || math.IsNaN(lz) {
		return nil, fmt.Errorf("cluster probabilities: the row's predictive density is %v", math.Exp(lz))
	}
	out := make([]float64, k+1)
	for j, lj := range l {
		c := 0
		if cut.Before(mx.At[j]) {
			v := mx.Node[j]
			for !tr.IsLeaf(v) {
				v = tr.FirstChild(v)
			}
			c = part[v]
		}
		out[c] += math.Exp(lj - lz)
	}
	return out, nil
}

// PlaceRows places held-out rows (in the data's units, NaN entries
// missing) in the flat clusters part of tree tr cut at time cut (a summary
// tree of the run in dir, fitted with m, whose leaves are m's rows): each
// row's cluster probabilities (ClusterProbs) under the predictive
// distribution of tr with the hyperparameters at their posterior means
// over the run's kept iterations (trace.csv).
func PlaceRows(m *inference.Model, dir string, tr *pydt.Tree, part []int, cut pydt.Time, test [][]float64, opt Options) ([][]float64, error) {
	if err := gaussianOnly(m); err != nil {
		return nil, fmt.Errorf("place: %w", err)
	}
	draws, err := readTrace(m, dir)
	if err != nil {
		return nil, err
	}
	if len(draws) == 0 {
		return nil, fmt.Errorf("place: %s has no kept iteration", dir)
	}
	mean := &draw{vals: map[string]float64{}, tree: tr}
	for _, d := range draws {
		for name, v := range d.vals {
			mean.vals[name] += v / float64(len(draws))
		}
	}
	mx, err := treeMixture(m, mean, opt, nil, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("place: %w", err)
	}
	out := make([][]float64, len(test))
	x := make([]float64, m.D)
	for i, row := range test {
		if len(row) != m.D {
			return nil, fmt.Errorf("place: test row %d has %d columns, the model's data %d", i+1, len(row), m.D)
		}
		for k, v := range row {
			x[k] = v
			if m.Scaling != nil && !math.IsNaN(v) {
				x[k] = m.Scaling.Scale(k, v)
			}
		}
		if out[i], err = ClusterProbs(mx, tr, part, cut, x); err != nil {
			return nil, fmt.Errorf("place: test row %d: %w", i+1, err)
		}
	}
	return out, nil
}
