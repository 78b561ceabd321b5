package inference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pydtlang/pydtlang/internal/atomicfile"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// This file is the EM run's checkpoint (checkpoint.json of an EM run
// directory) and ResumeEM, which continues a stopped EM run from it
// exactly as if it had not stopped.

// emCheckpointEvery is the least wall time between two checkpoints of an
// EM run after its rounds (one is always written after the initial trees
// and at the end).
var emCheckpointEvery = 10 * time.Second

// emCheckpoint is the checkpoint.json of an EM run: the search's state
// after its initial trees or a completed round (emSearch).
type emCheckpoint struct {
	// Version is EMCheckpointVersion; Method is MethodEM.
	Version int    `json:"version"`
	Method  string `json:"method"`
	// Rounds is the rounds done, Stale those since the last new best.
	Rounds int `json:"rounds"`
	Stale  int `json:"rounds_without_improvement"`
	// Wall is the wall time spent, in seconds.
	Wall float64 `json:"wall_time_seconds"`
	// RNG is the search's PCG state (rand.PCG.MarshalBinary).
	RNG []byte `json:"rng"`
	// K is the length of the K-best list.
	K int `json:"k"`
	// Trees is the K-best list, best first.
	Trees      []emTreeState `json:"trees"`
	BoundTrace []float64     `json:"bound_trace"`
	BoundTime  []float64     `json:"bound_time_seconds"`
	// The counts and first errors of failed fits (EMResult).
	Fits          int    `json:"candidate_fits"`
	FailedFits    int    `json:"failed_fits"`
	FirstFail     string `json:"first_failure,omitempty"`
	Initial       int    `json:"initial_trees"`
	InitialFailed int    `json:"initial_failed"`
	InitialErr    string `json:"initial_failure,omitempty"`
	Large         bool   `json:"large_data,omitempty"`
	// TimesIntegrated is emSearch.laplace: the trees are ranked with the
	// Laplace correction for their times (false in checkpoints written
	// before it, whose runs go on without it).
	TimesIntegrated bool `json:"times_integrated,omitempty"`
	// AlphaBeta is where the search's α and β came from (EMPlan.holdAB);
	// absent in checkpoints written before the subsample estimate, whose
	// runs go on fitting them per tree.
	AlphaBeta *ABEstimate `json:"alpha_beta,omitempty"`
	// LaplaceFallbacks is emSearch.laplaceFallbacks (absent in older
	// checkpoints).
	LaplaceFallbacks []LaplaceFallback `json:"laplace_fallbacks,omitempty"`
}

// emTreeState is a tree of the K-best list in a checkpoint: the tree
// exactly (pydt.Tree.MarshalJSON), its bound and hyperparameters, and for
// an EP fit the leaf evidence it ended with.
type emTreeState struct {
	Tree    *pydt.Tree `json:"tree"`
	Bound   float64    `json:"bound"`
	EMBound float64    `json:"em_bound"`
	Laplace float64    `json:"laplace_correction"`
	// NoLaplace is EMTree.NoLaplace (absent in older checkpoints).
	NoLaplace bool      `json:"laplace_unavailable,omitempty"`
	Hyper     emHyper   `json:"hyperparameters"`
	Evidence  []float64 `json:"evidence,omitempty"`
	// Start, StartIndex and Round are EMTree's (absent in older
	// checkpoints).
	Start      string `json:"start,omitempty"`
	StartIndex int    `json:"start_index,omitempty"`
	Round      int    `json:"round,omitempty"`
}

// checkpoint writes the state s to dir's checkpoint.json, atomically.
func (p *EMPlan) checkpoint(dir string, s *emSearch) error {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return fmt.Errorf("run --method em: checkpoint: %w", err)
	}
	cp := emCheckpoint{Version: EMCheckpointVersion, Method: MethodEM, Rounds: s.round, Stale: s.stale, Wall: time.Since(s.start).Seconds(),
		RNG: rng, K: s.k, BoundTrace: s.boundTrace, BoundTime: s.boundTime, Fits: s.fits, FailedFits: s.failedFits,
		Initial: s.initial, InitialFailed: s.initialFailed, Large: s.large, TimesIntegrated: s.laplace, AlphaBeta: p.ab,
		LaplaceFallbacks: s.laplaceFallbacks}
	if s.firstFail != nil {
		cp.FirstFail = s.firstFail.Error()
	}
	if s.initialErr != nil {
		cp.InitialErr = s.initialErr.Error()
	}
	for _, t := range s.list {
		cp.Trees = append(cp.Trees, emTreeState{Tree: t.Tree, Bound: t.Bound, EMBound: t.EMBound, Laplace: t.Laplace, NoLaplace: t.NoLaplace, Hyper: t.hyper, Evidence: t.ev,
			Start: t.Start, StartIndex: t.StartIndex, Round: t.Round})
	}
	b, err := json.Marshal(cp) // compact: the trees are long arrays
	if err != nil {
		return fmt.Errorf("run --method em: checkpoint: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, CheckpointFile), append(b, '\n')); err != nil {
		return fmt.Errorf("run --method em: checkpoint: %w", err)
	}
	return nil
}

