package inference

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The versions of run.json and checkpoint.json that this package writes.
// Each file carries its version in a "version" field; a file without one
// is version 1 (written before the field existed), which is still read.
// A file of a later version than these is refused: it was written by a
// newer pydtlang. docs/architecture.md ("Runs and files") describes the
// versions.
const (
	RunVersion        = 5
	CheckpointVersion = 2
	// EMCheckpointVersion is the version of an EM run's checkpoint.json
	// (ResumeEM), a file of its own format.
	EMCheckpointVersion = 1
)

// The methods a run directory can hold (RunInfo.Method).
const (
	// MethodMCMC is a run of Run: chains of posterior samples, with
	// traces, kept trees and their summaries.
	MethodMCMC = "mcmc"
	// MethodEM is a run of RunEM: greedy Bayesian EM with a K-best
	// search, whose outputs are map.nwk (the best tree by its bound),
	// kbest.nwk and summary.json.
	MethodEM = "em"
)

// RunInfo is run.json: a run's settings and what it was loaded from, read
// by Resume to continue the run and by LoadRun to rebuild its model.
type RunInfo struct {
	// Version is the file's format version (RunVersion when written by
	// this package; 1 for a file without the field).
	Version int `json:"version"`
	// The run's Config: Burn 0 means no burn-in (Config.Burn -1).
	// Iters is absent for an EM run (version 5; EM.Rounds is its number
	// of rounds).
	Iters           int    `json:"iterations,omitempty"`
	Burn            int    `json:"burn"`
	Thin            int    `json:"thin"`
	TreeThin        int    `json:"tree_thin,omitempty"`
	Chains          int    `json:"chains"`
	CheckpointEvery int    `json:"checkpoint_every"`
	Seed            uint64 `json:"seed"`
	// ChainOffset is Config.ChainOffset (version 3; 0 before): the run
	// holds chains ChainOffset+1 .. ChainOffset+Chains.
	ChainOffset int  `json:"chain_offset,omitempty"`
	Impute      bool `json:"impute"`
	Coclust     bool `json:"coclust,omitempty"`
	AllowStuck  bool `json:"allow_stuck,omitempty"`
	// Inputs are the files the model was loaded from (Model.Inputs), with
	// their SHA-256; nil for a model built otherwise. Version 1 kept them
	// in a "meta" object of the command line's own (model, data, set,
	// draw, labels and sha256 by absolute path), read into Inputs here.
	Inputs *Inputs `json:"inputs,omitempty"`
	// Standardize is the model's Scaling when its data were standardized.
	Standardize *Scaling `json:"standardize,omitempty"`
	// Method is how the run was made (version 4): MethodMCMC, or
	// MethodEM. Empty, as in every file before version 4, means
	// MethodMCMC.
	Method string `json:"method,omitempty"`
	// InitTrees are the variables of the PYDTs whose chains started from
	// a given tree (Config.InitTrees), kept in the run directory
	// (InitTreeFile); version 4.
	InitTrees []string `json:"init_trees,omitempty"`
	// EM holds the settings of an EM run (Method MethodEM), nil otherwise.
	// Its Rounds is the number of search rounds (version 4 also wrote it
	// as Iters).
	EM *EMSettings `json:"em,omitempty"`
	// LocalMoves is the number of local moves per leaf of the run's tree
	// sweeps (Config.LocalMoves; 0 for none). A run.json without it was
	// written before they were a setting, when they were off: such a run
	// resumes without them, as it was made.
	LocalMoves *float64 `json:"local_moves_per_leaf,omitempty"`
	// LocalGrid is Config.LocalGrid, the cells per edge of the local
	// moves' likelihood-informed proposal; absent (0) for the uniform
	// proposal, the only one before it was a setting.
	LocalGrid int `json:"local_grid,omitempty"`
}

// EMSettings are the settings of an EM run recorded in run.json: those of
// EMConfig that shape its result.
type EMSettings struct {
	Rounds   int `json:"rounds"`
	K        int `json:"k"`
	Patience int `json:"patience"`
	EMIters  int `json:"em_iterations"`
	// TimeSeconds is EMConfig.Time in seconds (0: no limit).
	TimeSeconds float64 `json:"time_seconds,omitempty"`
	// ABRows and ABSweeps are EMConfig's (absent before the subsample
	// estimate of α and β: the defaults).
	ABRows   int `json:"ab_rows,omitempty"`
	ABSweeps int `json:"ab_sweeps,omitempty"`
	// Margin is EMConfig.Margin (absent before it was a setting: the
	// default).
	Margin float64 `json:"margin,omitempty"`
}

// IsEM reports whether the run was made by RunEM.
func (ri *RunInfo) IsEM() bool { return ri.Method == MethodEM }

