package inference

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// linkageInitMax is the largest N for which RunEM adds average-linkage
// initial trees: the linkage needs N² float64 of memory (32 MB at 2000).
const linkageInitMax = 2000

// linkageCuts are the numbers of flat clusters the linkage trees are cut
// into for initial trees (cutTree), in the order of their start indices
// (2 onwards; 1 is the uncut tree).
var linkageCuts = []int{2, 3, 4, 6, 8, 12, 16}

// linkageTree returns the average-linkage tree of the rows of x (n × d,
// NaN missing) under the distance 1 − t = 1 − exp(−‖x_i − x_j‖² / (2 D σ²)):
// for two leaves whose lowest common ancestor is at t, E‖x_i − x_j‖² =
// 2 D σ² (1 − t), so small distances map to times near the leaves' and the
// exponential keeps every join strictly inside (0, 1) and in the order of
// the distances (no ties from clamping, so the tree is binary unless the
// data tie). Missing coordinates are left out of a pair's sum, which is
// scaled up by D over the coordinates both rows have; a pair with none in
// common gets the largest distance.
func linkageTree(x []float64, n, d int, variance float64) (*pydt.Tree, error) {
	dist := func(i, j int) float64 {
		var s float64
		k := 0
		for c := range d {
			a, b := x[i*d+c], x[j*d+c]
			if math.IsNaN(a) || math.IsNaN(b) {
				continue
			}
			s += (a - b) * (a - b)
			k++
		}
		if k == 0 {
			return 1
		}
		return -math.Expm1(-s * float64(d) / float64(k) / (2 * float64(d) * variance))
	}
	tr, err := averageLinkage(n, dist)
	if err != nil {
		return nil, fmt.Errorf("initial tree by average linkage: %w", err)
	}
	return tr, nil
}

// collapseTree returns a copy of tr in which every branch point whose
// distance 1 − t is more than rho times its parent's (it joins almost as
// early as its parent) is merged into its parent, top-down, so that a
// chain of such joins becomes one multifurcation. Branch points whose
// children are all leaves (the flat clusters of cutTree) are never merged.
// rho ≥ 1 changes nothing.
func collapseTree(tr *pydt.Tree, rho float64) (*pydt.Tree, error) {
	out := pydt.New(tr.NumLeaves())
	flat := func(v pydt.NodeID) bool {
		for c := range tr.Children(v) {
			if !tr.IsLeaf(c) {
				return false
			}
		}
		return true
	}
	var build func(v, into pydt.NodeID)
	build = func(v, into pydt.NodeID) {
		for c := range tr.Children(v) {
			if tr.IsLeaf(c) {
				out.AddChild(into, c)
				continue
			}
			if !flat(c) && tr.Time(c).OneMinus() > rho*out.Time(into).OneMinus() {
				build(c, into) // merged: its children join into's
				continue
			}
			w := out.NewInternal(tr.Time(c))
			out.AddChild(into, w)
			build(c, w)
		}
	}
	return rebuildTree(tr, out, build, "collapsing")
}

// cutTree returns the tree with tr's k−1 earliest branch points (its top
// joins) and, below them, each of the k clusters they leave as one flat
// branch point at the cluster's own time holding all of its rows (a
// single row stays a leaf): the clusters of a cut of the dendrogram, with
// nothing resolved inside them. The search resolves them where the data
// say so. k = 1 is the star of all rows at the root's time (the root is
// always kept; it once kept the root's join for k = 1 as well, a cut into
// two or more clusters).
func cutTree(tr *pydt.Tree, k int) (*pydt.Tree, error) {
	if k < 1 {
		return nil, fmt.Errorf("cutting the initial tree into %d clusters", k)
	}
	out := pydt.New(tr.NumLeaves())
	// flat adds the rows below tr's node v under out's node into.
	flat := func(v, into pydt.NodeID) {
		for _, l := range tr.PostOrderFrom(v, nil) {
			if tr.IsLeaf(l) {
				out.AddChild(into, l)
			}
		}
	}
	if k == 1 {
		return rebuildTree(tr, out, flat, "cutting")
	}
	var internal []pydt.NodeID
	for _, v := range tr.PreOrder(nil) {
		if !tr.IsLeaf(v) {
			internal = append(internal, v)
		}
	}
	slices.SortStableFunc(internal, func(a, b pydt.NodeID) int { return cmp.Compare(tr.Time(a).S(), tr.Time(b).S()) })
	top := map[pydt.NodeID]bool{}
	for _, v := range internal[:min(k-1, len(internal))] {
		top[v] = true
	}
	var build func(v, into pydt.NodeID)
	build = func(v, into pydt.NodeID) {
		for c := range tr.Children(v) {
			switch {
			case tr.IsLeaf(c):
				out.AddChild(into, c)
			case top[c]:
				w := out.NewInternal(tr.Time(c))
				out.AddChild(into, w)
				build(c, w)
			default:
				w := out.NewInternal(tr.Time(c))
				out.AddChild(into, w)
				flat(c, w)
			}
		}
	}
	return rebuildTree(tr, out, build, "cutting")
}