// readEMCheckpoint reads the checkpoint of the EM run in dir.
func readEMCheckpoint(dir string) (*emCheckpoint, error) {
	path := filepath.Join(dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cp emCheckpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkVersion(path, &cp.Version, EMCheckpointVersion); err != nil {
		return nil, err
	}
	if cp.Method != MethodEM {
		return nil, fmt.Errorf("%s is not an EM run's checkpoint (method %q)", path, cp.Method)
	}
	return &cp, nil
}

// restore rebuilds the search's state from cp, read from path, checking it
// against the plan's model. A damaged checkpoint (counts out of range, more
// trees than K, values that are not finite or not in order, impossible
// hyperparameters) is an error naming path and the field.
func (p *EMPlan) restore(cp *emCheckpoint, path string) (*emSearch, error) {
	b := p.m.Trees[0]
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: the file is damaged", path, fmt.Sprintf(format, args...))
	}
	switch {
	case cp.K < 1:
		return nil, damaged("k is %d", cp.K)
	case len(cp.Trees) == 0 || len(cp.Trees) > cp.K:
		return nil, damaged("%d trees for k = %d", len(cp.Trees), cp.K)
	case cp.Rounds < 0 || cp.Stale < 0 || cp.Stale > cp.Rounds:
		return nil, damaged("rounds %d, rounds_without_improvement %d", cp.Rounds, cp.Stale)
	case len(cp.BoundTrace) != cp.Rounds+1 || len(cp.BoundTime) != cp.Rounds+1:
		return nil, damaged("%d bound_trace and %d bound_time_seconds entries for %d rounds", len(cp.BoundTrace), len(cp.BoundTime), cp.Rounds)
	case cp.Fits < 0 || cp.FailedFits < 0 || cp.FailedFits > cp.Fits:
		return nil, damaged("candidate_fits %d, failed_fits %d", cp.Fits, cp.FailedFits)
	case cp.Initial < 0 || cp.InitialFailed < 0 || cp.InitialFailed > cp.Initial:
		return nil, damaged("initial_trees %d, initial_failed %d", cp.Initial, cp.InitialFailed)
	case !finite(cp.Wall) || cp.Wall < 0:
		return nil, damaged("wall_time_seconds is %v", cp.Wall)
	}
	for i, v := range cp.BoundTrace {
		if !finite(v) {
			return nil, damaged("bound_trace[%d] is %v", i, v)
		}
		if !finite(cp.BoundTime[i]) || cp.BoundTime[i] < 0 {
			return nil, damaged("bound_time_seconds[%d] is %v", i, cp.BoundTime[i])
		}
	}
	s := &emSearch{round: cp.Rounds, stale: cp.Stale, k: cp.K, boundTrace: cp.BoundTrace, boundTime: cp.BoundTime,
		fits: cp.Fits, failedFits: cp.FailedFits, initial: cp.Initial, initialFailed: cp.InitialFailed, large: cp.Large, laplace: cp.TimesIntegrated,
		laplaceFallbacks: cp.LaplaceFallbacks, start: time.Now().Add(-time.Duration(cp.Wall * float64(time.Second)))}
	if cp.FirstFail != "" {
		s.firstFail = errors.New(cp.FirstFail)
	}
	if cp.InitialErr != "" {
		s.initialErr = errors.New(cp.InitialErr)
	}
	s.pcg = &rand.PCG{}
	if err := s.pcg.UnmarshalBinary(cp.RNG); err != nil {
		return nil, damaged("rng: %v", err)
	}
	s.rng = rand.New(s.pcg)
	ab := cp.AlphaBeta
	if ab == nil {
		ab = &ABEstimate{Source: ABPerTree, Alpha: p.Opt.Alpha, Beta: p.Opt.Beta}
		if !p.Opt.LearnAlpha && !p.Opt.LearnBeta {
			ab.Source = ABFixed
		}
	}
	if ab.Source == ABSubsample && p.Alpha == nil && p.Beta == nil {
		return nil, fmt.Errorf("%s: alpha_beta: alpha and beta were estimated from a subsample, but the model learns neither: the file is not this model's", path)
	}
	if err := pydt.CheckPitmanYor(ab.Alpha, ab.Beta); err != nil || !finite(ab.Alpha) || !finite(ab.Beta) {
		return nil, damaged("alpha_beta: alpha %v, beta %v", ab.Alpha, ab.Beta)
	}
	if ab.Variance != 0 && (!(ab.Variance > 0) || !finite(ab.Variance) || p.tilted == nil || p.Prec == nil) {
		// Held only for EP data with a learned precision (estimateAB).
		return nil, damaged("alpha_beta: variance %v (held only for EP data with a learned precision)", ab.Variance)
	}
	if ab.Variances != nil {
		if p.tilted == nil || p.PrecDims == nil || len(ab.Variances) != p.m.D {
			return nil, damaged("alpha_beta: %d variances (held only for EP data with learned precisions per dimension, one per column)", len(ab.Variances))
		}
		for k, v := range ab.Variances {
			if !(v > 0) || !finite(v) {
				return nil, damaged("alpha_beta: variances[%d] is %v", k, v)
			}
		}
	}
	p.holdAB(ab)
	for k, ts := range cp.Trees {
		field := fmt.Sprintf("trees[%d]", k)
		if ts.Tree == nil {
			return nil, damaged("%s.tree is missing", field)
		}
		if err := checkTree(b, ts.Tree); err != nil {
			return nil, fmt.Errorf("%s: %s.tree: %w", path, field, err)
		}
		if (p.tilted != nil) != (ts.Evidence != nil) || ts.Evidence != nil && len(ts.Evidence) != 2*b.N*b.D {
			return nil, damaged("%s.evidence has %d values; the model needs %d", field, len(ts.Evidence), 2*b.N*b.D)
		}
		for i, v := range ts.Evidence {
			if !finite(v) {
				return nil, damaged("%s.evidence[%d] is %v", field, i, v)
			}
		}
		ts.Tree.Labels = p.m.Labels
		if !cp.TimesIntegrated {
			ts.EMBound, ts.Laplace = ts.Bound, 0
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"bound", ts.Bound}, {"em_bound", ts.EMBound}, {"laplace_correction", ts.Laplace}} {
			if !finite(f.v) {
				return nil, damaged("%s.%s is %v", field, f.name, f.v)
			}
		}
		if ts.EMBound+ts.Laplace != ts.Bound {
			return nil, damaged("%s: value %v is not its EM bound %v plus its Laplace correction %v", field, ts.Bound, ts.EMBound, ts.Laplace)
		}
		if ts.NoLaplace && (!cp.TimesIntegrated || ts.Laplace != 0) {
			return nil, damaged("%s: laplace_unavailable with a correction of %v (times_integrated %v)", field, ts.Laplace, cp.TimesIntegrated)
		}
		if err := checkHyper(ts.Hyper, p.Opt.Variances != nil, p.Opt.PrecPriors != nil, p.m.D); err != nil {
			return nil, damaged("%s.hyperparameters: %v", field, err)
		}
		if err := checkNoise(ts.Hyper, p.Opt.Noise); err != nil {
			return nil, damaged("%s.hyperparameters: %v", field, err)
		}
		if err := checkHeldVariance(ts.Hyper, ab.Variance, ab.Variances, p.Prec != nil); err != nil {
			return nil, damaged("%s.hyperparameters: %v", field, err)
		}
		if ts.Round < 0 || ts.Round > cp.Rounds || ts.StartIndex < 0 {
			return nil, damaged("%s: round %d (of %d), start_index %d", field, ts.Round, cp.Rounds, ts.StartIndex)
		}
		t := EMTree{Tree: ts.Tree, Bound: ts.Bound, EMBound: ts.EMBound, Laplace: ts.Laplace, NoLaplace: ts.NoLaplace, hyper: ts.Hyper, ev: ts.Evidence, key: topologyKey(ts.Tree),
			Start: ts.Start, StartIndex: ts.StartIndex, Round: ts.Round}
		if k > 0 && t.ranksAbove(s.list[k-1]) {
			return nil, damaged("%s ranks above trees[%d] (the list is best first)", field, k-1)
		}
		s.list = append(s.list, t)
	}
	if last := cp.BoundTrace[cp.Rounds]; last != s.list[0].Bound {
		return nil, damaged("bound_trace[%d] = %v is not the best tree's value %v", cp.Rounds, last, s.list[0].Bound)
	}
	return s, nil
}

