package inference

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// TestInsertKBestNoLaplace checks the K-best list's rule for a tree whose
// Laplace correction is unavailable: it ranks below every tree with the
// correction whatever its value (a bound and a bound plus correction are
// not comparable), among such trees by value, and it never becomes the best
// while a tree with the correction is listed.
func TestInsertKBestNoLaplace(t *testing.T) {
	tr := func(key string, b float64, no bool) EMTree { return EMTree{Bound: b, NoLaplace: no, key: key} }
	var list []EMTree
	steps := []kbestStep[string]{
		{tr("a", -10, false), true, []string{"a"}},
		{tr("n1", 50, true), false, []string{"a", "n1"}}, // far higher, but no correction
		{tr("b", -12, false), false, []string{"a", "b", "n1"}},
		{tr("n2", 60, true), false, []string{"a", "b", "n2", "n1"}},
		{tr("n1", 70, true), false, []string{"a", "b", "n1", "n2"}}, // same topology, higher: replaced
	}
	list = checkKBestSteps(t, list, 5, steps, func(u EMTree) string { return u.key })
	// The same topology with the correction replaces it without.
	list, _ = insertKBest(list, tr("n2", -100, false), 5)
	if got := list[2]; got.key != "n2" || got.NoLaplace {
		t.Errorf("n2 with the correction: list %v", list)
	}
	// With no tree that has the correction, the first such tree is best.
	l2, better := insertKBest(nil, tr("x", 1, true), 3)
	if !better || len(l2) != 1 {
		t.Errorf("first tree without the correction: better %v", better)
	}
	// The weights: 0 for the trees without the correction when some have it.
	w, err := EMKBestWeights([]EMEstimates{{Bound: -1}, {Bound: 5, LaplaceUnavailable: true}, {Bound: -1}})
	if err != nil || !slices.Equal(w, []float64{0.5, 0, 0.5}) {
		t.Errorf("weights %v, %v; want [0.5 0 0.5]", w, err)
	}
	w, err = EMKBestWeights([]EMEstimates{{Bound: 0, LaplaceUnavailable: true}, {Bound: 0, LaplaceUnavailable: true}})
	if err != nil || !slices.Equal(w, []float64{0.5, 0.5}) {
		t.Errorf("weights of trees all without the correction %v, %v; want [0.5 0.5]", w, err)
	}
}

// fallbackHook returns an EMConfig.laplace that makes the correction fail
// (em.ErrNotMaximum) for every fit of the topology never, and for the
// first `first` fits of the topology once, otherwise em.EM.Laplace.
func fallbackHook(never, once string, first int) func(*em.EM) (float64, error) {
	calls := map[string]int{}
	return func(fit *em.EM) (float64, error) {
		key := topologyKey(fit.Tree())
		calls[key]++
		if key == never || key == once && calls[key] <= first {
			return math.NaN(), em.ErrNotMaximum
		}
		return fit.Laplace()
	}
}