// Resumable returns an error when the run in dir cannot be continued by
// Resume: an EM run, which ResumeEM continues.
func (ri *RunInfo) Resumable(dir string) error {
	if ri.IsEM() {
		return fmt.Errorf("%s holds an EM run (run --method em), which ResumeEM continues, not Resume", dir)
	}
	return nil
}

// DefaultTree is the tree file that stands for the run when none is
// named: SummaryTreeFile for an MCMC run, MapFile (the best tree by its
// bound) for an EM run.
func (ri *RunInfo) DefaultTree() string {
	if ri.IsEM() {
		return MapFile
	}
	return SummaryTreeFile
}

// config returns the Config the run was started with, writing to dir.
func (ri *RunInfo) config(dir string) Config {
	cfg := Config{Iters: ri.Iters, Burn: ri.Burn, Thin: ri.Thin, TreeThin: ri.TreeThin, Chains: ri.Chains, CheckpointEvery: ri.CheckpointEvery,
		Seed: ri.Seed, ChainOffset: ri.ChainOffset, Impute: ri.Impute, Coclust: ri.Coclust, AllowStuck: ri.AllowStuck, Out: dir}
	if cfg.Burn == 0 {
		cfg.Burn = -1 // stored burn-in of 0 means none
	}
	cfg.LocalMoves = -1 // none, when run.json does not say
	if ri.LocalMoves != nil && *ri.LocalMoves != 0 {
		cfg.LocalMoves = *ri.LocalMoves
	}
	cfg.LocalGrid = ri.LocalGrid
	return cfg.withDefaults()
}

// runMetaV1 is the "meta" object of a version 1 run.json as the command
// line wrote it.
type runMetaV1 struct {
	Model  string            `json:"model"`
	Data   map[string]string `json:"data"`
	Set    []string          `json:"set"`
	Draw   int               `json:"draw"`
	Labels string            `json:"labels"`
	SHA256 map[string]string `json:"sha256"`
}

func (m *runMetaV1) inputs() *Inputs {
	if m.Model == "" {
		return nil
	}
	file := func(path string) File { return File{Path: path, SHA256: m.SHA256[path]} }
	in := &Inputs{Model: file(m.Model), Set: m.Set, Draw: m.Draw}
	for name, path := range m.Data {
		if in.Data == nil {
			in.Data = map[string]File{}
		}
		in.Data[name] = file(path)
	}
	if m.Labels != "" {
		f := file(m.Labels)
		in.Labels = &f
	}
	return in
}

