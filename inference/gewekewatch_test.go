package inference

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// A Geweke test compares the successive-conditional chains with prior
// draws, and the chains start from (nearly) prior draws: a step that
// returns without changing its variable leaves that variable at its
// initial draw, and the chains' law of the state stays the prior's. The
// joint-distribution comparison cannot see it; stepWatch and
// checkMixing can. The shared Geweke helper (gewekeStates) wraps every step
// of the schedule in a watchedStep and fails the test when
//
//   - a step changed the state in fewer than minStepChange of its calls,
//   - a sampled variable (a latent variable, every one of its elements,
//     the tree's topology and divergence times, the auxiliary variables
//     and sampled locations of a tree) changed in fewer than
//     minPartChange of the sweeps, or
//   - a statistic's lag-1 autocorrelation, over the chains' iterations,
//     is 1 - maxLag1Gap or more (a statistic that moves by negligible
//     amounts).
//
// The floors are far below what the working samplers give (see the logs:
// the smallest step and part rates are about 0.2 and the largest lag-1
// autocorrelation about 0.97 in these tests) and far above what a frozen
// update gives (exactly 0, and 1).
const (
	minStepChange = 0.05
	minPartChange = 0.05
	maxLag1Gap    = 0.01
)

// stepWatch counts, over the successive-conditional sweeps of a Geweke
// test, how often each step of the schedule and each part of the state
// changed.
type stepWatch struct {
	m *Model
	// vars are the sampled variables (latent), a PYDT's latent leaves
	// included.
	vars []*graph.Var
	// leaf marks the parts that are elements of a PYDT's latent leaves:
	// the engine keeps them in the state only where a step draws them
	// there (softmax-leaf, the steps that condition on locations); where
	// they never change they are integrated out (belief propagation) or
	// held in the tree's locations, a part of their own.
	leaf []bool
	// locs reports whether a step samples the trees' locations.
	locs bool
	// parts names the parts of the state: each element of each sampled
	// variable, then each tree's topology, times, auxiliaries and
	// locations where sampled.
	parts []string
	// partChanged counts the sweeps in which each part changed; sweeps
	// the sweeps watched.
	partChanged []int
	sweeps      int
	// steps, stepCalls and stepChanged count each step's calls and the
	// calls in which it changed the state.
	steps                  []string
	stepCalls, stepChanged []int
	// sweepStart, cur and next are snapshots of the parts (a key per
	// part): at the start of the sweep, before and after a step.
	sweepStart, cur, next [][]uint64
	// keys is treeKeys' scratch space.
	keys treeScratch
}

// watchedStep is a step of a schedule whose calls a stepWatch counts.
type watchedStep struct {
	Updater
	w *stepWatch
	i int
}

func (s watchedStep) update(ch *Chain) error {
	w := s.w
	if s.i == 0 {
		w.cur = w.snapshot(ch, w.cur)
		w.sweepStart = copyKeys(w.sweepStart, w.cur)
		w.sweeps++
	}
	err := s.Updater.update(ch)
	w.next = w.snapshot(ch, w.next)
	w.stepCalls[s.i]++
	if !equalKeys(w.cur, w.next) {
		w.stepChanged[s.i]++
	}
	w.cur, w.next = w.next, w.cur
	if s.i == len(w.steps)-1 {
		for p := range w.parts {
			if !slices.Equal(w.sweepStart[p], w.cur[p]) {
				w.partChanged[p]++
			}
		}
	}
	return err
}

// copyKeys copies the snapshot src into dst, reusing dst.
func copyKeys(dst, src [][]uint64) [][]uint64 {
	if len(dst) != len(src) {
		dst = make([][]uint64, len(src))
	}
	for p := range src {
		dst[p] = append(dst[p][:0], src[p]...)
	}
	return dst
}