// fallbackFixture is the model of TestRunEMLaplaceFallback (24 rows) with
// the topology keys of its average-linkage tree, whose Laplace correction
// fallbackHook makes fail always (never), and of that tree's cut into 4
// clusters, whose correction fails on its first tries (once).
func fallbackFixture(t *testing.T) (m *Model, never, once string) {
	t.Helper()
	m, lt := gaussianLinkage(t, 24)
	ct, err := cutTree(lt, 4)
	if err != nil {
		t.Fatal(err)
	}
	cut4, err := collapseTree(ct, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	return m, topologyKey(lt), topologyKey(cut4)
}

// TestRunEMLaplaceFallback checks that an initial tree whose Laplace
// correction cannot be formed is not dropped (before, 4 of ccle's 12
// initial trees were, as failed fits): the average-linkage tree, whose
// correction always fails here, is kept with it marked unavailable,
// ranked after every tree with the correction, weighted 0, marked in
// kbest.nwk; the cut into 4 clusters, whose correction fails for the four
// tries on its first fit, is refitted from perturbed times and ranked with
// its correction. summary.json records both (start, index, action), a
// warning says so, and the run resumes exactly.
func TestRunEMLaplaceFallback(t *testing.T) {
	m, never, once := fallbackFixture(t)
	cfg := func(dir string, rounds int) EMConfig {
		// K keeps every tree of the run (21 with local moves in the
		// subsample MCMC, whose trees start the search): the linkage
		// tree, ranked last, must not fall off the list.
		return EMConfig{Rounds: rounds, K: 100, Patience: -1, Seed: 1, Out: dir, EMIters: 20, laplace: fallbackHook(never, once, 4)}
	}
	dir := t.TempDir()
	res, err := RunEM(context.Background(), m, cfg(dir, 2))
	if err != nil {
		t.Fatal(err)
	}
	if res.InitialFailed != 0 {
		t.Errorf("%d initial trees dropped", res.InitialFailed)
	}
	var got []LaplaceFallback
	for _, f := range res.LaplaceFallbacks {
		if f.Start != "candidate" {
			got = append(got, f)
		}
	}
	if len(got) != 2 || got[0].Start != "linkage" || got[0].Index != 1 || got[0].Action != laplaceUnavailable ||
		got[1].Start != "linkage" || got[1].Index != 4 || got[1].Action != laplaceRefit || !strings.Contains(got[1].Tree, "cut into 4") ||
		!strings.Contains(got[0].Error, "not at a maximum") {
		t.Errorf("laplace_fallbacks of the initial trees: %+v", got)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "Laplace correction failed at first") }) {
		t.Errorf("no warning: %v", res.Warnings)
	}
	seenNo := false
	for i, tr := range res.Trees {
		key := topologyKey(tr.Tree)
		if key == never != tr.NoLaplace {
			t.Errorf("tree %d: NoLaplace %v", i, tr.NoLaplace)
		}
		if key == once && (tr.NoLaplace || tr.Laplace == 0 || tr.Bound != tr.EMBound+tr.Laplace) {
			t.Errorf("the refitted cut: %+v", tr)
		}
		if tr.NoLaplace {
			seenNo = true
			if tr.Laplace != 0 || tr.Bound != tr.EMBound || res.KBestWeights[i] != 0 || !res.KBestEstimates[i].LaplaceUnavailable {
				t.Errorf("tree %d without the correction: value %v, bound %v, correction %v, weight %v", i, tr.Bound, tr.EMBound, tr.Laplace, res.KBestWeights[i])
			}
		} else if seenNo {
			t.Errorf("tree %d has the correction but ranks after a tree without it", i)
		}
	}
	if !seenNo {
		t.Fatal("the linkage tree is not in the K-best list")
	}
	kb, err := os.ReadFile(filepath.Join(dir, KBestFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(kb), "laplace_correction=unavailable]"); n != 1 {
		t.Errorf("kbest.nwk marks %d trees without the correction, want 1:\n%s", n, kb)
	}
	// Resumed from its checkpoint after 1 round: the same outputs as 2
	// rounds in one go.
	one := t.TempDir()
	if _, err := RunEM(context.Background(), m, cfg(one, 1)); err != nil {
		t.Fatal(err)
	}
	// (A fresh hook: its counts start again, as a resumed process's would.)
	if _, err := ResumeEM(context.Background(), m, one, EMConfig{Rounds: 2, laplace: fallbackHook(never, once, 4)}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{KBestFile, MapFile} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(one, f))
		if string(a) != string(b) {
			t.Errorf("%s after a resume differs:\n%s\nwant\n%s", f, b, a)
		}
	}
	a, _ := ReadEMResult(dir)
	r, _ := ReadEMResult(one)
	if !slices.Equal(fallbackKeys(a.LaplaceFallbacks), fallbackKeys(r.LaplaceFallbacks)) {
		t.Errorf("laplace_fallbacks after a resume: %v, want %v", r.LaplaceFallbacks, a.LaplaceFallbacks)
	}
}

func fallbackKeys(fs []LaplaceFallback) []string {
	var out []string
	for _, f := range fs {
		b, _ := json.Marshal(f)
		out = append(out, string(b))
	}
	return out
}

// TestFitTreeLaplaceNotFinite checks that a correction that is not finite
// is an error naming the tree, not a tree ranked at NaN or ±Inf.
func TestFitTreeLaplaceNotFinite(t *testing.T) {
	x := fourClusters(12, 0.3, 2)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Patience: -1, Seed: 1, Out: t.TempDir(), EMIters: 3,
			laplace: func(*em.EM) (float64, error) { return v, nil }})
		if err == nil || !strings.Contains(err.Error(), "initial tree at variance factor 1: the tree's Laplace correction is") {
			t.Errorf("correction %v: error %v, want one naming the tree and the correction", v, err)
		}
	}
}

