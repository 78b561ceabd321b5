package inference

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestLabelGroups: the label axes of the HMM are found from the graph:
// pi0's components (z[1] ~ Categorical(pi0)), both axes of trans (the row
// read at z[t - 1] and its components) and mu's first axis (mu[z[t], d]).
func TestLabelGroups(t *testing.T) {
	m := compileHMM(t, 6, 3, 2, func(i, j int) float64 { return float64(i) })
	gs := labelGroups(m)
	if len(gs) != 1 || gs[0].z.Name != "z" || gs[0].K != 3 {
		t.Fatalf("groups %v, want z of 3 states", gs)
	}
	want := map[string][]bool{"pi0": {true}, "trans": {true, true}, "mu": {true, false}}
	got := map[string][]bool{}
	for v, a := range gs[0].axes {
		got[v.Name] = a
	}
	if len(got) != len(want) {
		t.Errorf("label axes %v, want %v", got, want)
	}
	for n, a := range want {
		if !slices.Equal(got[n], a) {
			t.Errorf("label axes of %s: %v, want %v", n, got[n], a)
		}
	}
}

// TestAlignPlantedPermutation: draws scattered around one truth whose
// labels are permuted per chain, and switched mid-chain in chain 1, have a
// large raw R-hat for pi0 and trans; aligned, the R-hat is about 1, the
// means are the truth's (the reference draw is unpermuted) and the modal
// states are the true states.
func TestAlignPlantedPermutation(t *testing.T) {
	const T, K, C, L = 20, 3, 4, 300
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64(i) })
	cols := m.Traced()
	rng := rand.New(rand.NewPCG(1, 2))
	zTrue := make([]int, T)
	for i := range zTrue {
		zTrue[i] = (i / 3) % K
	}
	p0 := []float64{0.6, 0.3, 0.1}
	A := []float64{0.8, 0.15, 0.05, 0.1, 0.7, 0.2, 0.05, 0.25, 0.7}
	perms := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {1, 0, 2}}
	kept := make([][][]float64, len(cols))
	for i := range kept {
		kept[i] = make([][]float64, C)
	}
	lj := make([][]float64, C)
	for c := range C {
		for d := range L {
			perm := perms[c]
			if c == 0 && d >= L/2 {
				perm = []int{2, 1, 0} // switched mid-chain
			}
			lj[c] = append(lj[c], -100+rng.Float64())
			if c == 0 && d == 0 {
				lj[c][d] = 0 // the reference: unpermuted
			}
			flip := rng.IntN(T) // one element per draw off the truth
			for i, col := range cols {
				var x float64
				switch col.Var.Name {
				case "z":
					k := zTrue[col.Off]
					if col.Off == flip && !(c == 0 && d == 0) {
						k = (k + 1) % K
					}
					x = float64(perm[k] + 1)
				case "pi0":
					// element perm[k] holds state k's value
					k := slices.Index(perm, col.Off)
					x = p0[k] + 0.02*rng.NormFloat64()
				case "trans":
					j, k := slices.Index(perm, col.Off/K), slices.Index(perm, col.Off%K)
					x = A[j*K+k] + 0.02*rng.NormFloat64()
				default:
					x = rng.NormFloat64()
				}
				kept[i][c] = append(kept[i][c], x)
			}
		}
	}
	plain, info, err := summarizeTracedAll(t, m, cols, lj, kept)
	if err != nil {
		t.Fatal(err)
	}
	if info == nil || len(info.Arrays) != 1 || info.Chain != 1 || info.Draw != 1 {
		t.Fatalf("aligned %+v, want z aligned to chain 1's first draw", info)
	}
	for _, s := range plain {
		if strings.HasPrefix(s.Name, "z[") || strings.HasPrefix(s.Name, "pi0") || strings.HasPrefix(s.Name, "trans") {
			t.Errorf("label-dependent %s among the plain scalars", s.Name)
		}
		if s.Name == "occupied(z)" && s.Mean != K {
			t.Errorf("occupied(z) mean %v, want %d", s.Mean, K)
		}
	}
	if len(info.Scalars) != K+K*K {
		t.Fatalf("%d aligned scalars, want %d", len(info.Scalars), K+K*K)
	}
	raw := map[string]float64{}
	for i, col := range cols {
		if col.Var.Name == "pi0" || col.Var.Name == "trans" {
			raw[col.Name] = rhatOf(kept[i])
		}
	}
	for i, s := range info.Scalars {
		var want float64
		if i < K {
			want = p0[i]
		} else {
			want = A[i-K]
		}
		if !(math.Abs(s.Mean-want) <= 4*0.02/math.Sqrt(C*L)) {
			t.Errorf("aligned %s mean %.4f, want %.4f", s.Name, s.Mean, want)
		}
		if s.Rhat > 1.01 {
			t.Errorf("aligned %s R-hat %.3f, want about 1", s.Name, s.Rhat)
		}
	}
	if raw["pi0[1]"] < 1.5 || raw["trans[1,1]"] < 1.2 {
		t.Errorf("raw R-hat of pi0[1] %.3f, trans[1,1] %.3f: the planted switch should show", raw["pi0[1]"], raw["trans[1,1]"])
	}
	a := info.Arrays[0]
	for i, k := range a.Modal {
		if k != zTrue[i]+1 || a.ModalProb[i] < 0.8 {
			t.Errorf("z[%d]: modal state %d (prob %.3f), want %d", i+1, k, a.ModalProb[i], zTrue[i]+1)
		}
	}
	if !(math.Abs(a.Agreement-(1-1.0/T)) <= 1e-3) {
		t.Errorf("agreement %.4f, want %.4f", a.Agreement, 1-1.0/T)
	}
}