// watchSchedule replaces every step of sched by a watchedStep of a new
// stepWatch, which it returns.
func watchSchedule(m *Model, sched *Schedule) *stepWatch {
	w := &stepWatch{m: m}
	for _, v := range m.G.Vars {
		if v.Role == graph.Latent {
			w.vars = append(w.vars, v)
		}
	}
	for i, st := range sched.Steps {
		if _, ok := st.(locationsStep); ok {
			w.locs = true
		}
		w.steps = append(w.steps, st.Name())
		sched.Steps[i] = watchedStep{Updater: st, w: w, i: i}
	}
	w.stepCalls = make([]int, len(w.steps))
	w.stepChanged = make([]int, len(w.steps))
	return w
}

// name names the parts on the first snapshot of a chain's state.
func (w *stepWatch) name(ch *Chain) {
	if w.parts != nil {
		return
	}
	for _, v := range w.vars {
		n := len(ch.st.Env.Values[v.ID])
		for i := range n {
			w.leaf = append(w.leaf, v.Def != nil && v.Def.IsPYDT())
			if n == 1 {
				w.parts = append(w.parts, v.Name)
			} else {
				w.parts = append(w.parts, v.Name+"["+elemIndex(v, i)+"]")
			}
		}
	}
	for _, t := range ch.trees {
		w.leaf = append(w.leaf, false, false)
		name := ""
		if len(ch.trees) > 1 {
			name = "(" + t.b.Leaves.Name + ")"
		}
		w.parts = append(w.parts, "tree topology"+name, "tree times"+name)
		if t.aux != nil {
			w.parts = append(w.parts, "auxiliaries"+name)
			w.leaf = append(w.leaf, false)
		}
		if w.locs {
			w.parts = append(w.parts, "locations"+name)
			w.leaf = append(w.leaf, false)
		}
	}
	w.partChanged = make([]int, len(w.parts))
}

// snapshot returns the parts of ch's state as keys, reusing buf.
func (w *stepWatch) snapshot(ch *Chain, buf [][]uint64) [][]uint64 {
	w.name(ch)
	if len(buf) != len(w.parts) {
		buf = make([][]uint64, len(w.parts))
	}
	p := 0
	for _, v := range w.vars {
		for _, x := range ch.st.Env.Values[v.ID] {
			buf[p] = append(buf[p][:0], math.Float64bits(x))
			p++
		}
	}
	for _, t := range ch.trees {
		buf[p], buf[p+1] = w.keys.treeKeys(t.Tree, buf[p][:0], buf[p+1][:0])
		p += 2
		if t.aux != nil {
			buf[p] = floatKeys(buf[p][:0], t.aux)
			p++
		}
		if w.locs {
			buf[p] = floatKeys(buf[p][:0], t.locs[:t.Tree.Cap()*t.b.D])
			p++
		}
	}
	return buf
}

// floatKeys appends the bits of xs to dst.
func floatKeys(dst []uint64, xs []float64) []uint64 {
	for _, x := range xs {
		dst = append(dst, math.Float64bits(x))
	}
	return dst
}

// treeScratch is the scratch space of treeKeys.
type treeScratch struct {
	masks    []uint64 // the clade of each node, words per node
	internal []pydt.NodeID
	order    []pydt.NodeID
}

// treeKeys appends to topo the tree's clades (the leaf set below each
// internal node, as bit masks), sorted, and to times the internal nodes'
// divergence times (their s) in the same order: keys that do not depend
// on the node numbering, which moves may change without changing the tree.
func (sc *treeScratch) treeKeys(tr *pydt.Tree, topo, times []uint64) ([]uint64, []uint64) {
	words := (tr.NumLeaves() + 63) / 64
	sc.masks = slices.Grow(sc.masks[:0], tr.Cap()*words)[:tr.Cap()*words]
	clear(sc.masks)
	mask := func(v pydt.NodeID) []uint64 { return sc.masks[int(v)*words : (int(v)+1)*words] }
	sc.order = tr.PostOrder(sc.order[:0])
	sc.internal = sc.internal[:0]
	for _, v := range sc.order {
		m := mask(v)
		if tr.IsLeaf(v) {
			m[int(v)/64] |= 1 << (uint(v) % 64)
			continue
		}
		for c := range tr.Children(v) {
			for k, x := range mask(c) {
				m[k] |= x
			}
		}
		sc.internal = append(sc.internal, v)
	}
	slices.SortFunc(sc.internal, func(a, b pydt.NodeID) int { return slices.Compare(mask(a), mask(b)) })
	for _, v := range sc.internal {
		topo = append(topo, mask(v)...)
		times = append(times, math.Float64bits(tr.Time(v).S()))
	}
	return topo, times
}

