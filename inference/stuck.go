package inference

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// StuckSweeps is the number of consecutive sweeps without an accepted tree
// move (subtree, time, position or ridge) after which a chain counts as
// stuck. A chain that moves accepts many tree moves in every sweep (the
// time moves alone change some divergence time almost always), so a
// hundred sweeps without one mean a frozen chain, not a slow one.
const StuckSweeps = 100

// ErrStuck is wrapped by the error of Run and Resume when a chain is stuck
// (see StuckSweeps) and Config.AllowStuck is not set. The outputs are
// written all the same.
var ErrStuck = errors.New("stuck chain")

// addStall records chain k's longest run of sweeps without a tree move.
func (res *Result) addStall(k, longest int) {
	res.LongestStall = append(res.LongestStall, longest)
	if longest >= StuckSweeps {
		res.Stuck = append(res.Stuck, k)
	}
}

// stuckList names the stuck chains with their longest stalls.
func (res *Result) stuckList() string {
	var parts []string
	for _, k := range res.Stuck {
		i := k - 1
		if res.ChainNumbers != nil {
			i = slices.Index(res.ChainNumbers, k)
		}
		parts = append(parts, fmt.Sprintf("chain %d (%d sweeps)", k, res.LongestStall[i]))
	}
	return strings.Join(parts, ", ")
}

// writeStuck adds the stuck chains, the proposals refused as not finite
// and the conditional updates skipped for numerical reasons to the printed
// table.
func (res *Result) writeStuck(w io.Writer) {
	if res.Refused > 0 {
		fmt.Fprintf(w, "refused %d tree-move evaluations whose density float64 could not evaluate (NaN or +Inf): "+
			"the chains visited states near its limits (divergences at t = 1); consider run --standardize\n", res.Refused)
	}
	if res.Skipped > 0 {
		// Each skip leaves a variable at its value for that sweep; many
		// mean a variable that hardly moved, which no other line shows.
		fmt.Fprintf(w, "skipped %d conditional updates whose draw or statistics float64 could not evaluate (the variable kept its value): "+
			"the chains visited states near its limits (divergences at t = 1); consider run --standardize\n", res.Skipped)
	}
	if len(res.Stuck) == 0 {
		return
	}
	fmt.Fprintf(w, "STUCK: %s: the tree accepted no move for %d or more consecutive sweeps; these draws do not sample the posterior\n",
		res.stuckList(), StuckSweeps)
}

// stuckError is the error for stuck chains unless allowed.
func (res *Result) stuckError(allow bool) error {
	if len(res.Stuck) == 0 || allow {
		return nil
	}
	return fmt.Errorf("%w: %s: the tree accepted no move for %d or more consecutive sweeps, so the draws are not from the posterior. "+
		"Often the state has reached a region float64 cannot resolve (divergences at t = 1): standardize the data (run --standardize) or use a Normal noise model; "+
		"pass --allow-stuck (Config.AllowStuck) to accept the run anyway", ErrStuck, res.stuckList(), StuckSweeps)
}

// chainHook, when set (by tests), is called with every chain Run starts.
var chainHook func(*Chain)
