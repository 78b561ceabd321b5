package inference

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/internal/atomicfile"
	"github.com/pydtlang/pydtlang/internal/logsumexp"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// KBestFile is the EM run's list of the K best trees, best first.
const KBestFile = "kbest.nwk"

// DefaultEMMargin is EMConfig.Margin's default, em.DefaultMargin nats.
const DefaultEMMargin = em.DefaultMargin

// EMConfig configures RunEM.
type EMConfig struct {
	// Rounds is the number of search rounds (detach, re-attach, EM on the
	// three best). Zero means 100.
	Rounds int
	// K is the length of the K-best list. Zero means 10.
	K int
	// Patience stops the search after this many rounds without a new best
	// tree. Zero means 30; negative: never.
	Patience int
	// Time, when positive, bounds the whole run: the MCMC run that
	// estimates α and β (ABSweeps) makes the sweeps that fit in a quarter
	// of it (at least 50; a warning says so when it was cut); every EM
	// fit, the initial trees' included, stops when it is up (after at
	// least one iteration), and no round starts after it (the round under
	// way finishes). A fit cut short this way is not at a maximum of its
	// times, so with the Laplace correction it is ranked by its bound
	// alone, after every tree with the correction, without forming the
	// correction (nor retrying it once Time is up). The building of an
	// initial tree is not cut short, and every initial tree built is
	// fitted (each as soon as it is built); above 2000 rows (the
	// large-data path, one construction over all rows per initial tree)
	// an initial tree after the first is not built when less time is left
	// than the first took to build.
	Time time.Duration
	// EMIters bounds the EM iterations per candidate tree. Zero means 50.
	EMIters int
	// Margin is the initial trees' descent margin in nats
	// (em.InitOptions.Margin, a heuristic): the sequential construction
	// expands a branch point only when the edge above it scores within
	// Margin of the best position so far. Zero means em.DefaultMargin
	// (20); negative expands every branch point of the beam, as the
	// construction did before the margin.
	Margin float64
	// Seed names the random stream of the search.
	Seed uint64
	// Out is the output directory (required); Force replaces a run in it.
	Out   string
	Force bool
	// InitTree, when set, is the tree the search starts from (its
	// structure; EM fits its times) instead of the trees built by
	// sequential attachment. Its leaves must be the rows of the model's
	// PYDT, matched by label.
	InitTree *pydt.Tree
	// Progress, if set, is called after each round with the round, the
	// rounds asked for, the best value so far and what that value is
	// (EMResult.RankedBy: "bound + Laplace correction", "bound" or "EP
	// approximation").
	Progress func(round, rounds int, best float64, rankedBy string)
	// Log, if set, receives a line on each stage before the rounds: the
	// initial trees built and fitted, with their times and bounds.
	Log func(msg string)
	// failFit, when set (tests), makes the fit of a round's candidate fail
	// with its error; round 0 is the fit of an initial tree.
	failFit func(round int) error
	// noLaplace, when set (tests), ranks trees by the EM bound alone, as
	// before the Laplace correction.
	noLaplace bool
	// ABRows and ABSweeps set how α and β are estimated when the model
	// learns them: by an MCMC run of ABSweeps sweeps (half burn-in) on
	// ABRows random rows (all rows when there are no more), whose
	// posterior means the search then holds in every tree's fit
	// (ABEstimate; docs/em.md, "α and β from a subsample"), with, for EP
	// data, the diffusion variance; the run's summary, consensus and last
	// trees are initial trees of the search (made also when α and β are
	// fixed). Zero means 300 rows and 400 sweeps; ABSweeps negative makes
	// no run: α and β are fitted to each tree instead (golden-section
	// search, as before), and there are no such initial trees.
	ABRows, ABSweeps int
	// laplace, when set (tests), replaces em.EM.Laplace in the search's
	// fits.
	laplace func(fit *em.EM) (float64, error)
	// earlier holds the lines of the kbest.nwk an earlier session wrote,
	// when ResumeEM starts a run with no checkpoint again: until its
	// initial trees are all fitted, what it writes is merged with them
	// (mergeKBestLines), so that a second stop never leaves worse trees
	// on disk than the first did.
	earlier []string
}

func (c EMConfig) withDefaults() EMConfig {
	if c.Rounds == 0 {
		c.Rounds = 100
	}
	if c.K == 0 {
		c.K = 10
	}
	if c.Patience == 0 {
		c.Patience = 30
	}
	if c.EMIters == 0 {
		c.EMIters = 50
	}
	if c.Margin == 0 {
		c.Margin = em.DefaultMargin
	}
	if c.ABRows == 0 {
		c.ABRows = defaultABRows
	}
	if c.ABSweeps == 0 {
		c.ABSweeps = defaultABSweeps
	}
	return c
}

// EMTree is one tree of the K-best list.
type EMTree struct {
	// Tree has the fitted divergence times.
	Tree *pydt.Tree
	// Bound is what the search ranks trees by (EMResult.Objective names
	// it): EMBound + Laplace.
	Bound float64
	// EMBound is the EM objective at convergence (a lower bound on
	// log p(Y, g, α, β | T), g the log gaps of the times, for Gaussian
	// evidence; EP's approximation for EP sites).
	EMBound float64
	// Laplace is the Laplace correction for the times (em.EM.Laplace), or
	// 0 when the search does not use it.
	Laplace float64
	// NoLaplace is set when the search ranks by the correction but it
	// could not be formed for this tree (its Hessian in the times is not
	// negative definite even after more EM and a refit from perturbed
	// times): Bound is then the EM bound alone, not comparable with the
	// others' values, and the tree ranks after every tree with the
	// correction (ranksAbove).
	NoLaplace bool
	// fallback says how the correction was obtained when the first try
	// failed ("" when it did not): laplaceRefit or laplaceUnavailable;
	// fallbackErr is that try's error.
	fallback, fallbackErr string
	// Start and StartIndex name the initial tree the tree descends from
	// (LaplaceFallback.Start and Index: "sequential", "linkage",
	// "linkage-weighted", "linkage-extended", "given", "mcmc-summary", "mcmc-consensus",
	// "mcmc-last"), Round the search round that made it (0: the initial
	// tree itself). A candidate inherits its parent's start.
	Start      string
	StartIndex int
	Round      int
	hyper      emHyper
	// ev is the leaf evidence of an EP fit (its sites: leafEvidence);
	// nil for Gaussian evidence, which is the data's.
	ev  []float64
	key string
}

// ranksAbove reports whether t ranks above u in the K-best list: by value
// (Bound), except that a tree whose Laplace correction is unavailable
// (NoLaplace) ranks below every tree that has it, whatever the values:
// a bound and a bound plus correction are not comparable.
func (t EMTree) ranksAbove(u EMTree) bool {
	if t.NoLaplace != u.NoLaplace {
		return u.NoLaplace
	}
	return t.Bound > u.Bound
}

// errCutShort begins the LaplaceFallback.Error of a tree whose fit --time
// ended before it converged: its correction is not formed.
const errCutShort = "fit cut short by --time"

// What was done for a tree whose Laplace correction failed at first
// (LaplaceFallback.Action).
const (
	laplaceRefit       = "refitted from perturbed times; the correction at the new fit"
	laplaceUnavailable = "correction unavailable; ranked by the bound alone, after every tree with the correction"
)

// LaplaceFallback records a tree whose Laplace correction for the times
// failed at first (EMResult.LaplaceFallbacks).
type LaplaceFallback struct {
	// Start is "sequential", "linkage", "linkage-weighted",
	// "linkage-extended" or "given" for an initial tree (Index its number
	// among the starts of that kind, from 1: the variance factors in
	// order, or the linkage tree then its cuts into 2, 3, 4, 6, 8, 12, 16
	// clusters), "candidate" for
	// a tree of the search's round Round.
	Start string `json:"start"`
	Index int    `json:"index,omitempty"`
	Round int    `json:"round,omitempty"`
	// Tree is the initial tree's description (as on the log).
	Tree   string `json:"tree,omitempty"`
	Action string `json:"action"`
	// Error is the correction's first error.
	Error string `json:"error"`
}

// Refitted reports whether the tree was refitted from perturbed times and
// ranked with its correction at the new fit; otherwise its correction is
// unavailable and it is ranked by its bound alone.
func (f LaplaceFallback) Refitted() bool { return f.Action == laplaceRefit }

// CutShort reports whether the tree's fit was cut short by --time, so that
// its correction was not formed (it is kept without it).
func (f LaplaceFallback) CutShort() bool { return strings.HasPrefix(f.Error, errCutShort) }

// GammaSummary is a variational Gamma posterior.
type GammaSummary struct {
	Shape float64 `json:"shape"`
	Rate  float64 `json:"rate"`
	Mean  float64 `json:"mean"`
}

