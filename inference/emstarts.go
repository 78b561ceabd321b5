package inference

import (
	"fmt"

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
// the summary tree when summaryOnly), leaving out those that multifurcate
// when the model admits only binary trees (α = β = 0), each over all rows: when the
// subsample is smaller than the data, extended to the other rows by
// sequential attachment (em.ExtendTree) at the run's posterior means of
// c and σ² (per dimension, with a variance per dimension) and the held α, β, on x (the rows as SequentialTree takes
// them). Their times are where EM starts; it fits them.
func (p *EMPlan) mcmcStarts(smp *abSample, x []float64, summaryOnly bool) ([]mcmcStart, error) {
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
	o := p.Opt
	if !p.multifurcating() {
		// Only binary trees have positive prior density (Neal's DDT,
		// α = β = 0): a consensus (or a summary tree with ties) that
		// multifurcates cannot start a fit; before, its fit failed at the
		// first iteration and every such run warned of a dropped tree.
		kept := out[:0]
		for _, st := range out {
			if isBinary(st.tr) {
				kept = append(kept, st)
			}
		}
		out = kept
	}
	if m == b.N {
		return out, nil
	}
	for i := range out {
		tr, _, err := em.ExtendTree(x, b.N, b.D, out[i].tr, smp.rows, em.InitOptions{C: smp.c, Variance: smp.variance, Variances: smp.variances, Alpha: o.Alpha, Beta: o.Beta})
		if err != nil {
			return nil, fmt.Errorf("%s, extended to all %d rows: %w", out[i].name, b.N, err)
		}
		out[i].tr = tr
		out[i].name += fmt.Sprintf(", extended to all %d rows", b.N)
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
