package predict

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/internal/logsumexp"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// share is the part of a component's mass that goes to one flat cluster.
type share struct {
	cluster int
	frac    float64
}

// cutShares returns, for each component of mx (a mixture of tree tr,
// whose components record where they join it), how a new point that
// follows it is shared among the flat clusters part (part[i] the cluster,
// from 1, of leaf i) when tr is cut at time cut: a component that joins tr
// at or before the cut gives a cluster of its own (cluster 0); one that
// joins after it, below the node a whose subtree is the cut's piece it
// joins (the highest ancestor of its node, itself included, after the
// cut), is shared among the clusters of a's leaves in proportion to their
// number. When part is tr's own cut at that time, a's leaves are one
// cluster, which gets it all; for another tree of the same rows the new
// point's cluster mates in that tree are shared out by their clusters in
// part.
func cutShares(mx *Mixture, tr *pydt.Tree, part []int, cut pydt.Time) ([][]share, error) {
	if len(mx.Node) != mx.Len() || len(mx.At) != mx.Len() {
		return nil, fmt.Errorf("cluster probabilities: the mixture does not record where its components join the tree")
	}
	if len(part) != tr.NumLeaves() {
		return nil, fmt.Errorf("cluster probabilities: %d cluster labels for a tree of %d leaves", len(part), tr.NumLeaves())
	}
	for _, c := range part {
		if c < 1 {
			return nil, fmt.Errorf("cluster probabilities: cluster %d; clusters are numbered from 1", c)
		}
	}
	top := func(v pydt.NodeID) pydt.NodeID {
		for p := tr.Parent(v); p != pydt.NoNode && cut.Before(tr.Time(p)); p = tr.Parent(v) {
			v = p
		}
		return v
	}
	counts := map[pydt.NodeID]map[int]int{}
	size := map[pydt.NodeID]int{}
	for i, c := range part {
		a := top(pydt.NodeID(i))
		if counts[a] == nil {
			counts[a] = map[int]int{}
		}
		counts[a][c]++
		size[a]++
	}
	byNode := map[pydt.NodeID][]share{}
	newCluster := []share{{0, 1}}
	out := make([][]share, mx.Len())
	for j := range out {
		if !cut.Before(mx.At[j]) {
			out[j] = newCluster
			continue
		}
		v := mx.Node[j]
		s, ok := byNode[v]
		if !ok {
			a := top(v)
			for c := 1; c <= len(part); c++ { // in cluster order, for a fixed summation order
				if n := counts[a][c]; n > 0 {
					s = append(s, share{c, float64(n) / float64(size[a])})
				}
			}
			byNode[v] = s
		}
		out[j] = s
	}
	return out, nil
}

// clusterProbs adds to out (one entry per cluster, out[0] a new cluster)
// the probabilities of the clusters given the components' log weights l
// (log weight plus log likelihood of the row) and their shares; it returns
// the log of their total.
func clusterProbs(l []float64, sh [][]share, out []float64) (float64, error) {
	lz := logsumexp.Of(l)
	if math.IsInf(lz, 0) || math.IsNaN(lz) {
		return lz, fmt.Errorf("the row's predictive density is %v", math.Exp(lz))
	}
	for j, lj := range l {
		w := math.Exp(lj - lz)
		for _, s := range sh[j] {
			out[s.cluster] += w * s.frac
		}
	}
	return lz, nil
}

func maxCluster(part []int) int {
	k := 0
	for _, c := range part {
		k = max(k, c)
	}
	return k
}

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
	sh, err := cutShares(mx, tr, part, cut)
	if err != nil {
		return nil, err
	}
	out := make([]float64, maxCluster(part)+1)
	if _, err := clusterProbs(mx.logComp(x, nil), sh, out); err != nil {
		return nil, fmt.Errorf("cluster probabilities: %w", err)
	}
	return out, nil
}