// EMResult is the outcome of RunEM, written to summary.json.
type EMResult struct {
	Method string `json:"method"`
	// Bound is the best tree's value of the objective (named by
	// Objective, in short by RankedBy: with the Laplace correction it is
	// not a lower bound), BoundTrace the best value after the initial
	// trees and after each round, KBest the values of the K-best list.
	Bound float64 `json:"bound"`
	// EMBound and Laplace are the best tree's EM bound and the Laplace
	// correction for its times (0 when not used): Bound = EMBound + Laplace.
	EMBound    float64   `json:"em_bound"`
	Laplace    float64   `json:"laplace_correction"`
	BoundTrace []float64 `json:"bound_trace"`
	// BoundTime is the wall time, in seconds from the start, at which
	// each entry of BoundTrace was reached (the bound against time).
	BoundTime []float64 `json:"bound_time_seconds"`
	KBest     []float64 `json:"kbest_bounds"`
	// Approximate is true when the bound is EP's approximation.
	Approximate bool `json:"approximate"`
	// TimesIntegrated is true when trees are ranked with their times
	// integrated out (the EM bound plus the Laplace correction).
	TimesIntegrated bool `json:"times_integrated"`
	// RankedBy names, in short, the value the trees are ranked by and
	// that Bound, BoundTrace, KBest and kbest.nwk's "[bound=L]" hold:
	// "bound + Laplace correction" (TimesIntegrated), "bound" (the EM
	// lower bound) or "EP approximation". (The field "bound" keeps its
	// name from before the correction; it holds this value.) Absent in
	// summaries written before it, for which ReadEMResult sets it from
	// Approximate and TimesIntegrated.
	RankedBy string `json:"ranked_by,omitempty"`
	// LaplaceFallbacks lists the trees (initial trees and the search's
	// candidates) whose Laplace correction failed at first (the Hessian
	// in the times not negative definite) and what was done: refitted
	// from perturbed times, or kept ranked by the bound alone after every
	// tree with the correction (docs/em.md, "When the Hessian is not
	// negative definite").
	LaplaceFallbacks []LaplaceFallback `json:"laplace_fallbacks,omitempty"`
	// Objective names what the search ranks trees by: with Gaussian
	// evidence and at most laplaceMax rows, the Laplace approximation of
	// log p(Y, α, β | T), the times integrated out (the EM bound plus the
	// Laplace correction); otherwise the EM bound on log p(Y, g, α, β | T),
	// g the times' log gaps (or, with EP, its approximation).
	Objective string `json:"objective"`
	// Hyperparameters of the best tree, by variable name: Gamma
	// posteriors for c and the precision, point estimates for α and β.
	Gamma    map[string]GammaSummary `json:"gamma_posteriors"`
	Point    map[string]float64      `json:"point_estimates"`
	Variance float64                 `json:"variance_mean_field,omitempty"`
	// Variances are the mean-field variances 1/E[1/σ²_d] of a model with
	// a variance per dimension (Variance is then absent).
	Variances []float64 `json:"variances_mean_field,omitempty"`
	// KBestEstimates holds, for each tree of the K-best list (kbest.nwk,
	// in its order), its bound and hyperparameters, and KBestWeights the
	// weights predict gives the trees: exp(bound), normalised to sum to
	// 1 (an approximation of their posterior probabilities; KBestWeights).
	KBestEstimates []EMEstimates `json:"kbest_estimates"`
	KBestWeights   []float64     `json:"kbest_weights"`
	Rounds         int           `json:"rounds"`
	// Fits is the number of candidate trees the search's rounds fitted,
	// FailedFits those whose fit failed (dropped; a warning names the
	// first error, and a run in which every fit failed is an error).
	// InitialFailed counts the initial trees whose fit failed.
	Fits          int `json:"candidate_fits"`
	FailedFits    int `json:"failed_fits"`
	InitialFailed int `json:"initial_failed"`
	firstFail     error
	StopReason    string `json:"stop_reason"`
	// Warnings are conditions of the best tree a user should know about
	// before trusting it, e.g. a near-star (one branch point holding
	// most rows as direct children).
	Warnings []string `json:"warnings,omitempty"`
	// AlphaBeta says where α and β came from: held at the posterior means
	// of an MCMC run on a subsample, fitted per tree, or fixed.
	AlphaBeta *ABEstimate `json:"alpha_beta,omitempty"`
	WallTime  float64     `json:"wall_time_seconds"`
	// Trees is the K-best list, best first.
	Trees []EMTree `json:"-"`
}

// RunEM fits m by greedy Bayesian EM with a K-best search over tree
// structures (the paper's Section 6.2): an initial tree by sequential
// attachment, then rounds that detach a random subtree of a tree of the
// list, score its re-attachment at every edge and branch point by
// log p(Y, s | T) at that tree's hyperparameters, run EM on the three best
// and keep the K best trees by their bound, plus, with Gaussian evidence
// up to laplaceMax rows, the Laplace correction for the times
// (EMResult.Objective names the ranking). Each initial tree is fitted as
// soon as it is built, and map.nwk and kbest.nwk are written after each
// initial fit (the list so far) and at the end; summary.json at the end;
// checkpoint.json after the initial trees and as the rounds go (ResumeEM
// continues the run from it). Models EM does not support are refused
// (PlanEM). It is deterministic given cfg.Seed (with Time unset). When ctx
// is done it stops after the last completed round (the round under way is
// discarded), writes its outputs and returns them with an error wrapping
// ErrInterrupted; before the initial trees are all fitted it keeps only
// run.json and the map.nwk and kbest.nwk of the initial trees fitted so
// far, with no checkpoint (ResumeEM then starts the run again).
func RunEM(ctx context.Context, m *Model, cfg EMConfig) (*EMResult, error) {
	cfg = cfg.withDefaults()
	if cfg.Out == "" {
		return nil, errors.New("run --method em: an output directory is required")
	}
	if cfg.Rounds < 0 || cfg.K < 1 || cfg.EMIters < 1 {
		return nil, fmt.Errorf("run --method em: rounds %d, K %d and EM iterations %d must be positive", cfg.Rounds, cfg.K, cfg.EMIters)
	}
	if cfg.ABRows < 2 {
		return nil, fmt.Errorf("run --method em: the subsample for alpha and beta needs at least 2 rows, got %d", cfg.ABRows)
	}
	plan, err := PlanEM(m)
	if err != nil {
		return nil, err
	}
	lock, err := claimOut(cfg.Out, cfg.Force)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	if cfg.InitTree != nil {
		// Kept in the run directory, so that a resume before the first
		// checkpoint starts from it again.
		if _, err := copyTree(cfg.InitTree, m.Trees[0]); err != nil {
			return nil, fmt.Errorf("run --method em: initial tree: %w", err)
		}
		if err := atomicfile.Write(filepath.Join(cfg.Out, InitTreeFile), []byte(cfg.InitTree.Newick()+"\n")); err != nil {
			return nil, fmt.Errorf("run --method em: %w", err)
		}
	}
	if err := writeEMRunFile(m, cfg, m.Inputs); err != nil {
		return nil, err
	}
	return plan.search(ctx, cfg)
}

// emSearch is the state of the structure search after its initial trees
// and after each completed round: everything a checkpoint saves
// (emCheckpoint) to continue the search exactly.
type emSearch struct {
	list []EMTree
	pcg  *rand.PCG
	rng  *rand.Rand
	// round is the rounds done; stale those since the last new best.
	round, stale int
	// boundTrace and boundTime are EMResult's BoundTrace and BoundTime.
	boundTrace, boundTime []float64
	fits, failedFits      int
	firstFail             error
	// initial is the number of initial trees fitted or tried,
	// initialFailed those whose fit failed, initialErr the first error.
	initial, initialFailed int
	initialErr             error
	// large is the large-data path (runtime.GC after each round).
	large bool
	// laplace is true when the trees are ranked with the Laplace
	// correction for their times (EMPlan.laplace).
	laplace bool
	// start is the wall-clock origin of the run, moved back by the time
	// spent in earlier sessions of a resumed run.
	start time.Time
	// k is the length of the K-best list (EMConfig.K, or less by
	// keepLimit).
	k int
	// laplaceFallbacks are EMResult.LaplaceFallbacks.
	laplaceFallbacks []LaplaceFallback
}

// search runs the structure search: the initial trees, then the rounds.
func (p *EMPlan) search(ctx context.Context, cfg EMConfig) (*EMResult, error) {
	s, err := p.initial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return p.rounds(ctx, cfg, s)
}