// rhatOf is the split R-hat of draws, by the same summary the run uses.
func rhatOf(chains [][]float64) float64 {
	return diagnostics.Summarize("x", chains).Rhat
}

// TestRunHMMAligned: a short run of the HMM reports no raw per-state
// column (so its warnings cannot name z[t], pi0 or trans unaligned),
// reports pi0 and trans aligned in summary.json and the table, summarises
// the trees of mu aligned, and writes the states file with one row per
// time point.
func TestRunHMMAligned(t *testing.T) {
	const T, K = 30, 3
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64((i/10)%K)*3 + 0.1*math.Sin(float64(i)) })
	dir := t.TempDir()
	res, err := Run(context.Background(), m, Config{Iters: 60, Chains: 2, Seed: 3, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Scalars {
		if strings.Contains(s.Name, "[") {
			t.Errorf("raw per-state column %s in the summary", s.Name)
		}
	}
	if res.Aligned == nil || len(res.Aligned.Scalars) != K+K*K || res.Aligned.Arrays[0].Var != "z" {
		t.Fatalf("aligned %+v, want pi0 and trans aligned with z", res.Aligned)
	}
	if !slices.Equal(res.Aligned.Arrays[0].Trees, []string{"mu"}) || res.SummaryTree == nil || res.SummaryTree.AlignedBy != "z" {
		t.Errorf("aligned trees %v, summary tree %+v: want the trees of mu summarised aligned by z", res.Aligned.Arrays[0].Trees, res.SummaryTree)
	}
	var b bytes.Buffer
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\nz[") || !strings.Contains(out, "label switching: the 3 states of z with pi0, trans are aligned") {
		t.Errorf("table:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "warning: split R-hat") {
			for _, s := range res.Aligned.Scalars {
				if strings.Contains(line, s.Name+",") || strings.Contains(line, s.Name+":") {
					if s.Rhat <= 1.01 {
						t.Errorf("warning names %s whose aligned R-hat is %.3f", s.Name, s.Rhat)
					}
				}
			}
		}
	}
	// trace.csv holds occupied(z), not the T columns z[t]; the draws of z
	// are in draws-z-K.csv, one row per kept sweep.
	trace := string(must(os.ReadFile(filepath.Join(dir, TraceFile))))
	head, _, _ := strings.Cut(trace, "\n")
	if strings.Contains(head, "z[") || !strings.Contains(head, "occupied(z)") {
		t.Errorf("trace.csv header %s: want occupied(z) and no z[t]", head)
	}
	for k := 1; k <= 2; k++ {
		rows := strings.Split(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, DrawsFileOf("z", k)))))), "\n")
		if len(rows) != 31 || rows[0] != DrawsHeader || len(strings.Fields(rows[1])) != T || !strings.HasPrefix(rows[1], "31,") {
			t.Errorf("%s: %d lines, first %q, %q", DrawsFileOf("z", k), len(rows), rows[0], rows[1])
		}
	}
	states, err := os.ReadFile(filepath.Join(dir, StatesFileOf("z")))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(string(states)), "\n"); len(rows) != T+1 || rows[0] != "t,state,prob" {
		t.Errorf("states file has %d lines, header %q", len(rows), rows[0])
	}
	if !strings.Contains(string(must(os.ReadFile(filepath.Join(dir, SummaryFile)))), `"aligned"`) {
		t.Error("summary.json has no aligned block")
	}
}

