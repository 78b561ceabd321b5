package inference

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/internal/atomicfile"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Config controls an MCMC run. Zero values take the documented defaults.
type Config struct {
	// Iters is the number of sweeps per chain, burn-in included. Zero
	// means 1000.
	Iters int
	// Burn is the number of initial sweeps discarded; slice widths adapt
	// during burn-in only. Zero means Iters/2; use a negative value for
	// none.
	Burn int
	// Thin keeps every Thin-th sweep after burn-in. Zero means 1.
	Thin int
	// TreeThin writes the tree of every TreeThin-th kept sweep to the
	// tree files (the kept sweeps numbered from 1 after burn-in, so the
	// trees are those of kept sweeps TreeThin, 2·TreeThin, ...); trace.csv
	// keeps every kept sweep. The tree summaries are made from the trees
	// written. Zero means 1.
	TreeThin int
	// Chains is the number of independent chains, run in parallel. Zero
	// means 4.
	Chains int
	// Seed names the random streams: chain k uses PCG(Seed, stream k).
	Seed uint64
	// ChainOffset makes the run hold chains ChainOffset+1 ..
	// ChainOffset+Chains of a larger design: chain k (numbered globally,
	// from 1) uses the stream of k whatever run holds it, the trace's
	// chain column and the tree files (trees-k.nwk) use k, so that runs of
	// one chain each with offsets 0, 1, ..., C−1 write, bit for bit, what
	// one run of C chains writes, and Summarize merges them. Zero for a
	// run of its own.
	ChainOffset int
	// Out is the output directory. It is required. A run holds a lock on
	// it (LockFile) until it returns, and refuses a directory that another
	// run holds, that holds a run already, or that holds a file of a run's
	// name without a run.json, unless Force is set.
	Out string
	// Force replaces the run (or the files of a run's names) in Out,
	// deleting those files first; files of other names are kept.
	Force bool
	// CheckpointEvery is the number of sweeps between checkpoints. Zero
	// means 100.
	CheckpointEvery int
	// Impute writes posterior draws of missing data entries.
	Impute bool
	// Coclust writes coclust.csv and summary.nwk even when there are more
	// than CoclustDefaultMax rows (they are written by default up to that).
	Coclust bool
	// Progress receives a progress report after every sweep; nil for none.
	Progress func(done, total int, logJoint float64)
	// AllowStuck lets a run with a stuck chain (see StuckSweeps) succeed;
	// otherwise Run and Resume return an error wrapping ErrStuck after
	// writing every output.
	AllowStuck bool
	// InitTrees, when set, start every chain from these trees instead of
	// a draw, by the variable of their PYDT (the name left of "~ PYDT";
	// "" for the model's first PYDT). Each tree's leaves must be its
	// PYDT's rows, matched by label; the hyperparameters are drawn as
	// usual, and the tree must have positive prior density under them.
	// The trees are copied to the run directory (InitTreeFile), so that a
	// resume before the first checkpoint starts from them again.
	InitTrees map[string]*pydt.Tree
	// LocalMoves is the number of local prune-and-regraft moves
	// (treemove.Sampler.LocalMove) per leaf in every sweep of every PYDT's
	// tree (Schedule.SetLocalMoves). Zero means
	// treemove.DefaultLocalMovesPerLeaf (1); use a negative value for
	// none. run.json records the number used, and Resume goes on with it.
	LocalMoves float64
	// LocalGrid, when positive, makes the local moves propose from a
	// likelihood-informed approximation with LocalGrid cells per edge
	// (Schedule.SetLocalGrid); 0 keeps the uniform proposal. run.json
	// records it, and Resume goes on with it.
	LocalGrid int

	// initNewick are the start trees as the chains parse them, indexed
	// like Model.Trees (set by start from InitTrees, or by Resume from
	// the run directory).
	initNewick []string
}

func (c Config) withDefaults() Config {
	if c.Iters == 0 {
		c.Iters = 1000
	}
	if c.Burn == 0 {
		c.Burn = c.Iters / 2
	}
	if c.Burn < 0 {
		c.Burn = 0
	}
	if c.Thin == 0 {
		c.Thin = 1
	}
	if c.TreeThin == 0 {
		c.TreeThin = 1
	}
	if c.Chains == 0 {
		c.Chains = 4
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = 100
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Out == "":
		return errors.New("run: an output directory is required")
	case c.Iters < 1:
		return fmt.Errorf("run: iterations must be positive, got %d", c.Iters)
	case c.Burn >= c.Iters:
		return fmt.Errorf("run: burn-in (%d) must be less than the iterations (%d)", c.Burn, c.Iters)
	case c.Thin < 1:
		return fmt.Errorf("run: thin must be positive, got %d", c.Thin)
	case c.TreeThin < 1:
		return fmt.Errorf("run: tree thin must be positive, got %d", c.TreeThin)
	case c.Chains < 1:
		return fmt.Errorf("run: chains must be positive, got %d", c.Chains)
	case c.ChainOffset < 0:
		return fmt.Errorf("run: the chain offset must be 0 or more, got %d", c.ChainOffset)
	case c.CheckpointEvery < 1:
		return fmt.Errorf("run: checkpoint interval must be positive, got %d", c.CheckpointEvery)
	case math.IsNaN(c.LocalMoves) || math.IsInf(c.LocalMoves, 0):
		return fmt.Errorf("run: local moves per leaf must be a finite number, got %v", c.LocalMoves)
	case c.LocalGrid < 0 || c.LocalGrid > treemove.MaxLocalGrid:
		return fmt.Errorf("run: cells per edge of the local moves' proposal must be 0 to %d, got %d", treemove.MaxLocalGrid, c.LocalGrid)
	}
	return nil
}

// localMoves returns the number of local moves per leaf that c asks for:
// the default for 0, none for a negative value.
func (c Config) localMoves() float64 {
	if c.LocalMoves == 0 {
		return treemove.DefaultLocalMovesPerLeaf
	}
	return max(0, c.LocalMoves)
}

// schedule returns m's schedule (NewSchedule) with c's settings of the
// tree moves (LocalMoves, LocalGrid). Run and ResumeTo validate c first,
// so that only an unscheduled model fails here.
func (c Config) schedule(m *Model) (*Schedule, error) {
	s, err := NewSchedule(m)
	if err != nil {
		return nil, err
	}
	if err := s.SetLocalMoves(c.localMoves()); err != nil {
		return nil, err
	}
	if err := s.SetLocalGrid(c.LocalGrid); err != nil {
		return nil, err
	}
	return s, nil
}

// ErrInterrupted is returned when the context is cancelled (Ctrl-C): the
// run stopped cleanly after a whole sweep, wrote a checkpoint, and can be
// resumed.
var ErrInterrupted = errors.New("interrupted")

