package inference

import (
	"fmt"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// starWarning returns a warning when one branch point of tr has at least
// half of the rows (and at least 8) as direct leaf children: a near-star
// that the EM objective can prefer (large β, a variance that spreads every
// row alike) but that says little about the data's hierarchy. It returns ""
// otherwise.
func starWarning(tr *pydt.Tree) string {
	n := tr.NumLeaves()
	worst, at := 0, pydt.NodeID(-1)
	for _, v := range tr.PreOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		leaves := 0
		for c := range tr.Children(v) {
			if tr.IsLeaf(c) {
				leaves++
			}
		}
		if leaves > worst {
			worst, at = leaves, v
		}
	}
	if worst < 8 || 2*worst < n {
		return ""
	}
	return fmt.Sprintf("the best tree is nearly a star: one branch point (t = %.4g) has %d of the %d rows as direct children; "+
		"EM reports the single tree of highest bound, and where many trees fit the data about equally well (ccle, for one) that can be a near-star "+
		"even though the posterior prefers resolved trees (docs/em.md, \"Why EM ended at a near-star\"): compare a run with --method mcmc",
		tr.Time(at).T(), worst, n)
}