// TestAlignPlantedPermutationTrees: the trees over the states (mu ~ PYDT,
// read as mu[z[t], d]) are summarised with each tree's leaves renamed by
// its draw's permutation. Two chains agree on the states and on the tree
// ((1, 2), 3) over them, but chain 2's labels are permuted (and differently
// on the draws whose trees are not written, --tree-thin 2). Raw, the clade
// of states 1 and 2 has credibility 1/2 and the consensus is a star;
// aligned, its credibility is 1, the ASDSF 0, and each chain alone gives
// the same summary trees.
func TestAlignPlantedPermutationTrees(t *testing.T) {
	const T, K, C, L, treeThin = 12, 3, 2, 20, 2
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64(i) })
	cols := m.Traced()
	rng := rand.New(rand.NewPCG(7, 8))
	permOf := func(c, d int) []int {
		switch {
		case c == 0:
			return []int{0, 1, 2}
		case d%2 == 1: // the draws whose trees are written
			return []int{2, 1, 0}
		default:
			return []int{1, 2, 0}
		}
	}
	kept := make([][][]float64, len(cols))
	for i := range kept {
		kept[i] = make([][]float64, C)
	}
	lj := make([][]float64, C)
	dir := t.TempDir()
	var paths []string
	for c := range C {
		var trees strings.Builder
		for d := range L {
			perm := permOf(c, d)
			lj[c] = append(lj[c], -100+rng.Float64())
			if c == 0 && d == 0 {
				lj[c][d] = 0
			}
			for i, col := range cols {
				x := rng.NormFloat64()
				if col.Var.Name == "z" {
					x = float64(perm[(col.Off/4)%K] + 1)
				}
				kept[i][c] = append(kept[i][c], x)
			}
			if (d+1)%treeThin == 0 {
				// The tree ((state 1, state 2), state 3) in this draw's labels.
				fmt.Fprintf(&trees, "((%d:0.5,%d:0.5):0.4,%d:0.9):0.1;\n", perm[0]+1, perm[1]+1, perm[2]+1)
			}
		}
		p := filepath.Join(dir, TreesFile(c+1))
		if err := os.WriteFile(p, []byte(trees.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	_, info, err := summarizeTracedAll(t, m, cols, lj, kept)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Arrays) != 1 || !slices.Equal(info.Arrays[0].Trees, []string{"mu"}) {
		t.Fatalf("aligned arrays %+v, want z with the trees of mu", info.Arrays)
	}
	res := &Result{Aligned: info, TreeThin: treeThin}
	al := res.treeAlignment("mu")
	if al == nil {
		t.Fatal("no alignment for the trees of mu")
	}
	summary := func(al *treeAlignment, paths ...string) (*SummaryInfo, map[string]string) {
		t.Helper()
		out := t.TempDir()
		info, err := writeTreeFilesSummary(paths, nil, K, true, out, "", al)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, f := range []string{MEAFile, ConsensusFile, SummaryTreeFile, CoclustFile} {
			files[f] = string(must(os.ReadFile(filepath.Join(out, f))))
		}
		return info, files
	}
	rawInfo, raw := summary(nil, paths...)
	if rawInfo.ConsensusBranchPoints != 1 || rawInfo.ASDSF == nil || *rawInfo.ASDSF < 0.5 {
		t.Errorf("raw: %d consensus branch points, ASDSF %v: want a star and chains that disagree", rawInfo.ConsensusBranchPoints, rawInfo.ASDSF)
	}
	alInfo, aligned := summary(al, paths...)
	if alInfo.ConsensusBranchPoints != 2 || alInfo.ASDSF == nil || *alInfo.ASDSF != 0 || alInfo.AlignedBy != "z" {
		t.Errorf("aligned: %d consensus branch points, ASDSF %v, aligned by %q: want the clade of states 1 and 2, 0, z", alInfo.ConsensusBranchPoints, alInfo.ASDSF, alInfo.AlignedBy)
	}
	if !strings.Contains(aligned[ConsensusFile], "(1:0.5,2:0.5)1:") {
		t.Errorf("aligned consensus %s: want the clade (1, 2) of credibility 1", aligned[ConsensusFile])
	}
	for k := range C {
		one := &treeAlignment{by: "z", perms: al.perms[k : k+1], treeThin: treeThin}
		_, files := summary(one, paths[k])
		for f, want := range aligned {
			// The same trees up to rounding of the mean times.
			if roundNums(files[f]) != roundNums(want) {
				t.Errorf("chain %d alone, aligned: %s is\n%s want\n%s", k+1, f, files[f], want)
			}
		}
	}
	if raw[ConsensusFile] == aligned[ConsensusFile] {
		t.Error("raw and aligned consensus trees are the same")
	}
	// A tree file with more trees than aligned draws is an error.
	short := &treeAlignment{by: "z", perms: [][][]int{al.perms[0][:3], al.perms[1]}, treeThin: treeThin}
	if _, err := writeTreeFilesSummary(paths, nil, K, false, "", "", short); err == nil || !strings.Contains(err.Error(), "kept draw") {
		t.Errorf("more trees than aligned draws: error %v", err)
	}
}

// roundNums rounds every number in s to 4 significant digits.
func roundNums(s string) string {
	return regexp.MustCompile(`[0-9]+\.[0-9]+`).ReplaceAllStringFunc(s, func(x string) string {
		f, _ := strconv.ParseFloat(x, 64)
		return strconv.FormatFloat(f, 'g', 4, 64)
	})
}

// TestAlignReferenceFinite: the reference draw is the kept draw of highest
// finite log_joint, whatever comes first; with none finite, an error.
func TestAlignReferenceFinite(t *testing.T) {
	const T, K = 6, 3
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64(i) })
	cols := m.Traced()
	kept := make([][][]float64, len(cols))
	for i, col := range cols {
		for range 2 {
			xs := make([]float64, 3)
			for d := range xs {
				xs[d] = 0.3
				if col.Var.Name == "z" {
					xs[d] = float64(col.Off%K + 1)
				}
			}
			kept[i] = append(kept[i], xs)
		}
	}
	for _, c := range []struct {
		lj          [][]float64
		chain, draw int
		err         string
	}{
		{[][]float64{{math.NaN(), -5, -3}, {-4, -2, math.NaN()}}, 2, 2, ""},
		{[][]float64{{math.Inf(1), -5, -3}, {-4, math.Inf(-1), -7}}, 1, 3, ""},
		{[][]float64{{math.NaN(), math.NaN(), math.Inf(-1)}, {math.NaN(), math.NaN(), math.NaN()}}, 0, 0, "finite log_joint"},
	} {
		_, info, err := summarizeTracedAll(t, m, cols, c.lj, kept)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("log joints %v: error %v, want one saying %q", c.lj, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if info.Chain != c.chain || info.Draw != c.draw || math.IsNaN(info.LogJoint) {
			t.Errorf("log joints %v: reference chain %d draw %d (%v), want chain %d draw %d", c.lj, info.Chain, info.Draw, info.LogJoint, c.chain, c.draw)
		}
	}
}