// PlaceRows places held-out rows (NaN entries missing; in the data's
// units, or binary 0/1 for a Probit model) in the flat clusters part
// (part[i] the cluster, from 1, of training row i) made by cutting a
// summary tree of the run in dir, fitted with m, at time cut. It returns
// per row the posterior predictive probability of each cluster (out[0] a
// new cluster of its own) averaged over up to opt.Trees kept trees, each
// with its own iteration's hyperparameters, as PredictRun averages them:
// P(c | x) = Σ_T p(x | T) P(c | x, T) / Σ_T p(x | T). Within kept tree T
// the new point follows T's generative process (paper, Section 6.3): if it
// joins T at or before the cut time it is a new cluster; otherwise the
// piece of T's own cut at that time which it joins holds its cluster
// mates, and P(c | x, T) counts the fraction of them that part puts in c.
// On the summary tree itself that piece is exactly one of part's
// clusters. For a model with a stdlib.ThresholdLeaf (Probit) each tree's
// mixture comes from ProbitGibbs, as in PredictRun, and a row's
// likelihood under a component is its probit probability.
func PlaceRows(m *inference.Model, dir string, part []int, cut pydt.Time, test [][]float64, opt RunOptions) ([][]float64, error) {
	binary, err := checkTest(m, test, &opt)
	if err != nil {
		return nil, fmt.Errorf("place: %w", err)
	}
	if len(part) != m.N {
		return nil, fmt.Errorf("place: %d cluster labels for %d training rows", len(part), m.N)
	}
	draws, pick, err := keptTrees(m, dir, opt.Trees)
	if err != nil {
		return nil, fmt.Errorf("place: %w", err)
	}
	x := scaleRows(m, test, binary)
	k := maxCluster(part)
	// Per row, per tree: log p(x | T) and P(c | x, T).
	lt := make([][]float64, len(test))
	pc := make([][][]float64, len(test))
	var l []float64
	for _, j := range pick {
		d := draws[j]
		rng := rand.New(rand.NewPCG(opt.Seed, uint64(j)))
		mx, err := treeMixture(m, d, Options{Nodes: opt.Nodes}, rng, opt.ProbitBurn, opt.ProbitDraws)
		if err != nil {
			return nil, fmt.Errorf("place: chain %d, iteration %d: %w", d.chain, d.iter, err)
		}
		sh, err := cutShares(mx, d.tree, part, cut)
		if err != nil {
			return nil, fmt.Errorf("place: chain %d, iteration %d: %w", d.chain, d.iter, err)
		}
		for i, xi := range x {
			if binary {
				l = mx.logCompBinary(xi, m.Trees[0].Threshold().Side, l)
			} else {
				l = mx.logComp(xi, l)
			}
			p := make([]float64, k+1)
			lz, err := clusterProbs(l, sh, p)
			if err != nil {
				return nil, fmt.Errorf("place: test row %d, chain %d, iteration %d: %w", i+1, d.chain, d.iter, err)
			}
			lt[i] = append(lt[i], lz)
			pc[i] = append(pc[i], p)
		}
		d.tree = nil
	}
	out := make([][]float64, len(test))
	for i := range out {
		if out[i], err = treeAverage(lt[i], pc[i], k); err != nil {
			return nil, fmt.Errorf("place: test row %d: %w", i+1, err)
		}
	}
	return out, nil
}

// treeAverage returns Σ_T w_T pc[T], the average over trees of the
// cluster probabilities pc[T] (k+1 entries each) weighted by
// w_T = exp(lt[T]) / Σ_U exp(lt[U]), lt[T] = log p(x | T); an error when
// the total Σ_U exp(lt[U]) is not positive and finite (a NaN or every
// density zero would give NaN weights).
func treeAverage(lt []float64, pc [][]float64, k int) ([]float64, error) {
	lz := logsumexp.Of(lt)
	if math.IsInf(lz, 0) || math.IsNaN(lz) {
		return nil, fmt.Errorf("the row's total density over %d trees is %v (log %v)", len(lt), math.Exp(lz), lz)
	}
	out := make([]float64, k+1)
	for t, p := range pc {
		w := math.Exp(lt[t] - lz)
		for c, v := range p {
			out[c] += w * v
		}
	}
	return out, nil
}