// initial builds and fits the initial trees and returns the search's state
// before its first round.
func (p *EMPlan) initial(ctx context.Context, cfg EMConfig) (*emSearch, error) {
	start := time.Now()
	b := p.m.Trees[0]
	// Initial trees: sequential attachment at the hyperparameters' starts,
	// with the diffusion variance at 1, 0.3, 0.1 and 0.03 times the data's average
	// column variance (the greedy construction is sensitive to it: too
	// large a variance makes a star); the K-best list keeps them all and
	// the search starts from the best by bound.
	//
	// Above emLargeN rows only one tree is built, at the factor that
	// does best on a subsample (chooseFactor; docs/em.md, "Scale").
	p.setDeadline(ctx, cfg, start)
	p.margin = cfg.Margin
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			cfg.Log(fmt.Sprintf(format, args...))
		}
	}
	s := &emSearch{start: start, k: cfg.K}
	ab, smp, err := p.estimateAB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.holdAB(ab)
	switch {
	case ab.Source == ABSubsample:
		logf("alpha %.4g (sd %.2g), beta %.4g (sd %.2g): posterior means of %d MCMC sweeps (%d burn-in) on %d rows, held in every fit (%.1fs)",
			ab.Alpha, ab.AlphaSD, ab.Beta, ab.BetaSD, ab.Sweeps, ab.Burn, ab.Rows, time.Since(start).Seconds())
	case smp != nil:
		logf("%d MCMC sweeps (%d burn-in) on %d rows for starting trees (%.1fs)", ab.Sweeps, ab.Burn, ab.Rows, time.Since(start).Seconds())
	}
	if ab.Variances != nil {
		logf("diffusion variances per dimension held in every fit: 1 / the posterior means of %s[d] in the same run (EP), from %.4g to %.4g", p.PrecDims.Name, slices.Min(ab.Variances), slices.Max(ab.Variances))
	}
	if ab.Variance > 0 {
		logf("diffusion variance %.4g held in every fit: 1 / the posterior mean %.4g (sd %.2g) of %s in the same run (EP)", ab.Variance, ab.Precision, ab.PrecisionSD, p.Prec.Name)
	}
	if k := keepLimit(cfg.K, b.N, b.D); k < cfg.K {
		logf("keeping the %d best trees, not %d: each holds about %.0f MB at %d rows × %d columns", k, cfg.K, emTreeBytes(b.N, b.D)/1e6, b.N, b.D)
		s.k = k
	}
	x := p.initialData()
	cols := columnVariances(x, b.N, b.D)
	v0 := averageVariance(cols)
	initOpt := func(f float64) em.InitOptions { return p.initOptions(f, cols, v0) }
	// Trees are ranked with their times integrated out (Laplace) where
	// that is affordable, O(K·N·D + K³) per tree of K branch points: with
	// Gaussian evidence, up to laplaceMax rows, not on the large-data path
	// (decided here, before the given tree is fitted: it was fitted without
	// the correction and ranked against candidates with it).
	s.laplace = p.tilted == nil && !(cfg.InitTree == nil && b.N > emLargeN) && b.N <= laplaceMax && !cfg.noLaplace
	p.laplace = s.laplace
	var list []EMTree
	var firstErr error
	factors := initFactors
	var large *subsample // the large-data path's subsample (chooseFactor)
	switch {
	case cfg.InitTree != nil:
		factors = nil
		tr, err := copyTree(cfg.InitTree, b)
		if err == nil {
			var t EMTree
			if t, err = p.fitTree(tr, nil, cfg.EMIters); err == nil {
				t.Start, t.StartIndex = "given", 1
				if f, ok := t.fallbackRecord("given", 1, 0, "initial tree (given)"); ok {
					s.laplaceFallbacks = append(s.laplaceFallbacks, f)
				}
				logf("initial tree (given) fitted: %s", p.fitText(t))
				list = append(list, t)
			}
		}
		firstErr = err
	case b.N > emLargeN:
		f, msg, sub, err := p.chooseFactor(x, cols, v0, rand.New(rand.NewPCG(cfg.Seed, 0x696e6974)))
		if err != nil {
			return nil, fmt.Errorf("run --method em: initial tree: %w", err)
		}
		logf("%s (%.1fs)", msg, time.Since(start).Seconds())
		factors = []float64{f}
		large = &sub
		s.large = true
	}

	type initTree struct {
		name  string
		start string // LaplaceFallback.Start
		index int
		tr    *pydt.Tree
	}
	// Each initial tree is fitted as soon as it is built and entered in
	// the list, and map.nwk and kbest.nwk are written for the list so
	// far (writeTrees): the run has a fitted tree on disk from its first
	// start on, and a time budget spent on building later starts never
	// leaves built trees unfitted (at 10⁵ rows each start is a
	// construction of a minute or more). The order of the fits, and so
	// the list, is the order in which the starts are built, as when every
	// start was built before the first fit.
	var inits int // initial trees built (fitted or failed)
	written := 0  // the length of the K-best list last written
	// fitInit fits it and enters it in the list; it returns the fitted
	// tree and whether its fit succeeded, and an error only when the
	// trees cannot be written. Nothing is fitted once ctx is done.
	fitInit := func(it initTree) (EMTree, bool, error) {
		if ctx.Err() != nil {
			return EMTree{}, false, nil
		}
		inits++
		last := time.Now()
		p.iterLog = func(iter int, bound float64) {
			// At large N an iteration takes seconds: report every 5 s.
			if time.Since(last) >= 5*time.Second {
				last = time.Now()
				logf("%s: EM iteration %d, bound %.6g (%.1fs)", it.name, iter, bound, time.Since(start).Seconds())
			}
		}
		t, err := p.fitTree(it.tr, nil, cfg.EMIters)
		p.iterLog = nil
		if err == nil && cfg.failFit != nil {
			err = cfg.failFit(0)
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", it.name, err)
			s.initialFailed++
			if s.initialErr == nil {
				s.initialErr = err
			}
			if firstErr == nil {
				firstErr = err
			}
			return EMTree{}, false, nil
		}
		if f, ok := t.fallbackRecord(it.start, it.index, 0, it.name); ok {
			s.laplaceFallbacks = append(s.laplaceFallbacks, f)
		}
		if ctx.Err() != nil {
			// Not "fitted": the fit may have been cut short, and it is
			// not written (below), so the files would not hold it.
			logf("%s: stopped by the interrupt, its fit not kept (%.1fs)", it.name, time.Since(start).Seconds())
		} else {
			logf("%s fitted: %s (%.1fs)", it.name, p.fitText(t), time.Since(start).Seconds())
		}
		t.Start, t.StartIndex = it.start, it.index
		list, _ = insertKBest(list, t, s.k)
		if ctx.Err() == nil {
			// (A fit cut short by ctx is not written: the files hold
			// the starts fitted in full before it, and the run returns
			// ErrInterrupted with no checkpoint, below.)
			n, err := writeTreesMerged(cfg.Out, list, s.laplace, cfg.earlier, b.Labels(), s.k)
			if err != nil {
				return EMTree{}, false, err
			}
			written = n
		}
		return t, true, nil
	}
	// built logs the start it as built and fits it.
	built := func(it initTree) (EMTree, bool, error) {
		logf("%s built (%.1fs)", it.name, time.Since(start).Seconds())
		return fitInit(it)
	}
	var firstBuild time.Duration // the first sequential tree's construction
	for fi, f := range factors {
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		tr, _, err := em.SequentialTree(x, b.N, b.D, initOpt(f))
		if fi == 0 {
			firstBuild = time.Since(t0)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if _, _, err := built(initTree{fmt.Sprintf("initial tree at variance factor %g", f), "sequential", fi + 1, tr}); err != nil {
			return nil, err
		}
	}
	// On the large-data path each further start (the extended linkage
	// tree, the MCMC run's summary tree extended) is a sequential
	// construction over all rows, about as costly as the first tree: with
	// Time set, one that would not be built within it is skipped, with a
	// line on the log, so that a run given --time ends near it (at 10⁵
	// rows each construction takes a minute or more; docs/em.md, "Scale").
	roomFor := func(name string) bool {
		if large == nil || cfg.Time <= 0 || time.Since(start)+firstBuild <= cfg.Time {
			return true
		}
		logf("%s not built: the time left of --time %v is less than the first initial tree took (%.1fs)", name, cfg.Time, firstBuild.Seconds())
		return false
	}
	// Average linkage, and its cuts into k flat clusters (cutTree) with
	// the joins above them that come almost as early as their parent's
	// merged into multifurcations (collapseTree): the sequential
	// construction makes near-stars on clustered data, and the search's
	// single moves cannot turn a star into clusters (each move alone
	// lowers the bound), so the list starts with trees of all kinds and
	// keeps the best by bound (docs/em.md, "Why EM ended at a near-star").
	if cfg.InitTree == nil && large == nil && b.N <= linkageInitMax && b.N >= 3 && ctx.Err() == nil {
		lt, err := linkageTree(x, b.N, b.D, v0)
		if err != nil {
			return nil, fmt.Errorf("run --method em: %w", err)
		}
		// The linkage tree's own fit is kept for the weighted linkage,
		// whose first round fitted the same tree again; it is fitted
		// from a copy, so that lt keeps its linkage times for the cuts.
		var ltFit EMTree
		ltFitted := false
		// addLinkage fits the linkage tree tr and, where the model
		// admits multifurcations, its cuts (linkageCuts), as starts of
		// this kind (LaplaceFallback.Start), logging how many were built.
		addLinkage := func(tr *pydt.Tree, name, kind string) error {
			var cuts []initTree
			if p.multifurcating() {
				for ki, k := range linkageCuts {
					if k >= b.N {
						break
					}
					ct, err := cutTree(tr, k)
					if err != nil {
						return err
					}
					cc, err := collapseTree(ct, 0.5)
					if err != nil {
						return err
					}
					cuts = append(cuts, initTree{fmt.Sprintf("%s cut into %d clusters", name, k), kind, ki + 2, cc})
				}
			}
			logf("%d %s built (%.1fs)", 1+len(cuts), strings.Replace(name, "initial tree", "initial trees", 1), time.Since(start).Seconds())
			t, ok, err := fitInit(initTree{name, kind, 1, tr.Clone()})
			if err != nil {
				return err
			}
			if kind == "linkage" {
				ltFit, ltFitted = t, ok
			}
			for _, c := range cuts {
				if _, _, err := fitInit(c); err != nil {
					return err
				}
			}
			return nil
		}
		if err := addLinkage(lt, "initial tree by average linkage", "linkage"); err != nil {
			return nil, fmt.Errorf("run --method em: %w", err)
		}
		// With a variance per dimension learned: the linkage tree of the
		// columns weighted by the variances EM fits to the linkage tree,
		// refitted and rebuilt a few times, and its cuts (docs/em.md,
		// "Linkage weighted by the fitted variances"). With one column
		// the weight scales every distance alike: the tree would be the
		// linkage tree again.
		// With a noise precision per column (and one diffusion variance)
		// the columns are divided by the fitted noise sd instead: a column
		// of pure noise gets a large one.
		if p.weightsLinkage() && ctx.Err() == nil {
			var v1 []float64
			if ltFitted {
				v1 = p.linkageVariances(ltFit.hyper)
			}
			wt, v, err := p.weightedLinkageTree(lt, v1, x, b.N, b.D, cfg.EMIters)
			if err != nil {
				logf("no weighted linkage trees: %v", err)
				if firstErr == nil {
					firstErr = err
				}
			} else {
				logf("average linkage weighted by the fitted %s (%.3g to %.3g)", p.linkageWeights(), slices.Min(v), slices.Max(v))
				if err := addLinkage(wt, "initial tree by average linkage weighted by the fitted variances", "linkage-weighted"); err != nil {
					return nil, fmt.Errorf("run --method em: %w", err)
				}
			}
		}
	}
	// On the large-data path, average linkage of the subsample extended
	// to all rows by sequential attachment (em.ExtendTree): O(subsample²)
	// for the linkage, O(depth) scores per row after it.
	if large != nil && ctx.Err() == nil && roomFor(fmt.Sprintf("initial tree by average linkage of %d rows, extended", len(large.rows))) {
		k := len(large.rows)
		lt, err := linkageTree(large.x, k, b.D, v0)
		if err == nil {
			var tr *pydt.Tree
			tr, _, err = em.ExtendTree(x, b.N, b.D, lt, large.rows, initOpt(factors[0]))
			if err == nil {
				if _, _, err := built(initTree{fmt.Sprintf("initial tree by average linkage of %d rows, extended", k), "linkage-extended", 1, tr}); err != nil {
					return nil, err
				}
			}
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	// The subsample MCMC run's trees (docs/em.md, "Starting trees from
	// the subsample's MCMC run"): its summary tree, its majority-rule
	// consensus and its last tree, extended to all rows when the
	// subsample is smaller; on the large-data path the summary tree alone
	// (each extension costs a sequential construction).
	if smp != nil && cfg.InitTree == nil && len(smp.trees) > 0 && ctx.Err() == nil && roomFor("initial trees from the MCMC run") {
		mc, err := p.mcmcStartTrees(smp, x, large != nil)
		if err != nil && len(mc) > 0 {
			// Some starts could not be made binary: the others are kept.
			logf("left out: %v; the other starting trees from the MCMC run are kept", err)
			if firstErr == nil {
				firstErr = err
			}
			err = nil
		}
		for _, st := range mc {
			if ctx.Err() != nil {
				break
			}
			if st, err = p.extendStart(smp, x, st); err != nil {
				break
			}
			if _, _, err := built(initTree{st.name, st.start, 1, st.tr}); err != nil {
				return nil, err
			}
		}
		if err != nil && ctx.Err() == nil {
			logf("no (further) starting trees from the MCMC run: %v", err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		// A fit cut short is not the fit an uninterrupted run makes:
		// no checkpoint is written (map.nwk and kbest.nwk hold the
		// starts fitted in full so far), and --resume starts the run
		// again.
		kept := "no initial tree was fitted in full, so there is no map.nwk yet"
		switch {
		case written > 0 && len(cfg.earlier) > 0:
			kept = fmt.Sprintf("map.nwk and kbest.nwk hold the best of the initial trees fitted in full in this session and the earlier one (%d in kbest.nwk)", written)
		case written > 0:
			kept = fmt.Sprintf("map.nwk and kbest.nwk hold the best of the initial trees fitted in full (%d in kbest.nwk)", written)
		case len(cfg.earlier) > 0:
			kept = "map.nwk and kbest.nwk are still the earlier session's"
		}
		return nil, fmt.Errorf("run --method em: %w while fitting the initial trees; %s; run --resume %s starts the run again", ErrInterrupted, kept, cfg.Out)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("run --method em: initial tree: %w", firstErr)
	}
	s.initial = inits
	s.list = list
	s.pcg = rand.NewPCG(cfg.Seed, 0x656d)
	s.rng = rand.New(s.pcg)
	s.boundTrace = []float64{list[0].Bound}
	s.boundTime = []float64{time.Since(start).Seconds()}
	return s, nil
}

// done returns the Done channel of the search's context (nil before
// setDeadline), so that an initial tree's construction stops on Ctrl-C.
func (p *EMPlan) done() <-chan struct{} {
	if p.ctx == nil {
		return nil
	}
	return p.ctx.Done()
}

// setDeadline sets the deadline of the search's EM fits from cfg.Time
// (measured from start) and makes them stop, after at least one
// iteration, when ctx is done.
func (p *EMPlan) setDeadline(ctx context.Context, cfg EMConfig, start time.Time) {
	p.deadline = time.Time{}
	p.laplaceFn = cfg.laplace
	if cfg.Time > 0 {
		p.deadline = start.Add(cfg.Time)
	}
	p.ctx = ctx
}

// rounds runs the search's rounds from the state s until a stopping rule,
// writing a checkpoint after the initial trees, at most every
// emCheckpointEvery after a round, and at the end, then the outputs. A
// round cut short by ctx is discarded (the checkpoint holds the rounds
// completed), and the result's StopReason is "interrupted", with an error
// wrapping ErrInterrupted.
func (p *EMPlan) rounds(ctx context.Context, cfg EMConfig, s *emSearch) (*EMResult, error) {
	p.setDeadline(ctx, cfg, s.start)
	p.laplace = s.laplace
	lastCP := time.Now()
	if s.round == 0 {
		if err := p.checkpoint(cfg.Out, s); err != nil {
			return nil, err
		}
	}
	stop := "rounds"
	for s.round < cfg.Rounds {
		if ctx.Err() != nil {
			stop = "interrupted"
			break
		}
		if cfg.Time > 0 && time.Since(s.start) >= cfg.Time {
			stop = "time"
			break
		}
		if cfg.Patience > 0 && s.stale >= cfg.Patience { // a resumed run that had stopped
			stop = "no improvement"
			break
		}
		round := s.round + 1
		rngBefore, err := s.pcg.MarshalBinary()
		if err != nil {
			return nil, err
		}
		// The parent: the best tree half of the time, else any tree of
		// the list (a random one alone spends most rounds on trees the
		// search has left behind).
		list := slices.Clone(s.list)
		parent := list[0]
		if s.rng.IntN(2) == 1 {
			parent = list[s.rng.IntN(len(list))]
		}
		cands, err := p.propose(parent, s.rng)
		if err != nil {
			return nil, fmt.Errorf("run --method em: round %d: %w", round, err)
		}
		improved := false
		fits, failed, firstFail := 0, 0, s.firstFail
		var fallbacks []LaplaceFallback
		for _, c := range cands {
			fits++
			t, err := p.fitTree(c, &parent.hyper, cfg.EMIters)
			if err == nil && cfg.failFit != nil {
				err = cfg.failFit(round)
			}
			if err != nil {
				err = fmt.Errorf("round %d, candidate %d: %w", round, fits, err)
				// A candidate EM cannot fit (a degenerate tree) is
				// dropped, and counted.
				failed++
				if firstFail == nil {
					firstFail = err
				}
				continue
			}
			if f, ok := t.fallbackRecord("candidate", fits, round, ""); ok {
				fallbacks = append(fallbacks, f)
				if cfg.Log != nil {
					cfg.Log(fmt.Sprintf("round %d, candidate %d: %s", round, fits, t.fallbackNote()))
				}
			}
			t.Start, t.StartIndex, t.Round = parent.Start, parent.StartIndex, round
			var better bool
			list, better = insertKBest(list, t, s.k)
			improved = improved || better
		}
		if ctx.Err() != nil {
			// The round's fits may have been cut short: the round is
			// discarded, as if it had not begun.
			if err := s.pcg.UnmarshalBinary(rngBefore); err != nil {
				return nil, err
			}
			stop = "interrupted"
			break
		}
		s.list = list
		s.laplaceFallbacks = append(s.laplaceFallbacks, fallbacks...)
		s.fits += fits
		s.failedFits += failed
		s.firstFail = firstFail
		if s.large {
			// Trees dropped from the list hold hundreds of MB at this
			// size: return them now, not after the heap has doubled.
			runtime.GC()
		}
		s.boundTrace = append(s.boundTrace, list[0].Bound)
		s.boundTime = append(s.boundTime, time.Since(s.start).Seconds())
		s.round = round
		if improved {
			s.stale = 0
		} else {
			s.stale++
		}
		if time.Since(lastCP) >= emCheckpointEvery {
			if err := p.checkpoint(cfg.Out, s); err != nil {
				return nil, err
			}
			lastCP = time.Now()
		}
		if cfg.Progress != nil {
			cfg.Progress(round, cfg.Rounds, list[0].Bound, s.rankedBy(p))
		}
		if cfg.Patience > 0 && s.stale >= cfg.Patience {
			stop = "no improvement"
			break
		}
	}
	if s.fits > 0 && s.failedFits == s.fits {
		return nil, fmt.Errorf("run --method em: all %d candidate trees of the search failed to fit; the first: %w", s.fits, s.firstFail)
	}
	if err := p.checkpoint(cfg.Out, s); err != nil {
		return nil, err
	}
	res, err := p.result(s, stop)
	if err != nil {
		return nil, err
	}
	if err := p.write(cfg.Out, res); err != nil {
		return nil, err
	}
	if stop == "interrupted" {
		return res, fmt.Errorf("run --method em: %w after round %d; run --resume %s continues it", ErrInterrupted, s.round, cfg.Out)
	}
	return res, nil
}

// result is the search's outcome from its state s.
func (p *EMPlan) result(s *emSearch, stop string) (*EMResult, error) {
	// g, not u (the name of the log gaps in docs/em.md): u also names a
	// probit layer's auxiliaries (as in bound.svg).
	objective := "lower bound on log p(Y, g, alpha, beta | T), g_b = log(s_b - s_parent(b)), s = -log(1-t) (docs/em.md)"
	if s.laplace {
		objective = "Laplace approximation of log p(Y, alpha, beta | T), the times integrated out: the lower bound on log p(Y, g, alpha, beta | T), g_b = log(s_b - s_parent(b)), s = -log(1-t), plus the Laplace correction in g (docs/em.md)"
	}
	if p.tilted != nil {
		objective = "EP approximation of log p(Y, g, alpha, beta | T), g_b = log(s_b - s_parent(b)), s = -log(1-t) (docs/em.md)"
	}
	res := &EMResult{Method: MethodEM, Approximate: p.tilted != nil, TimesIntegrated: s.laplace, RankedBy: s.rankedBy(p), Objective: objective, StopReason: stop,
		LaplaceFallbacks: slices.Clone(s.laplaceFallbacks),
		BoundTrace:       slices.Clone(s.boundTrace), BoundTime: slices.Clone(s.boundTime), Rounds: s.round,
		Fits: s.fits, FailedFits: s.failedFits, firstFail: s.firstFail, InitialFailed: s.initialFailed}
	if res.FailedFits > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of the search's %d candidate fits failed and %s dropped; the first: %v", res.FailedFits, res.Fits, wasWere(res.FailedFits), res.firstFail))
	}
	if s.initialFailed > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d of the %d initial trees failed to fit and %s dropped; the first: %v", s.initialFailed, s.initial, wasWere(s.initialFailed), s.initialErr))
	}
	list := s.list
	res.Trees = slices.Clone(list)
	res.Bound = list[0].Bound
	res.EMBound, res.Laplace = list[0].EMBound, list[0].Laplace
	for _, t := range list {
		res.KBest = append(res.KBest, t.Bound)
	}
	for _, t := range list {
		res.KBestEstimates = append(res.KBestEstimates, p.estimates(t))
	}
	w, err := EMKBestWeights(res.KBestEstimates)
	if err != nil {
		return nil, fmt.Errorf("run --method em: %w", err)
	}
	res.KBestWeights = w
	unavailable, cutShort := 0, 0
	for _, f := range res.LaplaceFallbacks {
		switch {
		case f.CutShort():
			cutShort++
		case f.Action == laplaceUnavailable:
			unavailable++
		}
	}
	if n := len(res.LaplaceFallbacks) - cutShort; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the Laplace correction failed at first for %d trees (the Hessian in the times not negative definite); %d were refitted from perturbed times, %d are ranked by their bound alone after every tree with the correction (summary.json's laplace_fallbacks)", n, n-unavailable, unavailable))
	}
	if cutShort > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d trees' fits were cut short by --time, so their Laplace correction was not formed: they are ranked by their bound alone after every tree with the correction (summary.json's laplace_fallbacks); a longer --time fits them in full", cutShort))
	}
	best := res.KBestEstimates[0]
	res.Gamma, res.Point, res.Variance, res.Variances = best.Gamma, best.Point, best.Variance, best.Variances
	if w := starWarning(list[0].Tree); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	res.AlphaBeta = p.ab
	if ab := p.ab; ab != nil && ab.PlannedSweeps > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("alpha and beta are from %d MCMC sweeps (%d burn-in) on %d rows, not %d: --time left that run a quarter of it; a short run's means can be far from the posterior's (summary.json's alpha_beta); give a longer --time, or fewer --ab-rows", ab.Sweeps, ab.Burn, ab.Rows, ab.PlannedSweeps))
	}
	res.WallTime = time.Since(s.start).Seconds()
	return res, nil
}