// Result summarises a run.
type Result struct {
	Scalars     []diagnostics.Summary `json:"scalars"`
	Acceptance  map[string]float64    `json:"acceptance"`
	Iterations  int                   `json:"iterations"`
	Burn        int                   `json:"burn"`
	Thin        int                   `json:"thin"`
	TreeThin    int                   `json:"tree_thin"`
	Chains      int                   `json:"chains"`
	Seed        uint64                `json:"seed"`
	Completed   int                   `json:"completed_iterations"`
	WallTime    float64               `json:"wall_time_seconds"`
	MapLogJoint float64               `json:"map_log_joint"`
	// MapLogJointS is the map.nwk state's log joint density with the
	// times in s = -log(1-t) (Point.LogJointS), by which it is ranked;
	// MapLogJoint is its log_joint (in t, as score prints it).
	MapLogJointS float64 `json:"map_log_joint_s"`
	// MapWritten reports whether the run writes map.nwk (not for a Probit
	// likelihood, whose log joint is not comparable across states).
	MapWritten bool `json:"map_written"`
	// Skipped counts conditional updates skipped for numerical reasons.
	Skipped int `json:"skipped_updates"`
	// Stuck lists the chains (from 1) whose tree accepted no move for
	// StuckSweeps consecutive sweeps or more, and LongestStall gives each
	// chain's longest such run (see stuck.go).
	Stuck        []int `json:"stuck_chains"`
	LongestStall []int `json:"longest_stall_sweeps"`
	// Refused counts the tree-move density evaluations after burn-in that
	// were refused because float64 could not evaluate them (NaN or +Inf;
	// treemove.Stats.NonFinite).
	Refused int `json:"refused_non_finite"`
	// SummaryTree describes summary.nwk; nil when no tree was kept.
	SummaryTree *SummaryInfo `json:"summary_tree,omitempty"`
	Schedule    []string     `json:"schedule"`
	// ChainNumbers gives the chains' global numbers, in the order of
	// LongestStall, when they are not 1..Chains (a run with a
	// Config.ChainOffset, or a Summarize of runs with a gap between their
	// chains); Stuck names chains by these numbers.
	ChainNumbers []int `json:"chain_numbers,omitempty"`
	// Runs lists the runs that a summary over several (Summarize) was
	// made from; nil for a run's own summary.
	Runs []MergedRun `json:"runs,omitempty"`
	// PYDTs names the variables of the model's PYDTs, in order, when it
	// has several (nil for one). Acceptance then keys each tree's moves
	// by move and variable ("subtree(Z)"), SummaryTree describes the
	// first tree's summaries and TreeSummaries those of each further tree
	// by its variable (written to FileOf(name, variable)); Refused sums
	// over the trees.
	PYDTs         []string                `json:"pydts,omitempty"`
	TreeSummaries map[string]*SummaryInfo `json:"tree_summaries,omitempty"`
	// Aligned reports the per-state columns of a model with a categorical
	// latent array (z : categorical(K)), aligned to a reference draw
	// (summarizeTraced); they are left out of Scalars. nil otherwise.
	Aligned *AlignedInfo `json:"aligned,omitempty"`
}

// Names of the files a run writes.
const (
	TraceFile   = "trace.csv"
	MapFile     = "map.nwk"
	SummaryFile = "summary.json"
	// SummaryTreeFile is the average-linkage tree of the posterior mean
	// LCA times (TreeSummary.Linkage), written with coclust.csv.
	SummaryTreeFile = "summary.nwk"
	// CoclustFile holds the posterior mean LCA time of every pair of rows
	// (Coclust.WriteCSV).
	CoclustFile    = "coclust.csv"
	CheckpointFile = "checkpoint.json"
	RunFile        = "run.json"
	ImputeFile     = "impute.csv"
)

// DrawsFileOf is the file of chain k's kept draws (k from 1) of the
// categorical array v traced by occupied(v) (Model.TraceColumns):
// "draws-V-K.csv", a header (DrawsHeader) then one row per kept sweep,
// its iteration and the states of v's elements in row-major order,
// separated by spaces ("51,1 1 3 3 2"), raw as drawn.
func DrawsFileOf(v string, k int) string { return fmt.Sprintf("draws-%s-%d.csv", v, k) }

// DrawsHeader is the header line of a draws file (DrawsFileOf).
const DrawsHeader = "iteration,states"

