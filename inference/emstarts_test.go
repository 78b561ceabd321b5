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
)

// restrictedClades returns the clades of tr restricted to the leaves
// keep (leaf keep[j] renamed j), each as a sorted list of the new names,
// without the single leaves.
func restrictedClades(tr *pydt.Tree, keep []int) map[string]bool {
	idx := map[int]int{}
	for j, r := range keep {
		idx[r] = j
	}
	out := map[string]bool{}
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		var in []int
		for _, u := range tr.PostOrderFrom(v, nil) {
			if j, ok := idx[int(u)]; ok && tr.IsLeaf(u) {
				in = append(in, j)
			}
		}
		if len(in) > 1 {
			slices.Sort(in)
			out[fmt.Sprint(in)] = true
		}
	}
	return out
}

// TestMCMCStarts checks the starting trees from the subsample's MCMC run
// against the run's own trees: the summary tree is SummarizeTrees' linkage
// tree of the kept trees, the consensus its majority-rule consensus, the
// last tree the last kept tree; each is extended to all rows (here 40,
// from a subsample of 15), and restricted to the subsample's rows it has
// exactly the source tree's clades (the extension attaches rows, it never
// moves the subsample's).
func TestMCMCStarts(t *testing.T) {
	x := fourClusters(40, 0.3, 2)
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": x})
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	cfg := EMConfig{Seed: 3, ABRows: 15, ABSweeps: 40}.withDefaults()
	ab, smp, err := p.estimateAB(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.holdAB(ab)
	if len(smp.rows) != 15 || len(smp.trees) != 20 {
		t.Fatalf("%d rows, %d trees; want 15 rows and the 20 kept sweeps' trees", len(smp.rows), len(smp.trees))
	}
	if !slices.Equal(smp.rows, abPick(3, 40, 15)) {
		t.Fatalf("rows %v, not the subsample's %v", smp.rows, abPick(3, 40, 15))
	}
	starts, err := p.mcmcStarts(smp, p.initialData(), false)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := SummarizeTrees(TreeSlice(smp.trees), 15, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*pydt.Tree{StartMCMCSummary: sum.Linkage.Tree, StartMCMCConsensus: sum.Consensus.Tree, StartMCMCLast: smp.trees[len(smp.trees)-1]}
	if len(starts) != len(want) {
		t.Fatalf("%d starts, want %d", len(starts), len(want))
	}
	all := make([]int, 15)
	for i := range all {
		all[i] = i
	}
	for _, s := range starts {
		src, ok := want[s.start]
		if !ok {
			t.Fatalf("unexpected start %q", s.start)
		}
		if s.tr.NumLeaves() != 40 {
			t.Fatalf("%s: %d leaves, want all 40 rows", s.start, s.tr.NumLeaves())
		}
		if err := s.tr.Validate(); err != nil {
			t.Fatalf("%s: %v", s.start, err)
		}
		got, w := restrictedClades(s.tr, smp.rows), restrictedClades(src, all)
		if len(got) != len(w) {
			t.Errorf("%s: %d clades on the subsample's rows, the MCMC tree has %d", s.start, len(got), len(w))
		}
		for c := range w {
			if !got[c] {
				t.Errorf("%s: clade %s of the MCMC tree is not in the extended tree", s.start, c)
			}
		}
	}
	if only, err := p.mcmcStarts(smp, p.initialData(), true); err != nil || len(only) != 1 || only[0].start != StartMCMCSummary {
		t.Errorf("summary only: %d starts, %v", len(only), err)
	}
}

// TestRunEMMCMCStarts: on the standardized animals data (33 rows, so the
// MCMC run for α and β sees them all) the three trees of that run are
// fitted as initial trees, and the best of them ranks above every initial
// tree the search built before (sequential attachment, average linkage and
// its cuts), by 3.1 nats (the majority-rule consensus, −4105.41, against
// the sequential tree's −4108.49 after the search). Every tree of the
// K-best list names its start in summary.json and kbest.nwk.
func TestRunEMMCMCStarts(t *testing.T) {
	y, err := dataset.ReadFile("../examples/data/animals.csv")
	if err != nil {
		t.Fatal(err)
	}
	m := compileExampleFile(t, "gaussian.pydt", map[string]*dataset.Matrix{"X": y})
	if _, err := m.Standardize(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log []string
	res, err := RunEM(context.Background(), m, EMConfig{Out: dir, Rounds: 1, Seed: 1, Log: func(s string) { log = append(log, s) }})
	if err != nil {
		t.Fatal(err)
	}
	// The initial trees' values, from the log.
	best := map[bool]float64{}
	fitted := 0
	for _, l := range log {
		name, rest, ok := strings.Cut(l, " fitted: bound + Laplace correction ")
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(rest, &v); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		mc := strings.Contains(name, "MCMC")
		if mc {
			fitted++
		}
		if b, ok := best[mc]; !ok || v > b {
			best[mc] = v
		}
	}
	if fitted != 3 {
		t.Fatalf("%d trees of the MCMC run fitted, want 3; log:\n%s", fitted, strings.Join(log, "\n"))
	}
	if best[true] <= best[false]+1 {
		t.Errorf("best MCMC start %.2f, best other initial tree %.2f: want the MCMC start above", best[true], best[false])
	}
	if !strings.HasPrefix(res.Trees[0].Start, "mcmc-") {
		t.Errorf("best tree from %q, want a start from the MCMC run", res.Trees[0].Start)
	}
	var sum struct {
		KBest []EMEstimates `json:"kbest_estimates"`
	}
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(dir, SummaryFile))), &sum); err != nil {
		t.Fatal(err)
	}
	kb := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, KBestFile))))), "\n")
	if len(sum.KBest) != len(res.Trees) || len(kb) != len(res.Trees) {
		t.Fatalf("%d kbest_estimates, %d kbest.nwk lines, %d trees", len(sum.KBest), len(kb), len(res.Trees))
	}
	for i, e := range sum.KBest {
		if e.Start == "" || e.StartIndex < 1 || e.Round < 0 || e.Round > 1 {
			t.Errorf("kbest_estimates[%d]: start %q %d, round %d", i, e.Start, e.StartIndex, e.Round)
		}
		if w := fmt.Sprintf("[start=%s %d round=%d]", e.Start, e.StartIndex, e.Round); !strings.Contains(kb[i], w) {
			t.Errorf("kbest.nwk line %d lacks %s", i+1, w)
		}
	}
}

