package inference

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/internal/atomicfile"
)

// Runs on several machines
//
// A design of C chains can be spread over machines as runs of one chain
// (or a few) each, with the same seed and settings and chain offsets
// 0, 1, ..., C−1 (Config.ChainOffset): chain k's random stream depends
// only on the seed and k, so the runs write, bit for bit, the trace rows
// and tree files of one run of C chains. Summarize then makes the summary
// of all their chains together, as a run of C chains makes its own.
//
// The summary reads each run's run.json (to check that the runs are of
// one model, data and settings), checkpoint.json (each chain's move
// counts, stalls and best state), trace.csv (the kept draws of the
// scalars, from which R-hat and the ESS are computed afresh over all
// chains) and streams the tree files, as a run's own summary does. The
// tree files are streamed rather than per-run clade accumulators merged
// because the accumulators do not suffice: mea.nwk is the kept tree that
// scores best under the clade frequencies of all chains together, so
// every kept tree must be scored again; the branch times of the summary
// trees are means, over every kept tree, of the LCA times of clades that
// are only known once all chains are counted; and the bounded clade
// counts need a recount over the trees once they overflow. Merging
// persisted counts would save one pass of three, and summing the
// co-clustering accumulators in another order would change their last
// bits, so the merged files would no longer be those of one run.

// MergedRun is one of the runs that a summary over several (Summarize)
// was made from.
type MergedRun struct {
	// Dir is the run's directory, as given.
	Dir string `json:"dir"`
	// FirstChain is the global number of its first chain
	// (Config.ChainOffset + 1), and Chains its number of chains.
	FirstChain int `json:"first_chain"`
	Chains     int `json:"chains"`
}

// ErrMismatch is wrapped by Summarize's errors for runs that cannot be
// summarised together: of different models, data or settings, or holding
// the same chain.
var ErrMismatch = errors.New("runs do not match")

// mergeRun is a run being merged.
type mergeRun struct {
	dir  string
	info *RunInfo
	cp   *Checkpoint
}

func (r *mergeRun) first() int { return r.info.ChainOffset + 1 }
func (r *mergeRun) last() int  { return r.info.ChainOffset + r.info.Chains }

// chains names the run's chains.
func (r *mergeRun) chains() string {
	if r.info.Chains == 1 {
		return fmt.Sprintf("chain %d", r.first())
	}
	return fmt.Sprintf("chains %d to %d", r.first(), r.last())
}

