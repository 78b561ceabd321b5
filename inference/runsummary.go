package inference

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/pydtlang/pydtlang/internal/atomicfile"
)

// legacyMCCFile is the maximum clade credibility tree that earlier versions
// wrote; RemoveRunFiles still removes it.
const legacyMCCFile = "mcc.nwk"

// Names of the tree summaries a run writes besides summary.nwk.
const (
	// MEAFile is the kept tree of maximum expected clade accuracy
	// (CladeCounts.MaxAccuracy).
	MEAFile = "mea.nwk"
	// ConsensusFile is the majority-rule consensus tree
	// (CladeCounts.Consensus).
	ConsensusFile = "consensus.nwk"
)

// SummaryInfo describes a run's summary trees in summary.json.
type SummaryInfo struct {
	// Trees is the number of kept trees summarised, all chains together.
	Trees int `json:"trees"`
	// DistinctClades is the number of distinct clades in the kept trees:
	// exact unless DistinctCladesEstimated, when the bounded clade counts
	// overflowed (CladeCounts.Distinct) and it is an estimate.
	DistinctClades          int  `json:"distinct_clades"`
	DistinctCladesEstimated bool `json:"distinct_clades_estimated,omitempty"`
	// Summary reports whether summary.nwk and coclust.csv were written.
	Summary bool `json:"summary"`
	// MEABranchPoints is the number of branch points of mea.nwk, the root
	// included, and MEAExpectedCorrect its Σ (2p − 1): the expected number
	// of its clades in the true tree minus the expected number not.
	MEABranchPoints    int     `json:"mea_branch_points"`
	MEAExpectedCorrect float64 `json:"mea_expected_correct_minus_incorrect"`
	// MEAGap is 0 (left out) when mea.nwk is the exact maximiser among the
	// kept trees, and otherwise the most by which a kept tree that could
	// not be scored exactly may exceed its Σ (2p − 1) (SummaryTree.Gap).
	MEAGap float64 `json:"mea_gap,omitempty"`
	// ConsensusBranchPoints is the number of branch points of
	// consensus.nwk: the clades in more than half of the kept trees.
	ConsensusBranchPoints int `json:"consensus_branch_points"`
	// ASDSF is the average standard deviation of clade frequencies across
	// chains, MaxSDSF the largest, over ASDSFClades clades (SplitSD); nil
	// for one chain or when no clade reaches MinSplitFreq in any chain.
	ASDSF       *float64 `json:"asdsf,omitempty"`
	MaxSDSF     *float64 `json:"max_sdsf,omitempty"`
	ASDSFClades int      `json:"asdsf_clades,omitempty"`
	// AlignedBy names the categorical array (z) whose states the tree's
	// leaves are, when the summaries were made from the kept trees with
	// each tree's leaves renamed by its draw's alignment to the reference
	// draw (AlignedArray.Trees); empty otherwise.
	AlignedBy string `json:"aligned_by,omitempty"`
}

// ASDSFWarn is the ASDSF above which a run's table warns that the chains
// disagree on the trees (MrBayes's manual calls values below 0.05
// acceptable, below 0.01 very good).
const ASDSFWarn = 0.05

// writeMap writes the chain's tree as map.nwk, the highest-log-joint tree
// seen. For an augmented likelihood (TreeBinding.Augmented, e.g. Probit)
// it writes nothing: the log joint the sampler tracks is that of the
// augmented state, whose auxiliary variables u are
// drawn afresh each sweep given the tree, so its largest value says how
// well one draw of u fitted, not how well the tree explains the binary
// data, and it is not comparable across states (in practice the largest
// value is reached in the first sweeps and map.nwk stayed the initial
// tree). The tree's own score, p(Y | tree) with the locations integrated
// out, is an orthant probability with no closed form; use summary.nwk.
//
// In a model with several PYDTs the state's tree of each further PYDT is
// written to FileOf(MapFile, its variable), and nothing is written when any
// of the trees has an augmented likelihood.
func (r *runner) writeMap(ch *Chain) error {
	if !r.m.mapWritten() {
		return nil
	}
	for j, t := range ch.trees {
		nwk := t.Tree.Newick()
		if j == 0 {
			r.bestTree = nwk
		} else {
			if r.bestTrees == nil {
				r.bestTrees = map[string]string{}
			}
			r.bestTrees[t.b.Leaves.Name] = nwk
		}
		if err := atomicfile.Write(filepath.Join(r.cfg.Out, FileOf(MapFile, r.m.fileVar(j))), []byte(nwk+"\n")); err != nil {
			return err
		}
	}
	return nil
}

// mapWritten reports whether a run of m writes map.nwk: when no tree has
// an augmented likelihood (see writeMap).
func (m *Model) mapWritten() bool {
	return !slices.ContainsFunc(m.Trees, func(b *TreeBinding) bool { return b.Augmented() != nil })
}