// checkHyper checks the hyperparameters of a tree read from a checkpoint:
// c and the variance positive and finite (with a variance per dimension,
// perDim, d variances, and d q(τ_d) when they are learned, learnDims),
// (α, β) a Pitman-Yor pair, q(c), q(τ) and the q(τ_d) proper Gamma
// distributions.
func checkHyper(h emHyper, perDim, learnDims bool, d int) error {
	if !finite(h.C) || h.C <= 0 {
		return fmt.Errorf("c is %v", h.C)
	}
	wantQ := 0
	if learnDims {
		wantQ = d
	}
	if perDim != (h.Variances != nil) || perDim && len(h.Variances) != d || len(h.QPrecs) != wantQ {
		return fmt.Errorf("variances has %d values, q_precisions %d, for a model with %d columns and a variance per dimension %v", len(h.Variances), len(h.QPrecs), d, perDim)
	}
	if h.Variances != nil {
		for k, v := range h.Variances {
			if !finite(v) || v <= 0 {
				return fmt.Errorf("variances[%d] is %v", k, v)
			}
		}
	} else if !finite(h.Variance) || h.Variance <= 0 {
		return fmt.Errorf("variance is %v", h.Variance)
	}
	if !finite(h.Alpha) || !finite(h.Beta) {
		return fmt.Errorf("alpha %v, beta %v", h.Alpha, h.Beta)
	}
	if err := pydt.CheckPitmanYor(h.Alpha, h.Beta); err != nil {
		return err
	}
	for _, g := range []struct {
		name string
		q    *em.Gamma
	}{{"q_c", h.QC}, {"q_precision", h.QPrec}} {
		if g.q != nil && (!finite(g.q.Shape) || !finite(g.q.Rate) || g.q.Shape <= 0 || g.q.Rate <= 0) {
			return fmt.Errorf("%s has shape %v, rate %v", g.name, g.q.Shape, g.q.Rate)
		}
	}
	for k, q := range h.QPrecs {
		if !finite(q.Shape) || !finite(q.Rate) || q.Shape <= 0 || q.Rate <= 0 {
			return fmt.Errorf("q_precisions[%d] has shape %v, rate %v", k, q.Shape, q.Rate)
		}
	}
	if h.Iters < 0 {
		return fmt.Errorf("em_iterations is %d", h.Iters)
	}
	return nil
}