// ReadRun reads the run.json of the run in dir, of any version this
// package reads.
func ReadRun(dir string) (*RunInfo, error) {
	path := filepath.Join(dir, RunFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var wire struct {
		RunInfo
		Meta json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ri := &wire.RunInfo
	if err := checkVersion(path, &ri.Version, RunVersion); err != nil {
		return nil, err
	}
	switch ri.Method {
	case "", MethodMCMC, MethodEM:
	default:
		return nil, fmt.Errorf("%s: unknown method %q (want %q or %q)", path, ri.Method, MethodMCMC, MethodEM)
	}
	if ri.Version == 1 && len(wire.Meta) > 0 {
		// Meta held whatever a tool stored; only the command line's
		// layout names the inputs.
		var meta runMetaV1
		if json.Unmarshal(wire.Meta, &meta) == nil {
			ri.Inputs = meta.inputs()
		}
	}
	return ri, nil
}

// checkVersion sets a missing version to 1 and refuses a version above
// newest.
func checkVersion(path string, v *int, newest int) error {
	switch {
	case *v == 0:
		*v = 1
	case *v < 0:
		return fmt.Errorf("%s has format version %d, which no pydtlang writes: the file is damaged", path, *v)
	case *v > newest:
		return fmt.Errorf("%s is of format version %d, and this pydtlang reads versions 1 to %d: it was written by a newer pydtlang; use that one",
			path, *v, newest)
	}
	return nil
}

// Checkpoint is checkpoint.json: everything needed to continue a run
// after its last checkpoint exactly as an uninterrupted run would.
type Checkpoint struct {
	// Version is the file's format version (CheckpointVersion when
	// written by this package; 1 for a file without the field).
	Version int `json:"version"`
	// Iteration is the sweeps done; Wall the seconds spent on them.
	Iteration int     `json:"iteration"`
	Wall      float64 `json:"wall_time_seconds"`
	// Sizes gives the size, at the checkpoint, of every file written as
	// the run goes; Resume cuts each back to it.
	Sizes map[string]int64 `json:"file_sizes"`
	// Best and BestS are the log joint, in t and in s, of the map.nwk
	// state, and BestTree its Newick.
	Best     float64  `json:"best_log_joint"`
	BestS    *float64 `json:"best_log_joint_s,omitempty"`
	BestTree string   `json:"best_tree"`
	// BestTrees holds, for a model with several PYDTs, the further
	// PYDTs' trees of that state by variable.
	BestTrees map[string]string `json:"best_trees,omitempty"`
	// Chains holds each chain's state.
	Chains []ChainState `json:"chains"`
}

// ChainState is the state of one chain in a checkpoint, stored by name so
// that it fits any model: the values of the latent variables, the tree of
// each PYDT, the auxiliary variables of each augmented likelihood.
type ChainState struct {
	// RNG is the chain's PCG state (rand.PCG.MarshalBinary).
	RNG []byte `json:"rng"`
	// Values holds every latent variable but the PYDT leaf locations,
	// by name.
	Values map[string][]float64 `json:"values"`
	// Trees holds the tree of each PYDT and its moves' counts, by the name
	// of the PYDT's variable (the leaf locations, X in X ~ PYDT(...)).
	Trees map[string]TreeState `json:"trees"`
	// Aux holds the auxiliary variables of each augmented likelihood, by
	// the name of the variable it observes (Y in Y[i, d] ~ Probit(...)).
	Aux map[string][]float64 `json:"aux,omitempty"`
	// Tuners holds the adapted slice widths, by variable name.
	Tuners map[string]TunerState `json:"tuners,omitempty"`
	// Ridge counts ridge moves proposed and accepted; Skipped the
	// conditional updates skipped for numerical reasons; Stall the
	// chain's current and longest runs of sweeps without a tree move.
	Ridge   [2]int `json:"ridge_moves"`
	Skipped int    `json:"skipped_updates"`
	Stall   [2]int `json:"stall_sweeps"`
	// Steps counts the proposals and acceptances of the other steps that
	// report them (Chain.Steps), by step name.
	Steps map[string][2]int `json:"step_moves,omitempty"`
}

// TreeState is a PYDT's tree in a checkpoint, with its moves' counts.
type TreeState struct {
	Tree  *pydt.Tree     `json:"tree"`
	Stats treemove.Stats `json:"move_stats"`
}

// TunerState is an adapted slice sampler in a checkpoint.
type TunerState struct {
	Width float64 `json:"width"`
	State []byte  `json:"state"`
}

// chainStateV1 is a chain in a version 1 checkpoint: one tree, the
// Probit auxiliaries as one array.
type chainStateV1 struct {
	RNG     []byte                `json:"rng"`
	Values  map[string][]float64  `json:"values"`
	Tree    *pydt.Tree            `json:"tree"`
	Aux     []float64             `json:"aux,omitempty"`
	Tuners  map[string]TunerState `json:"tuners,omitempty"`
	Stats   treemove.Stats        `json:"move_stats"`
	Ridge   [2]int                `json:"ridge_moves"`
	Skipped int                   `json:"skipped_updates"`
	Stall   [2]int                `json:"stall_sweeps"`
}

// ReadCheckpoint reads the checkpoint.json of the run in dir, of any
// version this package reads. A version 1 checkpoint names neither its
// tree nor its auxiliaries: m, the run's model, names them (its PYDT's
// variable, the variable its augmented likelihood observes); m may be nil
// for a checkpoint of a later version.
func ReadCheckpoint(dir string, m *Model) (*Checkpoint, error) {
	if m != nil {
		if err := m.needTree("reading a checkpoint"); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, CheckpointFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkVersion(path, &head.Version, CheckpointVersion); err != nil {
		return nil, err
	}
	if head.Version >= 2 {
		var cp Checkpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &cp, nil
	}
	if m == nil {
		return nil, fmt.Errorf("%s is of format version 1, which names neither its tree nor its auxiliary variables: read it with the run's model", path)
	}
	var v1 struct {
		Checkpoint
		Chains []chainStateV1 `json:"chains"`
	}
	if err := json.Unmarshal(b, &v1); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cp := v1.Checkpoint
	cp.Version = 1
	cp.Chains = nil
	for _, c := range v1.Chains {
		cs := ChainState{RNG: c.RNG, Values: c.Values, Tuners: c.Tuners, Ridge: c.Ridge, Skipped: c.Skipped, Stall: c.Stall,
			Trees: map[string]TreeState{m.Leaves.Name: {Tree: c.Tree, Stats: c.Stats}}}
		if c.Aux != nil {
			name := m.Leaves.Name
			if m.Data != nil {
				name = m.Data.Name
			}
			cs.Aux = map[string][]float64{name: c.Aux}
		}
		cp.Chains = append(cp.Chains, cs)
	}
	return &cp, nil
}