// TestAlignDrawsFiles: the draws of z are read from the draws files, and
// a file that does not hold exactly the kept draws, or holds something
// other than states 1..K, is an error naming it, never a silent skip.
func TestAlignDrawsFiles(t *testing.T) {
	const T, K = 4, 3
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64(i) })
	cols := m.TraceColumns()
	z, _ := m.G.Lookup("z")
	kept := make([][][]float64, len(cols))
	for i := range kept {
		kept[i] = [][]float64{{0.3, 0.3}}
	}
	lj := [][]float64{{-1, -2}}
	good := DrawsHeader + "\n" + drawsRow(3, []float64{1, 1, 2, 3}) + drawsRow(4, []float64{2, 2, 1, 3})
	for _, c := range []struct{ name, text, err string }{
		{"good", good, ""},
		{"short", DrawsHeader + "\n" + drawsRow(3, []float64{1, 1, 2, 3}), "1 draws of z, not its 2 kept"},
		{"long", good + drawsRow(5, []float64{1, 1, 1, 1}), "more draws of z than the 2 kept"},
		{"state", DrawsHeader + "\n3,1 1 2 4\n4,1 1 2 3\n", "is 4, not a state in 1..3"},
		{"width", DrawsHeader + "\n3,1 1 2\n4,1 1 2 3\n", "3 states, want 4"},
		{"header", "iteration,z\n3,1 1 2 3\n4,1 1 2 3\n", "the header is"},
		{"torn", good + "5,1 1", "not whole"},
	} {
		p := filepath.Join(t.TempDir(), DrawsFileOf("z", 1))
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, info, err := summarizeTraced(m, cols, lj, kept, drawsFiles([]*graph.Var{z}, [][]string{{p}}, nil))
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if a := info.Arrays[0]; !slices.Equal(a.Modal, []int{1, 1, 2, 3}) || a.ModalProb[0] != 1 {
				t.Errorf("%s: modal states %v %v, want 1 1 2 3 each with probability 1 (the second draw is the first permuted)", c.name, a.Modal, a.ModalProb)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		}
	}
}