// TestRunEMInitTreeLaplace checks that a given initial tree (--init-tree)
// is ranked as the search's candidates are: with the Laplace correction
// where the search uses it (it was fitted before the search decided, and
// ranked by its bound alone against candidates with the correction).
func TestRunEMInitTreeLaplace(t *testing.T) {
	m, lt := gaussianLinkage(t, 12)
	given, err := pydt.ParseNewick(lt.Newick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Patience: -1, Seed: 1, Out: t.TempDir(), EMIters: 10, InitTree: given})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimesIntegrated {
		t.Fatal("the search does not use the correction")
	}
	found := false
	for _, tr := range res.Trees {
		if topologyKey(tr.Tree) == topologyKey(lt) {
			found = true
			if tr.Laplace == 0 || tr.Bound != tr.EMBound+tr.Laplace {
				t.Errorf("the given tree: value %v, bound %v, correction %v; want the correction", tr.Bound, tr.EMBound, tr.Laplace)
			}
		}
	}
	if !found {
		t.Fatal("the given tree is not in the list")
	}
}

// TestRestoreDamagedCheckpoint is a table test of the checks of an EM
// checkpoint on resume: each damage (counts out of range, more trees than
// K, values that are NaN or infinite, a list not best first, impossible
// hyperparameters, a trace that does not end at the best value) is an
// error naming the file and the field, never a panic or a resume from a
// wrong state. The checkpoint of a real run is read, damaged in memory
// (JSON cannot hold NaN) and restored.
func TestRestoreDamagedCheckpoint(t *testing.T) {
	x := fourClusters(12, 0.3, 2)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	want := func(cp *emCheckpoint) error {
		if len(cp.Trees) < 2 || cp.Rounds != 2 || !cp.TimesIntegrated {
			return fmt.Errorf("%d trees, %d rounds, times_integrated %v", len(cp.Trees), cp.Rounds, cp.TimesIntegrated)
		}
		return nil
	}
	nan, inf := math.NaN(), math.Inf(1)
	dir := checkDamagedCheckpoint(t, m, EMConfig{Rounds: 2, Patience: -1, Seed: 1, EMIters: 3}, want, []checkpointDamage{
		{"k is 0", func(cp *emCheckpoint) { cp.K = 0 }},
		{"trees for k = 1", func(cp *emCheckpoint) { cp.K = 1 }},
		{"rounds -1", func(cp *emCheckpoint) { cp.Rounds = -1; cp.BoundTrace, cp.BoundTime = nil, nil }},
		{"rounds_without_improvement 3", func(cp *emCheckpoint) { cp.Stale = 3 }},
		{"bound_trace and", func(cp *emCheckpoint) { cp.BoundTrace = cp.BoundTrace[:1] }},
		{"failed_fits", func(cp *emCheckpoint) { cp.FailedFits = cp.Fits + 1 }},
		{"initial_failed", func(cp *emCheckpoint) { cp.InitialFailed = -1 }},
		{"wall_time_seconds", func(cp *emCheckpoint) { cp.Wall = nan }},
		{"bound_trace[1] is NaN", func(cp *emCheckpoint) { cp.BoundTrace[1] = nan }},
		{"bound_time_seconds[0]", func(cp *emCheckpoint) { cp.BoundTime[0] = -1 }},
		{"rng", func(cp *emCheckpoint) { cp.RNG = cp.RNG[:3] }},
		{"trees[1].tree is missing", func(cp *emCheckpoint) { cp.Trees[1].Tree = nil }},
		{"trees[0].bound is NaN", func(cp *emCheckpoint) {
			cp.Trees[0].Bound, cp.Trees[0].EMBound = nan, nan
		}},
		{"trees[1].em_bound is +Inf", func(cp *emCheckpoint) { cp.Trees[1].EMBound = inf }},
		{"trees[0].laplace_correction is -Inf", func(cp *emCheckpoint) { cp.Trees[0].Laplace = -inf }},
		{"trees[0]: value", func(cp *emCheckpoint) { cp.Trees[0].Laplace++ }},
		{"trees[1] ranks above trees[0]", func(cp *emCheckpoint) { cp.Trees[0], cp.Trees[1] = cp.Trees[1], cp.Trees[0] }},
		{"trees[1]: laplace_unavailable", func(cp *emCheckpoint) { cp.Trees[1].NoLaplace = true }},
		{"trees[0].hyperparameters: c is 0", func(cp *emCheckpoint) { cp.Trees[0].Hyper.C = 0 }},
		{"trees[1].hyperparameters: variance is NaN", func(cp *emCheckpoint) { cp.Trees[1].Hyper.Variance = nan }},
		{"trees[0].hyperparameters: ", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Beta = 1.5 }},
		{"trees[0].hyperparameters: q_precision", func(cp *emCheckpoint) { cp.Trees[0].Hyper.QPrec = &em.Gamma{Shape: -1, Rate: 1} }},
		{"trees[0].hyperparameters: variances has 2 values", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variances = []float64{1, 1} }},
		{"bound_trace[2] = ", func(cp *emCheckpoint) { cp.BoundTrace[2]-- }},
		{"trees[0].evidence has", func(cp *emCheckpoint) { cp.Trees[0].Evidence = []float64{1} }},
		{"trees[1].hyperparameters: q_precision present false", func(cp *emCheckpoint) { cp.Trees[1].Hyper.QPrec = nil }},
		{"trees[1]: round 3", func(cp *emCheckpoint) { cp.Trees[1].Round = 3 }},
		{"trees[0]: round -1", func(cp *emCheckpoint) { cp.Trees[0].Round = -1 }},
		{"alpha_beta: variance 2", func(cp *emCheckpoint) { cp.AlphaBeta.Variance = 2 }}, // Gaussian data: σ² is not held
		{"alpha_beta: variance NaN", func(cp *emCheckpoint) { cp.AlphaBeta.Variance = nan }},
	})
	// Through ResumeEM, as a user meets it: a damaged file is refused.
	path := filepath.Join(dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"rounds_without_improvement":`, `"rounds_without_improvement":7`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ResumeEM(context.Background(), m, dir, EMConfig{Rounds: 3}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("resume from a damaged checkpoint: %v", err)
	}
}

// TestRestoreHeldVariance: an EM run on probit data (EP sites, prec
// learned) holds σ² at the subsample MCMC's 1 / E[prec] in every fit, the
// initial trees' and the rounds' candidates': each tree of the K-best list
// has that variance and no q(prec), summary.json's point estimate of prec
// is its inverse; a checkpoint whose tree was fitted at another σ², or
// with q(prec), is damaged (it would seed candidates at that σ²), and an
// undamaged one restores the plan to hold σ² again.
func TestRestoreHeldVariance(t *testing.T) {
	m := compileExampleFile(t, "binary.pydt", map[string]*dataset.Matrix{"Y": binaryRows(10, 6, 1)})
	dir := t.TempDir()
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 2, Patience: -1, Seed: 1, Out: dir, EMIters: 3, K: 4, ABSweeps: 40})
	if err != nil {
		t.Fatal(err)
	}
	ab := res.AlphaBeta
	if ab == nil || !(ab.Variance > 0) || !(math.Abs(ab.Variance*ab.Precision-1) <= 1e-12) {
		t.Fatalf("alpha_beta %+v: want a held variance 1 / precision", ab)
	}
	rounds := 0
	for i, e := range res.KBestEstimates {
		if !(math.Abs(e.Variance-ab.Variance) <= 1e-9*ab.Variance) {
			t.Errorf("kbest_estimates[%d]: variance %v, want the held %v", i, e.Variance, ab.Variance)
		}
		if _, ok := e.Gamma["prec"]; ok {
			t.Errorf("kbest_estimates[%d]: a q(prec) with σ² held", i)
		}
		if pe := e.Point["prec"]; !(math.Abs(pe*ab.Variance-1) <= 1e-9) {
			t.Errorf("kbest_estimates[%d]: point estimate of prec %v, want 1/%v", i, pe, ab.Variance)
		}
		rounds = max(rounds, e.Round)
	}
	t.Logf("%d trees, latest from round %d, σ² %v", len(res.KBestEstimates), rounds, ab.Variance)
	path := filepath.Join(dir, CheckpointFile)
	read := func() (*EMPlan, *emCheckpoint) {
		cp, err := readEMCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		p, err := PlanEM(m)
		if err != nil {
			t.Fatal(err)
		}
		return p, cp
	}
	p, cp := read()
	if _, err := p.restore(cp, path); err != nil {
		t.Fatalf("the undamaged checkpoint: %v", err)
	}
	if p.Opt.PrecPrior != nil || p.Opt.Variance != ab.Variance {
		t.Errorf("restored plan: variance %v, prior %v; want σ² held at %v", p.Opt.Variance, p.Opt.PrecPrior, ab.Variance)
	}
	for _, tc := range []struct {
		field  string
		damage func(cp *emCheckpoint)
	}{
		{"trees[0].hyperparameters: variance", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variance *= 1.01 }},
		{"trees[1].hyperparameters: q_precision present", func(cp *emCheckpoint) { cp.Trees[1].Hyper.QPrec = &em.Gamma{Shape: 2, Rate: 1} }},
	} {
		p, cp := read()
		tc.damage(cp)
		if _, err := p.restore(cp, path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v; want one naming %s and the field", tc.field, err, path)
		}
	}
}

// TestRestoreDamagedCheckpointPerDim checks the per-dimension
// hyperparameters of an EM checkpoint of examples/gaussian-perdim.pydt on
// resume: variances missing, of the wrong length, NaN or negative, and
// improper or missing q(τ_d), are errors naming the file and the field.
func TestRestoreDamagedCheckpointPerDim(t *testing.T) {
	x := noisyClusters(12, 0.3, 4, 2)
	m := compileExampleFile(t, "gaussian-perdim.pydt", map[string]*dataset.Matrix{"X": x})
	want := func(cp *emCheckpoint) error {
		if h := cp.Trees[0].Hyper; len(h.Variances) != 3 || len(h.QPrecs) != 3 || h.Variance != 0 {
			return fmt.Errorf("hyperparameters %+v, want three variances and q(τ_d)", h)
		}
		return nil
	}
	checkDamagedCheckpoint(t, m, EMConfig{Rounds: 2, Patience: -1, Seed: 1, EMIters: 3, ABSweeps: -1}, want, []checkpointDamage{
		{"trees[0].hyperparameters: variances has 0 values", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variances = nil }},
		{"trees[0].hyperparameters: variances has 4 values", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variances = append(cp.Trees[0].Hyper.Variances, 1) }},
		{"trees[0].hyperparameters: variances[1] is NaN", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variances[1] = math.NaN() }},
		{"trees[0].hyperparameters: variances[2] is -1", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Variances[2] = -1 }},
		{"trees[0].hyperparameters: q_precisions[0] has shape 0", func(cp *emCheckpoint) { cp.Trees[0].Hyper.QPrecs[0].Shape = 0 }},
		// Fewer q(τ_d) than columns: summary.json would lack prec[3].
		{"trees[0].hyperparameters: variances has 3 values, q_precisions 2,", func(cp *emCheckpoint) { cp.Trees[0].Hyper.QPrecs = cp.Trees[0].Hyper.QPrecs[:2] }},
	})
}

// checkpointDamage is a damage done to an EM checkpoint in memory and the
// words (the field) the error of restoring it must contain.
type checkpointDamage struct {
	field  string
	damage func(cp *emCheckpoint)
}

// checkDamagedCheckpoint runs EM on m with cfg (its Out set here), checks
// that the run's checkpoint is as the test expects (want returns why not)
// and restores, and that each damage of it is refused on restore with an error
// naming the file and the damage's field, never a panic or a resume from a
// wrong state. It returns the run's directory.
func checkDamagedCheckpoint(t *testing.T, m *Model, cfg EMConfig, want func(cp *emCheckpoint) error, damages []checkpointDamage) string {
	t.Helper()
	dir := t.TempDir()
	cfg.Out = dir
	if _, err := RunEM(context.Background(), m, cfg); err != nil {
		t.Fatal(err)
	}
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CheckpointFile)
	read := func() *emCheckpoint {
		cp, err := readEMCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := want(cp); err != nil {
			t.Fatalf("the run's checkpoint: %v", err)
		}
		return cp
	}
	if _, err := p.restore(read(), path); err != nil {
		t.Fatalf("the undamaged checkpoint: %v", err)
	}
	for _, tc := range damages {
		cp := read()
		tc.damage(cp)
		s, err := p.restore(cp, path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: restored %v, error %v; want one naming %s and the field", tc.field, s != nil, err, path)
		}
	}
	return dir
}

// TestFitTreeRefitFailureKeepsFit: when the Laplace correction fails
// (em.ErrNotMaximum) and the refit from perturbed times then fails
// otherwise, the first fit is kept, ranked by its bound alone, with both
// errors recorded (before, the tree was dropped as a failed fit: ccle's
// summary-tree start, whose perturbed times put a node at its parent's
// time, "invalid tree").
func TestFitTreeRefitFailureKeepsFit(t *testing.T) {
	m, lt := gaussianLinkage(t, 24)
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	p.laplace = true
	calls := 0
	p.laplaceFn = func(fit *em.EM) (float64, error) {
		// The first fit's four tries fail at a saddle; the refit's
		// correction fails with another error.
		if calls++; calls <= 4 {
			return math.NaN(), em.ErrNotMaximum
		}
		return math.NaN(), fmt.Errorf("refit broke")
	}
	tr, err := p.fitTree(lt, nil, 20)
	if err != nil {
		t.Fatalf("fitTree: %v (the first fit dropped)", err)
	}
	if calls != 5 || !tr.NoLaplace || tr.Laplace != 0 || tr.Bound != tr.EMBound || tr.fallback != laplaceUnavailable ||
		!strings.Contains(tr.fallbackErr, "not at a maximum") || !strings.Contains(tr.fallbackErr, "refit broke") {
		t.Errorf("calls %d, tree %+v", calls, tr)
	}
}

func TestWasWere(t *testing.T) {
	if wasWere(1) != "was" || wasWere(2) != "were" || wasWere(0) != "were" {
		t.Errorf("wasWere: %q %q %q", wasWere(1), wasWere(2), wasWere(0))
	}
}

// TestEMFallbackLogShort: the log has one short line per tree whose
// Laplace correction failed, saying what was done and why in a few words,
// not the full error (on ccle each sequential start printed a line of some
// 300 characters: the error, then the action); summary.json keeps the full
// error.
func TestEMFallbackLogShort(t *testing.T) {
	m, never, once := fallbackFixture(t)
	hook := fallbackHook(never, once, 4)
	const long = "the Hessian in the times is not negative definite at node 915 (a long explanation of where and why)"
	var lines []string
	cfg := EMConfig{Rounds: 1, K: 100, Patience: -1, Seed: 1, Out: t.TempDir(), EMIters: 20,
		laplace: func(fit *em.EM) (float64, error) {
			v, err := hook(fit)
			if err != nil {
				err = fmt.Errorf("%w: %s", err, long)
			}
			return v, err
		},
		Log: func(msg string) { lines = append(lines, msg) }}
	res, err := RunEM(context.Background(), m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tree, want string }{
		{"initial tree by average linkage fitted: ", "Laplace correction unavailable (Hessian in the times not negative definite), ranked by the bound alone"},
		{"initial tree by average linkage cut into 4 clusters fitted: ", "refitted from perturbed times (Hessian in the times not negative definite at the first fit)"},
	} {
		var got []string
		for _, l := range lines {
			if strings.HasPrefix(l, tc.tree) || strings.HasPrefix(l, strings.TrimSuffix(tc.tree, " fitted: ")+" (") {
				got = append(got, l)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0], tc.tree) || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s: lines %q, want one with %q", tc.tree, got, tc.want)
		}
	}
	for _, l := range lines {
		// (After the tree's name, which can be long: "initial tree: the
		// majority-rule consensus of 200 MCMC sweeps on 300 rows,
		// extended to all 504 rows".)
		_, after, _ := strings.Cut(l, " fitted: ")
		if strings.Contains(l, "a long explanation") || strings.Contains(l, em.ErrNotMaximum.Error()) || len(after) > 160 {
			t.Errorf("log line with the full error, or of %d characters after the tree's name: %q", len(after), l)
		}
	}
	n := 0
	for _, f := range res.LaplaceFallbacks {
		if f.Start == "linkage" && strings.Contains(f.Error, "a long explanation") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("laplace_fallbacks with the full error: %d of %+v, want 2", n, res.LaplaceFallbacks)
	}
}