// EMEstimates are the EM estimates that come with one tree of the K-best
// list: its bound, Gamma posteriors for c and the precision and point
// estimates for α and β, by variable name (with a precision per
// dimension, one Gamma posterior per element, "prec[1]" …), and the
// mean-field variance (or variances, one per dimension).
type EMEstimates struct {
	Bound float64 `json:"bound"`
	// LaplaceUnavailable is set for a tree ranked by its bound alone in a
	// search that ranks by bound + Laplace correction (EMTree.NoLaplace).
	LaplaceUnavailable bool `json:"laplace_unavailable,omitempty"`
	// Start and StartIndex name the initial tree this tree descends from,
	// Round the search round that made it (EMTree); Start is empty in
	// summaries written before it.
	Start      string                  `json:"start,omitempty"`
	StartIndex int                     `json:"start_index,omitempty"`
	Round      int                     `json:"round"`
	Gamma      map[string]GammaSummary `json:"gamma_posteriors"`
	Point      map[string]float64      `json:"point_estimates"`
	Variance   float64                 `json:"variance_mean_field,omitempty"`
	Variances  []float64               `json:"variances_mean_field,omitempty"`
}

// Value returns the estimate of the latent scalar name as EMResult.Value
// does, for this tree.
func (e *EMEstimates) Value(name string) (float64, bool) {
	if g, ok := e.Gamma[name]; ok {
		return g.Mean, true
	}
	v, ok := e.Point[name]
	return v, ok
}

