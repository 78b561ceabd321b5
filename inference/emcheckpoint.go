package inference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/pydtlang/pydtlang/internal/atomicfile"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
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
}

// emTreeState is a tree of the K-best list in a checkpoint: the tree
// exactly (pydt.Tree.MarshalJSON), its bound and hyperparameters, and for
// an EP fit the leaf evidence it ended with.
type emTreeState struct {
	Tree     *pydt.Tree `json:"tree"`
	Bound    float64    `json:"bound"`
	EMBound  float64    `json:"em_bound"`
	Laplace  float64    `json:"laplace_correction"`
	Hyper    emHyper    `json:"hyperparameters"`
	Evidence []float64  `json:"evidence,omitempty"`
}

// checkpoint writes the state s to dir's checkpoint.json, atomically.
func (p *EMPlan) checkpoint(dir string, s *emSearch) error {
	rng, err := s.pcg.MarshalBinary()
	if err != nil {
		return fmt.Errorf("run --method em: checkpoint: %w", err)
	}
	cp := emCheckpoint{Version: EMCheckpointVersion, Method: MethodEM, Rounds: s.round, Stale: s.stale, Wall: time.Since(s.start).Seconds(),
		RNG: rng, K: s.k, BoundTrace: s.boundTrace, BoundTime: s.boundTime, Fits: s.fits, FailedFits: s.failedFits,
		Initial: s.initial, InitialFailed: s.initialFailed, Large: s.large, TimesIntegrated: s.laplace, AlphaBeta: p.ab}
	if s.firstFail != nil {
		cp.FirstFail = s.firstFail.Error()
	}
	if s.initialErr != nil {
		cp.InitialErr = s.initialErr.Error()
	}
	for _, t := range s.list {
		cp.Trees = append(cp.Trees, emTreeState{Tree: t.Tree, Bound: t.Bound, EMBound: t.EMBound, Laplace: t.Laplace, Hyper: t.hyper, Evidence: t.ev})
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

// restore rebuilds the search's state from cp, checking it against the
// plan's model.
func (p *EMPlan) restore(cp *emCheckpoint) (*emSearch, error) {
	b := p.m.Trees[0]
	if len(cp.Trees) == 0 || cp.K < 1 || len(cp.Trees) > cp.K || len(cp.BoundTrace) != cp.Rounds+1 || len(cp.BoundTime) != cp.Rounds+1 {
		return nil, fmt.Errorf("checkpoint: %d trees, K %d, %d bounds for %d rounds: the file is damaged", len(cp.Trees), cp.K, len(cp.BoundTrace), cp.Rounds)
	}
	s := &emSearch{round: cp.Rounds, stale: cp.Stale, k: cp.K, boundTrace: cp.BoundTrace, boundTime: cp.BoundTime,
		fits: cp.Fits, failedFits: cp.FailedFits, initial: cp.Initial, initialFailed: cp.InitialFailed, large: cp.Large, laplace: cp.TimesIntegrated,
		start: time.Now().Add(-time.Duration(cp.Wall * float64(time.Second)))}
	if cp.FirstFail != "" {
		s.firstFail = errors.New(cp.FirstFail)
	}
	if cp.InitialErr != "" {
		s.initialErr = errors.New(cp.InitialErr)
	}
	s.pcg = &rand.PCG{}
	if err := s.pcg.UnmarshalBinary(cp.RNG); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
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
		return nil, errors.New("checkpoint: alpha and beta were estimated from a subsample, but the model learns neither: the file is not this model's")
	}
	p.holdAB(ab)
	for k, ts := range cp.Trees {
		if ts.Tree == nil {
			return nil, fmt.Errorf("checkpoint: tree %d is missing", k+1)
		}
		if err := ts.Tree.MatchRows(b.N, b.Labels(), "the rows of "+b.Leaves.Name); err != nil {
			return nil, fmt.Errorf("checkpoint: tree %d: %w", k+1, err)
		}
		if (p.tilted != nil) != (ts.Evidence != nil) || ts.Evidence != nil && len(ts.Evidence) != 2*b.N*b.D {
			return nil, fmt.Errorf("checkpoint: tree %d has %d leaf evidence values; the model needs %d", k+1, len(ts.Evidence), 2*b.N*b.D)
		}
		ts.Tree.Labels = p.m.Labels
		if !cp.TimesIntegrated {
			ts.EMBound, ts.Laplace = ts.Bound, 0
		}
		if ts.EMBound+ts.Laplace != ts.Bound {
			return nil, fmt.Errorf("checkpoint: tree %d: value %v is not its EM bound %v plus its Laplace correction %v: the file is damaged", k+1, ts.Bound, ts.EMBound, ts.Laplace)
		}
		s.list = append(s.list, EMTree{Tree: ts.Tree, Bound: ts.Bound, EMBound: ts.EMBound, Laplace: ts.Laplace, hyper: ts.Hyper, ev: ts.Evidence, key: topologyKey(ts.Tree)})
	}
	return s, nil
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
	lock, ri, err := openResume(dir)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	if !ri.IsEM() || ri.EM == nil {
		return nil, fmt.Errorf("resume: %s does not hold an EM run", dir)
	}
	if err := sameInputs(ri.Inputs, m.Inputs); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if err := sameScaling(m, ri.Standardize); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	run := ri.emConfig(dir)
	run.Progress, run.Log, run.failFit = cfg.Progress, cfg.Log, cfg.failFit
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
		// Stopped before its first checkpoint: start again.
	case err != nil:
		return nil, fmt.Errorf("resume: %w", err)
	default:
		if cp.Rounds > run.Rounds {
			return nil, fmt.Errorf("resume: the run has done %d rounds, more than the %d asked for", cp.Rounds, run.Rounds)
		}
		if s, err = plan.restore(cp); err != nil {
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
		Time: time.Duration(e.TimeSeconds * float64(time.Second)), ABRows: e.ABRows, ABSweeps: e.ABSweeps}.withDefaults()
}