// wantCoclust reports whether a run on n rows writes coclust.csv and
// summary.nwk: up to CoclustDefaultMax rows, or when asked.
func wantCoclust(n int, asked bool) bool { return asked || n <= CoclustDefaultMax }

// writeTreeSummary summarises the kept trees of every chain by streaming
// the tree files (so that a resumed run summarises exactly the trees an
// uninterrupted one would) and writes mea.nwk, consensus.nwk and, for up
// to CoclustDefaultMax rows or when asked, coclust.csv and summary.nwk.
//
// In a model with several PYDTs each tree is summarised on its own, from
// its own tree files, into the files FileOf(name, its variable), described
// in Result.TreeSummaries.
func (r *runner) writeTreeSummary(res *Result) error {
	for j, b := range r.m.Trees {
		info, err := r.writeTreeSummaryOf(res, j)
		if err != nil {
			if r.m.Several() {
				return fmt.Errorf("PYDT %s: %w", b.Leaves.Name, err)
			}
			return err
		}
		if j == 0 {
			res.SummaryTree = info
		} else if info != nil {
			if res.TreeSummaries == nil {
				res.TreeSummaries = map[string]*SummaryInfo{}
			}
			res.TreeSummaries[b.Leaves.Name] = info
		}
	}
	return nil
}

func (r *runner) writeTreeSummaryOf(res *Result, j int) (*SummaryInfo, error) {
	tb, v := r.m.Trees[j], r.m.fileVar(j)
	var paths []string
	for k, f := range r.trees[j] {
		if err := f.flush(); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(r.cfg.Out, TreesFileOf(v, r.cfg.ChainOffset+k+1)))
	}
	if res.Completed <= r.cfg.Burn {
		return nil, nil // no kept trees yet
	}
	return writeTreeFilesSummary(paths, tb.Labels(), tb.N, wantCoclust(tb.N, r.cfg.Coclust), r.cfg.Out, v, res.treeAlignment(tb.Leaves.Name))
}

// writeTreeFilesSummary summarises the trees of the tree files, one per
// chain in the chains' order, on n rows named by labels, writes the
// summary trees (and, with coclust, coclust.csv and summary.nwk) to out
// (unless out is empty), named for the PYDT of variable v (FileOf; v is
// "" for the model's first PYDT), and describes them; nil when the files
// hold no tree.
//
// With al not nil, the leaves are states without fixed labels: each tree's
// leaves are renamed by its draw's permutation (al.source) before any
// summary is made.
func writeTreeFilesSummary(paths []string, labels []string, n int, coclust bool, out, v string, al *treeAlignment) (*SummaryInfo, error) {
	var srcs []TreeSource
	if al != nil && len(al.perms) != len(paths) {
		return nil, fmt.Errorf("aligning the trees by %s: %d chains of permutations for %d tree files", al.by, len(al.perms), len(paths))
	}
	for k, p := range paths {
		if al != nil {
			srcs = append(srcs, al.source(labels, n, p, k))
		} else {
			srcs = append(srcs, NewickFiles(n, labels, p))
		}
	}
	s, err := SummarizeChains(srcs, n, coclust)
	if err != nil {
		return nil, err
	}
	if s.Clades.Trees() == 0 {
		return nil, nil
	}
	files := map[string]*SummaryTree{MEAFile: s.MaxAccuracy, ConsensusFile: s.Consensus}
	if s.Linkage != nil {
		files[SummaryTreeFile] = s.Linkage
		var b bytes.Buffer
		if err := s.Coclust.WriteCSV(&b, labels); err != nil {
			return nil, err
		}
		if out != "" {
			if err := atomicfile.Write(filepath.Join(out, FileOf(CoclustFile, v)), b.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	for name, st := range files {
		if out == "" {
			break
		}
		if err := atomicfile.Write(filepath.Join(out, FileOf(name, v)), []byte(st.Newick()+"\n")); err != nil {
			return nil, err
		}
	}
	info := &SummaryInfo{
		Trees: s.Clades.Trees(), DistinctClades: s.Clades.Distinct(), DistinctCladesEstimated: !s.Clades.Exact(),
		Summary:         s.Linkage != nil,
		MEABranchPoints: len(s.MaxAccuracy.Credibility), MEAExpectedCorrect: s.MaxAccuracy.ExpectedCorrect(), MEAGap: s.MaxAccuracy.Gap,
		ConsensusBranchPoints: len(s.Consensus.Credibility),
	}
	if al != nil {
		info.AlignedBy = al.by
	}
	if sd := s.SplitSD; sd != nil && sd.Clades > 0 {
		avg, mx := sd.Average, sd.Max
		info.ASDSF, info.MaxSDSF, info.ASDSFClades = &avg, &mx, sd.Clades
	}
	return info, nil
}
