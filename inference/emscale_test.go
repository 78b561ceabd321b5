package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// TestRunEMLarge runs the large-data path on small data (the thresholds
// lowered): the first initial tree is at the variance factor whose
// subsample tree has the best bound, which the test recomputes from the
// same subsample. With the time up at the start, the further starts are
// not built (each is a construction over all rows) and the run's bound is
// that of one EM iteration on the tree built at that factor; without a
// time limit the extended linkage tree and the MCMC start are built, and
// each initial tree's logged value is that of one EM iteration on it.
func TestRunEMLarge(t *testing.T) {
	defer func(n, s, i int) { emLargeN, emSubsample, emSubsampleIters = n, s, i }(emLargeN, emSubsample, emSubsampleIters)
	emLargeN, emSubsample, emSubsampleIters = 100, 60, 5
	n := 160
	x := fourClusters(n, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	var logs []string
	// ABSweeps abMinSweeps: --time does not cut the α, β run (it would
	// cut 400 sweeps to that many), so both runs below hold the same α, β.
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Time: time.Nanosecond, Seed: 3, Out: t.TempDir(), EMIters: 20,
		ABSweeps: abMinSweeps, Log: func(s string) { logs = append(logs, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trees) != 1 || res.Rounds != 0 || res.StopReason != "time" {
		t.Fatalf("%d trees, %d rounds, stopped by %q; want the sequential tree alone, no round, time", len(res.Trees), res.Rounds, res.StopReason)
	}
	all := strings.Join(logs, "\n")
	for _, want := range []string{"chosen on 60 of 160 rows", "average linkage of 60 rows, extended not built", "initial trees from the MCMC run not built"} {
		if !strings.Contains(all, want) {
			t.Errorf("log does not say %q:\n%s", want, all)
		}
	}
	var full []string
	if _, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Seed: 3, Out: t.TempDir(), EMIters: 1, ABSweeps: abMinSweeps,
		Log: func(s string) { full = append(full, s) }}); err != nil {
		t.Fatal(err)
	}
	fitted := map[string]float64{} // initial tree → its logged bound
	for _, l := range full {
		name, rest, ok := strings.Cut(l, " fitted: bound ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		fitted[name] = v
	}
	if strings.Contains(strings.Join(full, "\n"), "not built") || len(fitted) != 3 {
		t.Fatalf("without a time limit, want three initial trees fitted (sequential, linkage extended, MCMC summary extended); log:\n%s", strings.Join(full, "\n"))
	}
	// The choice, recomputed: the same subsample rows, each factor's tree
	// fitted by em directly.
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	p.holdAB(res.AlphaBeta) // α and β as the run held them
	xd := p.initialData()
	v0 := columnVariance(xd, n, 2)
	rows := rand.New(rand.NewPCG(3, 0x696e6974)).Perm(n)[:60]
	slices.Sort(rows)
	var xs []float64
	for _, i := range rows {
		xs = append(xs, xd[2*i:2*i+2]...)
	}
	best, bestBound := 0.0, math.Inf(-1)
	for _, f := range initFactors {
		o := p.Opt
		_, lik, err := em.SequentialTree(xs, 60, 2, em.InitOptions{C: o.C, Variance: f * v0, Alpha: o.Alpha, Beta: o.Beta})
		if err != nil {
			t.Fatal(err)
		}
		o.MaxIter = 5
		fit, err := em.New(lik, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fit.Run(); err != nil {
			t.Fatal(err)
		}
		if fit.Bound() > bestBound {
			best, bestBound = f, fit.Bound()
		}
	}
	if want := fmt.Sprintf("using %g", best); !strings.Contains(all, want) {
		t.Errorf("log does not say %q:\n%s", want, all)
	}
	tr, _, err := em.SequentialTree(xd, n, 2, em.InitOptions{C: p.Opt.C, Variance: best * v0, Alpha: p.Opt.Alpha, Beta: p.Opt.Beta})
	if err != nil {
		t.Fatal(err)
	}
	fit, _, err := p.newFit(tr, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fit.Run(); err != nil {
		t.Fatal(err)
	}
	// The second initial tree: average linkage of the subsample, extended.
	lt, err := linkageTree(xs, 60, 2, v0)
	if err != nil {
		t.Fatal(err)
	}
	ext, _, err := em.ExtendTree(xd, n, 2, lt, rows, em.InitOptions{C: p.Opt.C, Variance: best * v0, Alpha: p.Opt.Alpha, Beta: p.Opt.Beta})
	if err != nil {
		t.Fatal(err)
	}
	fit2, _, err := p.newFit(ext, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fit2.Run(); err != nil {
		t.Fatal(err)
	}
	// Time is up before the first fit: it does one iteration.
	if got, want := res.Bound, fit.Bound(); !(math.Abs(got-want) <= 1e-9*math.Abs(got)) {
		t.Errorf("run's bound %v; one EM iteration on the tree at factor %v: %v", got, best, want)
	}
	// Without a time limit, EMIters 1: the logged values (6 digits).
	for name, want := range map[string]float64{
		fmt.Sprintf("initial tree at variance factor %g", best): fit.Bound(),
		"initial tree by average linkage of 60 rows, extended":  fit2.Bound(),
	} {
		if got, ok := fitted[name]; !ok || !(math.Abs(got-want) <= 1e-5*math.Abs(want)) {
			t.Errorf("%s: logged bound %v (found %v), one EM iteration on it gives %v", name, got, ok, want)
		}
	}
}

// TestRunEMTimeBoundsFits checks that Time bounds EM on the initial trees
// (it bounded only the rounds before): with the time up at the start,
// every initial tree gets exactly one EM iteration, however many
// EMIters allows; with the Laplace correction, whose times must be at a
// maximum, at most three more (fitTree's retries).
func TestRunEMTimeBoundsFits(t *testing.T) {
	x := fourClusters(40, 0.25, 3)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	for _, no := range []bool{true, false} {
		res, err := RunEM(context.Background(), m, EMConfig{Rounds: 5, Time: time.Nanosecond, Seed: 1, Out: t.TempDir(), EMIters: 1000, noLaplace: no})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rounds != 0 || res.StopReason != "time" {
			t.Errorf("%d rounds, stopped by %q", res.Rounds, res.StopReason)
		}
		if res.TimesIntegrated == no {
			t.Errorf("noLaplace %v: times_integrated %v", no, res.TimesIntegrated)
		}
		want := 1
		if !no {
			want = 4
		}
		for i, tr := range res.Trees {
			if it := tr.hyper.Iters; it < 1 || it > want {
				t.Errorf("noLaplace %v: initial tree %d: %d EM iterations, want 1 to %d", no, i, it, want)
			}
		}
	}
}

// TestRunFitMatchesRun checks that runFit, with an iteration log and no
// deadline, does what em.EM.Run does: the same iterations and bound (it
// once stopped after one iteration when no deadline was set).
func TestRunFitMatchesRun(t *testing.T) {
	x := fourClusters(40, 0.25, 3)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	xd := p.initialData()
	var fits [2]*em.EM
	calls := 0
	for j := range fits {
		tr, _, err := em.SequentialTree(xd, 40, 2, em.InitOptions{C: p.Opt.C, Variance: 0.1, Alpha: p.Opt.Alpha, Beta: p.Opt.Beta})
		if err != nil {
			t.Fatal(err)
		}
		fit, _, err := p.newFit(tr, nil, 30)
		if err != nil {
			t.Fatal(err)
		}
		if j == 0 {
			_, err = fit.Run()
		} else {
			p.iterLog = func(int, float64) { calls++ }
			err = p.runFit(fit)
			p.iterLog = nil
		}
		if err != nil {
			t.Fatal(err)
		}
		fits[j] = fit
	}
	if fits[0].Iterations() != fits[1].Iterations() || fits[0].Bound() != fits[1].Bound() || calls != fits[1].Iterations() {
		t.Errorf("Run: %d iterations, bound %v; runFit: %d iterations (%d logged), bound %v",
			fits[0].Iterations(), fits[0].Bound(), fits[1].Iterations(), calls, fits[1].Bound())
	}
	if fits[0].Iterations() < 2 {
		t.Errorf("only %d iterations: the test needs more", fits[0].Iterations())
	}
}

// TestKeepLimit checks the K-best list's length against the memory budget.
func TestKeepLimit(t *testing.T) {
	for _, c := range []struct{ k, n, d, want int }{
		{10, 100, 2, 10},
		{10, 10000, 10, 10},
		{10, 100000, 10, 2},
		{10, 100000, 2, 7},
		{1, 100000, 10, 1},
		{10, 1000000, 10, 2},
	} {
		if got := keepLimit(c.k, c.n, c.d); got != c.want {
			t.Errorf("keepLimit(%d, %d, %d) = %d, want %d (%.0f MB a tree)", c.k, c.n, c.d, got, c.want, emTreeBytes(c.n, c.d)/1e6)
		}
	}
}

// TestRunEMFitsEachStartAsBuilt: on the large-data path (thresholds
// lowered) each initial tree is fitted as soon as it is built, and
// map.nwk and kbest.nwk hold the list so far from the first fit on: when
// the second start is built, the first is fitted and written (before,
// every start was built before the first fit, and nothing was written
// until all were fitted). Every start built is fitted.
func TestRunEMFitsEachStartAsBuilt(t *testing.T) {
	defer func(n, s, i int) { emLargeN, emSubsample, emSubsampleIters = n, s, i }(emLargeN, emSubsample, emSubsampleIters)
	emLargeN, emSubsample, emSubsampleIters = 100, 60, 5
	x := fourClusters(160, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	out := t.TempDir()
	var logs []string
	var seen []string // what was on disk when each start after the first was built
	_, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Seed: 3, Out: out, EMIters: 3,
		Log: func(s string) {
			logs = append(logs, s)
			if strings.Contains(s, " built (") && !strings.Contains(s, "variance factor") {
				b, err := os.ReadFile(filepath.Join(out, MapFile))
				k, err2 := os.ReadFile(filepath.Join(out, KBestFile))
				seen = append(seen, fmt.Sprintf("%v %v %d %d", err, err2, len(b), strings.Count(string(k), "\n")))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var order []string // "built" and "fitted", in the order logged
	for _, l := range logs {
		switch {
		case strings.Contains(l, " built ("):
			order = append(order, "built")
		case strings.Contains(l, " fitted: "):
			order = append(order, "fitted")
		}
	}
	want := []string{"built", "fitted", "built", "fitted", "built", "fitted"}
	if !slices.Equal(order, want) {
		t.Fatalf("stages %v, want %v; log:\n%s", order, want, strings.Join(logs, "\n"))
	}
	if len(seen) != 2 || !strings.HasPrefix(seen[0], "<nil> <nil> ") || !strings.HasSuffix(seen[0], " 1") || !strings.HasSuffix(seen[1], " 2") {
		t.Errorf("map.nwk and kbest.nwk when the later starts were built (errors, bytes, trees): %q; want the first tree, then two", seen)
	}
}

// TestRunEMLargeProbit: probit (EP) data above emLargeN rows take the
// large-data path as Gaussian data do: one sequential tree at the
// factor chosen on a subsample, and with the time up at the start the
// further starts are not built (before, EP data never took the path:
// four sequential trees and three extended MCMC starts, each a
// construction over all rows, were all built whatever --time said).
func TestRunEMLargeProbit(t *testing.T) {
	defer func(n, s, i int) { emLargeN, emSubsample, emSubsampleIters = n, s, i }(emLargeN, emSubsample, emSubsampleIters)
	emLargeN, emSubsample, emSubsampleIters = 100, 60, 5
	n := 160
	x := fourClusters(n, 0.25, 5)
	y := &dataset.Matrix{Rows: n, Cols: 2, Data: make([]float64, 2*n), Source: "y.csv"}
	for i, v := range x.Data {
		if v > 0 {
			y.Data[i] = 1
		}
	}
	m := compileExampleFile(t, "binary.pydt", map[string]*dataset.Matrix{"Y": y})
	var logs []string
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Time: time.Nanosecond, Seed: 3, Out: t.TempDir(), EMIters: 5,
		Log: func(s string) { logs = append(logs, s) }})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(logs, "\n")
	for _, want := range []string{"chosen on 60 of 160 rows", "average linkage of 60 rows, extended not built", "initial trees from the MCMC run not built"} {
		if !strings.Contains(all, want) {
			t.Errorf("log does not say %q:\n%s", want, all)
		}
	}
	if len(res.Trees) != 1 || !res.Approximate || res.Trees[0].Start != "sequential" {
		t.Errorf("%d trees (approximate %v); want the one sequential tree, EP's value", len(res.Trees), res.Approximate)
	}
}

// TestEMMarginSetting: EMConfig.Margin reaches the initial trees'
// em.InitOptions, defaults to em.DefaultMargin, is recorded in run.json
// and read back for a resume (a run.json without it resumes at the
// default).
func TestEMMarginSetting(t *testing.T) {
	if got := (EMConfig{}).withDefaults().Margin; got != em.DefaultMargin {
		t.Errorf("default margin %v, want %v", got, em.DefaultMargin)
	}
	p := &EMPlan{margin: -1}
	if got := p.initOptions(1, nil, 1).Margin; got != -1 {
		t.Errorf("initOptions' margin %v, want the plan's -1", got)
	}
	old := RunInfo{Method: MethodEM, EM: &EMSettings{Rounds: 1}}
	if got := old.emConfig("d").Margin; got != em.DefaultMargin {
		t.Errorf("run.json without a margin resumes at %v, want the default %v", got, em.DefaultMargin)
	}
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": fourClusters(40, 0.25, 5)})
	out := t.TempDir()
	if _, err := RunEM(context.Background(), m, EMConfig{Rounds: 1, Seed: 3, Out: out, EMIters: 3, Margin: -1}); err != nil {
		t.Fatal(err)
	}
	ri, err := ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if ri.EM == nil || ri.EM.Margin != -1 {
		t.Fatalf("run.json's EM settings %+v, want margin -1", ri.EM)
	}
	if got := ri.emConfig(out).Margin; got != -1 {
		t.Errorf("resume reads margin %v, want -1", got)
	}
}

// TestRunEMStoppedInitialFitNotLogged: an initial tree whose fit ends
// after Ctrl-C is not written to kbest.nwk, so its progress line does
// not say "fitted" with a value (before, ccle stopped during the linkage
// tree's fit logged "initial tree by average linkage fitted: bound +
// Laplace correction -16331.3" while kbest.nwk held only the sequential
// trees): the trees logged as fitted are the trees in kbest.nwk.
func TestRunEMStoppedInitialFitNotLogged(t *testing.T) {
	defer func(n, s, i int) { emLargeN, emSubsample, emSubsampleIters = n, s, i }(emLargeN, emSubsample, emSubsampleIters)
	emLargeN, emSubsample, emSubsampleIters = 100, 60, 5
	x := fourClusters(160, 0.25, 5)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs []string
	fits := 0
	_, err := RunEM(ctx, m, EMConfig{Rounds: 1, Seed: 3, Out: out, EMIters: 3,
		Log: func(s string) { logs = append(logs, s) },
		failFit: func(int) error {
			// Called after each initial fit: the interrupt arrives
			// during the second.
			if fits++; fits == 2 {
				cancel()
			}
			return nil
		}})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "map.nwk and kbest.nwk hold the best of the initial trees fitted in full (1 in kbest.nwk)") ||
		!strings.Contains(err.Error(), "run --resume "+out+" starts the run again") {
		t.Fatalf("err %v, want ErrInterrupted naming map.nwk, kbest.nwk (1 tree) and --resume", err)
	}
	fitted, stopped := 0, 0
	for _, l := range logs {
		switch {
		case strings.Contains(l, " fitted: "):
			fitted++
		case strings.Contains(l, "stopped by the interrupt, its fit not kept"):
			stopped++
		}
	}
	k, err := os.ReadFile(filepath.Join(out, KBestFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(k), "\n"); fitted != 1 || stopped != 1 || n != fitted {
		t.Errorf("%d logged as fitted, %d as stopped, %d trees in kbest.nwk; want 1, 1, 1; log:\n%s", fitted, stopped, n, strings.Join(logs, "\n"))
	}
}

// TestRunEMTimeCutFitsNoLaplace: a fit that --time ended before it
// converged is not at a maximum of its times, so its Laplace correction is
// not formed (it was, then tried three more times and refitted, each an
// error: 64% of the CPU of ccle under --time 60s): it is ranked by its
// bound alone, recorded in laplace_fallbacks as cut short, and warned of
// apart from the Hessian's failures.
func TestRunEMTimeCutFitsNoLaplace(t *testing.T) {
	x := fourClusters(40, 0.25, 3)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	calls := 0
	hook := func(fit *em.EM) (float64, error) {
		calls++
		return fit.Laplace()
	}
	res, err := RunEM(context.Background(), m, EMConfig{Rounds: 5, Time: time.Nanosecond, Seed: 1, Out: t.TempDir(), EMIters: 1000, laplace: hook})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Errorf("the Laplace correction formed %d times for fits cut short", calls)
	}
	if len(res.LaplaceFallbacks) < len(res.Trees) || len(res.Trees) == 0 {
		t.Fatalf("%d fallbacks for %d trees", len(res.LaplaceFallbacks), len(res.Trees))
	}
	for _, f := range res.LaplaceFallbacks {
		if !f.CutShort() || f.Refitted() {
			t.Errorf("fallback %+v: want the correction unavailable, cut short", f)
		}
	}
	for _, tr := range res.Trees {
		if !tr.NoLaplace {
			t.Errorf("a tree cut short ranked with the correction: %+v", tr.Bound)
		}
	}
	warned := false
	for _, w := range res.Warnings {
		if strings.Contains(w, "Hessian") {
			t.Errorf("warning of a Hessian that was not formed: %s", w)
		}
		warned = warned || strings.Contains(w, "cut short by --time")
	}
	if !warned {
		t.Errorf("no warning of the fits cut short: %q", res.Warnings)
	}
}