// Summarize makes the summary of the chains of the finished runs in dirs
// together, as one run holding all of them would (the runs may hold
// chains of one design through Config.ChainOffset): the table's scalars
// with R-hat and the ESS over all chains, the move acceptance rates, the
// stalls, the best state (map.nwk), and the tree summaries (mea.nwk,
// consensus.nwk, and summary.nwk with coclust.csv when the runs wrote
// them) with their clade credibilities and the ASDSF across all chains.
// When the runs are one chain each with offsets 0 .. C−1, every number
// and file is that of one run of C chains, bit for bit, but the wall time
// (here the longest run's) and the list of runs (Result.Runs).
//
// It refuses, with an error wrapping ErrMismatch that names the runs and
// the difference, runs whose run.json records other inputs (by their
// SHA-256: the model file, each data file, the labels file; and the --set
// values and --draw), another scaling, or other settings (iterations,
// burn-in, thinning, tree thinning, seed, imputation), and runs holding a
// chain in common; and it refuses an unfinished run. The model is loaded
// from the first run's inputs (LoadRun), which must still be at the paths
// run.json records.
//
// With out not empty, it writes summary.json (the Result), map.nwk and
// the tree summaries there; out must not be one of the runs.
func Summarize(dirs []string, out string) (*Result, error) {
	if len(dirs) == 0 {
		return nil, errors.New("summary: no runs")
	}
	var runs []*mergeRun
	for _, dir := range dirs {
		ri, err := ReadRun(dir)
		if err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		if ri.IsEM() {
			return nil, fmt.Errorf("summary: %s holds an EM run (run --method em), which has no chains to merge; its summary is its own summary.json", dir)
		}
		if ri.Inputs == nil {
			return nil, fmt.Errorf("summary: %s records no inputs (its model was not loaded from files), so it cannot be checked against the other runs", dir)
		}
		runs = append(runs, &mergeRun{dir: dir, info: ri})
	}
	for _, r := range runs[1:] {
		if err := sameRun(runs[0], r); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(runs, func(a, b *mergeRun) int { return cmp.Compare(a.info.ChainOffset, b.info.ChainOffset) })
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1], runs[i]
		if b.first() <= a.last() {
			if a.dir == b.dir {
				return nil, fmt.Errorf("summary: %s is given twice: %w", a.dir, ErrMismatch)
			}
			return nil, fmt.Errorf("summary: %s (%s) and %s (%s) both hold chain %d: %w",
				a.dir, a.chains(), b.dir, b.chains(), b.first(), ErrMismatch)
		}
	}
	if out != "" {
		if err := checkMergeOut(out, runs); err != nil {
			return nil, err
		}
	}
	m, err := LoadRun(runs[0].dir)
	if err != nil {
		return nil, fmt.Errorf("summary: loading the model of %s: %w", runs[0].dir, err)
	}
	if m.Several() {
		return nil, fmt.Errorf("summary: %w: merging runs of a model with several PYDTs", ErrUnsupported)
	}
	for _, r := range runs {
		if r.cp, err = ReadCheckpoint(r.dir, m); err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		if r.cp.Iteration < r.info.Iters {
			return nil, fmt.Errorf("summary: %s has done %d of its %d iterations; finish it with run --resume first", r.dir, r.cp.Iteration, r.info.Iters)
		}
		if len(r.cp.Chains) != r.info.Chains {
			return nil, fmt.Errorf("summary: %s: the checkpoint has %d chains, run.json says %d", r.dir, len(r.cp.Chains), r.info.Chains)
		}
	}
	ri := runs[0].info
	cfg := ri.config("")
	res := &Result{Iterations: cfg.Iters, Burn: cfg.Burn, Thin: cfg.Thin, TreeThin: cfg.TreeThin, Seed: cfg.Seed, Completed: cfg.Iters,
		MapLogJoint: runs[0].cp.Best, MapLogJointS: mapS(runs[0].cp), MapWritten: m.Trees[0].Augmented() == nil,
		Acceptance: map[string]float64{}, Stuck: []int{}}
	// The scalars, from the traces.
	scalars := m.TraceColumns()
	var lj, ll [][]float64
	kept := make([][][]float64, len(scalars))
	for _, r := range runs {
		rlj, rll, rkept, err := readMergeTrace(r, scalars)
		if err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		lj, ll = append(lj, rlj...), append(ll, rll...)
		for i := range kept {
			kept[i] = append(kept[i], rkept[i]...)
		}
	}
	res.Scalars = append(res.Scalars, diagnostics.Summarize("log_joint", lj), diagnostics.Summarize("log_lik", ll))
	zs := labelArrays(scalars)
	drawPaths, drawSizes := make([][]string, len(zs)), make([][]int64, len(zs))
	for j, z := range zs {
		for _, r := range runs {
			for k := range r.info.Chains {
				name := DrawsFileOf(z.Name, r.first()+k)
				size, ok := r.cp.Sizes[name]
				if !ok {
					return nil, fmt.Errorf("summary: %s: the checkpoint does not record %s", r.dir, name)
				}
				drawPaths[j] = append(drawPaths[j], filepath.Join(r.dir, name))
				drawSizes[j] = append(drawSizes[j], size)
			}
		}
	}
	plain, aligned, err := summarizeTraced(m, scalars, lj, kept, drawsFiles(zs, drawPaths, drawSizes))
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	res.Scalars, res.Aligned = append(res.Scalars, plain...), aligned
	// The chains' counts, from the checkpoints.
	var st treemove.Stats
	var ridge treemove.MoveStats
	var numbers, paths []string
	contiguous := true
	bestRun := runs[0]
	for _, r := range runs {
		res.Runs = append(res.Runs, MergedRun{Dir: r.dir, FirstChain: r.first(), Chains: r.info.Chains})
		res.WallTime = max(res.WallTime, r.cp.Wall)
		if mapS(r.cp) > res.MapLogJointS {
			res.MapLogJointS, res.MapLogJoint, bestRun = mapS(r.cp), r.cp.Best, r
		}
		for k, cs := range r.cp.Chains {
			chain := r.first() + k
			contiguous = contiguous && chain == res.Chains+1
			res.Chains++
			res.ChainNumbers = append(res.ChainNumbers, chain)
			numbers = append(numbers, strconv.Itoa(chain))
			paths = append(paths, filepath.Join(r.dir, TreesFile(chain)))
			res.Skipped += cs.Skipped
			res.addStall(chain, cs.Stall[1])
			ridge.Proposed += cs.Ridge[0]
			ridge.Accepted += cs.Ridge[1]
			for _, name := range slices.Sorted(maps.Keys(cs.Trees)) {
				s := cs.Trees[name].Stats
				res.Refused += s.NonFinite
				st.Add(s)
			}
		}
	}
	if contiguous {
		res.ChainNumbers = nil
	}
	res.setAcceptance(st, ridge)
	res.Schedule, err = mergeSchedule(runs[0].dir, m)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	coclust := false
	for _, r := range runs {
		coclust = coclust || r.info.Coclust
	}
	if res.SummaryTree, err = writeTreeFilesSummary(paths, m.Labels, m.N, wantCoclust(m.N, coclust), out, "", res.treeAlignment(m.Trees[0].Leaves.Name)); err != nil {
		return nil, fmt.Errorf("summary of chains %s: %w", strings.Join(numbers, ", "), err)
	}
	if out == "" {
		return res, nil
	}
	if res.MapWritten && bestRun.cp.BestTree != "" {
		if err := atomicfile.Write(filepath.Join(out, MapFile), []byte(bestRun.cp.BestTree+"\n")); err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
	}
	if err := res.writeStates(out); err != nil {
		return nil, err
	}
	if err := writeJSONFile(filepath.Join(out, SummaryFile), res); err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	return res, nil
}