// KBestWeights returns the weights of trees with these bounds in a model
// average: exp(bound), normalised to sum to 1. With the bound the value
// the search ranks trees by (EMTree.Bound: the lower bound on, or EP's
// approximation of, log p(Y, g, α, β | T), plus the Laplace correction
// for the times where the search uses it), this approximates the
// posterior probabilities of the trees among those listed: it takes that
// value for the log evidence of each tree, ignoring the bound's gap, the
// spread of the hyperparameters (and of the times without the correction)
// about their point estimates, and every tree outside the list. Bounds
// tens of nats apart give the best tree all the weight. A bound that is
// NaN or +Inf, or all bounds −Inf, is an error (the weights would be
// NaN).
func KBestWeights(bounds []float64) ([]float64, error) {
	if len(bounds) == 0 {
		return nil, nil
	}
	lz := logsumexp.Of(bounds)
	if math.IsNaN(lz) || math.IsInf(lz, 0) {
		return nil, fmt.Errorf("the K-best weights: the trees' values %v do not sum to a finite total (log Σ exp = %v)", bounds, lz)
	}
	w := make([]float64, len(bounds))
	for i, b := range bounds {
		w[i] = math.Exp(b - lz)
	}
	return w, nil
}

// EMKBestWeights returns the weights of the trees of an EM run's K-best
// list (EMResult.KBestEstimates) in a model average: KBestWeights of their
// values, except that where some trees have the Laplace correction for
// their times and some not (LaplaceUnavailable), those without get weight
// 0 and the others share the total: a bound and a bound plus correction
// are not comparable.
func EMKBestWeights(est []EMEstimates) ([]float64, error) {
	if len(est) == 0 {
		return nil, nil
	}
	some := slices.ContainsFunc(est, func(e EMEstimates) bool { return !e.LaplaceUnavailable })
	var idx []int
	var values []float64
	for i, e := range est {
		if !some || !e.LaplaceUnavailable {
			idx = append(idx, i)
			values = append(values, e.Bound)
		}
	}
	w, err := KBestWeights(values)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(est))
	for k, i := range idx {
		out[i] = w[k]
	}
	return out, nil
}

// rankedBy is EMResult.RankedBy of the search.
func (s *emSearch) rankedBy(p *EMPlan) string {
	return rankedByName(p.tilted != nil, s.laplace)
}

// rankedByName is EMResult.RankedBy of a search whose values are EP's
// approximation (approximate) or the EM bound plus the Laplace correction
// (timesIntegrated), else the EM bound.
func rankedByName(approximate, timesIntegrated bool) string {
	switch {
	case approximate:
		return "EP approximation"
	case timesIntegrated:
		return "bound + Laplace correction"
	}
	return "bound"
}

// valueText describes the value of the fitted tree t for the log.
func (p *EMPlan) valueText(t EMTree) string {
	switch {
	case p.tilted != nil:
		return fmt.Sprintf("EP approximation %.6g", t.Bound)
	case t.NoLaplace:
		return fmt.Sprintf("bound %.6g (Laplace correction unavailable)", t.Bound)
	case p.laplace:
		return fmt.Sprintf("bound + Laplace correction %.6g (%.6g %+.4g)", t.Bound, t.EMBound, t.Laplace)
	}
	return fmt.Sprintf("bound %.6g", t.Bound)
}

// fitText is valueText followed, for a tree whose Laplace correction
// failed at first, by fallbackNote: one short line of the log per tree,
// the full error being in summary.json's laplace_fallbacks (on ccle the
// error and the action made a line of some 300 characters per start).
func (p *EMPlan) fitText(t EMTree) string {
	if t.fallback == "" {
		return p.valueText(t)
	}
	if t.NoLaplace {
		return fmt.Sprintf("bound %.6g; %s", t.Bound, t.fallbackNote())
	}
	return p.valueText(t) + "; " + t.fallbackNote()
}

