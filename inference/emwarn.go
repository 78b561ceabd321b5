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
		"EM's search did not resolve their structure (compare a run with --method mcmc, or fix beta and the variance with --set)",
		tr.Time(at).T(), worst, n)
}