// summarizeTracedAll is summarizeTraced of draws kept[i][chain][draw] of
// every column of cols (Model.Traced, the elements of z included), as a
// run keeps them: z's elements go to its draws (here in memory) and
// occupied(z) to the trace.
func summarizeTracedAll(t *testing.T, m *Model, cols []Traced, lj [][]float64, kept [][][]float64) ([]diagnostics.Summary, *AlignedInfo, error) {
	t.Helper()
	trace := m.TraceColumns()
	tk := make([][][]float64, len(trace))
	zdraws := map[*graph.Var][][][]int{} // [chain][draw][t]
	for j, tc := range trace {
		if tc.States == 0 {
			i := slices.IndexFunc(cols, func(c Traced) bool { return c.Var == tc.Var && c.Off == tc.Off })
			if i < 0 {
				t.Fatalf("no draws of %s", tc.Name)
			}
			tk[j] = kept[i]
			continue
		}
		z := tc.Var
		zd := make([][][]int, len(lj))
		tk[j] = make([][]float64, len(lj))
		for c := range lj {
			for d := range lj[c] {
				zs := make([]int, z.Len())
				used := map[int]bool{}
				for i, col := range cols {
					if col.Var == z {
						zs[col.Off] = int(kept[i][c][d]) - 1
						used[zs[col.Off]] = true
					}
				}
				zd[c] = append(zd[c], zs)
				tk[j][c] = append(tk[j][c], float64(len(used)))
			}
		}
		zdraws[z] = zd
	}
	draws := func(z *graph.Var, c int, fn func([]int) error) error {
		for _, zs := range zdraws[z][c] {
			if err := fn(zs); err != nil {
				return err
			}
		}
		return nil
	}
	return summarizeTraced(m, trace, lj, tk, draws)
}

// TestTreeAlignmentSourceErrors: a tree over the states whose leaves are
// not the states, or that is not that of a kept draw, is an error naming
// the file (and the tree: its line, or its number).
func TestTreeAlignmentSourceErrors(t *testing.T) {
	al := &treeAlignment{by: "z", perms: [][][]int{{{0, 1, 2}, {2, 0, 1}}}, treeThin: 1}
	good := "((1:0.4,2:0.4):0.3,3:0.7):0.3;"
	for _, c := range []struct {
		name, text, want string
	}{
		{"two trees", good + "\n" + good + "\n", ""},
		{"a leaf not a state", good + "\n((1:0.4,2:0.4):0.3,4:0.7):0.3;\n", "trees.nwk: newick: line 2, offset 19: unknown leaf label \"4\""},
		{"more trees than draws", good + "\n" + good + "\n" + good + "\n", "tree 3 of"},
	} {
		path := filepath.Join(t.TempDir(), "trees.nwk")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		read := 0
		err := al.source(nil, 3, path, 0)(func(*pydt.Tree) error { read++; return nil })
		switch {
		case c.want == "" && (err != nil || read != 2):
			t.Errorf("%s: %d trees read, error %v", c.name, read, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