// fallbackNote says in a few words why t's Laplace correction failed at
// first and what was done ("" when it did not fail).
func (t EMTree) fallbackNote() string {
	if t.fallback == "" {
		return ""
	}
	why := "the times not at a maximum"
	if (LaplaceFallback{Error: t.fallbackErr}).CutShort() {
		return "Laplace correction not formed (" + errCutShort + "), ranked by the bound alone"
	}
	if strings.Contains(t.fallbackErr, "not negative definite") {
		why = "Hessian in the times not negative definite"
	}
	if strings.Contains(t.fallbackErr, "refit from perturbed times failed") {
		why += "; the refit from perturbed times failed"
	}
	if t.NoLaplace {
		return "Laplace correction unavailable (" + why + "), ranked by the bound alone"
	}
	return "refitted from perturbed times (" + why + " at the first fit)"
}

// fallbackRecord returns the LaplaceFallback record of t when its Laplace
// correction failed at first.
func (t EMTree) fallbackRecord(start string, index, round int, name string) (LaplaceFallback, bool) {
	if t.fallback == "" {
		return LaplaceFallback{}, false
	}
	return LaplaceFallback{Start: start, Index: index, Round: round, Tree: name, Action: t.fallback, Error: t.fallbackErr}, true
}

// estimates returns the EM estimates of the tree t by variable name.
func (p *EMPlan) estimates(t EMTree) EMEstimates {
	h := t.hyper
	e := EMEstimates{Bound: t.Bound, LaplaceUnavailable: t.NoLaplace, Start: t.Start, StartIndex: t.StartIndex, Round: t.Round,
		Gamma: map[string]GammaSummary{}, Point: map[string]float64{}, Variance: h.Variance, Variances: slices.Clone(h.Variances)}
	if g := h.QC; g != nil && p.C != nil {
		e.Gamma[p.C.Name] = GammaSummary{Shape: g.Shape, Rate: g.Rate, Mean: g.Mean()}
	}
	if g := h.QPrec; g != nil && p.Prec != nil {
		e.Gamma[p.Prec.Name] = GammaSummary{Shape: g.Shape, Rate: g.Rate, Mean: g.Mean()}
	} else if p.Prec != nil {
		// Held at the subsample's estimate (ABEstimate.Variance).
		e.Point[p.Prec.Name] = 1 / h.Variance
	}
	if p.PrecDims != nil {
		for k, g := range h.QPrecs {
			e.Gamma[fmt.Sprintf("%s[%d]", p.PrecDims.Name, k+1)] = GammaSummary{Shape: g.Shape, Rate: g.Rate, Mean: g.Mean()}
		}
		if h.QPrecs == nil {
			// Held at the subsample's estimate (ABEstimate.Variances).
			for k, v := range h.Variances {
				e.Point[fmt.Sprintf("%s[%d]", p.PrecDims.Name, k+1)] = 1 / v
			}
		}
	}
	if p.noise != nil {
		for g, q := range h.QNoise {
			e.Gamma[p.noiseName(g)] = GammaSummary{Shape: q.Shape, Rate: q.Rate, Mean: q.Mean()}
		}
	}
	if p.Alpha != nil {
		e.Point[p.Alpha.Name] = h.Alpha
	}
	if p.Beta != nil {
		e.Point[p.Beta.Name] = h.Beta
	}
	return e
}

// emHyper are the hyperparameters of a fitted tree: what a fit started
// from it (a candidate of the search) starts at, and what summary.json
// reports for the best tree.
type emHyper struct {
	// C and Variance are the means of q(c) and of 1/q(τ) (or the fixed
	// values), Alpha and Beta the point estimates.
	C        float64 `json:"c"`
	Variance float64 `json:"variance"`
	// Variances are the means of 1/q(τ_d) (or the fixed values) of a
	// model with a variance per dimension (Variance is then 0), QPrecs
	// the q(τ_d) when learned.
	Variances []float64  `json:"variances,omitempty"`
	QPrecs    []em.Gamma `json:"q_precisions,omitempty"`
	// Noise are E[θ_g] of a latent noise precision of the leaf likelihood
	// (one, or one per column; EMPlan.Noise), QNoise their q(θ_g).
	Noise  []float64  `json:"noise_precisions,omitempty"`
	QNoise []em.Gamma `json:"q_noise,omitempty"`
	Alpha  float64    `json:"alpha"`
	Beta   float64    `json:"beta"`
	// QC and QPrec are q(c) and q(τ), nil for a fixed parameter.
	QC    *em.Gamma `json:"q_c,omitempty"`
	QPrec *em.Gamma `json:"q_precision,omitempty"`
	// Iters is the number of EM iterations of the fit.
	Iters int `json:"em_iterations"`
}

// fitTree runs EM on tr from the hyperparameters start (nil: the plan's
// starts) and returns the fitted tree (tr, or with the Laplace fallback a
// refitted copy).
//
// Where the search ranks by the Laplace correction and the Hessian in the
// times is not negative definite at the fit (em.ErrNotMaximum), the times
// are not at a maximum: a fit cut short, or a saddle point. Then: up to
// three more EM runs (of one iteration each once the deadline has
// passed); then one refit from the fitted times perturbed in their log
// gaps (laplaceRefit, which leaves a saddle); and if the Hessian is still
// not negative definite the tree is kept with its correction unavailable
// (laplaceUnavailable): ranked by its bound alone, after every tree with
// the correction (EMTree.ranksAbove), never dropped for it. A correction
// or bound that is not finite is an error.
func (p *EMPlan) fitTree(tr *pydt.Tree, start *emHyper, iters int) (EMTree, error) {
	fit, lik, err := p.newFit(tr, start, iters)
	if err != nil {
		return EMTree{}, err
	}
	cut, err := p.runFitCut(fit)
	if err != nil {
		return EMTree{}, err
	}
	var lap float64
	var noLap bool
	var fallback, fallbackErr string
	switch {
	case p.laplace && cut:
		// Its times are not at a maximum, where the correction is
		// defined, and no time is left to take them there: forming the
		// Hessian (2K E-steps) would be spent on an error, with three
		// more tries and a refit after it (on ccle under --time 60s, 64%
		// of the run's CPU).
		noLap, fallback = true, laplaceUnavailable
		fallbackErr = fmt.Sprintf("%s after %d EM iterations, its times not at a maximum: the correction is not formed", errCutShort, fit.Iterations())
		// Its bound is refreshed (one E-step) as Laplace refreshes the
		// others', so that it is not ranked on q(x) from before its last
		// iteration's updates (up to 0.7 nats low on 10 rows).
		if err := fit.Refresh(); err != nil {
			return EMTree{}, err
		}
	case p.laplace:
		lap, err = p.laplaceOf(fit)
		for try := 0; errors.Is(err, em.ErrNotMaximum) && try < 3 && !p.pastDeadline(); try++ {
			if err = p.runFit(fit); err != nil {
				return EMTree{}, err
			}
			lap, err = p.laplaceOf(fit)
		}
		if errors.Is(err, em.ErrNotMaximum) && p.pastDeadline() {
			// No time left for a refit (of one iteration).
			fallbackErr = err.Error() + "; no refit: --time is up"
			lap, noLap, err = 0, true, nil
			fallback = laplaceUnavailable
		}
		if errors.Is(err, em.ErrNotMaximum) {
			fallbackErr = err.Error()
			var rfit *em.EM
			var rlik *bp.Model
			var rtr *pydt.Tree
			rfit, rlik, rtr, lap, err = p.perturbedRefit(fit, iters)
			switch {
			case err == nil:
				fit, lik, tr = rfit, rlik, rtr
				fallback = laplaceRefit
			default:
				// Keep the first fit, ranked by its bound alone, also
				// when the refit failed otherwise: the first fit is
				// valid (on ccle a perturbation put a node at its
				// parent's time, and the start was dropped).
				if !errors.Is(err, em.ErrNotMaximum) {
					fallbackErr += "; the refit from perturbed times failed: " + err.Error()
				}
				lap, noLap, err = 0, true, nil
				fallback = laplaceUnavailable
			}
		}
		if err != nil {
			return EMTree{}, err
		}
		if math.IsNaN(lap) || math.IsInf(lap, 0) {
			return EMTree{}, fmt.Errorf("the tree's Laplace correction is %v", lap)
		}
	}
	bound := fit.Bound()
	if math.IsNaN(bound) || math.IsInf(bound, 0) {
		return EMTree{}, fmt.Errorf("the tree's bound is %v", bound)
	}
	tr.Labels = p.m.Labels
	h := fitHyper(fit)
	h.Iters = fit.Iterations()
	t := EMTree{Tree: tr, Bound: bound + lap, EMBound: bound, Laplace: lap, NoLaplace: noLap, fallback: fallback, fallbackErr: fallbackErr,
		hyper: h, key: topologyKey(tr)}
	if p.tilted != nil {
		// The EP sites the fit ended with: the leaf evidence that the
		// search's re-attachment scores use.
		t.ev = leafEvidence(lik, p.m.N, p.m.D)
	}
	return t, nil
}