// mapS is the log joint in s of a checkpoint's best state (that in t for
// a version 1 checkpoint, which did not record it).
func mapS(cp *Checkpoint) float64 {
	if cp.BestS != nil {
		return *cp.BestS
	}
	return cp.Best
}

// sameRun refuses a run b whose inputs or settings differ from a's.
func sameRun(a, b *mergeRun) error {
	diff := func(what string, x, y any) error {
		return fmt.Errorf("summary: %s and %s are not runs of one design: %s differs (%v in %s, %v in %s): %w",
			a.dir, b.dir, what, x, a.dir, y, b.dir, ErrMismatch)
	}
	x, y := a.info, b.info
	for _, s := range []struct {
		what string
		x, y any
	}{
		{"the number of iterations", x.Iters, y.Iters}, {"the burn-in", x.Burn, y.Burn}, {"the thinning", x.Thin, y.Thin},
		{"the tree thinning", max(x.TreeThin, 1), max(y.TreeThin, 1)}, {"the seed", x.Seed, y.Seed}, {"imputation", x.Impute, y.Impute},
	} {
		if s.x != s.y {
			return diff(s.what, s.x, s.y)
		}
	}
	xi, yi := x.Inputs, y.Inputs
	file := func(what string, f, g *File) error {
		switch {
		case f == nil && g == nil:
			return nil
		case f == nil || g == nil:
			return diff(what, fileName(f), fileName(g))
		case f.SHA256 != g.SHA256:
			return diff(what+"'s SHA-256", f.Path+" "+short(f.SHA256), g.Path+" "+short(g.SHA256))
		}
		return nil
	}
	if err := file("the model file", &xi.Model, &yi.Model); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(xi.Data)) {
		f := xi.Data[name]
		g, ok := yi.Data[name]
		var gp *File
		if ok {
			gp = &g
		}
		if err := file("data "+name, &f, gp); err != nil {
			return err
		}
	}
	for name, g := range yi.Data {
		if _, ok := xi.Data[name]; !ok {
			return diff("data "+name, "none", g.Path)
		}
	}
	if err := file("the labels file", xi.Labels, yi.Labels); err != nil {
		return err
	}
	if !slices.Equal(xi.Set, yi.Set) {
		return diff("--set", strings.Join(xi.Set, ","), strings.Join(yi.Set, ","))
	}
	if xi.Draw != yi.Draw {
		return diff("--draw", xi.Draw, yi.Draw)
	}
	if !reflect.DeepEqual(x.Standardize, y.Standardize) {
		return diff("the standardization", x.Standardize != nil, y.Standardize != nil)
	}
	return nil
}

