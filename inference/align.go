package inference

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/inference/labels"
	"github.com/pydtlang/pydtlang/internal/bounded"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Label switching. The K states of a categorical latent array z (param z :
// categorical(K)[T]) have no fixed labels: permuting them, together with
// every axis that z's values index, leaves the model unchanged, so one
// chain's state 1 is another's state 3 and the per-state columns of
// trace.csv disagree between chains although the chains agree. The run's
// summary therefore reports those columns aligned: every kept draw's states
// are relabelled to agree best with a reference draw (the kept draw of
// highest log_joint) by a maximum matching of their co-assignment counts
// (labels.Align, the Hungarian algorithm), and the label axes of the other
// variables are permuted alike before R-hat and ESS are computed.

// labelGroup is a categorical latent array and the axes its values label.
type labelGroup struct {
	z *graph.Var
	K int
	// axes[v] marks the axes of v that are z's label axis.
	axes map[*graph.Var][]bool
}

// labelGroups finds, from the graph, each traced categorical latent array
// z and the axes that its values label: the last axis of the probability
// vector of a factor defining z (the components of Categorical(p)), an
// axis of a vector or element indexed by an expression reading z (the row
// trans[z[t - 1]], mu[z[t], d]) in a factor defining or reading z. An axis
// whose length is not K is not a label axis. A variable whose axes two
// arrays label is left out of both (it cannot be aligned to either alone).
func labelGroups(m *Model) []*labelGroup {
	var out []*labelGroup
	for _, z := range m.LatentArrays() {
		K := z.Categories
		if K == 0 {
			if c, ok := z.Def.Type.(stdlib.CategoryProbs); ok {
				if r, ok := z.Def.Args[c.ProbsParam()].(graph.Row); ok {
					K = r.Len()
				}
			}
		}
		if K < 2 {
			continue
		}
		g := &labelGroup{z: z, K: K, axes: map[*graph.Var][]bool{}}
		mark := func(v *graph.Var, a int) {
			if v == z || v.IsData || a < 0 || a >= len(v.Dims) || v.Dims[a] != K {
				return
			}
			if g.axes[v] == nil {
				g.axes[v] = make([]bool, len(v.Dims))
			}
			g.axes[v][a] = true
		}
		var visit func(x graph.Expr)
		visit = func(x graph.Expr) {
			var v *graph.Var
			var idx []graph.Expr
			switch e := x.(type) {
			case graph.Elem:
				v, idx = e.V, e.Idx
			case graph.Row:
				v, idx = e.V, e.Idx
			case graph.Neg:
				visit(e.X)
			case graph.Op:
				visit(e.X)
				visit(e.Y)
			case *graph.Call:
				for _, a := range e.Args {
					visit(a)
				}
			}
			for a, ix := range idx {
				if graph.Reads(ix, z) {
					mark(v, a)
				}
				visit(ix)
			}
		}
		for _, f := range z.Defs {
			if c, ok := f.Type.(stdlib.CategoryProbs); ok {
				if r, ok := f.Args[c.ProbsParam()].(graph.Row); ok {
					mark(r.V, len(r.V.Dims)-1)
				}
			}
			for _, x := range f.Args {
				visit(x)
			}
		}
		fs, _ := m.G.Readers(z)
		for _, f := range fs {
			for _, x := range f.Exprs() {
				visit(x)
			}
			for a, ix := range f.Index {
				if graph.Reads(ix, z) {
					mark(f.Target, a)
				}
			}
		}
		out = append(out, g)
	}
	for i, g := range out {
		for v := range g.axes {
			for _, h := range out[i+1:] {
				if h.axes[v] != nil {
					delete(g.axes, v)
					delete(h.axes, v)
				}
			}
		}
	}
	return out
}

// AlignedInfo describes, in summary.json, the per-state columns of
// trace.csv reported aligned (see README.md, "Label switching").
type AlignedInfo struct {
	// Chain and Draw locate the reference draw: the kept draw of highest
	// log_joint, Draw counted from 1 among chain Chain's kept draws
	// (Chain counted from 1 among the summarised chains).
	Chain    int     `json:"reference_chain"`
	Draw     int     `json:"reference_draw"`
	LogJoint float64 `json:"reference_log_joint"`
	// Arrays describes each categorical array aligned.
	Arrays []AlignedArray `json:"arrays"`
	// Scalars summarises the aligned columns of the variables whose axes
	// the arrays label (e.g. pi0[k], trans[j,k]): their R-hat and ESS are
	// those of the aligned draws.
	Scalars []diagnostics.Summary `json:"scalars"`
}

// AlignedArray describes the alignment of one categorical array.
type AlignedArray struct {
	// Var is the array, K its number of states, and Aligned the variables
	// whose label axes were permuted with it.
	Var     string   `json:"var"`
	K       int      `json:"states"`
	Aligned []string `json:"aligned_with,omitempty"`
	// Agreement is the mean, over kept draws, of the fraction of the
	// array's elements whose aligned state is the reference draw's.
	Agreement float64 `json:"agreement"`
	// Trees names the PYDTs whose leaves are the states (mu in mu ~
	// PYDT(...) read as mu[z[t], d]): their tree summaries (summary.nwk,
	// mea.nwk, consensus.nwk, coclust.csv, clade credibilities and the
	// ASDSF) are made from the kept trees with each tree's leaves renamed
	// by its draw's permutation (alignedTrees). The tree files stay raw.
	Trees []string `json:"aligned_trees,omitempty"`
	// perms[c][d] maps each state of kept draw d of chain c (from 0) to
	// its aligned state: perm[k] is the reference's state that k matches.
	perms [][][]int
	// Modal is the modal aligned state (1..K) of each element and
	// ModalProb its posterior probability; written to StatesFileOf.
	Modal     []int     `json:"-"`
	ModalProb []float64 `json:"-"`
}

// StatesFile holds, for each element t of a categorical array, its modal
// aligned state and that state's posterior probability (CSV t,state,prob).
const StatesFile = "states.csv"

// StatesFileOf is the states file of the categorical array v.
func StatesFileOf(v string) string { return FileOf(StatesFile, v) }

// drawSource streams the kept draws of the categorical array z in chain
// c (from 0 among the chains summarised): fn gets each draw's states,
// 0-based and row-major, in order (the slice is reused).
type drawSource func(z *graph.Var, c int, fn func(zs []int) error) error

// drawsFiles is the drawSource of the draws files (DrawsFileOf) paths[j][c]
// of the arrays zs[j], chain c; sizes[j][c], when sizes is not nil, is the
// length of each file to read (the rest was written after a checkpoint).
func drawsFiles(zs []*graph.Var, paths [][]string, sizes [][]int64) drawSource {
	return func(z *graph.Var, c int, fn func(zs []int) error) error {
		j := slices.Index(zs, z)
		if j < 0 || c >= len(paths[j]) {
			return fmt.Errorf("no draws file of %s for chain %d", z.Name, c+1)
		}
		path := paths[j][c]
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if sizes != nil {
			r = io.LimitReader(f, sizes[j][c])
		}
		br := bufio.NewReaderSize(r, 1<<16)
		buf := make([]int, z.Len())
		for line := 1; ; line++ {
			text, err := br.ReadString('\n')
			if err == io.EOF && text == "" {
				if line == 1 {
					return fmt.Errorf("%s: empty: want the header %s", path, DrawsHeader)
				}
				return nil
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err == io.EOF {
				return fmt.Errorf("%s:%d: the last row is not whole (no newline)", path, line)
			}
			text = strings.TrimSuffix(text, "\n")
			if line == 1 {
				if text != DrawsHeader {
					return fmt.Errorf("%s: the header is %q, want %q", path, text, DrawsHeader)
				}
				continue
			}
			_, states, ok := strings.Cut(text, ",")
			fields := strings.Fields(states)
			if !ok || len(fields) != len(buf) {
				return fmt.Errorf("%s:%d: %d states, want %d (the elements of %s)", path, line, len(fields), len(buf), z.Name)
			}
			for t, x := range fields {
				k, err := strconv.Atoi(x)
				if err != nil || k < 1 {
					return fmt.Errorf("%s:%d: state %d is %q, not a state 1, 2, ...", path, line, t+1, x)
				}
				buf[t] = k - 1
			}
			if err := fn(buf); err != nil {
				return fmt.Errorf("%s:%d: %w", path, line, err)
			}
		}
	}
}

// summarizeTraced summarises the kept draws of the trace's columns cols
// (Model.TraceColumns) of m, kept[i][chain][draw] with log joints
// lj[chain][draw]: label-invariant columns in plain (occupied(z) among
// them), and the label-dependent ones aligned, by the draws of each
// categorical array that draws streams (nil when the model has no
// categorical latent array or no draw was kept).
func summarizeTraced(m *Model, cols []Traced, lj [][]float64, kept [][][]float64, draws drawSource) ([]diagnostics.Summary, *AlignedInfo, error) {
	var plain []diagnostics.Summary
	var groups []*labelGroup
	for _, g := range labelGroups(m) {
		if slices.ContainsFunc(cols, func(c Traced) bool { return c.Var == g.z && c.States > 0 }) {
			groups = append(groups, g)
		}
	}
	groupOf := func(v *graph.Var) *labelGroup {
		for _, g := range groups {
			if g.z == v || g.axes[v] != nil {
				return g
			}
		}
		return nil
	}
	// The reference draw: highest finite log_joint.
	rc, rd, best := -1, -1, math.Inf(-1)
	ndraws := 0
	for c, xs := range lj {
		for d, x := range xs {
			ndraws++
			if !math.IsInf(x, 0) && !math.IsNaN(x) && (x > best || rc < 0) {
				rc, rd, best = c, d, x
			}
		}
	}
	if rc < 0 && ndraws > 0 && len(groups) > 0 {
		return nil, nil, fmt.Errorf("aligning the states of %s: none of the %d kept draws has a finite log_joint to choose the reference draw by", groups[0].z.Name, ndraws)
	}
	for i, c := range cols {
		if c.Var.Role == graph.Clamped {
			continue
		}
		if rc >= 0 && c.States == 0 && groupOf(c.Var) != nil {
			continue
		}
		plain = append(plain, diagnostics.Summarize(c.Name, kept[i]))
	}
	if rc < 0 || len(groups) == 0 {
		return plain, nil, nil
	}
	info := &AlignedInfo{Chain: rc + 1, Draw: rd + 1, LogJoint: best}
	colOf := map[*graph.Var]map[int]int{}
	for i, c := range cols {
		if c.States > 0 {
			continue
		}
		if colOf[c.Var] == nil {
			colOf[c.Var] = map[int]int{}
		}
		colOf[c.Var][c.Off] = i
	}
	aligned := make([][][]float64, len(cols))
	for i := range cols {
		if cols[i].States == 0 && groupOf(cols[i].Var) != nil {
			aligned[i] = make([][]float64, len(kept[i]))
			for c := range kept[i] {
				aligned[i][c] = make([]float64, len(kept[i][c]))
			}
		}
	}
	for _, g := range groups {
		T := g.z.Len()
		check := func(c, d int, zs []int) error {
			if d >= len(lj[c]) {
				return fmt.Errorf("chain %d has more draws of %s than the %d kept", c+1, g.z.Name, len(lj[c]))
			}
			for t, k := range zs {
				if k >= g.K {
					return fmt.Errorf("aligning %s: %s[%d] of chain %d, kept draw %d, is %d, not a state in 1..%d", g.z.Name, g.z.Name, t+1, c+1, d+1, k+1, g.K)
				}
			}
			return nil
		}
		ref := make([]int, T)
		d := 0
		errStop := errors.New("stop")
		err := draws(g.z, rc, func(zs []int) error {
			if d == rd {
				copy(ref, zs)
				d++
				return errStop
			}
			d++
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return nil, nil, fmt.Errorf("aligning %s: %w", g.z.Name, err)
		}
		if d <= rd {
			return nil, nil, fmt.Errorf("aligning %s: chain %d has %d draws of %s, fewer than its %d kept", g.z.Name, rc+1, d, g.z.Name, len(lj[rc]))
		}
		if err := check(rc, rd, ref); err != nil {
			return nil, nil, err
		}
		arr := AlignedArray{Var: g.z.Name, K: g.K}
		for v, axes := range g.axes {
			if len(colOf[v]) != v.Len() {
				if v.Def != nil && v.Def.IsPYDT() && axes[0] {
					// A PYDT's leaves, one per state: its trees are
					// aligned (treeAlignment), not traced.
					arr.Trees = append(arr.Trees, v.Name)
				}
				delete(g.axes, v)
				continue
			}
			arr.Aligned = append(arr.Aligned, v.Name)
		}
		slices.Sort(arr.Aligned)
		slices.Sort(arr.Trees)
		arr.perms = make([][][]int, len(lj))
		modal := make([]int, T*g.K)
		n := 0
		for c := range lj {
			d := 0
			err := draws(g.z, c, func(zs []int) error {
				if err := check(c, d, zs); err != nil {
					return err
				}
				perm, agree, err := labels.Align(zs, ref, g.K)
				if err != nil {
					return err
				}
				arr.perms[c] = append(arr.perms[c], perm)
				arr.Agreement += float64(agree) / float64(T)
				n++
				for t, k := range zs {
					modal[t*g.K+perm[k]]++
				}
				for v, axes := range g.axes {
					for off, i := range colOf[v] {
						aligned[colOf[v][permOffset(v.Dims, axes, perm, off)]][c][d] = kept[i][c][d]
					}
				}
				d++
				return nil
			})
			if err != nil {
				return nil, nil, fmt.Errorf("aligning %s: %w", g.z.Name, err)
			}
			if d != len(lj[c]) {
				return nil, nil, fmt.Errorf("aligning %s: chain %d has %d draws of %s, not its %d kept", g.z.Name, c+1, d, g.z.Name, len(lj[c]))
			}
		}
		arr.Agreement /= float64(n)
		arr.Modal, arr.ModalProb = make([]int, T), make([]float64, T)
		for t := range T {
			best := 0
			for k := range g.K {
				if modal[t*g.K+k] > modal[t*g.K+best] {
					best = k
				}
			}
			arr.Modal[t], arr.ModalProb[t] = best+1, float64(modal[t*g.K+best])/float64(n)
		}
		info.Arrays = append(info.Arrays, arr)
	}
	for i, c := range cols {
		if c.Var.Role == graph.Clamped || aligned[i] == nil {
			continue
		}
		info.Scalars = append(info.Scalars, diagnostics.Summarize(c.Name, aligned[i]))
	}
	return plain, info, nil
}

// permOffset is the row-major offset, in an array of dims, of the element
// at offset off once each label axis's index k is replaced by perm[k].
func permOffset(dims []int, axes []bool, perm []int, off int) int {
	idx := make([]int, len(dims))
	rest := off
	for a := len(dims) - 1; a >= 0; a-- {
		idx[a] = rest % dims[a]
		rest /= dims[a]
	}
	out := 0
	for a, d := range dims {
		i := idx[a]
		if axes[a] {
			i = perm[i]
		}
		out = out*d + i
	}
	return out
}

// StatesCSV is the states file of array a: a header, then one row
// t,state,prob per element (t from 1).
func (a *AlignedArray) StatesCSV() []byte {
	var b strings.Builder
	b.WriteString("t,state,prob\n")
	for t, k := range a.Modal {
		b.WriteString(strconv.Itoa(t+1) + "," + strconv.Itoa(k) + "," + fmtFloat(a.ModalProb[t]) + "\n")
	}
	return []byte(b.String())
}

// treeAlignment renames the leaves of each kept tree of a PYDT whose
// leaves are the states of a categorical array (AlignedArray.Trees) by its
// draw's permutation, so that the tree summaries count the clades of
// aligned states, not of raw labels that mean different states from draw
// to draw and chain to chain.
type treeAlignment struct {
	by    string    // the categorical array
	perms [][][]int // AlignedArray.perms: [chain][kept draw]
	// treeThin is the run's tree thinning: the i-th tree (from 0) of a
	// chain's tree file is that of its kept draw (i+1)·treeThin − 1.
	treeThin int
}

// treeAlignment returns the alignment of the trees of the PYDT of leaves,
// or nil when its leaves are not aligned states.
func (res *Result) treeAlignment(leaves string) *treeAlignment {
	if res.Aligned == nil {
		return nil
	}
	for _, a := range res.Aligned.Arrays {
		if slices.Contains(a.Trees, leaves) && a.perms != nil {
			return &treeAlignment{by: a.Var, perms: a.perms, treeThin: max(res.TreeThin, 1)}
		}
	}
	return nil
}

// source returns the TreeSource of the tree file path of chain k (from 0
// among the aligned chains) on n leaves named by labels (nil for row
// numbers), each tree read with its leaf named for state j put at row
// perm[j] of its draw's permutation; the trees' Labels stay labels.
func (al *treeAlignment) source(labels []string, n int, path string, k int) TreeSource {
	base := make([]string, n)
	for j := range base {
		base[j] = strconv.Itoa(j + 1)
		if j < len(labels) && labels[j] != "" {
			base[j] = labels[j]
		}
	}
	renamed := make([]string, n)
	perms := al.perms[k]
	return func(fn func(*pydt.Tree) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var bad error
		labelsOf := func(i int) []string {
			d := (i+1)*al.treeThin - 1
			if d >= len(perms) || len(perms[d]) != n {
				if bad == nil {
					bad = fmt.Errorf("aligning the trees by %s: tree %d of %s is that of kept draw %d, but %d draws of %d states were aligned", al.by, i+1, path, d+1, len(perms), n)
				}
				return base
			}
			for j, p := range perms[d] {
				renamed[p] = base[j]
			}
			return renamed
		}
		in := bounded.NewReader(f, bounded.Options{Name: path, What: "Newick file", Max: bounded.MaxNewickBytes})
		read := 0
		err = pydt.ForEachNewickLabels(in, labelsOf, func(tr *pydt.Tree) error {
			if bad != nil {
				return bad
			}
			read++
			if err := checkTreeRows(tr, n, base, "the states"); err != nil {
				return fmt.Errorf("tree %d: %w", read, err)
			}
			tr.Labels = labels
			return fn(tr)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
}