// fitHyper returns the hyperparameters of fit (its iterations not set).
func fitHyper(fit *em.EM) emHyper {
	h := emHyper{C: fit.MeanC(), Variance: fit.MeanVariance(), Alpha: fit.Alpha(), Beta: fit.Beta()}
	if fit.PerDim() {
		h.Variance, h.Variances = 0, fit.MeanVariances()
		if q, ok := fit.QPrecs(); ok {
			h.QPrecs = q
		}
	}
	if q, ok := fit.QNoise(); ok {
		h.QNoise, h.Noise = q, fit.MeanNoise()
	}
	if g, ok := fit.QC(); ok {
		h.QC = &g
	}
	if g, ok := fit.QPrec(); ok {
		h.QPrec = &g
	}
	return h
}

// laplaceOf is fit's Laplace correction (em.EM.Laplace, or the tests'
// replacement).
func (p *EMPlan) laplaceOf(fit *em.EM) (float64, error) {
	if p.laplaceFn != nil {
		return p.laplaceFn(fit)
	}
	return fit.Laplace()
}

// perturbedRefit fits a copy of fit's tree again, from its times with
// every log gap u_b = log(s_b − s_parent(b)) moved by 0.5·z_b (z_b
// standard normal, from a fixed seed: the search stays deterministic) and
// from its hyperparameters, for iters EM iterations, and returns the fit
// with its Laplace correction (an error wrapping em.ErrNotMaximum when the
// Hessian is still not negative definite). At a saddle point of the times
// EM does not move (the gradient is zero); from a perturbed start it
// climbs to a maximum.
func (p *EMPlan) perturbedRefit(fit *em.EM, iters int) (*em.EM, *bp.Model, *pydt.Tree, float64, error) {
	tr := fit.Tree().Clone()
	rng := rand.New(rand.NewPCG(0x6c61706c, 0x61636521))
	s := map[pydt.NodeID]float64{}
	for _, v := range tr.PreOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		ps := 0.0
		if par := tr.Parent(v); par != pydt.NoNode {
			ps = s[par]
		}
		gap := tr.Time(v).S() - tr.ParentTime(v).S()
		s[v] = ps + gap*math.Exp(0.5*rng.NormFloat64())
	}
	for v, sv := range s {
		tr.SetTime(v, pydt.TimeFromS(sv))
	}
	if err := tr.Validate(); err != nil {
		return nil, nil, nil, 0, fmt.Errorf("perturbed times: %w", err)
	}
	h := fitHyper(fit)
	rfit, lik, err := p.newFit(tr, &h, iters)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if err := p.runFit(rfit); err != nil {
		return nil, nil, nil, 0, err
	}
	lap, err := p.laplaceOf(rfit)
	return rfit, lik, tr, lap, err
}

// leafEvidence returns the leaf evidence of lik, (mean, precision) per
// leaf and dimension (bp.Model.Evidence).
func leafEvidence(lik *bp.Model, n, d int) []float64 {
	ev := make([]float64, 0, 2*n*d)
	for i := range n {
		for j := range d {
			mu, prec := lik.Evidence(pydt.NodeID(i), j)
			ev = append(ev, mu, prec)
		}
	}
	return ev
}

// insertKBest adds t to the list (sorted by EMTree.ranksAbove, best first,
// at most k trees, one per topology) and reports whether it became the
// best.
func insertKBest(list []EMTree, t EMTree, k int) ([]EMTree, bool) {
	for i, u := range list {
		if u.key == t.key {
			if !t.ranksAbove(u) {
				return list, false
			}
			list = slices.Delete(list, i, i+1)
			break
		}
	}
	i := sort.Search(len(list), func(i int) bool { return t.ranksAbove(list[i]) })
	list = slices.Insert(list, i, t)
	if len(list) > k {
		list = list[:k]
	}
	return list, i == 0 && (len(list) == 1 || t.ranksAbove(list[1]))
}

