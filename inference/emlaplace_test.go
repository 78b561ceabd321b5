package inference

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// TestRunEMLaplaceRanking checks the search's ranking with the Laplace
// correction: every kept tree's value is its EM bound plus the correction,
// the list is sorted by it, and summary.json and the checkpoint name and
// report it; with the correction off (as before it), the value is the
// bound. (em's TestLaplace* test the correction itself.)
func TestRunEMLaplaceRanking(t *testing.T) {
	x := fourClusters(40, 0.25, 3)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	for _, no := range []bool{false, true} {
		out := t.TempDir()
		res, err := RunEM(context.Background(), m, EMConfig{Rounds: 4, Patience: -1, Seed: 2, Out: out, EMIters: 30, noLaplace: no})
		if err != nil {
			t.Fatal(err)
		}
		// The log gaps are named g, as in bound.svg, not u (a probit
		// layer's auxiliaries).
		if res.TimesIntegrated == no || strings.Contains(res.Objective, "Laplace") == no || strings.Contains(res.Objective, "p(Y, u,") {
			t.Errorf("noLaplace %v: times_integrated %v, objective %q", no, res.TimesIntegrated, res.Objective)
		}
		for i, tr := range res.Trees {
			if tr.Bound != tr.EMBound+tr.Laplace || no != (tr.Laplace == 0) || math.IsNaN(tr.Laplace) {
				t.Errorf("noLaplace %v: tree %d: value %v, EM bound %v, correction %v", no, i, tr.Bound, tr.EMBound, tr.Laplace)
			}
			if i > 0 && tr.Bound > res.Trees[i-1].Bound {
				t.Errorf("noLaplace %v: tree %d ranks above tree %d", no, i, i-1)
			}
		}
		cp, err := readEMCheckpoint(out)
		if err != nil {
			t.Fatal(err)
		}
		if cp.TimesIntegrated == no || cp.Trees[0].Laplace != res.Laplace || cp.Trees[0].EMBound != res.EMBound {
			t.Errorf("noLaplace %v: checkpoint times_integrated %v, best tree %v + %v", no, cp.TimesIntegrated, cp.Trees[0].EMBound, cp.Trees[0].Laplace)
		}
		if res.Bound != res.Trees[0].Bound || res.EMBound != res.Trees[0].EMBound || res.Laplace != res.Trees[0].Laplace {
			t.Errorf("summary %v = %v + %v, best tree %v = %v + %v", res.Bound, res.EMBound, res.Laplace, res.Trees[0].Bound, res.Trees[0].EMBound, res.Trees[0].Laplace)
		}
		got, err := ReadEMResult(out)
		if err != nil {
			t.Fatal(err)
		}
		if got.TimesIntegrated != res.TimesIntegrated || got.EMBound != res.EMBound || got.Laplace != res.Laplace || got.Objective != res.Objective {
			t.Errorf("%s: %+v", filepath.Join(out, SummaryFile), got)
		}
	}
}