// checkNoise checks the latent noise of a tree read from a checkpoint: a
// model with one (ln not nil) has one E[θ_g] and one proper q(θ_g) per noise
// precision, E[θ_g] the mean of q(θ_g); a model without has none.
func checkNoise(h emHyper, ln *em.LeafNoise) error {
	g := 0
	if ln != nil {
		g = len(ln.Priors)
	}
	if len(h.Noise) != g || len(h.QNoise) != g {
		return fmt.Errorf("noise_precisions has %d values, q_noise %d, for a model with %d noise precisions", len(h.Noise), len(h.QNoise), g)
	}
	for k, q := range h.QNoise {
		if !finite(q.Shape) || !finite(q.Rate) || q.Shape <= 0 || q.Rate <= 0 {
			return fmt.Errorf("q_noise[%d] has shape %v, rate %v", k, q.Shape, q.Rate)
		}
		if m := h.Noise[k]; !(math.Abs(m-q.Mean()) <= 1e-12*q.Mean()) {
			return fmt.Errorf("noise_precisions[%d] is %v, not the mean %v of q_noise[%d]", k, m, q.Mean(), k)
		}
	}
	return nil
}

// checkHeldVariance checks a tree's shared diffusion variance against the
// checkpoint's alpha_beta: with σ² held (held > 0, EP data) every fit was
// made at it, so the tree has that variance and no q(1/σ²); otherwise a
// model that learns the shared precision (learned) has q(1/σ²) in every
// fit, and one that does not has none. Likewise with the variances per
// dimension held (heldDims, EP data; checkHyper has checked their number
// and that there is no q(1/σ²_d)), the tree has those. A tree fitted
// otherwise would seed the search's candidates (EMPlan.newFit starts them
// at their parent's variances) and summary.json at other variances than
// the ones held.
func checkHeldVariance(h emHyper, held float64, heldDims []float64, learned bool) error {
	if heldDims != nil {
		if len(h.Variances) != len(heldDims) {
			return fmt.Errorf("variances has %d values, not the %d held (alpha_beta.variances)", len(h.Variances), len(heldDims))
		}
		for k, v := range heldDims {
			if !(math.Abs(h.Variances[k]-v) <= 1e-9*v) {
				return fmt.Errorf("variances[%d] %v, not the held %v (alpha_beta.variances)", k, h.Variances[k], v)
			}
		}
	}
	switch {
	case held > 0 && h.QPrec != nil:
		return fmt.Errorf("q_precision present, but the variance is held at %v (alpha_beta.variance)", held)
	case held > 0 && !(math.Abs(h.Variance-held) <= 1e-9*held):
		return fmt.Errorf("variance %v, not the held %v (alpha_beta.variance)", h.Variance, held)
	case held == 0 && learned != (h.QPrec != nil):
		return fmt.Errorf("q_precision present %v, for a model that learns the precision %v", h.QPrec != nil, learned)
	}
	return nil
}