// propose detaches a random subtree of parent's tree, scores its
// re-attachment at every edge (at the middle of the edge in s, before the
// subtree's own time) and at every branch point older than it by the log
// joint density log p(Y, s | T) at parent's hyperparameters (belief
// propagation for the data, em.AttachPriorS for the tree: O(depth) each,
// O(N · depth) per round), and returns the three best new trees (the old
// position excluded).
func (p *EMPlan) propose(parent EMTree, rng *rand.Rand) ([]*pydt.Tree, error) {
	hy := parent.hyper
	tr := parent.Tree.Clone()
	lik := bp.New(tr, p.m.D)
	if hy.Variances != nil {
		if err := lik.SetVariances(hy.Variances); err != nil {
			return nil, err
		}
	} else if err := lik.SetVariance(hy.Variance); err != nil {
		return nil, err
	}
	// The leaf evidence of the fit: the data's (exact or Gaussian, with
	// a latent noise at the fit's E[θ]), or the EP sites it ended with.
	if p.Opt.Noise != nil {
		if err := p.Opt.Noise.SetEvidence(lik, hy.Noise); err != nil {
			return nil, err
		}
	} else if ev := parent.ev; ev == nil {
		if err := p.m.Trees[0].observe(lik, p.env); err != nil {
			return nil, err
		}
	} else {
		for i := range p.m.N {
			for d := range p.m.D {
				k := 2 * (i*p.m.D + d)
				if err := lik.SetEvidence(pydt.NodeID(i), d, ev[k], ev[k+1]); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := lik.Recompute(); err != nil {
		return nil, err
	}
	nodes := tr.PreOrder(nil)
	var movable []pydt.NodeID
	for _, v := range nodes {
		if v != tr.Root() {
			movable = append(movable, v)
		}
	}
	if len(movable) == 0 || tr.NumLeaves() < 3 {
		return nil, nil
	}
	v := movable[rng.IntN(len(movable))]
	old := lik.Detach(v)
	if err := lik.Err(); err != nil {
		return nil, err
	}
	h, err := pydt.NewHarmonic(hy.Alpha, hy.Beta)
	if err != nil {
		return nil, err
	}
	c := hy.C
	tv := tr.Time(v)
	type cand struct {
		pos   pydt.Position
		score float64
	}
	var cands []cand
	add := func(pos pydt.Position) {
		if samePosition(pos, old) {
			return
		}
		ll := lik.LogLikIfAttached(v, pos)
		if math.IsInf(ll, -1) || math.IsNaN(ll) {
			return
		}
		// The prior's change in O(depth) (it ranks positions as
		// LogPriorS of the whole tree does).
		lp := em.AttachPriorS(tr, v, pos, hy.Alpha, hy.Beta, c, h)
		if s := ll + lp; !math.IsNaN(s) && !math.IsInf(s, 0) {
			cands = append(cands, cand{pos, s})
		}
	}
	for _, u := range tr.PreOrder(nil) {
		top := tr.ParentTime(u).S()
		bot := math.Min(tr.Time(u).S(), tv.S())
		if !tr.IsLeaf(u) && tr.Time(u).S() < tv.S() {
			add(pydt.Position{Node: u, AtNode: true})
		}
		if math.IsInf(bot, 1) {
			add(pydt.Position{Node: u, Time: pydt.TimeFromS(top + math.Ln2)}) // t halfway to 1
		} else if bot > top {
			add(pydt.Position{Node: u, Time: pydt.TimeFromS((top + bot) / 2)})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	var out []*pydt.Tree
	for _, c := range cands[:min(3, len(cands))] {
		t := tr.Clone()
		t.Attach(v, c.pos)
		if err := t.Validate(); err != nil {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// samePosition reports whether a and b are the same attachment place.
func samePosition(a, b pydt.Position) bool {
	return a.Node == b.Node && a.AtNode == b.AtNode
}

// topologyKey is a canonical string of tr's clades (times ignored).
func topologyKey(tr *pydt.Tree) string {
	var rec func(v pydt.NodeID) string
	rec = func(v pydt.NodeID) string {
		if tr.IsLeaf(v) {
			return fmt.Sprint(int(v))
		}
		var parts []string
		for c := range tr.Children(v) {
			parts = append(parts, rec(c))
		}
		sort.Strings(parts)
		return "(" + strings.Join(parts, ",") + ")"
	}
	return rec(tr.Root())
}

// copyTree returns a copy of tr, checked to be a tree of b's rows.
func copyTree(tr *pydt.Tree, b *TreeBinding) (*pydt.Tree, error) {
	if err := checkTree(b, tr); err != nil {
		return nil, err
	}
	return pydt.ParseNewick(tr.Newick(), b.Labels())
}

// ReadEMResult reads the summary.json of the EM run in dir.
func ReadEMResult(dir string) (*EMResult, error) {
	var res EMResult
	if err := readJSONFile(filepath.Join(dir, SummaryFile), &res); err != nil {
		return nil, err
	}
	if res.Method != MethodEM {
		return nil, fmt.Errorf("%s: method %q, not an EM run's summary", filepath.Join(dir, SummaryFile), res.Method)
	}
	if res.RankedBy == "" {
		// Written before ranked_by: its approximate and times_integrated
		// say the same.
		res.RankedBy = rankedByName(res.Approximate, res.TimesIntegrated)
	}
	return &res, nil
}

// Value returns the EM estimate of the latent scalar name: the mean of its
// variational Gamma posterior (c and the precision) or its point estimate
// (alpha and beta), and false for any other name.
func (r *EMResult) Value(name string) (float64, bool) {
	if g, ok := r.Gamma[name]; ok {
		return g.Mean, true
	}
	v, ok := r.Point[name]
	return v, ok
}

// writeEMRunFile writes the run.json of an EM run: its method and
// settings, the model's inputs (Model.Inputs, or those recorded by the run
// being resumed) and, when the search starts from a given tree, that it
// does (the tree is InitTreeFile), so that cut, plot and predict can
// rebuild its model and data as for an MCMC run, and ResumeEM can
// continue it. The number of rounds is EM.Rounds (version 5; version 4
// wrote it as "iterations" too).
func writeEMRunFile(m *Model, cfg EMConfig, inputs *Inputs) error {
	ri := RunInfo{Version: RunVersion, Seed: cfg.Seed, Inputs: inputs, Standardize: m.Scaling, Method: MethodEM,
		EM: &EMSettings{Rounds: cfg.Rounds, K: cfg.K, Patience: cfg.Patience, EMIters: cfg.EMIters, TimeSeconds: cfg.Time.Seconds(),
			ABRows: cfg.ABRows, ABSweeps: cfg.ABSweeps, Margin: cfg.Margin}}
	if cfg.InitTree != nil {
		ri.InitTrees = []string{m.Trees[0].Leaves.Name}
	}
	if err := writeJSONFile(filepath.Join(cfg.Out, RunFile), ri); err != nil {
		return fmt.Errorf("run --method em: %w", err)
	}
	return nil
}

// write writes map.nwk, kbest.nwk and summary.json.
func (p *EMPlan) write(dir string, res *EMResult) error {
	if err := writeTrees(dir, res.Trees, res.TimesIntegrated); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dir, SummaryFile), res); err != nil {
		return fmt.Errorf("run --method em: %w", err)
	}
	return nil
}

// writeTrees writes map.nwk (the first tree of list) and kbest.nwk (the
// list, each tree with its value; timesIntegrated: the values are the
// bound plus the Laplace correction, whose parts are given too).
func writeTrees(dir string, list []EMTree, timesIntegrated bool) error {
	_, err := writeTreesMerged(dir, list, timesIntegrated, nil, nil, len(list))
	return err
}

// writeTreesMerged writes map.nwk and kbest.nwk as writeTrees does, for
// list merged with the lines earlier of an earlier session's kbest.nwk
// (mergeKBestLines, at most k lines; labels are the data's row names, as
// pydt.ParseNewick takes them); it returns the number of trees written.
func writeTreesMerged(dir string, list []EMTree, timesIntegrated bool, earlier, labels []string, k int) (int, error) {
	lines := kbestLines(list, timesIntegrated)
	if len(earlier) > 0 {
		lines = mergeKBestLines(lines, earlier, labels, k)
	}
	_, nwk, _ := splitKBestLine(lines[0])
	if err := atomicfile.Write(filepath.Join(dir, MapFile), []byte(nwk+"\n")); err != nil {
		return 0, fmt.Errorf("run --method em: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, KBestFile), []byte(strings.Join(lines, ""))); err != nil {
		return 0, fmt.Errorf("run --method em: %w", err)
	}
	return len(lines), nil
}

// kbestLine is a parsed line of kbest.nwk: the value it is ranked by,
// whether its Laplace correction is unavailable, and its tree.
type kbestLine struct {
	line      string
	bound     float64
	noLaplace bool
	newick    string
}

// splitKBestLine splits a line of kbest.nwk ("[bound=L][...] NEWICK\n")
// into its comments and its Newick tree (without the newline); ok is false
// for a line of another form.
func splitKBestLine(line string) (comments, newick string, ok bool) {
	rest := line
	for strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", "", false
		}
		rest = rest[end+1:]
	}
	if !strings.HasPrefix(rest, " ") || !strings.HasPrefix(line, "[bound=") {
		return "", "", false
	}
	return line[:len(line)-len(rest)], strings.TrimSpace(rest), true
}

// parseKBestLine parses a line of kbest.nwk; ok is false for a line of
// another form.
func parseKBestLine(line string) (kbestLine, bool) {
	comments, nwk, ok := splitKBestLine(line)
	if !ok || nwk == "" {
		return kbestLine{}, false
	}
	v, _, _ := strings.Cut(strings.TrimPrefix(comments, "[bound="), "]")
	b, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(b) {
		return kbestLine{}, false
	}
	return kbestLine{line: comments + " " + nwk + "\n", bound: b, noLaplace: strings.Contains(comments, "laplace_correction=unavailable]"), newick: nwk}, true
}

// mergeKBestLines merges the lines of kbest.nwk of the current list
// (current) with those an earlier session wrote (earlier; lines that do
// not parse are left out): the K-best list's order (a tree without the
// Laplace correction after every tree with it, then by value, a current
// line before an earlier one of the same value), each topology once (its
// topologyKey, the leaves matched to rows by labels as pydt.ParseNewick
// does; two refits of one topology differ in their times, and the better
// ranked is kept, as insertKBest keeps it), at most k lines. A run with no
// checkpoint that ResumeEM starts again refits the same starts in the same
// order, so the earlier session's lines are those its refits reach again;
// until they do, they stay on disk.
func mergeKBestLines(current, earlier, labels []string, k int) []string {
	var all []kbestLine
	for g, group := range [][]string{current, earlier} {
		for _, l := range group {
			p, ok := parseKBestLine(l)
			if !ok && g == 0 {
				// Never (the lines are kbestLines'), but if it happens
				// nothing is ranked and nothing dropped: the earlier
				// session's trees stay after the current ones.
				return append(slices.Clone(current), earlier...)
			}
			if !ok {
				continue
			}
			all = append(all, p)
		}
	}
	slices.SortStableFunc(all, func(a, b kbestLine) int {
		if a.noLaplace != b.noLaplace {
			if a.noLaplace {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.bound, a.bound)
	})
	out := make([]string, 0, min(k, len(all)))
	seen := map[string]bool{}
	for _, p := range all {
		if len(out) == k {
			break
		}
		// A tree that does not parse as one of the data's rows (a file
		// edited by hand) is its own topology, keyed by its text.
		key := "text " + p.newick
		if tr, err := pydt.ParseNewick(p.newick, labels); err == nil {
			key = topologyKey(tr)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p.line)
	}
	return out
}

// kbestLines are the lines of kbest.nwk for list.
func kbestLines(list []EMTree, timesIntegrated bool) []string {
	var lines []string
	for _, t := range list {
		var sb strings.Builder
		// "bound=" is the value the list ranks by (its name from before
		// the Laplace correction, kept for readers of the file); with the
		// correction its parts follow in a second comment.
		switch {
		case t.NoLaplace:
			fmt.Fprintf(&sb, "[bound=%.10g][em_bound=%.10g laplace_correction=unavailable]", t.Bound, t.EMBound)
		case timesIntegrated:
			fmt.Fprintf(&sb, "[bound=%.10g][em_bound=%.10g laplace_correction=%.10g]", t.Bound, t.EMBound, t.Laplace)
		default:
			fmt.Fprintf(&sb, "[bound=%.10g]", t.Bound)
		}
		// Where the tree's line of descent began (summary.json's
		// kbest_estimates: start, start_index, round).
		if t.Start != "" {
			fmt.Fprintf(&sb, "[start=%s %d round=%d]", t.Start, t.StartIndex, t.Round)
		}
		fmt.Fprintf(&sb, " %s\n", t.Tree.Newick())
		lines = append(lines, sb.String())
	}
	return lines
}

// columnVariance is the average over columns of x's variance (NaN
// entries skipped), or 1 when it is not positive and finite.
func columnVariance(x []float64, n, d int) float64 {
	return averageVariance(columnVariances(x, n, d))
}

// averageVariance is the average of the column variances vs (those of
// columnVariances) but the NaNs of columns with fewer than two values, or 1
// when it is not positive and finite.
func averageVariance(vs []float64) float64 {
	var sum float64
	cols := 0
	for _, v := range vs {
		if !math.IsNaN(v) {
			sum += v
			cols++
		}
	}
	if v := sum / float64(cols); cols > 0 && v > 0 && !math.IsInf(v, 1) {
		return v
	}
	return 1
}

// columnVariances returns the sample variance of each column of x (NaN
// entries skipped), NaN for a column with fewer than two values: that of
// diagnostics.MeanVar, two passes with the rounding error of the mean
// corrected, so that a column with a large mean does not lose its
// variance to cancellation as Σx² − k·mean² does.
func columnVariances(x []float64, n, d int) []float64 {
	vs := make([]float64, d)
	col := make([]float64, 0, n)
	for j := range d {
		col = observedColumn(col[:0], x, n, d, j)
		_, vs[j] = diagnostics.MeanVar(col)
	}
	return vs
}

// initOptions are the options of the sequential construction of an
// initial tree at variance factor f: the diffusion variance f·v0, v0 the
// average column variance (averageVariance); with a variance per
// dimension, f times each column's own variance cols[j] (columnVariances,
// computed once for every factor; v0 for a column whose variance is not
// positive and finite), so that each column is compared on its own scale.
func (p *EMPlan) initOptions(f float64, cols []float64, v0 float64) em.InitOptions {
	o := p.Opt
	io := em.InitOptions{C: o.C, Variance: f * v0, Alpha: o.Alpha, Beta: o.Beta, Done: p.done(), Margin: p.margin}
	if o.Variances != nil {
		io.Variances = make([]float64, len(cols))
		for j, v := range cols {
			if !(v > 0) || math.IsInf(v, 1) {
				v = v0
			}
			io.Variances[j] = f * v
		}
	}
	return io
}

// wasWere is "was" for one, "were" otherwise ("1 of the 15 initial trees
// failed to fit and was dropped").
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
