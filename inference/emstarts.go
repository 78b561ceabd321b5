package inference

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// This file makes starting trees for the EM search from the trees of the
// subsample's MCMC run (estimateAB): the run that estimates α and β
// samples trees of the subsample's rows from their posterior, and on small
// data sets its summary tree is better than any tree the search builds
// (docs/em.md, "Starting trees from the subsample's MCMC run").

// Starts of the initial trees from the subsample's MCMC run
// (LaplaceFallback.Start, EMEstimates.Start).
const (
	// StartMCMCSummary: the average-linkage tree of the posterior mean
	// times of the rows' most recent common ancestors (what run writes as
	// summary.nwk; TreeSummary.Linkage).
	StartMCMCSummary = "mcmc-summary"
	// StartMCMCConsensus: the majority-rule consensus tree
	// (TreeSummary.Consensus).
	StartMCMCConsensus = "mcmc-consensus"
	// StartMCMCLast: the last tree of the run.
	StartMCMCLast = "mcmc-last"
)

// mcmcStart is an initial tree from the subsample's MCMC run.
type mcmcStart struct {
	name, start string
	tr          *pydt.Tree
}

// mcmcStarts returns the initial trees from the subsample's MCMC run smp:
// its summary tree, its majority-rule consensus and its last tree (only
// the summary tree when summaryOnly), those that multifurcate split into
// binary trees (resolveBinary) when the model admits only binary trees
// (α = β = 0), each over all rows: when the
// subsample is smaller than the data, extended to the other rows by
// sequential attachment (em.ExtendTree) at the run's posterior means of
// c and σ² (per dimension, with a variance per dimension) and the held α, β, on x (the rows as SequentialTree takes
// them). Their times are where EM starts; it fits them.
func (p *EMPlan) mcmcStarts(smp *abSample, x []float64, summaryOnly bool) ([]mcmcStart, error) {
	out, err := p.mcmcStartTrees(smp, x, summaryOnly)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i], err = p.extendStart(smp, x, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mcmcStartTrees returns mcmcStarts' trees before they are extended to
// all rows (over the subsample's rows; extendStart extends each), so that
// RunEM fits each as soon as it is extended.
func (p *EMPlan) mcmcStartTrees(smp *abSample, x []float64, summaryOnly bool) ([]mcmcStart, error) {
	b := p.m.Trees[0]
	m := len(smp.rows)
	sum, err := SummarizeTrees(TreeSlice(smp.trees), m, true)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("of %d MCMC sweeps on %d rows", len(smp.trees), m)
	out := []mcmcStart{{"initial tree: the summary tree " + what, StartMCMCSummary, sum.Linkage.Tree}}
	if !summaryOnly {
		out = append(out,
			mcmcStart{"initial tree: the majority-rule consensus " + what, StartMCMCConsensus, sum.Consensus.Tree},
			mcmcStart{"initial tree: the last tree " + what, StartMCMCLast, smp.trees[len(smp.trees)-1].Clone()})
	}
	if !p.multifurcating() {
		// Only binary trees have positive prior density (Neal's DDT,
		// α = β = 0): a consensus (or a summary tree with ties) that
		// multifurcates cannot start a fit (its fit failed at the first
		// iteration), and dropping it left the large-data path, which
		// keeps the summary tree alone, with no MCMC start. Each
		// multifurcation is split by average linkage of its children's
		// mean rows (resolveBinary).
		return resolveStarts(out, x, b.D, smp.rows)
	}
	return out, nil
}

// resolveStarts splits the multifurcations of each start of out by
// resolveBinary (over the rows given) and returns the starts that are
// binary then; a start that cannot be split is left out, the others
// kept, and the error says which were left out and why.
func resolveStarts(out []mcmcStart, x []float64, d int, rows []int) ([]mcmcStart, error) {
	var dropped []error
	kept := out[:0]
	for _, st := range out {
		if !isBinary(st.tr) {
			tr, err := resolveBinary(st.tr, x, d, rows)
			if err != nil {
				dropped = append(dropped, fmt.Errorf("%s, split into a binary tree: %w", st.name, err))
				continue
			}
			st.tr = tr
			st.name += ", its multifurcations split by linkage"
		}
		kept = append(kept, st)
	}
	return kept, errors.Join(dropped...)
}

// extendStart returns the start st of mcmcStartTrees extended to all rows
// (st itself when the subsample is the data).
func (p *EMPlan) extendStart(smp *abSample, x []float64, st mcmcStart) (mcmcStart, error) {
	b, o := p.m.Trees[0], p.Opt
	if len(smp.rows) == b.N {
		return st, nil
	}
	tr, _, err := em.ExtendTree(x, b.N, b.D, st.tr, smp.rows, em.InitOptions{C: smp.c, Variance: smp.variance, Variances: smp.variances, Alpha: o.Alpha, Beta: o.Beta, Done: p.done(), Margin: p.margin})
	if err != nil {
		return st, fmt.Errorf("%s, extended to all %d rows: %w", st.name, b.N, err)
	}
	st.tr = tr
	st.name += fmt.Sprintf(", extended to all %d rows", b.N)
	return st, nil
}

// resolveBinary returns a copy of tr (leaf j standing for row rows[j] of
// x, n × d row-major, NaN missing) in which every branch point of more
// than two children is split into binary joins by average linkage of the
// children: each child stands for the mean of the rows below it, two
// children are the squared Euclidean distance of their means apart (over
// the columns both have, scaled up by d over their number; a pair with
// none in common is the farthest), and the two groups of least average
// distance are joined first (ties: the first pair in order), so the
// result is binary whatever the ties. The new branch points lie between
// the split one's time and its earliest child's (for children that are
// all leaves, half way to t = 1 in s), evenly spaced in s in the order of
// the joins, the first join the latest; every other node keeps its time.
// EM fits the times; only the topology matters to it.
func resolveBinary(tr *pydt.Tree, x []float64, d int, rows []int) (*pydt.Tree, error) {
	// Sums and counts of the observed values below each node.
	sum := make([]float64, tr.Cap()*d)
	cnt := make([]float64, tr.Cap()*d)
	post := tr.PostOrder(nil)
	for _, v := range post {
		sv, cv := sum[int(v)*d:int(v+1)*d], cnt[int(v)*d:int(v+1)*d]
		if tr.IsLeaf(v) {
			r := rows[v]
			for j := range d {
				if y := x[r*d+j]; !math.IsNaN(y) {
					sv[j], cv[j] = y, 1
				}
			}
			continue
		}
		for c := range tr.Children(v) {
			for j := range d {
				sv[j] += sum[int(c)*d+j]
				cv[j] += cnt[int(c)*d+j]
			}
		}
	}
	dist := func(a, b pydt.NodeID) float64 {
		var s float64
		k := 0
		for j := range d {
			ca, cb := cnt[int(a)*d+j], cnt[int(b)*d+j]
			if ca == 0 || cb == 0 {
				continue
			}
			e := sum[int(a)*d+j]/ca - sum[int(b)*d+j]/cb
			s += e * e
			k++
		}
		if k == 0 {
			return math.Inf(1)
		}
		return s * float64(d) / float64(k)
	}
	out := pydt.New(tr.NumLeaves())
	// split joins the children kids (nodes of out) under the new node at
	// time tv, their earliest time being sLo in s; it returns the node.
	split := func(tv pydt.Time, kids []pydt.NodeID, orig []pydt.NodeID, sLo float64) pydt.NodeID {
		k := len(kids)
		dm := make([]float64, k*k)
		for i := range k {
			for j := range i {
				dm[i*k+j] = dist(orig[i], orig[j])
				dm[j*k+i] = dm[i*k+j]
			}
		}
		size := make([]float64, k)
		for i := range size {
			size[i] = 1
		}
		active := make([]bool, k)
		for i := range active {
			active[i] = true
		}
		node := slices.Clone(kids)
		sv := tv.S()
		if math.IsInf(sLo, 1) {
			sLo = sv + math.Ln2
		}
		for r := 1; r < k-1; r++ {
			bi, bj, best := -1, -1, math.Inf(1)
			for i := range k {
				if !active[i] {
					continue
				}
				for j := range i {
					if active[j] && (bi < 0 || dm[i*k+j] < best) {
						bi, bj, best = i, j, dm[i*k+j]
					}
				}
			}
			// Join bj and bi into bj; the r-th join is at fraction
			// (k−1−r)/(k−1) of the way from tv to sLo.
			w := out.NewInternal(pydt.TimeFromS(sv + (sLo-sv)*float64(k-1-r)/float64(k-1)))
			out.AddChild(w, node[bj])
			out.AddChild(w, node[bi])
			node[bj], active[bi] = w, false
			for m := range k {
				if m != bi && m != bj && active[m] {
					v := (size[bj]*dm[bj*k+m] + size[bi]*dm[bi*k+m]) / (size[bj] + size[bi])
					dm[bj*k+m], dm[m*k+bj] = v, v
				}
			}
			size[bj] += size[bi]
		}
		top := out.NewInternal(tv)
		for i := range k {
			if active[i] {
				out.AddChild(top, node[i])
			}
		}
		return top
	}
	var build func(v pydt.NodeID) pydt.NodeID
	build = func(v pydt.NodeID) pydt.NodeID {
		if tr.IsLeaf(v) {
			return v
		}
		var kids, orig []pydt.NodeID
		sLo := math.Inf(1)
		for c := range tr.Children(v) {
			kids = append(kids, build(c))
			orig = append(orig, c)
			sLo = math.Min(sLo, tr.Time(c).S())
		}
		if len(kids) > 2 {
			return split(tr.Time(v), kids, orig, sLo)
		}
		w := out.NewInternal(tr.Time(v))
		for _, c := range kids {
			out.AddChild(w, c)
		}
		return w
	}
	if tr.IsLeaf(tr.Root()) {
		return tr.Clone(), nil
	}
	out.SetRoot(build(tr.Root()))
	out.Recount()
	out.Labels = tr.Labels
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// isBinary reports whether every branch point of tr has exactly two
// children.
func isBinary(tr *pydt.Tree) bool {
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		if tr.Degree(v) != 2 {
			return false
		}
	}
	return true
}

// multifurcating reports whether the model gives trees with branch points
// of more than two children positive prior density: unless α = β = 0 are
// held (Neal's DDT, binary trees only).
func (p *EMPlan) multifurcating() bool {
	o := p.Opt
	return o.LearnAlpha || o.LearnBeta || o.Alpha+2*o.Beta > 0
}