// TestRunEMDDTStarts: with α = β = 0 (Neal's DDT) only binary trees have
// positive prior density, and the majority-rule consensus of the
// subsample's MCMC run multifurcates where the posterior is unsure: it is
// split into a binary tree (resolveBinary; it was left out before, and
// before that its fit failed at the first iteration with a bound of −Inf
// and every DDT run on synthetic.csv warned of a dropped initial tree).
// No initial tree fails, and every kept tree is binary.
func TestRunEMDDTStarts(t *testing.T) {
	x, err := dataset.ReadFile("../examples/data/synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	m := compileSource(t, "gaussian.pydt", src, map[string]*dataset.Matrix{"X": x}, map[string]float64{"alpha": 0, "beta": 0})
	var log []string
	res, err := RunEM(context.Background(), m, EMConfig{Out: t.TempDir(), Rounds: 1, Seed: 1, Log: func(s string) { log = append(log, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.InitialFailed != 0 {
		t.Errorf("%d initial trees failed to fit; log:\n%s", res.InitialFailed, strings.Join(log, "\n"))
	}
	for i, tr := range res.Trees {
		if !isBinary(tr.Tree) {
			t.Errorf("tree %d of the list (start %s) is not binary", i+1, tr.Start)
		}
	}
}

// cherries returns a tree of 2k leaves: k cherries (2i, 2i+1) joined at
// t = 0.6 under one root at t = 0.2 (a k-way multifurcation).
func cherries(k int) *pydt.Tree {
	tr := pydt.New(2 * k)
	root := tr.NewInternal(pydt.TimeAt(0.2))
	for i := range k {
		w := tr.NewInternal(pydt.TimeAt(0.6))
		tr.AddChild(w, pydt.NodeID(2*i))
		tr.AddChild(w, pydt.NodeID(2*i+1))
		tr.AddChild(root, w)
	}
	tr.SetRoot(root)
	tr.Recount()
	return tr
}

// TestResolveBinary checks the split of multifurcations: the result is
// binary and valid, keeps every clade and every time of the tree it
// splits, and joins first the two children whose mean rows are nearest
// (here the cherries of rows 0–3, whose means are 0.1 apart, against 5
// and more for the others); a branch point whose children are all leaves
// is split too.
func TestResolveBinary(t *testing.T) {
	// Rows 0..7 of 1 column, the cherries' means 0.1, 0.2, 5.1 and 20
	// (row 7 missing); the tree's leaf j is row j.
	x := []float64{0, 0.2, 0.1, 0.3, 5, 5.2, 20, math.NaN()}
	rows := []int{0, 1, 2, 3, 4, 5, 6, 7}
	tr := cherries(4)
	got, err := resolveBinary(tr, x, 1, rows)
	if err != nil {
		t.Fatal(err)
	}
	if !isBinary(got) || got.Validate() != nil {
		t.Fatalf("not a valid binary tree: %s (%v)", got.Newick(), got.Validate())
	}
	all := make([]int, 8)
	for i := range all {
		all[i] = i
	}
	gc, wc := restrictedClades(got, all), restrictedClades(tr, all)
	for c := range wc {
		if !gc[c] {
			t.Errorf("clade %s of the tree is lost: %s", c, got.Newick())
		}
	}
	if !gc["[0 1 2 3]"] || !gc["[0 1 2 3 4 5]"] || len(gc) != 7 {
		t.Errorf("clades %v: want the joins [0 1 2 3] then [0 1 2 3 4 5] (nearest means first)", gc)
	}
	if got.Time(got.Root()) != tr.Time(tr.Root()) {
		t.Errorf("root time %v, want %v", got.Time(got.Root()), tr.Time(tr.Root()))
	}
	cherryTime := 0
	for _, v := range got.PostOrder(nil) {
		if got.IsLeaf(v) {
			continue
		}
		if p := got.Parent(v); p != pydt.NoNode && !got.Time(p).Before(got.Time(v)) {
			t.Errorf("node %d at %v is not after its parent at %v", v, got.Time(v), got.Time(p))
		}
		if got.IsLeaf(got.FirstChild(v)) && got.Time(v) == pydt.TimeAt(0.6) {
			cherryTime++
		}
	}
	if cherryTime != 4 {
		t.Errorf("%d cherries at their time 0.6, want 4: %s", cherryTime, got.Newick())
	}
	// A star of three leaves (rows 0, 1, 2: values 0, 0.2, 0.1): the
	// nearest two, rows 0 and 2, join first.
	star := pydt.New(3)
	r := star.NewInternal(pydt.TimeAt(0.5))
	for i := range 3 {
		star.AddChild(r, pydt.NodeID(i))
	}
	star.SetRoot(r)
	star.Recount()
	sb, err := resolveBinary(star, x, 1, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if c := restrictedClades(sb, []int{0, 1, 2}); !isBinary(sb) || !c["[0 2]"] {
		t.Errorf("star of rows 0, 1, 2: %s; want the cherry (0, 2)", sb.Newick())
	}
}

// TestMCMCStartsDDTMultifurcating: on the large-data path (the MCMC
// summary tree alone, extended to all rows) with α = β = 0 (binary trees
// only), a summary tree that multifurcates is split into a binary tree and
// kept as a start; it was dropped, leaving no MCMC start at all.
func TestMCMCStartsDDTMultifurcating(t *testing.T) {
	x := fourClusters(16, 0.3, 2)
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	m := compileSource(t, "gaussian.pydt", src, map[string]*dataset.Matrix{"X": x}, map[string]float64{"alpha": 0, "beta": 0})
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	// The subsample: rows 0..7, every kept tree the 4-way multifurcation
	// of cherries, so that the summary tree (average linkage of the mean
	// join times) ties at its root.
	smp := &abSample{rows: []int{0, 1, 2, 3, 4, 5, 6, 7}, c: 1, variance: 0.1, prec: 10}
	for range 4 {
		smp.trees = append(smp.trees, cherries(4))
	}
	sum, err := SummarizeTrees(TreeSlice(smp.trees), 8, true)
	if err != nil {
		t.Fatal(err)
	}
	if isBinary(sum.Linkage.Tree) {
		t.Fatalf("the test needs a multifurcating summary tree: %s", sum.Linkage.Tree.Newick())
	}
	starts, err := p.mcmcStarts(smp, p.initialData(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != 1 || starts[0].start != StartMCMCSummary {
		t.Fatalf("%d starts; want the summary tree, split", len(starts))
	}
	st := starts[0]
	if st.tr.NumLeaves() != 16 || !isBinary(st.tr) || st.tr.Validate() != nil {
		t.Fatalf("%s: %d leaves, binary %v, %v", st.name, st.tr.NumLeaves(), isBinary(st.tr), st.tr.Validate())
	}
	all := make([]int, 8)
	for i := range all {
		all[i] = i
	}
	got := restrictedClades(st.tr, smp.rows)
	for c := range restrictedClades(sum.Linkage.Tree, all) {
		if !got[c] {
			t.Errorf("clade %s of the summary tree is not in the start", c)
		}
	}
	if !strings.Contains(st.name, "split") {
		t.Errorf("name %q does not say the tree was split", st.name)
	}
}

// TestResolveStartsKeepsTheOthers: a start whose multifurcation cannot be
// split (its children one float64 step after it in s, so that no join
// time fits between) is left out with an error naming it, and the other
// starts are kept: a binary one as it is, a splittable one split.
// (Before, one failure dropped every MCMC start.)
func TestResolveStartsKeepsTheOthers(t *testing.T) {
	x := []float64{0, 0.2, 0.1, 0.3, 5, 5.2, 20, 21}
	rows := []int{0, 1, 2, 3, 4, 5, 6, 7}
	tight := pydt.New(8)
	root := tight.NewInternal(pydt.TimeFromS(1))
	for i := range 4 {
		w := tight.NewInternal(pydt.TimeFromS(math.Nextafter(1, 2)))
		tight.AddChild(w, pydt.NodeID(2*i))
		tight.AddChild(w, pydt.NodeID(2*i+1))
		tight.AddChild(root, w)
	}
	tight.SetRoot(root)
	tight.Recount()
	if _, err := resolveBinary(tight, x, 1, rows); err == nil {
		t.Fatal("resolveBinary split a multifurcation with no room for its joins: the test tree does not test the failure")
	}
	binary, err := resolveBinary(cherries(4), x, 1, rows)
	if err != nil {
		t.Fatal(err)
	}
	starts := []mcmcStart{
		{"summary", StartMCMCSummary, cherries(4)},
		{"consensus", StartMCMCConsensus, tight},
		{"last", StartMCMCLast, binary},
	}
	got, err := resolveStarts(starts, x, 1, rows)
	if err == nil || !strings.Contains(err.Error(), "consensus, split into a binary tree") {
		t.Errorf("error %v, want one naming the consensus start", err)
	}
	if len(got) != 2 || got[0].start != StartMCMCSummary || got[1].start != StartMCMCLast {
		t.Fatalf("kept %d starts %v, want the summary (split) and the last tree", len(got), got)
	}
	for _, st := range got {
		if !isBinary(st.tr) || st.tr.Validate() != nil {
			t.Errorf("%s: not a valid binary tree", st.name)
		}
	}
	if !strings.HasSuffix(got[0].name, "split by linkage") || got[1].name != "last" {
		t.Errorf("names %q, %q", got[0].name, got[1].name)
	}
}