// rebuildTree finishes a copy of tr built into out by build(v, into),
// which adds the children of tr's branch point v under out's node into:
// it roots out at a copy of tr's root, validates it and names the step
// (what) in the error. A tree whose root is a leaf is returned cloned.
func rebuildTree(tr, out *pydt.Tree, build func(v, into pydt.NodeID), what string) (*pydt.Tree, error) {
	root := tr.Root()
	if tr.IsLeaf(root) {
		return tr.Clone(), nil
	}
	r := out.NewInternal(tr.Time(root))
	build(root, r)
	out.SetRoot(r)
	out.Recount()
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("%s the initial tree: %w", what, err)
	}
	return out, nil
}

// linkageVariances returns the per-column variances that
// weightedLinkageTree divides the columns by, from a fit's hyperparameters
// h: the diffusion variances σ²_d when the model learns one per column,
// else the noise variances 1/E[θ_d] of a noise precision per column
// (weightsLinkage), else nil.
func (p *EMPlan) linkageVariances(h emHyper) []float64 {
	if p.learnsDimVariances() {
		return slices.Clone(h.Variances)
	}
	if p.noise != nil && p.noise.perCol && len(h.Noise) == p.m.D {
		v := make([]float64, len(h.Noise))
		for j, t := range h.Noise {
			v[j] = 1 / t
		}
		return v
	}
	return nil
}

// weightsLinkage reports whether the search builds the linkage tree
// weighted by the fitted variances (weightedLinkageTree): with a diffusion
// variance per column learned, or else a noise precision per column, and
// more than one column.
func (p *EMPlan) weightsLinkage() bool {
	return p.m.D > 1 && (p.learnsDimVariances() || p.noise != nil && p.noise.perCol)
}

// learnsDimVariances reports whether EM learns a diffusion variance per
// dimension (then those weigh the linkage, not a noise per column).
func (p *EMPlan) learnsDimVariances() bool {
	return p.Opt.Variances != nil && p.Opt.PrecPriors != nil
}

// linkageWeights names the variances linkageVariances returns, for the log.
func (p *EMPlan) linkageWeights() string {
	if p.learnsDimVariances() {
		return "diffusion variances"
	}
	return "noise variances"
}

// weightedLinkageRounds is how many times weightedLinkageTree refits the
// variances per dimension and rebuilds the linkage tree.
const weightedLinkageRounds = 3

// weightedLinkageTree returns the average-linkage tree (linkageTree) of
// the rows of x (n × d) with each column d divided by σ_d, where σ²_d are
// the diffusion variances per dimension (or, with a noise precision per
// column and one diffusion variance, the noise variances 1/E[θ_d]:
// linkageVariances) that EM (p's options, at most
// iters iterations, no Laplace correction) fits to the previous tree,
// starting from lt, the linkage tree of the unweighted rows (a copy: EM
// sets the times of the tree it fits, and lt is an initial tree of its
// own); repeated weightedLinkageRounds times. v1, when not nil, are the
// variances of that first fit, made already (the linkage tree's fit as an
// initial tree: RunEM passes them, so the fit is not repeated). It also
// returns the last variances.
//
// Linkage weighs every column alike, so columns of pure noise hide the
// clusters that a few columns show (docs/clustering.md, synnoise); a model
// with a variance per dimension can down-weight them, but only once it has
// a tree that shows the clusters, which neither the plain linkage tree nor
// a star does: the fit to the plain linkage tree already gives the noise
// columns the larger variances, the tree under those weights shows the
// clusters more clearly, and so on (docs/em.md, "Linkage weighted by the
// fitted variances").
func (p *EMPlan) weightedLinkageTree(lt *pydt.Tree, v1 []float64, x []float64, n, d, iters int) (*pydt.Tree, []float64, error) {
	var tr *pydt.Tree
	if v1 == nil {
		tr = lt.Clone()
	}
	var v []float64
	xs := make([]float64, len(x))
	for r := range weightedLinkageRounds {
		if r == 0 && v1 != nil {
			if len(v1) != d {
				return nil, nil, fmt.Errorf("weighted linkage: %d variances of the linkage tree's fit for %d columns", len(v1), d)
			}
			v = slices.Clone(v1)
		} else {
			fit, _, err := p.newFit(tr, nil, iters)
			if err != nil {
				return nil, nil, fmt.Errorf("weighted linkage, round %d: %w", r+1, err)
			}
			if err := p.runFit(fit); err != nil {
				return nil, nil, fmt.Errorf("weighted linkage, round %d: %w", r+1, err)
			}
			v = p.linkageVariances(fitHyper(fit))
		}
		for j, vj := range v {
			if !(vj > 0) || math.IsInf(vj, 1) {
				return nil, nil, fmt.Errorf("weighted linkage, round %d: the variance of column %d is %v", r+1, j+1, vj)
			}
		}
		for i := range n {
			for j := range d {
				xs[i*d+j] = x[i*d+j] / math.Sqrt(v[j])
			}
		}
		var err error
		if tr, err = linkageTree(xs, n, d, columnVariance(xs, n, d)); err != nil {
			return nil, nil, err
		}
	}
	return tr, v, nil
}
