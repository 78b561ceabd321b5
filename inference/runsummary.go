package inference

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/pydtlang/pydtlang/internal/atomicfile"
)

// legacyMCCFile is the maximum clade credibility tree that earlier versions
// wrote; RemoveRunFiles still removes it.
const legacyMCCFile = "mcc.nwk"

// ConsensusFile is the majority-rule consensus tree (CladeCounts.Consensus).
const ConsensusFile = "consensus.nwk"

// SummaryInfo describes a run's summary tree in summary.json.
type SummaryInfo struct {
	// Trees is the number of kept trees summarised, all chains together.
	Trees int `json:"trees"`
	// BranchPoints is the number of branch points of summary.nwk, the root
	// included: the clades found in more than half of the kept trees.
	BranchPoints int `json:"branch_points"`
	// DistinctClades is the number of distinct clades in the kept trees.
	DistinctClades int `json:"distinct_clades"`
	// ExpectedCorrect is Σ (2p − 1) over summary.nwk's clades: the expected
	// number of its clades in the true tree minus the expected number not.
	ExpectedCorrect float64 `json:"expected_correct_minus_incorrect"`
	// Coclust reports whether coclust.csv was written.
	Coclust bool `json:"coclust"`
}

// writeMap writes the chain's tree as map.nwk, the highest-log-joint tree
// seen. For a Probit link it writes nothing: the log joint the sampler
// tracks is that of the augmented state, whose auxiliary variables u are
// drawn afresh each sweep given the tree, so its largest value says how
// well one draw of u fitted, not how well the tree explains the binary
// data, and it is not comparable across states (in practice the largest
// value is reached in the first sweeps and map.nwk stayed the initial
// tree). The tree's own score, p(Y | tree) with the locations integrated
// out, is an orthant probability with no closed form; use summary.nwk.
func (r *runner) writeMap(ch *Chain) error {
	if r.m.Link == LinkProbit {
		return nil
	}
	r.bestTree = ch.Tree.Newick()
	return atomicfile.Write(filepath.Join(r.cfg.Out, MapFile), []byte(r.bestTree+"\n"))
}

// writeTreeSummary summarises the kept trees of every chain by streaming
// the tree files (so that a resumed run summarises exactly the trees an
// uninterrupted one would) and writes summary.nwk and, for up to
// CoclustDefaultMax rows or when asked, coclust.csv.
func (r *runner) writeTreeSummary(res *Result) error {
	var paths []string
	for k, f := range r.trees {
		if err := f.flush(); err != nil {
			return err
		}
		paths = append(paths, filepath.Join(r.cfg.Out, TreesFile(k+1)))
	}
	if res.Completed <= r.cfg.Burn {
		return nil // no kept trees yet
	}
	coclust := r.cfg.Coclust || r.m.N <= CoclustDefaultMax
	s, err := SummarizeTrees(NewickFiles(r.m.Labels, paths...), r.m.N, coclust)
	if err != nil {
		return fmt.Errorf("summary tree: %w", err)
	}
	if s.Clades.Trees() == 0 {
		return nil
	}
	if err := atomicfile.Write(filepath.Join(r.cfg.Out, SummaryTreeFile), []byte(s.Summary.Newick()+"\n")); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(r.cfg.Out, ConsensusFile), []byte(s.Consensus.Newick()+"\n")); err != nil {
		return err
	}
	if s.Coclust != nil {
		var b bytes.Buffer
		if err := s.Coclust.WriteCSV(&b, r.m.Labels); err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(r.cfg.Out, CoclustFile), b.Bytes()); err != nil {
			return err
		}
	}
	res.SummaryTree = &SummaryInfo{
		Trees: s.Clades.Trees(), BranchPoints: len(s.Summary.Credibility), DistinctClades: s.Clades.Distinct(),
		ExpectedCorrect: s.Summary.ExpectedCorrect(), Coclust: s.Coclust != nil,
	}
	return nil
}