// equalKeys reports whether two snapshots are equal.
func equalKeys(a, b [][]uint64) bool {
	return slices.EqualFunc(a, b, slices.Equal)
}

// reporter is what check needs of a *testing.T (TestStepWatchFails
// records its reports instead).
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// check fails t for a step or a part that changed too rarely, and logs
// the rates.
func (w *stepWatch) check(t reporter) {
	t.Helper()
	for i, name := range w.steps {
		r := float64(w.stepChanged[i]) / float64(w.stepCalls[i])
		if !(r >= minStepChange) {
			t.Errorf("step %d, %s, changed the state in %d of %d calls (%.3f; at least %.2f expected): it does not move",
				i+1, name, w.stepChanged[i], w.stepCalls[i], r, minStepChange)
		}
	}
	minStep := slices.MinFunc(rates(w.stepChanged, w.stepCalls), func(a, b named) int { return cmp.Compare(a.r, b.r) })
	t.Logf("the steps changed the state in at least %.3f of their calls (%s)", minStep.r, w.steps[minStep.i])
	var parts []named
	for p, name := range w.parts {
		r := float64(w.partChanged[p]) / float64(w.sweeps)
		if w.single(name) || w.leaf[p] && w.partChanged[p] == 0 {
			// A tree of two or fewer leaves has one topology; latent
			// leaves not kept in the state (see leaf).
			continue
		}
		parts = append(parts, named{p, r})
		if !(r >= minPartChange) {
			t.Errorf("%s changed in %d of %d sweeps (%.3f; at least %.2f expected): it is not sampled",
				name, w.partChanged[p], w.sweeps, r, minPartChange)
		}
	}
	if len(parts) > 0 {
		slices.SortFunc(parts, func(a, b named) int { return cmp.Compare(a.r, b.r) })
		var b []string
		for _, p := range parts[:min(len(parts), 4)] {
			b = append(b, fmt.Sprintf("%s %.3f", w.parts[p.i], p.r))
		}
		t.Logf("the parts that changed least often per sweep: %v", b)
	}
}

// single reports whether the part named name is the topology of a tree
// with only one (up to 2 leaves).
func (w *stepWatch) single(name string) bool {
	for k, b := range w.m.Trees {
		n := "tree topology"
		if len(w.m.Trees) > 1 {
			n += "(" + b.Leaves.Name + ")"
		}
		if name == n && w.m.Trees[k].N <= 2 {
			return true
		}
	}
	return false
}

// named is a rate and the index of what it is of.
type named struct {
	i int
	r float64
}

func rates(num, den []int) []named {
	out := make([]named, len(num))
	for i := range num {
		out[i] = named{i, float64(num[i]) / float64(den[i])}
	}
	return out
}

// lag1 is the lag-1 autocorrelation of a statistic over independent
// chains: 1 - E(x_t - x_{t-1})² / (2 var x), the variance over all draws
// pooled; 1 when x never changes within a chain.
func lag1(chains [][]float64) float64 {
	var all []float64
	var ssd float64
	n := 0
	for _, c := range chains {
		all = append(all, c...)
		for i := 1; i < len(c); i++ {
			ssd += (c[i] - c[i-1]) * (c[i] - c[i-1])
			n++
		}
	}
	_, v := diagnostics.MeanVar(all)
	if v == 0 {
		return 1
	}
	return 1 - ssd/float64(n)/(2*v)
}

// chainSE is the mean of the draws of independent chains and its standard
// error, sqrt(var / ESS), the variance over all draws and the effective
// sample size by Geyer's initial monotone sequence over the split chains
// (diagnostics.ESSMean, which counts the between-chain variance).
func chainSE(chains [][]float64) (mean, se float64) {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	mean, v := diagnostics.MeanVar(all)
	if v == 0 {
		return mean, 0
	}
	return mean, math.Sqrt(v / diagnostics.ESSMean(chains))
}