// ResumeEM continues the EM run (run --method em) in dir from its last
// checkpoint, with the model it was started with (LoadRun rebuilds it
// from run.json), as if it had never stopped: map.nwk, kbest.nwk and
// summary.json are then those of an uninterrupted run, bit for bit, but
// for the wall times (bound_time_seconds, wall_time_seconds), when the
// run has no time limit. A run with --time keeps its budget: the time
// spent before counts against it.
//
// cfg gives the new number of rounds (Rounds; 0 keeps run.json's, which
// is then updated: an extended run goes on to it) and the Progress and
// Log callbacks; every other setting is run.json's. A run stopped before
// its first checkpoint (before its initial trees were fitted) starts
// again with the settings of run.json. The model's inputs and
// standardization must be the run's, as for Resume.
func ResumeEM(ctx context.Context, m *Model, dir string, cfg EMConfig) (*EMResult, error) {
	if cfg.Rounds < 0 {
		return nil, fmt.Errorf("resume: %d rounds", cfg.Rounds)
	}
	lock, ri, err := openResume(dir, m, func(ri *RunInfo) error {
		if !ri.IsEM() || ri.EM == nil {
			return fmt.Errorf("%s does not hold an EM run", dir)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer lock.release()
	run := ri.emConfig(dir)
	run.Progress, run.Log, run.failFit, run.laplace = cfg.Progress, cfg.Log, cfg.failFit, cfg.laplace
	extend := cfg.Rounds > 0 && cfg.Rounds != run.Rounds
	if extend {
		run.Rounds = cfg.Rounds
	}
	if len(ri.InitTrees) > 0 {
		tr, err := m.ReadTree(filepath.Join(dir, InitTreeFile), "")
		if err != nil {
			return nil, fmt.Errorf("resume: the run's initial tree: %w", err)
		}
		run.InitTree = tr
	}
	plan, err := PlanEM(m)
	if err != nil {
		return nil, err
	}
	cp, err := readEMCheckpoint(dir)
	var s *emSearch
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Stopped before its first checkpoint: start again, keeping the
		// trees the earlier session wrote until its starts are refitted
		// (a second stop must not leave worse trees on disk).
		b, err := os.ReadFile(filepath.Join(dir, KBestFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("resume: %w", err)
		}
		if len(b) > 0 {
			run.earlier = strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
		}
	case err != nil:
		return nil, fmt.Errorf("resume: %w", err)
	default:
		if cp.Rounds > run.Rounds {
			return nil, fmt.Errorf("resume: the run has done %d rounds, more than the %d asked for", cp.Rounds, run.Rounds)
		}
		if s, err = plan.restore(cp, filepath.Join(dir, CheckpointFile)); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	if extend || ri.Version < RunVersion {
		inputs := m.Inputs
		if inputs == nil {
			inputs = ri.Inputs
		}
		if err := writeEMRunFile(m, run, inputs); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	if s == nil {
		if s, err = plan.initial(ctx, run); err != nil {
			return nil, err
		}
	}
	return plan.rounds(ctx, run, s)
}

// emConfig returns the EMConfig of the EM run in dir, from its run.json.
func (ri *RunInfo) emConfig(dir string) EMConfig {
	e := ri.EM
	return EMConfig{Rounds: e.Rounds, K: e.K, Patience: e.Patience, EMIters: e.EMIters, Seed: ri.Seed, Out: dir,
		Time: time.Duration(e.TimeSeconds * float64(time.Second)), ABRows: e.ABRows, ABSweeps: e.ABSweeps, Margin: e.Margin}.withDefaults()
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