func fileName(f *File) string {
	if f == nil {
		return "none"
	}
	return f.Path
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	if sha == "" {
		return "(no SHA-256)"
	}
	return sha
}

// checkMergeOut refuses an output directory that is one of the runs or
// holds a run, and creates it.
func checkMergeOut(out string, runs []*mergeRun) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	for _, r := range runs {
		d, err := filepath.Abs(r.dir)
		if err == nil && d == abs {
			return fmt.Errorf("summary: the output directory %s is one of the runs; give another", out)
		}
	}
	if _, err := os.Stat(filepath.Join(out, RunFile)); err == nil {
		return fmt.Errorf("summary: the output directory %s holds a run (%s); give another", out, RunFile)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}

// mergeSchedule is the schedule that the first run reported in its
// summary.json, or the model's when that is missing.
func mergeSchedule(dir string, m *Model) ([]string, error) {
	var res Result
	if err := readJSONFile(filepath.Join(dir, SummaryFile), &res); err == nil && res.Schedule != nil {
		return res.Schedule, nil
	}
	sched, err := NewSchedule(m)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range sched.Steps {
		names = append(names, s.Name())
	}
	return names, nil
}

// readMergeTrace reads the kept draws of the run's chains from its
// trace.csv, up to the size its checkpoint records: log_joint, log_lik
// and each scalar's, per chain in the run's order.
func readMergeTrace(r *mergeRun, scalars []Traced) (lj, ll [][]float64, kept [][][]float64, err error) {
	path := filepath.Join(r.dir, TraceFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	head := traceHeader(scalars)
	size, ok := r.cp.Sizes[TraceFile]
	if !ok {
		return nil, nil, nil, fmt.Errorf("%s: the checkpoint does not record %s", r.dir, TraceFile)
	}
	sc := bufio.NewScanner(io.LimitReader(f, size))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	if !sc.Scan() || sc.Text() != head {
		return nil, nil, nil, fmt.Errorf("%s: the header is not %s", path, head)
	}
	c := r.info.Chains
	lj, ll = make([][]float64, c), make([][]float64, c)
	kept = make([][][]float64, len(scalars))
	for i := range kept {
		kept[i] = make([][]float64, c)
	}
	line := 1
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 4+len(scalars) {
			return nil, nil, nil, fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(fields), 4+len(scalars))
		}
		k, err := strconv.Atoi(fields[0])
		if err != nil || k < r.first() || k > r.last() {
			return nil, nil, nil, fmt.Errorf("%s:%d: chain %q is not one of the run's chains %d to %d", path, line, fields[0], r.first(), r.last())
		}
		k -= r.first()
		vals := make([]float64, len(fields)-2)
		for i, s := range fields[2:] {
			if vals[i], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, nil, nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
		lj[k] = append(lj[k], vals[0])
		ll[k] = append(ll[k], vals[1])
		for i := range scalars {
			kept[i][k] = append(kept[i][k], vals[2+i])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return lj, ll, kept, nil
}
