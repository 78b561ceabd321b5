package bp

import (
	"slices"
	"sync"
)

// A full pass on two cores.
//
// The upward pass computes each branch point's record from its children's
// records alone, so the subtrees below disjoint nodes can be computed at
// the same time. With SetWorkers(2), Recompute cuts the tree into pieces (subtrees of at most
// a sixteenth of the nodes), deals them out to the workers, and then
// computes the branch points above the cut on one goroutine, children
// before parents. Every record is computed by exactly the same operations,
// in the same order, as in the sequential pass: only which goroutine runs
// them changes, so the messages, LogLik and every draw that depends on
// them are identical bit for bit whatever the number of workers or of
// cores (TestParallelRecomputeIdentical, TestParallelChainIdentical).
//
// Splitting by dimension blocks, the other way to share the pass, would
// change the order in which each node's log normaliser sums its
// dimensions, and so the draws; and the local updates of the tree moves
// (a few microseconds each) are too short to hand to another goroutine.
// Only full passes are shared.

// maxWorkers is the most workers a pass uses.
const maxWorkers = 2

// SetWorkers sets the number of goroutines a full pass (Recompute) uses:
// 0 or 1 (the default) keeps it on the calling goroutine, 2 or more shares
// it between two. The messages, and so every result, are the same bit for
// bit whatever the setting; only the time differs. Sharing is off by
// default because it did not pay where it was measured: on a shared
// 2-core machine a second worker cost 26-39 % more CPU per pass and gained
// wall time only when a core happened to be idle (docs/benchmarks.md, "A
// full pass on two cores").
//
// It has no option in pydtlang run or inference.Config: the engine's
// models keep the default, because a full pass is about 5 % of an engine
// sweep and sharing it costs more CPU than it can save there. From Go it
// is reached on a model one builds: m := bp.New(tree, dims); m.SetWorkers(2),
// then the moves of treemove.New(m, ...) and every Recompute share their
// full passes.
func (m *Model) SetWorkers(n int) {
	m.workers = max(0, min(n, maxWorkers))
}

// passWorkers returns the number of workers of the next full pass.
func (m *Model) passWorkers() int {
	return max(1, m.workers)
}

// parState is the scratch of a parallel pass, allocated on its first use.
type parState struct {
	size   []int32   // per position of m.order: nodes in its subtree
	stack  []int32   // positions left to cut
	top    []int32   // positions above the cut
	pieces [][]int32 // per worker: roots of its pieces
	buf    [][]int32 // per worker: a piece's positions, parents first
}

// parallelPass computes the records of every branch point in m.order
// with w ≥ 2 workers, after the layout of every block (layoutAll); roots
// lists the positions at which m.order starts a tree (the root's and the
// detached subtrees'). relaid tells whether the records lie in the order
// (buildAt) or not (build).
func (m *Model) parallelPass(w int, roots []int32, relaid bool) {
	ps := &m.par
	order := m.order
	nn := len(order)
	if cap(ps.size) < nn {
		ps.size = make([]int32, m.tr.Cap())
		ps.stack = make([]int32, 0, m.tr.Cap())
		ps.top = make([]int32, 0, m.tr.Cap())
	}
	if len(ps.pieces) < w {
		ps.pieces = make([][]int32, w)
		ps.buf = make([][]int32, w)
		for k := range w {
			ps.pieces[k] = make([]int32, 0, 64)
			ps.buf[k] = make([]int32, 0, m.tr.Cap())
		}
	}
	size := ps.size[:nn]
	for i := nn - 1; i >= 0; i-- {
		s := int32(1)
		for j := m.lo[i]; j < m.hi[i]; j++ {
			s += size[j]
		}
		size[i] = s
	}
	// Cut: a subtree of at most lim nodes is a piece; a larger one's root
	// lies above the cut and its children are cut in turn.
	lim := int32(max(nn/16, 1))
	stack, top := append(ps.stack[:0], roots...), ps.top[:0]
	var load [maxWorkers]int32
	for k := range w {
		ps.pieces[k] = ps.pieces[k][:0]
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if size[i] > lim {
			top = append(top, i)
			for j := m.lo[i]; j < m.hi[i]; j++ {
				stack = append(stack, j)
			}
			continue
		}
		if int(order[i]) < m.tr.NumLeaves() {
			continue // a leaf: nothing to compute
		}
		k := 0
		for q := 1; q < w; q++ {
			if load[q] < load[k] {
				k = q
			}
		}
		ps.pieces[k] = append(ps.pieces[k], i)
		load[k] += size[i]
	}
	ps.stack, ps.top = stack, top
	var wg sync.WaitGroup
	for k := 1; k < w; k++ {
		wg.Go(func() { m.passPieces(k, relaid) })
	}
	m.passPieces(0, relaid)
	wg.Wait()
	// Above the cut: later positions first, so children before parents.
	slices.Sort(top)
	for q := len(top) - 1; q >= 0; q-- {
		m.buildPos(int(top[q]), relaid)
	}
}

// passPieces computes the records of the branch points in worker k's
// pieces, each piece children before parents.
func (m *Model) passPieces(k int, relaid bool) {
	ps := &m.par
	buf := ps.buf[k]
	for _, r := range ps.pieces[k] {
		buf = append(buf[:0], r)
		for q := 0; q < len(buf); q++ {
			i := buf[q]
			for j := m.lo[i]; j < m.hi[i]; j++ {
				buf = append(buf, j)
			}
		}
		for q := len(buf) - 1; q >= 0; q-- {
			m.buildPos(int(buf[q]), relaid)
		}
	}
	ps.buf[k] = buf
}

// buildPos computes the record of the node at position i of m.order if it
// is a branch point, laid out by layoutAll.
func (m *Model) buildPos(i int, relaid bool) {
	if p := m.order[i]; int(p) >= m.tr.NumLeaves() {
		m.buildLaid(i, m.seg.node[p], relaid)
	}
}

// layoutAll gives every branch point in m.order its block (and, unless
// relaid, sets its children's slots) in the order of the sequential pass,
// so that the blocks are the same as there, without computing anything.
func (m *Model) layoutAll(relaid bool) {
	for i := len(m.order) - 1; i >= 0; i-- {
		m.layoutPos(i, relaid)
	}
}

// layoutPos gives the branch point at position i of m.order its block
// and, unless relaid (relayout set them), sets its children's slots, and
// returns its bookkeeping; it does nothing for a leaf and returns false.
// The sequential pass and layoutAll lay out the blocks by it in the same
// order, so that they are the same.
func (m *Model) layoutPos(i int, relaid bool) (segNode, bool) {
	p := m.order[i]
	if int(p) < m.tr.NumLeaves() {
		return segNode{}, false
	}
	ks := m.order[m.lo[i]:m.hi[i]]
	sn := m.layout(p, ks)
	if !relaid {
		for j, c := range ks {
			m.seg.node[c].slot = int32(j)
		}
	}
	return sn, true
}

// buildLaid computes the record of the branch point at position i of
// m.order, whose block layoutPos laid out with bookkeeping sn: from the
// relaid records (buildAt) or through its children's records (build).
func (m *Model) buildLaid(i int, sn segNode, relaid bool) {
	if relaid {
		m.buildAt(m.order[i], sn, i)
	} else {
		m.build(m.order[i])
	}
}