// drawsRow is the row of a draws file for iteration it with states z.
func drawsRow(it int, z []float64) string {
	b := make([]byte, 0, 8+3*len(z))
	b = strconv.AppendInt(b, int64(it), 10)
	for i, x := range z {
		if i == 0 {
			b = append(b, ',')
		} else {
			b = append(b, ' ')
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return string(append(b, '\n'))
}

// TreesFile is the file of chain k's kept trees (k from 1): those of the
// model's first PYDT.
func TreesFile(k int) string { return fmt.Sprintf("trees-%d.nwk", k) }

// TreesFileOf is the file of chain k's kept trees of the PYDT of variable
// v: TreesFile(k) for the model's first PYDT (v == ""), and
// "trees-V-K.nwk" for a further one.
func TreesFileOf(v string, k int) string {
	if v == "" {
		return TreesFile(k)
	}
	return fmt.Sprintf("trees-%s-%d.nwk", v, k)
}

// FileOf names a run's tree file (MapFile, SummaryTreeFile, MEAFile,
// ConsensusFile, CoclustFile) for the PYDT of variable v: name itself for
// the model's first PYDT (v == ""), and the name with "-V" before its
// extension for a further one ("summary-Y.nwk").
func FileOf(name, v string) string {
	if v == "" {
		return name
	}
	ext := filepath.Ext(name)
	return strings.TrimSuffix(name, ext) + "-" + v + ext
}

// fileVar is the variable that names the files of the model's k-th PYDT:
// "" for the first (whose files keep a one-tree run's names), its
// variable for a further one.
func (m *Model) fileVar(k int) string {
	if k == 0 {
		return ""
	}
	return m.Trees[k].Leaves.Name
}

// runner is the state of a run in progress.
type runner struct {
	m       *Model
	cfg     Config
	sched   *Schedule
	chains  []*Chain
	scalars []Traced
	start   int // first sweep to run (1-based)
	trace   *appendFile
	trees   [][]*appendFile // [tree][chain]
	// draws holds the draws files of the categorical arrays traced by
	// occupied(z) (labelArrays of scalars), [array][chain].
	draws    [][]*appendFile
	impute   []*appendFile // per PYDT, nil where it has no data (or without --impute)
	kept     [][][]float64 // [scalar][chain][draw]
	keptLJ   [][]float64   // log_joint per chain
	keptLL   [][]float64
	best     float64 // LogJointS of the map.nwk state
	bestT    float64 // its LogJoint
	bestTree string
	// bestTrees holds the further PYDTs' trees of the map.nwk state by
	// variable (a model with several).
	bestTrees map[string]string
	wall      float64 // seconds spent before this session (resumed runs)
	// inputs are recorded in run.json: the model's, or for a resumed
	// run whose model has none, those the run recorded.
	inputs *Inputs
	// initVars are the PYDT variables whose chains started from a given
	// tree (Config.InitTrees), recorded in run.json.
	initVars []string
}

// Run runs the MCMC engine on m and writes its outputs to cfg.Out. It
// returns ErrInterrupted (wrapped) when ctx is cancelled, after writing a
// checkpoint from which Resume continues exactly.
func Run(ctx context.Context, m *Model, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := m.needTree("run"); err != nil {
		return nil, err
	}
	sched, err := cfg.schedule(m)
	if err != nil {
		return nil, err
	}
	if err := m.CheckProper(m.NewState().Env); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	lock, err := claimOut(cfg.Out, cfg.Force)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	return start(ctx, m, sched, cfg, m.Inputs)
}

// start begins the run of cfg in cfg.Out, which the caller has locked and
// prepared, from the chains' first draws; run.json records inputs.
func start(ctx context.Context, m *Model, sched *Schedule, cfg Config, inputs *Inputs) (*Result, error) {
	if cfg.initNewick == nil {
		var err error
		if cfg.initNewick, err = initNewick(m, cfg.InitTrees); err != nil {
			return nil, err
		}
	}
	r := &runner{m: m, cfg: cfg, sched: sched, scalars: m.TraceColumns(), start: 1, best: math.Inf(-1), bestT: math.Inf(-1), inputs: inputs}
	for k := range cfg.Chains {
		ch, err := newChainAt(m, sched, cfg.Seed, seedStream(cfg.ChainOffset+k), cfg.initNewick)
		if err != nil {
			return nil, fmt.Errorf("chain %d: %w", cfg.ChainOffset+k+1, err)
		}
		if chainHook != nil {
			chainHook(ch)
		}
		r.chains = append(r.chains, ch)
	}
	var err error
	if r.initVars, err = writeInitTrees(m, cfg.Out, cfg.initNewick); err != nil {
		return nil, err
	}
	if err := r.writeRunFile(); err != nil {
		return nil, err
	}
	if err := r.openFiles(nil); err != nil {
		return nil, err
	}
	return r.loop(ctx)
}

// seedStream is the PCG stream of chain k (from 0, numbered globally:
// Config.ChainOffset included).
func seedStream(k int) uint64 { return 0x9e3779b97f4a7c15 + uint64(k)*0x632be59bd9b4e019 }

// ExplainRun returns the schedule the engine would use for a run of m
// with cfg's settings (Config.LocalMoves, Config.LocalGrid).
func ExplainRun(m *Model, cfg Config) (string, error) {
	s, err := cfg.schedule(m)
	if err != nil {
		return "", err
	}
	return s.Explain(), nil
}

func (r *runner) header() string { return traceHeader(r.scalars) }

// traceHeader is trace.csv's header line for the columns cols, each name
// quoted as CSV needs: a matrix element's name such as w[1,2] holds a comma.
func traceHeader(cols []Traced) string {
	names := []string{"chain", "iteration", "log_joint", "log_lik"}
	for _, c := range cols {
		names = append(names, c.Name)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(names) // a strings.Builder does not fail
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

func (r *runner) openFiles(sizes map[string]int64) error {
	var err error
	open := func(name, header string) *appendFile {
		if err != nil {
			return nil
		}
		var f *appendFile
		f, err = openAppend(filepath.Join(r.cfg.Out, name), header, sizes, name)
		return f
	}
	r.trace = open(TraceFile, r.header())
	r.trees = make([][]*appendFile, len(r.m.Trees))
	for j := range r.m.Trees {
		for k := range r.chains {
			r.trees[j] = append(r.trees[j], open(TreesFileOf(r.m.fileVar(j), r.cfg.ChainOffset+k+1), ""))
		}
	}
	zs := labelArrays(r.scalars)
	r.draws = make([][]*appendFile, len(zs))
	for j, z := range zs {
		for k := range r.chains {
			r.draws[j] = append(r.draws[j], open(DrawsFileOf(z.Name, r.cfg.ChainOffset+k+1), DrawsHeader))
		}
	}
	if r.cfg.Impute {
		r.impute = make([]*appendFile, len(r.m.Trees))
		for j, b := range r.m.Trees {
			if b.Data != nil {
				r.impute[j] = open(FileOf(ImputeFile, r.m.fileVar(j)), "chain,iteration,row,column,value")
			}
		}
	}
	r.kept = make([][][]float64, len(r.scalars))
	for i := range r.kept {
		r.kept[i] = make([][]float64, len(r.chains))
	}
	r.keptLJ = make([][]float64, len(r.chains))
	r.keptLL = make([][]float64, len(r.chains))
	return err
}

// files lists the run's append files (nil where not open).
func (r *runner) files() []*appendFile {
	fs := append([]*appendFile{r.trace}, r.impute...)
	for _, t := range r.trees {
		fs = append(fs, t...)
	}
	for _, d := range r.draws {
		fs = append(fs, d...)
	}
	return fs
}

func (r *runner) closeFiles() error {
	var first error
	for _, f := range r.files() {
		if f == nil {
			continue
		}
		if err := f.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (r *runner) loop(ctx context.Context) (res *Result, err error) {
	began := time.Now()
	defer func() {
		if cerr := r.closeFiles(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	cfg := r.cfg
	total := cfg.Iters
	done := r.start - 1
	points := make([]Point, len(r.chains))
	errs := make([]error, len(r.chains))
	for it := r.start; it <= cfg.Iters; it++ {
		if ctx.Err() != nil {
			break
		}
		keep := it > cfg.Burn && (it-cfg.Burn)%cfg.Thin == 0
		var wg sync.WaitGroup
		for k, ch := range r.chains {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ch.tuning = it <= cfg.Burn
				if it == cfg.Burn+1 {
					for _, t := range ch.trees {
						t.moves.ResetStats()
					}
					ch.RidgeProposed, ch.RidgeAccepted = 0, 0
					ch.Steps = nil
				}
				if errs[k] = ch.Sweep(); errs[k] != nil {
					return
				}
				points[k], errs[k] = ch.MeasureTraced(r.scalars)
			}()
		}
		wg.Wait()
		for k, e := range errs {
			if e != nil {
				r.checkpoint(done, time.Since(began).Seconds())
				return nil, fmt.Errorf("chain %d, iteration %d: %w", cfg.ChainOffset+k+1, it, e)
			}
		}
		done = it
		if err := r.record(it, keep, points); err != nil {
			return nil, err
		}
		if cfg.Progress != nil {
			cfg.Progress(done, total, points[0].LogJoint)
		}
		if it%cfg.CheckpointEvery == 0 && it < cfg.Iters {
			if err := r.checkpoint(done, time.Since(began).Seconds()); err != nil {
				return nil, err
			}
		}
	}
	wall := time.Since(began).Seconds()
	if err := r.checkpoint(done, wall); err != nil {
		return nil, err
	}
	res, err = r.result(done, r.wall+wall)
	if err != nil {
		return nil, err
	}
	if err := res.writeStates(cfg.Out); err != nil {
		return res, err
	}
	r.chains = nil // the summaries stream the tree files: the chains' states can go
	if err := r.writeTreeSummary(res); err != nil {
		return res, err
	}
	if err := writeJSONFile(filepath.Join(cfg.Out, SummaryFile), res); err != nil {
		return res, err
	}
	if done < cfg.Iters {
		return res, fmt.Errorf("run stopped after iteration %d of %d: %w", done, cfg.Iters, ErrInterrupted)
	}
	return res, res.stuckError(cfg.AllowStuck)
}

// record writes the trace rows, trees and imputations of a sweep and
// tracks the best state.
func (r *runner) record(it int, keep bool, points []Point) error {
	for k, ch := range r.chains {
		p := points[k]
		// Ranked in s: the density in t carries Σ_b s_b, unbounded as
		// times approach 1, and picked early states with times within
		// 1e-20 of 1 under a Normal noise model.
		if p.LogJointS > r.best {
			r.best, r.bestT = p.LogJointS, p.LogJoint
			if err := r.writeMap(ch); err != nil {
				return err
			}
		}
		if !keep {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d,%d,%s,%s", r.cfg.ChainOffset+k+1, it, fmtFloat(p.LogJoint), fmtFloat(p.LogLik))
		for i, x := range p.Scalars {
			b.WriteString("," + fmtFloat(x))
			r.kept[i][k] = append(r.kept[i][k], x)
		}
		r.keptLJ[k] = append(r.keptLJ[k], p.LogJoint)
		r.keptLL[k] = append(r.keptLL[k], p.LogLik)
		b.WriteByte('\n')
		if err := r.trace.write(b.String()); err != nil {
			return err
		}
		for j, z := range labelArrays(r.scalars) {
			if err := r.draws[j][k].write(drawsRow(it, ch.st.Env.Values[z.ID])); err != nil {
				return err
			}
		}
		if ((it-r.cfg.Burn)/r.cfg.Thin)%r.cfg.TreeThin == 0 {
			for j, t := range ch.trees {
				if err := r.trees[j][k].write(t.Tree.Newick() + "\n"); err != nil {
					return err
				}
			}
		}
		for j, f := range r.impute {
			if f == nil {
				continue
			}
			if err := r.writeImputed(f, k, it, ch.trees[j], ch); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowName names row i (0-based) of the data v by its label or its
// 1-based number.
func rowName(v *graph.Var, i int) string {
	if d := v.Data; d != nil && i < len(d.RowLabels) {
		return csvField(d.RowLabels[i])
	}
	return strconv.Itoa(i + 1)
}

// colName names column j (0-based) of the data v by its header or its
// 1-based number.
func colName(v *graph.Var, j int) string {
	if d := v.Data; d != nil && j < len(d.ColNames) {
		return csvField(d.ColNames[j])
	}
	return strconv.Itoa(j + 1)
}

// csvField quotes a CSV field when it needs it.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// writeImputed writes to f draws of the missing entries of the data
// observed at the leaves of the tree t of chain k.
func (r *runner) writeImputed(f *appendFile, k, it int, t *chainTree, ch *Chain) error {
	b := t.b
	data := b.Data
	y := ch.st.Env.Values[data.ID]
	var out strings.Builder
	sampled := false
	for idx, v := range y {
		if !math.IsNaN(v) {
			continue
		}
		if !sampled {
			if err := t.lik.SampleLocations(ch.rng, t.locs); err != nil {
				return err
			}
			sampled = true
		}
		// A draw of the entry given its leaf location.
		leaf, err := b.leafElem(ch.st.Env, idx)
		if err != nil {
			return fmt.Errorf("imputing %s: %w", data.Name, err)
		}
		x, err := b.DrawData(ch.rng, ch.st.Env, idx, t.locs[leaf], &ch.leafParams)
		if err != nil {
			return fmt.Errorf("imputing %s: %w", data.Name, err)
		}
		if s := r.m.Scaling; s != nil && s.Var == data.Name {
			x = s.Unscale(idx%b.D, x) // back to the data's units
		}
		fmt.Fprintf(&out, "%d,%d,%s,%s,%s\n", r.cfg.ChainOffset+k+1, it, rowName(data, idx/b.D), colName(data, idx%b.D), fmtFloat(x))
	}
	return f.write(out.String())
}

func (r *runner) result(done int, wall float64) (*Result, error) {
	res := &Result{
		Iterations: r.cfg.Iters, Burn: r.cfg.Burn, Thin: r.cfg.Thin, TreeThin: r.cfg.TreeThin, Chains: r.cfg.Chains, Seed: r.cfg.Seed,
		Completed: done, WallTime: wall, MapLogJoint: r.bestT, MapLogJointS: r.best, MapWritten: r.m.mapWritten(), Acceptance: map[string]float64{}, Stuck: []int{},
	}
	res.Scalars = append(res.Scalars, diagnostics.Summarize("log_joint", r.keptLJ))
	res.Scalars = append(res.Scalars, diagnostics.Summarize("log_lik", r.keptLL))
	var paths [][]string
	for j, z := range labelArrays(r.scalars) {
		paths = append(paths, nil)
		for k, f := range r.draws[j] {
			if err := f.flush(); err != nil {
				return nil, err
			}
			paths[j] = append(paths[j], filepath.Join(r.cfg.Out, DrawsFileOf(z.Name, r.cfg.ChainOffset+k+1)))
		}
	}
	plain, aligned, err := summarizeTraced(r.m, r.scalars, r.keptLJ, r.kept, drawsFiles(labelArrays(r.scalars), paths, nil))
	if err != nil {
		return nil, err
	}
	res.Scalars = append(res.Scalars, plain...)
	res.Aligned = aligned
	st := make([]treemove.Stats, len(r.m.Trees))
	var ridge treemove.MoveStats
	steps := map[string]treemove.MoveStats{}
	for _, ch := range r.chains {
		for name, ms := range ch.Steps {
			a := steps[name]
			a.Proposed += ms.Proposed
			a.Accepted += ms.Accepted
			steps[name] = a
		}
		res.Skipped += ch.Skipped
		res.addStall(r.cfg.ChainOffset+len(res.LongestStall)+1, ch.LongestStall)
		ridge.Proposed += ch.RidgeProposed
		ridge.Accepted += ch.RidgeAccepted
		for j, t := range ch.trees {
			res.Refused += t.moves.Stats.NonFinite
			st[j].Add(t.moves.Stats)
		}
	}
	if !r.m.Several() {
		res.setAcceptance(st[0], ridge)
	} else {
		for j, b := range r.m.Trees {
			res.PYDTs = append(res.PYDTs, b.Leaves.Name)
			res.setAcceptanceOf(st[j], treemove.MoveStats{}, b.Leaves.Name)
		}
		res.setAcceptanceOf(treemove.Stats{}, ridge, "")
	}
	for name, ms := range steps {
		if ms.Proposed > 0 {
			res.Acceptance[name] = ms.Rate()
		}
	}
	for _, s := range r.sched.Steps {
		res.Schedule = append(res.Schedule, s.Name())
	}
	if off := r.cfg.ChainOffset; off > 0 {
		for k := range r.cfg.Chains {
			res.ChainNumbers = append(res.ChainNumbers, off+k+1)
		}
	}
	return res, nil
}

// writeStates writes the states file of each aligned categorical array.
func (res *Result) writeStates(out string) error {
	if res.Aligned == nil {
		return nil
	}
	for i := range res.Aligned.Arrays {
		a := &res.Aligned.Arrays[i]
		if err := atomicfile.Write(filepath.Join(out, StatesFileOf(a.Var)), a.StatesCSV()); err != nil {
			return fmt.Errorf("writing the states of %s: %w", a.Var, err)
		}
	}
	return nil
}

// WriteTable prints the run's summary table.
func (res *Result) WriteTable(w io.Writer) error {
	if err := writeShortTable(w, res.Scalars); err != nil {
		return err
	}
	var names []string
	for n := range res.Acceptance {
		names = append(names, n)
	}
	if len(names) > 0 {
		fmt.Fprint(w, "\nacceptance:")
		trees := []string{""}
		if len(res.PYDTs) > 0 {
			trees = res.PYDTs
		}
		for _, v := range trees {
			if v != "" {
				fmt.Fprintf(w, "\n  tree %s:", v)
			}
			for _, n := range []string{"subtree", "local", "time", "position"} {
				key := n
				if v != "" {
					key = n + "(" + v + ")"
				}
				if a, ok := res.Acceptance[key]; ok {
					fmt.Fprintf(w, "  %s %.3f", n, a)
				}
			}
		}
		if a, ok := res.Acceptance["ridge"]; ok {
			if len(res.PYDTs) > 0 {
				fmt.Fprintf(w, "\n  ridge (tree %s) %.3f", res.PYDTs[0], a)
			} else {
				fmt.Fprintf(w, "  ridge %.3f", a)
			}
		}
		// The other steps that report an acceptance rate (the probit
		// ghk(prec, u) step), under their schedule names, in schedule order.
		for _, n := range res.Schedule {
			if a, ok := res.Acceptance[n]; ok && n != "ridge" {
				fmt.Fprintf(w, "\n  %s %.3f", n, a)
			}
		}
		fmt.Fprintln(w)
	}
	if a := res.Aligned; a != nil {
		for _, arr := range a.Arrays {
			with := ""
			if len(arr.Aligned) > 0 {
				with = " with " + strings.Join(arr.Aligned, ", ")
			}
			trees := ""
			if len(arr.Trees) > 0 {
				trees = "; the trees of " + strings.Join(arr.Trees, ", ") + " are summarised with their leaves aligned"
			}
			fmt.Fprintf(w, "\nlabel switching: the %d states of %s%s are aligned to the kept draw of highest log_joint (chain %d, kept draw %d) by Hungarian matching of co-assignment; mean agreement %.3f; modal aligned state of each %s[t] in %s%s\n",
				arr.K, arr.Var, with, a.Chain, a.Draw, arr.Agreement, arr.Var, StatesFileOf(arr.Var), trees)
		}
		if len(a.Scalars) > 0 {
			fmt.Fprintln(w, "aligned:")
			if err := writeShortTable(w, a.Scalars); err != nil {
				return err
			}
		}
	}
	res.writeStuck(w)
	for i, st := range res.summaries() {
		if st == nil || st.ASDSF == nil {
			continue
		}
		what := "trees"
		if len(res.PYDTs) > 0 {
			what = "trees of " + res.PYDTs[i]
		}
		fmt.Fprintf(w, "%s: average standard deviation of clade frequencies across chains (ASDSF) %.4g, largest %.4g, over %d clades with frequency >= %g in some chain\n",
			what, *st.ASDSF, *st.MaxSDSF, st.ASDSFClades, MinSplitFreq)
	}
	chains := "chains"
	if res.Chains == 1 {
		chains = "chain"
	}
	if res.Completed <= res.Burn {
		_, err := fmt.Fprintf(w, "stopped during burn-in (%d of %d burn-in iterations): no kept draws yet\n", res.Completed, res.Burn)
		return err
	}
	if _, err := fmt.Fprintf(w, "%d %s × %d iterations (%d burn-in, thin %d) in %.1fs", res.Chains, chains,
		res.Completed, res.Burn, res.Thin, res.WallTime); err != nil {
		return err
	}
	// map.nwk is ranked by the density in s; its log_joint (in t, as in
	// trace.csv) is printed under its own name, so that it is not read as
	// the largest log_joint of the trace.
	if res.MapWritten {
		if _, err := fmt.Fprintf(w, "; map.nwk log_joint %.4g", res.MapLogJoint); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return res.writeWarnings(w)
}

// writeWarnings flags scalars whose chains have not converged or mixed,
// as CmdStan does: split R-hat above 1.01, or a bulk ESS below 100 per
// chain.
func (res *Result) writeWarnings(w io.Writer) error {
	var rhat, ess []string
	all := res.Scalars
	if res.Aligned != nil {
		all = append(slices.Clip(all), res.Aligned.Scalars...)
	}
	for _, s := range all {
		if s.Rhat > 1.01 {
			rhat = append(rhat, s.Name)
		}
		if s.ESSBulk < 100*float64(res.Chains) {
			ess = append(ess, s.Name)
		}
	}
	if len(rhat) > 0 {
		if _, err := fmt.Fprintf(w, "warning: split R-hat above 1.01 for %s: the chains disagree; run longer before trusting these estimates\n", nameList(rhat)); err != nil {
			return err
		}
	}
	for i, st := range res.summaries() {
		if st != nil && st.ASDSF != nil && *st.ASDSF > ASDSFWarn {
			of := ""
			if len(res.PYDTs) > 0 {
				of = " of " + res.PYDTs[i]
			}
			if _, err := fmt.Fprintf(w, "warning: ASDSF%s %.3g above %g: the chains disagree on the trees' clades; run longer\n", of, *st.ASDSF, ASDSFWarn); err != nil {
				return err
			}
		}
	}
	if st := res.SummaryTree; st != nil && st.MEAGap > 0 {
		if _, err := fmt.Fprintf(w, "warning: mea.nwk may not be the best kept tree: another may score up to %.3g higher in expected correct minus incorrect clades (mea_gap; the clade counters overflowed)\n", st.MEAGap); err != nil {
			return err
		}
	}
	if len(ess) > 0 {
		_, err := fmt.Fprintf(w, "warning: bulk ESS below %d (100 per chain) for %s: estimates of the mean are noisy; run longer or thin less\n", 100*res.Chains, nameList(ess))
		return err
	}
	return nil
}

// summaries lists the summary of each PYDT's trees, in the order of
// PYDTs (the first alone for a model with one), nil where none was made.
func (res *Result) summaries() []*SummaryInfo {
	out := []*SummaryInfo{res.SummaryTree}
	for _, v := range res.PYDTs[min(1, len(res.PYDTs)):] {
		out = append(out, res.TreeSummaries[v])
	}
	return out
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func (r *runner) writeRunFile() error {
	c := r.cfg
	local := c.localMoves()
	return writeJSONFile(filepath.Join(c.Out, RunFile), RunInfo{Version: RunVersion,
		Iters: c.Iters, Burn: c.Burn, Thin: c.Thin, TreeThin: c.TreeThin, Chains: c.Chains, CheckpointEvery: c.CheckpointEvery,
		Seed: c.Seed, ChainOffset: c.ChainOffset, Impute: c.Impute, Coclust: c.Coclust, AllowStuck: c.AllowStuck, Inputs: r.inputs, Standardize: r.m.Scaling,
		InitTrees: r.initVars, LocalMoves: &local, LocalGrid: c.LocalGrid,
	})
}

// RunTreeThin returns the TreeThin of the run in dir, from its run.json:
// its tree files hold the trees of kept sweeps TreeThin, 2·TreeThin, ...
// of each chain.
func RunTreeThin(dir string) (int, error) {
	ri, err := ReadRun(dir)
	if err != nil {
		return 0, err
	}
	return max(ri.TreeThin, 1), nil
}

// LoadRun loads the model that the run in dir was started with, from the
// inputs its run.json records (Inputs.Load), refusing files whose SHA-256
// has changed since. The data are not standardized: Resume does that
// itself, and other readers of the run call StandardizeLikeRun.
func LoadRun(dir string) (*Model, error) {
	ri, err := ReadRun(dir)
	if err != nil {
		return nil, err
	}
	if ri.Inputs == nil || ri.Inputs.Model.Path == "" {
		return nil, fmt.Errorf("%s names no model file: the run's model was not loaded from files (Inputs.Load)", filepath.Join(dir, RunFile))
	}
	return ri.Inputs.Load()
}

// checkpoint writes checkpoint.json atomically: everything needed to
// continue after sweep it exactly as an uninterrupted run would.
func (r *runner) checkpoint(it int, wall float64) error {
	cp := Checkpoint{Version: CheckpointVersion, Iteration: it, Wall: r.wall + wall, Sizes: map[string]int64{}, Best: r.bestT, BestS: &r.best, BestTree: r.bestTree, BestTrees: r.bestTrees}
	for _, f := range r.files() {
		if f == nil {
			continue
		}
		if err := f.flush(); err != nil {
			return err
		}
		cp.Sizes[f.name] = f.size
	}
	for _, ch := range r.chains {
		cs, err := ch.state()
		if err != nil {
			return err
		}
		cp.Chains = append(cp.Chains, cs)
	}
	return writeJSONFile(filepath.Join(r.cfg.Out, CheckpointFile), cp)
}

// state returns the chain's state for a checkpoint.
func (ch *Chain) state() (ChainState, error) {
	m := ch.m
	rng, err := ch.pcg.MarshalBinary()
	if err != nil {
		return ChainState{}, err
	}
	cs := ChainState{RNG: rng, Values: map[string][]float64{}, Tuners: map[string]TunerState{},
		Trees:   map[string]TreeState{},
		Ridge:   [2]int{ch.RidgeProposed, ch.RidgeAccepted},
		Skipped: ch.Skipped, Stall: [2]int{ch.Stall, ch.LongestStall}}
	for name, ms := range ch.Steps {
		if cs.Steps == nil {
			cs.Steps = map[string][2]int{}
		}
		cs.Steps[name] = [2]int{ms.Proposed, ms.Accepted}
	}
	for _, t := range ch.trees {
		cs.Trees[t.b.Leaves.Name] = TreeState{Tree: t.Tree, Stats: t.moves.Stats}
		if t.b.Augmented() != nil {
			if cs.Aux == nil {
				cs.Aux = map[string][]float64{}
			}
			cs.Aux[t.b.Data.Name] = t.aux
		}
	}
	for _, v := range m.G.Vars {
		if v.Role == graph.Latent && !v.IsData && (!(v.Def != nil && v.Def.IsPYDT()) || m.latentLeaves(v)) {
			cs.Values[v.Name] = ch.st.Env.Values[v.ID]
		}
	}
	for v, t := range ch.tuners {
		b, err := t.MarshalBinary()
		if err != nil {
			return ChainState{}, err
		}
		cs.Tuners[v.Name] = TunerState{Width: t.Slice.Width, State: b}
	}
	return cs, nil
}

// restoreChainState rebuilds a chain of m from its state in a checkpoint
// without drawing any random number.
func restoreChainState(m *Model, sched *Schedule, cs ChainState) (*Chain, error) {
	st := m.NewState()
	for name, vals := range cs.Values {
		v, ok := m.G.Lookup(name)
		if !ok || len(vals) != len(st.Env.Values[v.ID]) {
			return nil, fmt.Errorf("checkpoint value %s does not fit the model", name)
		}
		copy(st.Env.Values[v.ID], vals)
	}
	if err := m.Refresh(st.Env); err != nil {
		return nil, err
	}
	var names []string
	for _, b := range m.Trees {
		names = append(names, b.Leaves.Name)
	}
	for name := range cs.Trees {
		if !slices.Contains(names, name) {
			if len(names) == 1 {
				return nil, fmt.Errorf("checkpoint tree %s does not fit the model, whose PYDT is %s", name, names[0])
			}
			return nil, fmt.Errorf("checkpoint tree %s does not fit the model, whose PYDTs are %s", name, strings.Join(names, ", "))
		}
	}
	for k, b := range m.Trees {
		ts, ok := cs.Trees[b.Leaves.Name]
		if !ok {
			return nil, fmt.Errorf("checkpoint has no tree of %s", b.Leaves.Name)
		}
		if ts.Tree == nil || ts.Tree.NumLeaves() != b.N {
			return nil, fmt.Errorf("checkpoint tree %s does not fit the data", b.Leaves.Name)
		}
		st.setTree(k, len(m.Trees), ts.Tree)
	}
	pcg := &rand.PCG{}
	if err := pcg.UnmarshalBinary(cs.RNG); err != nil {
		return nil, err
	}
	want := map[string]int{}
	for _, b := range m.Trees {
		if b.Augmented() != nil {
			want[b.Data.Name] = b.N * b.D
		}
	}
	for name, a := range cs.Aux {
		n, ok := want[name]
		if !ok {
			return nil, fmt.Errorf("checkpoint auxiliary variables of %s do not fit the model", name)
		}
		if len(a) != n {
			return nil, fmt.Errorf("checkpoint has %d auxiliary variables of %s, want %d", len(a), name, n)
		}
		delete(want, name)
	}
	for name := range want {
		return nil, fmt.Errorf("checkpoint has no auxiliary variables of %s", name)
	}
	ch, err := restoreChain(m, sched, st, pcg, cs.Aux)
	if err != nil {
		return nil, err
	}
	for _, t := range ch.trees {
		t.moves.Stats = cs.Trees[t.b.Leaves.Name].Stats
	}
	ch.RidgeProposed, ch.RidgeAccepted, ch.Skipped = cs.Ridge[0], cs.Ridge[1], cs.Skipped
	ch.Stall, ch.LongestStall = cs.Stall[0], cs.Stall[1]
	for name, n := range cs.Steps {
		if ch.Steps == nil {
			ch.Steps = map[string]*treemove.MoveStats{}
		}
		ch.Steps[name] = &treemove.MoveStats{Proposed: n[0], Accepted: n[1]}
	}
	for name, tst := range cs.Tuners {
		v, ok := m.G.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("checkpoint tuner %s does not fit the model", name)
		}
		t := ch.tuner(v)
		if err := t.UnmarshalBinary(tst.State); err != nil {
			return nil, err
		}
		t.Slice.Width = tst.Width
	}
	return ch, nil
}

// restoreChain rebuilds a chain from a state without drawing any random
// number.
func restoreChain(m *Model, sched *Schedule, st *State, pcg *rand.PCG, aux map[string][]float64) (*Chain, error) {
	ch := newChainParts(m, sched, st, pcg)
	for _, t := range ch.trees {
		if b := t.b; b.Augmented() != nil {
			a := aux[b.Data.Name]
			if len(a) != b.N*b.D {
				return nil, fmt.Errorf("checkpoint has %d auxiliary variables of %s, want %d", len(a), b.Data.Name, b.N*b.D)
			}
			t.aux = slices.Clone(a)
		}
	}
	return ch, ch.attach()
}

// openResume locks the run directory dir, removes the temporaries an
// interrupted write left, reads its run.json, checks it with kind (the
// run is of the kind the caller resumes) and checks that m's inputs and
// standardization are the run's: the start of ResumeTo and ResumeEM. The
// caller releases the lock; on an error it is released here.
func openResume(dir string, m *Model, kind func(*RunInfo) error) (*dirLock, *RunInfo, error) {
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("resume: %w", err)
	}
	ri, err := func() (*RunInfo, error) {
		if err := removeTemporaries(dir); err != nil {
			return nil, err
		}
		ri, err := ReadRun(dir)
		if err != nil {
			return nil, err
		}
		if err := kind(ri); err != nil {
			return nil, err
		}
		if err := sameInputs(ri.Inputs, m.Inputs); err != nil {
			return nil, err
		}
		if err := sameScaling(m, ri.Standardize); err != nil {
			return nil, err
		}
		return ri, nil
	}()
	if err != nil {
		lock.release()
		return nil, nil, fmt.Errorf("resume: %w", err)
	}
	return lock, ri, nil
}

// Resume continues the run in dir from its last checkpoint, with the model
// it was started with (LoadRun rebuilds it from run.json), as if it had
// never stopped. progress may be nil. A run started on standardized data is
// standardized again here (the caller need not call Standardize), and must
// give the scaling recorded in run.json. A run whose run.json records its
// inputs' SHA-256 (a model from Inputs.Load) continues only with a model
// whose Inputs have the same contents (by role: the model file, each data
// variable's file, the labels file); the error names the file that
// changed and wraps ErrChanged.
//
// Resume holds the directory's lock (LockFile) until it returns, and
// first deletes the temporary files of atomic writes that a killed run
// left. A run stopped before its first checkpoint (killed, or out of
// power) starts again from sweep 1 with the settings of run.json; being
// deterministic, it then writes what the uninterrupted run would have.
//
// run.json and checkpoint.json of every version this package reads are
// resumed (RunVersion, CheckpointVersion); the checkpoints written from
// then on are of the current version.
func Resume(ctx context.Context, m *Model, dir string, progress func(done, total int, logJoint float64)) (*Result, error) {
	return ResumeTo(ctx, m, dir, 0, progress)
}

// ResumeTo is Resume with a new number of sweeps per chain: it extends a
// finished or stopped run to iters sweeps (or, for a stopped run, sets a
// nearer end), keeping its burn-in, thinning, tuning and random streams,
// so that the result is bit for bit that of a run started with those
// iterations and the original burn-in (Config.Burn = the run's burn-in;
// only the wall times differ). run.json records the new number, so that a
// later Resume goes on to it. iters must be at least the sweeps already
// done and more than the burn-in; 0 keeps the run's number.
func ResumeTo(ctx context.Context, m *Model, dir string, iters int, progress func(done, total int, logJoint float64)) (*Result, error) {
	if iters < 0 {
		return nil, fmt.Errorf("resume: %d iterations", iters)
	}
	if err := m.needTree("resume"); err != nil {
		return nil, err
	}
	lock, ri, err := openResume(dir, m, func(ri *RunInfo) error { return ri.Resumable(dir) })
	if err != nil {
		return nil, err
	}
	defer lock.release()
	cfg := ri.config(dir)
	cfg.Progress = progress
	if cfg.initNewick, err = readInitTrees(m, dir, ri.InitTrees); err != nil {
		return nil, fmt.Errorf("resume: the run's initial tree: %w", err)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("resume: %s: %w", RunFile, err)
	}
	extend := iters > 0 && iters != cfg.Iters
	if extend {
		if iters <= cfg.Burn {
			return nil, fmt.Errorf("resume: %d iterations must be more than the run's burn-in, %d", iters, cfg.Burn)
		}
		cfg.Iters = iters
	}
	sched, err := cfg.schedule(m)
	if err != nil {
		return nil, err
	}
	cp, err := ReadCheckpoint(dir, m)
	if errors.Is(err, fs.ErrNotExist) {
		inputs := m.Inputs
		if inputs == nil {
			inputs = ri.Inputs
		}
		return start(ctx, m, sched, cfg, inputs) // writes run.json with cfg.Iters
	} else if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if cp.Iteration > cfg.Iters {
		return nil, fmt.Errorf("resume: the run has done %d iterations, more than the %d asked for", cp.Iteration, cfg.Iters)
	}
	if len(cp.Chains) != cfg.Chains {
		return nil, fmt.Errorf("resume: checkpoint has %d chains, run.json says %d", len(cp.Chains), cfg.Chains)
	}
	r := &runner{m: m, cfg: cfg, sched: sched, scalars: m.TraceColumns(), start: cp.Iteration + 1,
		best: math.Inf(-1), bestT: cp.Best, bestTree: cp.BestTree, bestTrees: cp.BestTrees, wall: cp.Wall, inputs: m.Inputs,
		initVars: ri.InitTrees}
	if r.inputs == nil {
		r.inputs = ri.Inputs
	}
	if cp.BestS != nil {
		r.best = *cp.BestS
	}
	for k, cs := range cp.Chains {
		ch, err := restoreChainState(m, sched, cs)
		if err != nil {
			return nil, fmt.Errorf("resume: chain %d: %w", cfg.ChainOffset+k+1, err)
		}
		if chainHook != nil {
			chainHook(ch)
		}
		r.chains = append(r.chains, ch)
	}
	if extend || ri.Version < RunVersion {
		// run.json records the new number of sweeps, or is brought to
		// the current version with the checkpoints written from now on.
		if err := r.writeRunFile(); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	if err := r.openFiles(cp.Sizes); err != nil {
		return nil, err
	}
	if err := r.reloadTrace(); err != nil {
		return nil, err
	}
	return r.loop(ctx)
}

// reloadTrace reads the kept values back from trace.csv for the summary.
func (r *runner) reloadTrace() error {
	f, err := os.Open(filepath.Join(r.cfg.Out, TraceFile))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 4+len(r.scalars) {
			return fmt.Errorf("resume: %s has a row of %d fields", TraceFile, len(fields))
		}
		k, err := strconv.Atoi(fields[0])
		k -= r.cfg.ChainOffset // the trace numbers the chains globally
		if err != nil || k < 1 || k > len(r.chains) {
			return fmt.Errorf("resume: %s: bad chain %q", TraceFile, fields[0])
		}
		vals := make([]float64, len(fields)-2)
		for i, s := range fields[2:] {
			if vals[i], err = strconv.ParseFloat(s, 64); err != nil {
				return fmt.Errorf("resume: %s: %w", TraceFile, err)
			}
		}
		r.keptLJ[k-1] = append(r.keptLJ[k-1], vals[0])
		r.keptLL[k-1] = append(r.keptLL[k-1], vals[1])
		for i := range r.scalars {
			r.kept[i][k-1] = append(r.kept[i][k-1], vals[2+i])
		}
	}
	return sc.Err()
}

// appendFile is an output file written as the run goes, flushed at every
// checkpoint.
type appendFile struct {
	name string
	f    *os.File
	w    *bufio.Writer
	size int64
}

// openAppend creates the file with a header, or, when sizes records it,
// truncates it back to the checkpointed size and appends from there.
func openAppend(path, header string, sizes map[string]int64, name string) (*appendFile, error) {
	if sizes != nil {
		size, ok := sizes[name]
		if !ok {
			return nil, fmt.Errorf("resume: the checkpoint does not record %s", name)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		if err := f.Truncate(size); err != nil {
			f.Close()
			return nil, fmt.Errorf("resume: %w", err)
		}
		if _, err := f.Seek(size, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("resume: %w", err)
		}
		return &appendFile{name: name, f: f, w: bufio.NewWriter(f), size: size}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	a := &appendFile{name: name, f: f, w: bufio.NewWriter(f)}
	if header != "" {
		if err := a.write(header + "\n"); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// write appends s, which holds whole rows: it reaches the file in one
// write, never split at the buffer's edge, so that a reader (or a run
// killed between sweeps) never sees half a row.
func (a *appendFile) write(s string) error {
	if len(s) > a.w.Available() && a.w.Buffered() > 0 {
		if err := a.flush(); err != nil {
			return err
		}
	}
	var n int
	var err error
	if len(s) > a.w.Available() {
		n, err = a.f.WriteString(s)
	} else {
		n, err = a.w.WriteString(s)
	}
	a.size += int64(n)
	if err != nil {
		return fmt.Errorf("writing %s: %w", a.name, err)
	}
	return nil
}

func (a *appendFile) flush() error {
	if err := a.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", a.name, err)
	}
	return nil
}

func (a *appendFile) close() error {
	if err := a.flush(); err != nil {
		a.f.Close()
		return err
	}
	return a.f.Close()
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return atomicfile.Write(path, append(b, '\n'))
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadResult reads the summary.json of the MCMC run, or the summary of
// runs, in dir. An EM run's summary.json is refused: ReadEMResult reads
// it.
func ReadResult(dir string) (*Result, error) {
	path := filepath.Join(dir, SummaryFile)
	var wire struct {
		Result
		Method string `json:"method"`
	}
	if err := readJSONFile(path, &wire); err != nil {
		return nil, err
	}
	if wire.Method == MethodEM {
		return nil, fmt.Errorf("%s: an EM run's summary, not an MCMC run's", path)
	}
	return &wire.Result, nil
}

// setAcceptance records the acceptance rate of each kind of tree move, and
// of the ridge move, that was proposed at least once.
func (res *Result) setAcceptance(st treemove.Stats, ridge treemove.MoveStats) {
	res.setAcceptanceOf(st, ridge, "")
}

// setAcceptanceOf is setAcceptance for the tree of the PYDT variable v in
// a model with several: the keys are "subtree(V)" and so on ("" for the
// plain names).
func (res *Result) setAcceptanceOf(st treemove.Stats, ridge treemove.MoveStats, v string) {
	for name, ms := range map[string]treemove.MoveStats{"subtree": st.Subtree, "local": st.Local, "time": st.Time, "position": st.Position, "ridge": ridge} {
		if v != "" {
			name += "(" + v + ")"
		}
		if ms.Proposed > 0 {
			res.Acceptance[name] = ms.Rate()
		}
	}
}
