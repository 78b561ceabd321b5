package inference

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// logGamma is the Gamma(shape a, rate b) log density, written out.
func logGamma(x, a, b float64) float64 {
	lg, _ := math.Lgamma(a)
	return a*math.Log(b) - lg + (a-1)*math.Log(x) - b*x
}

// TestDDTByClamping fits Neal's Dirichlet diffusion tree as the PYDT with
// alpha = beta = 0 clamped outside their priors' supports. Every kept tree
// must be binary (the DDT has no multifurcations), and every traced
// log_joint must equal Score of that tree and those values, whose
// log_hyper is the closed-form prior of c and prec alone.
func TestDDTByClamping(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, map[string]float64{"alpha": 0, "beta": 0})
	if got := len(m.Omitted()); got != 2 {
		t.Fatalf("%d omitted factors, want 2 (alpha's and beta's)", got)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 40, Burn: 20, Thin: 4, Chains: 1, Seed: 3, Out: dir}); err != nil {
		t.Fatal(err)
	}
	trace := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, TraceFile))))), "\n")
	trees := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, TreesFile(1)))))), "\n")
	if len(trace) != 1+5 || len(trees) != 5 {
		t.Fatalf("%d trace rows and %d trees, want 5 of each", len(trace)-1, len(trees))
	}
	if trace[0] != "chain,iteration,log_joint,log_lik,alpha,beta,c,prec" {
		t.Fatalf("trace header %q", trace[0])
	}
	for k, row := range trace[1:] {
		f := strings.Split(row, ",")
		val := func(i int) float64 {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
		logJoint, alpha, beta, c, prec := val(2), val(4), val(5), val(6), val(7)
		if alpha != 0 || beta != 0 {
			t.Fatalf("row %d: alpha %v, beta %v: the clamped values moved", k+1, alpha, beta)
		}
		tr, err := pydt.ParseNewick(trees[k], nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range tr.PreOrder(nil) {
			if !tr.IsLeaf(v) && tr.Degree(v) != 2 {
				t.Fatalf("tree %d has a branch point with %d children: the DDT is binary", k+1, tr.Degree(v))
			}
		}
		sm := compileWithData(t, gaussianModel, smallData, map[string]float64{"alpha": 0, "beta": 0, "c": c, "prec": prec})
		st := sm.NewState()
		st.Trees = []*pydt.Tree{tr}
		s, err := sm.Score(st)
		if err != nil {
			t.Fatal(err)
		}
		// gaussianModel: c ~ Gamma(3, 2), prec ~ Gamma(3, 3).
		if want := logGamma(c, 3, 2) + logGamma(prec, 3, 3); !(math.Abs(s.LogHyper-want) <= 1e-12*math.Abs(want)+1e-12) {
			t.Errorf("tree %d: log_hyper %v, want %v (c and prec only)", k+1, s.LogHyper, want)
		}
		if !(math.Abs(s.LogJoint-logJoint) <= 1e-9*math.Abs(logJoint)) {
			t.Errorf("tree %d: score's log_joint %v, trace's %v", k+1, s.LogJoint, logJoint)
		}
		if !slices.Equal(s.Omitted, []string{"alpha ~ Gamma(2, 2)", "beta ~ Beta(2, 3)"}) || len(s.HyperTerms) != 2 {
			t.Errorf("tree %d: omitted %q, included %q", k+1, s.Omitted, s.HyperTerms)
		}
	}
}

// TestClampedInsideSupportKeepsItsPrior: a value inside its distribution's
// support is scored as before, its prior included.
func TestClampedInsideSupportKeepsItsPrior(t *testing.T) {
	sets := map[string]float64{"alpha": 1.5, "beta": 0.25, "c": 0.7, "prec": 2}
	m := compileWithData(t, gaussianModel, smallData, sets)
	if len(m.Omitted()) != 0 || m.OmittedNote() != "" {
		t.Fatalf("omitted %v", m.Omitted())
	}
	tr, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,(3:0.6,4:0.6):0.1,5:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := m.NewState()
	st.Trees = []*pydt.Tree{tr}
	s, err := m.Score(st)
	if err != nil {
		t.Fatal(err)
	}
	// Beta(2, 3) at 0.25: 12 x (1-x)^2.
	want := logGamma(1.5, 2, 2) + math.Log(12*0.25*0.75*0.75) + logGamma(0.7, 3, 2) + logGamma(2, 3, 3)
	if !(math.Abs(s.LogHyper-want) <= 1e-12) {
		t.Errorf("log_hyper %v, want %v", s.LogHyper, want)
	}
	if len(s.Omitted) != 0 || len(s.HyperTerms) != 4 {
		t.Errorf("omitted %q, included %q", s.Omitted, s.HyperTerms)
	}
}
