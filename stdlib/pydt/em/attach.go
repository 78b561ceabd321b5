package em

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// InitOptions configures SequentialTree: the hyperparameters the scores use
// (held fixed while the tree is built) and the search.
type InitOptions struct {
	// C is the smoothness of a(t) = c/(1-t), Variance the diffusion
	// variance σ², Alpha and Beta the Pitman-Yor parameters.
	C, Variance, Alpha, Beta float64
	// Variances, when not nil, gives a diffusion variance per dimension
	// (length D; Variance is then ignored), as Options.Variances.
	Variances []float64
	// Exhaustive scores every edge and branch point for every point (the
	// paper's construction, O(N) scores per point, O(N²) in all) instead
	// of descending the tree.
	Exhaustive bool
	// Width is the number of children of a branch point the descent
	// scores by belief propagation: those whose upward messages are
	// nearest the new point (default 8; a negative value scores all).
	Width int
	// Beam is the number of branch points the descent keeps per level
	// (default 4).
	Beam int
	// Margin, when positive, is how far (in nats) below the best score
	// found so far the score of the edge above a branch point of the
	// descent's frontier may be for the branch point to be expanded
	// (scored at itself and at its children's edges); one further below
	// is not expanded. Zero means DefaultMargin; negative expands every
	// branch point of the frontier, as the descent did before the margin.
	Margin float64
	// Done, when not nil, stops the construction once it is closed (pass
	// a context's Done channel): it is looked at every StopCheckRows rows,
	// and the construction then returns ErrStopped. At 10⁵ rows a
	// construction takes a minute or more of CPU, so a run must be able to
	// stop within it.
	Done <-chan struct{}
}

// ErrStopped is returned by SequentialTree and ExtendTree when
// InitOptions.Done was closed before the tree was complete.
var ErrStopped = errors.New("em: tree construction stopped")

// StopCheckRows is how many rows SequentialTree and ExtendTree attach
// between two looks at InitOptions.Done.
const StopCheckRows = 64

// DefaultMargin is InitOptions.Margin's default: 20 nats. On clustered
// data the root's children are the clusters, all in the frontier, and
// each is a branch point of thousands of children that nearest scans in
// full; a point far from a cluster scores the edge above it tens to
// hundreds of nats below the edge of its own (docs/em.md, "Scale").
const DefaultMargin = 20

// SequentialTree builds an initial tree by attaching the rows of x
// (row-major, n rows of d values, NaN missing; observed exactly) one by
// one, row 0 first, each at the position of highest score among those it
// considers. The score of a position is the log of
//
//	p(point i takes that path and diverges there | the tree so far)
//	  × p(data of the rows attached so far and of row i | the new tree)
//
// the first factor from the PYDT's generative process (Section 2 of the
// paper: not diverging along each segment, the branch choices, diverging
// at the midpoint of an edge, at rate a(t) Γ(m-β)/Γ(m+1+α), as a density
// in s, or joining a branch point with probability (α+βK)/(m+α)), the
// second by belief propagation (bp.Model.LogLikIfAttached). By
// exchangeability their product is the joint density of the new tree and
// data up to a factor that does not depend on the position. Edge
// midpoints are taken in s = -log(1-t); on an edge into a leaf, at
// t = (t_parent + 1)/2.
//
// Without Exhaustive the positions are found by beam search down the
// tree: at each level the Beam best branch points (by the score of the edge
// above them) are expanded, those whose edge scores within Margin of the
// best score found so far, each scored at the point itself and at the
// edges above its children, of which at most Width, the nearest by a cheap
// distance to their upward messages, are scored by belief propagation.
// Each point then costs O(depth · Beam · Width) scores of
// O(depth · log K · D) each, plus O(K · D) arithmetic per branch point
// expanded, instead of the O(N) scores of the exhaustive search; the tree
// is built in about O(N · depth²) time. The chosen edge's divergence time
// is then refined by golden-section search.
//
// It returns the tree and its bp.Model (variance set, evidence x).
func SequentialTree(x []float64, n, d int, opt InitOptions) (*pydt.Tree, *bp.Model, error) {
	a, err := sequential(x, n, d, opt)
	if err != nil {
		return nil, nil, err
	}
	return a.tr, a.m, nil
}

// ExtendTree is SequentialTree starting from a tree over some of the rows:
// start is a tree over len(rows) leaves, leaf j standing for row rows[j]
// (distinct rows of x), with its structure and times kept; the other rows
// are attached to it one by one in their order, as SequentialTree attaches
// its rows. Use: the tree of a subsample by another method (average
// linkage, say), extended to all N rows at O(depth) scores per row.
func ExtendTree(x []float64, n, d int, start *pydt.Tree, rows []int, opt InitOptions) (*pydt.Tree, *bp.Model, error) {
	if start == nil || start.NumLeaves() != len(rows) || start.Root() == pydt.NoNode {
		return nil, nil, fmt.Errorf("em: ExtendTree: a start tree over the %d rows given is required", len(rows))
	}
	seen := make([]bool, n)
	for _, r := range rows {
		if r < 0 || r >= n || seen[r] {
			return nil, nil, fmt.Errorf("em: ExtendTree: row %d repeated or not in 1..%d", r+1, n)
		}
		seen[r] = true
	}
	a, err := sequentialFrom(x, n, d, opt, start, rows)
	if err != nil {
		return nil, nil, err
	}
	return a.tr, a.m, nil
}

// sequential is SequentialTree, returning its attacher.
func sequential(x []float64, n, d int, opt InitOptions) (*attacher, error) {
	return sequentialFrom(x, n, d, opt, nil, nil)
}

// skeleton builds in tr (empty, N leaves) the tree start, its leaf j
// being tr's leaf rows[j].
func skeleton(tr, start *pydt.Tree, rows []int) {
	id := make([]pydt.NodeID, start.Cap())
	for _, v := range start.PostOrder(nil) {
		if start.IsLeaf(v) {
			id[v] = pydt.NodeID(rows[v])
			continue
		}
		w := tr.NewInternal(start.Time(v))
		for c := range start.Children(v) {
			tr.AddChild(w, id[c])
		}
		id[v] = w
	}
	tr.SetRoot(id[start.Root()])
	tr.Recount()
}

// sequentialFrom attaches the rows in order to the tree start (nil: a
// single leaf, row 0) over the rows given.
func sequentialFrom(x []float64, n, d int, opt InitOptions, start *pydt.Tree, rows []int) (*attacher, error) {
	if n < 1 || d < 1 || len(x) != n*d {
		return nil, fmt.Errorf("em: SequentialTree: data of length %d for %d rows × %d dimensions", len(x), n, d)
	}
	if err := pydt.CheckPrior(opt.Alpha, opt.Beta, pydt.DivInv{C: opt.C}); err != nil {
		return nil, fmt.Errorf("em: SequentialTree: %w", err)
	}
	h, err := pydt.NewHarmonic(opt.Alpha, opt.Beta)
	if err != nil {
		return nil, err
	}
	tr := pydt.New(n)
	m := bp.New(tr, d)
	if opt.Variances != nil {
		if err := m.SetVariances(opt.Variances); err != nil {
			return nil, fmt.Errorf("em: SequentialTree: %w", err)
		}
	} else if err := m.SetVariance(opt.Variance); err != nil {
		return nil, fmt.Errorf("em: SequentialTree: %w", err)
	}
	if err := m.ObserveMatrix(x); err != nil {
		return nil, fmt.Errorf("em: SequentialTree: %w", err)
	}
	in := make([]bool, n) // rows already in the tree
	if start == nil {
		tr.Plant(0)
		in[0] = true
	} else {
		if err := start.Validate(); err != nil {
			return nil, fmt.Errorf("em: ExtendTree: start tree: %w", err)
		}
		skeleton(tr, start, rows)
		for _, r := range rows {
			in[r] = true
		}
	}
	if err := m.Recompute(); err != nil {
		return nil, err
	}
	if opt.Width == 0 {
		opt.Width = 8
	}
	if opt.Beam < 1 {
		opt.Beam = 4
	}
	if opt.Margin == 0 {
		opt.Margin = DefaultMargin
	}
	a := attacher{tr: tr, m: m, h: h, opt: opt, logC: math.Log(opt.C)}
	a.initKids()
	for i := range n {
		if in[i] {
			continue
		}
		if opt.Done != nil && i%StopCheckRows == 0 {
			select {
			case <-opt.Done:
				return nil, ErrStopped
			default:
			}
		}
		leaf := pydt.NodeID(i)
		var pos pydt.Position
		var score float64
		if opt.Exhaustive {
			pos, score = a.exhaustive(leaf)
		} else {
			pos, score = a.descend(leaf)
		}
		if math.IsInf(score, -1) || math.IsNaN(score) {
			return nil, fmt.Errorf("em: SequentialTree: row %d has no position of positive density", i+1)
		}
		if !pos.AtNode {
			pos = a.refine(leaf, pos)
		}
		a.attached(leaf, pos, m.Attach(leaf, pos))
	}
	if err := m.Err(); err != nil {
		return nil, err
	}
	return &a, nil
}

type attacher struct {
	tr   *pydt.Tree
	m    *bp.Model
	h    *pydt.Harmonic
	opt  InitOptions
	logC float64

	near        []nearChild // scratch: the nearest children of a branch point
	front, next []beamNode  // the descent's frontiers

	// kids[v] holds branch point v's children and what nearest needs of
	// their upward messages, contiguous so that nearest scans a
	// high-degree branch point at memory speed; slot[c] is c's index in
	// its parent's kids. attached keeps both current.
	kids []kidList
	slot []int32
	// Scratch of nearest: the new point's observed values and their
	// dimensions.
	xobs []float64
	dobs []int
	// scanned counts the children nearest has compared (tests).
	scanned int
}

// kidList is a branch point v's children and their upward messages, per
// child D pairs (mean m_cd, denominator v_cd + σ²_d (1 - t_v)): nearest's
// distance divides by the denominator, which depends on v's time (fixed
// while the tree is built) and the message only, so it is formed once
// per message, not once per scan; +Inf where the message is flat.
type kidList struct {
	ids []pydt.NodeID
	mv  []float64
}

var inf = math.Inf(1)

type nearChild struct {
	c    pydt.NodeID
	dist float64
}

// initKids makes the children lists of the tree as it is.
func (a *attacher) initKids() {
	tr, dd := a.tr, 2*a.m.Dims()
	a.kids = make([]kidList, tr.Cap())
	a.slot = make([]int32, tr.Cap())
	for _, v := range tr.PreOrder(nil) {
		if p := tr.Parent(v); p != pydt.NoNode {
			k := &a.kids[p]
			a.slot[v] = int32(len(k.ids))
			k.ids = append(k.ids, v)
			k.mv = append(k.mv, make([]float64, dd)...)
			a.store(v)
		}
	}
}

// attached updates the children lists after leaf was attached at pos,
// w being its new parent: the new child, the new branch point in its
// parent's list in place of pos.Node, and the messages of the leaf's
// ancestors, which the attachment changed. Cost O(depth · D).
func (a *attacher) attached(leaf pydt.NodeID, pos pydt.Position, w pydt.NodeID) {
	tr, dd := a.tr, 2*a.m.Dims()
	add := func(p, c pydt.NodeID) {
		k := &a.kids[p]
		a.slot[c] = int32(len(k.ids))
		k.ids = append(k.ids, c)
		k.mv = append(k.mv, make([]float64, dd)...)
	}
	if pos.AtNode {
		add(w, leaf)
	} else {
		u := pos.Node
		if p := tr.Parent(w); p != pydt.NoNode {
			a.kids[p].ids[a.slot[u]] = w
			a.slot[w] = a.slot[u]
		}
		a.kids[w] = kidList{ids: a.kids[w].ids[:0], mv: a.kids[w].mv[:0]}
		add(w, u)
		add(w, leaf)
		a.store(u)
	}
	for z := leaf; tr.Parent(z) != pydt.NoNode; z = tr.Parent(z) {
		a.store(z)
	}
}

// store copies c's upward message into its parent's children list: per
// dimension its mean and the denominator of nearest's distance, its
// variance plus σ²_d (1 - t_parent) (σ²_d = σ² without
// InitOptions.Variances), formed as nearest formed it before.
func (a *attacher) store(c pydt.NodeID) {
	d := a.m.Dims()
	p := a.tr.Parent(c)
	k := a.kids[p]
	r := k.mv[int(a.slot[c])*2*d:]
	om := a.tr.Time(p).OneMinus()
	s2 := a.opt.Variance * om
	for j := range d {
		mean, v := a.m.Message(c, j)
		if a.opt.Variances != nil {
			s2 = a.opt.Variances[j] * om
		}
		den := v + s2
		if math.IsInf(v, 1) {
			den = math.Inf(1)
		}
		r[2*j], r[2*j+1] = mean, den
	}
}

// nearest returns up to Width children of v whose upward messages are
// nearest the leaf's values: the smallest Σ_d (x_d - m_cd)² / (v_cd + σ²_d
// (1 - t_v)) over the dimensions observed on both sides (σ²_d = σ² without
// InitOptions.Variances), a cheap proxy for the predictive density of the
// new point below c. Cost O(K_v · D) with no exp or log, against O(K_v) BP
// scores for all.
func (a *attacher) nearest(leaf, v pydt.NodeID) []nearChild {
	tr, m, w := a.tr, a.m, a.opt.Width
	a.near = a.near[:0]
	if w < 0 || tr.Degree(v) <= w {
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			a.near = append(a.near, nearChild{c, 0})
		}
		return a.near
	}
	nd := m.Dims()
	// The new point's observed dimensions, in order (the sums below add
	// the same terms in the same order as a scan of every dimension
	// that skips the missing ones).
	a.xobs, a.dobs = a.xobs[:0], a.dobs[:0]
	for d := range nd {
		xm, xv := m.Message(leaf, d)
		if !math.IsInf(xv, 1) && !math.IsNaN(xm) {
			a.xobs = append(a.xobs, xm)
			a.dobs = append(a.dobs, 2*d)
		}
	}
	x, dobs := a.xobs, a.dobs
	k := &a.kids[v]
	a.scanned += len(k.ids)
	worst := math.Inf(1)
	for j, c := range k.ids {
		r := k.mv[j*2*nd : (j+1)*2*nd]
		var dist float64
		for i, xd := range x {
			o := dobs[i]
			den := r[o+1]
			if den == inf {
				continue
			}
			e := xd - r[o]
			dist += e * e / den
			if dist >= worst {
				break // the partial sums only grow
			}
		}
		if dist >= worst {
			continue
		}
		// Insert in order, dropping the farthest when full.
		if len(a.near) < w {
			a.near = append(a.near, nearChild{})
		}
		i := len(a.near) - 1
		for i > 0 && a.near[i-1].dist > dist {
			a.near[i] = a.near[i-1]
			i--
		}
		a.near[i] = nearChild{c, dist}
		if len(a.near) == w {
			worst = a.near[w-1].dist
		}
	}
	return a.near
}

// edgeTime returns the candidate divergence time for a new point on the
// edge above v: where the Brownian motion's expected squared distance
// matches the data, 1 - t = Σ_d (x_new,d - m_vd)²/σ²_d / (2 D), m_v the mean of
// v's upward message (for a leaf, its value), clamped to the middle 90% of
// the edge in s (dimensions missing on either side are left out; with none
// left, the midpoint in s, or t halfway to 1 on an edge into a leaf).
func (a *attacher) edgeTime(leaf, v pydt.NodeID) pydt.Time {
	tr := a.tr
	sa := tr.ParentTime(v).S()
	var sv float64
	if tr.IsLeaf(v) {
		sv = sa + 2*math.Log(1e6) // clamp range for leaf edges: 1-t down to 1e-12·(1-t_a)
	} else {
		sv = tr.Time(v).S()
	}
	var d2 float64
	k := 0
	for d := range a.m.Dims() {
		xm, xv := a.m.Message(leaf, d)
		vm, vv := a.m.Message(v, d)
		if math.IsInf(xv, 1) || math.IsInf(vv, 1) {
			continue
		}
		if a.opt.Variances != nil {
			// Each dimension on its own scale: Σ_d (x_d − m_d)²/σ²_d.
			d2 += (xm - vm) * (xm - vm) / a.opt.Variances[d]
		} else {
			d2 += (xm - vm) * (xm - vm)
		}
		k++
	}
	s2 := a.opt.Variance
	if a.opt.Variances != nil {
		s2 = 1
	}
	var st float64
	switch {
	case k == 0 && tr.IsLeaf(v):
		st = sa + math.Ln2
	case k == 0:
		st = sa + (sv-sa)/2
	default:
		st = -math.Log(d2 / (2 * float64(k) * s2))
		lo, hi := sa+0.05*(sv-sa), sa+0.95*(sv-sa)
		st = math.Min(math.Max(st, lo), hi)
	}
	return pydt.TimeFromS(st)
}

// pass returns the log probability that a new point does not diverge on
// the edge above v before v's time.
func (a *attacher) pass(v pydt.NodeID) float64 {
	ds := a.tr.Time(v).S() - a.tr.ParentTime(v).S()
	return -a.opt.C * a.h.Rate(a.tr.Count(v)) * ds
}

// edgePrior returns the candidate position on the edge above v and the log
// density (in s) of a new point diverging there, given the log
// probability top of reaching the top of that edge.
func (a *attacher) edgePrior(leaf, v pydt.NodeID, top float64) (pydt.Position, float64) {
	t := a.edgeTime(leaf, v)
	r := a.opt.C * a.h.Rate(a.tr.Count(v))
	return pydt.Position{Node: v, Time: t}, top + math.Log(r) - r*(t.S()-a.tr.ParentTime(v).S())
}

// nodePrior returns the position at the branch point v and the log
// probability of a new point joining v as a new branch.
func (a *attacher) nodePrior(v pydt.NodeID, top float64) (pydt.Position, float64) {
	mv := float64(a.tr.Count(v))
	k := float64(a.tr.Degree(v))
	pr := top + a.pass(v) + math.Log((a.opt.Alpha+a.opt.Beta*k)/(mv+a.opt.Alpha))
	return pydt.Position{Node: v, AtNode: true}, pr
}

// onEdge returns the score of attaching leaf on the edge above v.
func (a *attacher) onEdge(leaf, v pydt.NodeID, top float64) (pydt.Position, float64) {
	pos, pr := a.edgePrior(leaf, v, top)
	return pos, pr + a.m.LogLikIfAttached(leaf, pos)
}

// atNode returns the score of attaching leaf as a new child of v.
func (a *attacher) atNode(leaf, v pydt.NodeID, top float64) (pydt.Position, float64) {
	pos, pr := a.nodePrior(v, top)
	if math.IsInf(pr, -1) {
		return pos, pr
	}
	return pos, pr + a.m.LogLikIfAttached(leaf, pos)
}

// into returns the log probability of reaching the top of child c's edge
// from the top of v's edge.
func (a *attacher) into(v, c pydt.NodeID, top float64) float64 {
	mv := float64(a.tr.Count(v))
	return top + a.pass(v) + math.Log((float64(a.tr.Count(c))-a.opt.Beta)/(mv+a.opt.Alpha))
}

// beamNode is a branch point on the descent's frontier, with the log
// probability of reaching the top of its edge and its edge's score.
type beamNode struct {
	v          pydt.NodeID
	top, score float64
}

// descend finds a position by beam search from the root: the frontier
// holds up to Beam branch points; each whose edge scores within Margin of
// the best score so far is scored at the point itself and at the edges
// above its nearest children, and the Beam best children (by their edge
// scores, branch points only) form the next frontier, down to the leaves.
// It returns the best position scored.
func (a *attacher) descend(leaf pydt.NodeID) (pydt.Position, float64) {
	tr := a.tr
	r := tr.Root()
	best, bestScore := a.onEdge(leaf, r, 0)
	a.front = append(a.front[:0], beamNode{r, 0, bestScore})
	for len(a.front) > 0 {
		a.next = a.next[:0]
		for _, f := range a.front {
			v, top := f.v, f.top
			if tr.IsLeaf(v) || a.opt.Margin > 0 && f.score < bestScore-a.opt.Margin {
				continue
			}
			if pos, ps := a.atNode(leaf, v, top); ps > bestScore {
				best, bestScore = pos, ps
			}
			for _, nc := range a.nearest(leaf, v) {
				c := nc.c
				ct := a.into(v, c, top)
				p, s := a.onEdge(leaf, c, ct)
				if s > bestScore {
					best, bestScore = p, s
				}
				if !tr.IsLeaf(c) {
					a.next = insertBeam(a.next, beamNode{c, ct, s}, a.opt.Beam)
				}
			}
		}
		a.front, a.next = a.next, a.front
	}
	return best, bestScore
}

// insertBeam inserts b into the list sorted by decreasing score, keeping
// at most k entries.
func insertBeam(list []beamNode, b beamNode, k int) []beamNode {
	if len(list) == k && !(b.score > list[k-1].score) {
		return list
	}
	if len(list) < k {
		list = append(list, beamNode{})
	}
	i := len(list) - 1
	for i > 0 && list[i-1].score < b.score {
		list[i] = list[i-1]
		i--
	}
	list[i] = b
	return list
}

// refine moves the divergence time on the chosen edge to the best the
// score finds by golden-section search over logit(f), f the fraction of
// the edge in s (for an edge into a leaf, in t: 1-t = (1-t_a)(1-f)). The
// path probabilities down to the edge do not depend on the time, so the
// score along the edge is the divergence density plus LogLikIfAttached.
func (a *attacher) refine(leaf pydt.NodeID, pos pydt.Position) pydt.Position {
	tr, v := a.tr, pos.Node
	sa := tr.ParentTime(v).S()
	r := a.opt.C * a.h.Rate(tr.Count(v))
	at := func(y float64) pydt.Time {
		f := 1 / (1 + math.Exp(-y))
		if tr.IsLeaf(v) {
			return pydt.TimeFromS(sa - math.Log1p(-f))
		}
		return pydt.TimeFromS(sa + f*(tr.Time(v).S()-sa))
	}
	score := func(y float64) float64 {
		t := at(y)
		p := pydt.Position{Node: v, Time: t}
		return -r*(t.S()-sa) + a.m.LogLikIfAttached(leaf, p)
	}
	lo, hi := -14.0, 14.0
	if tr.IsLeaf(v) {
		hi = 25
	}
	y, fy, err := GoldenMax(score, lo, hi, 1e-3)
	if err != nil || !(fy > score(logitOf(a, v, pos.Time))) {
		return pos
	}
	return pydt.Position{Node: v, Time: at(y)}
}

// logitOf returns the search coordinate of time t on the edge above v (see
// refine).
func logitOf(a *attacher, v pydt.NodeID, t pydt.Time) float64 {
	sa := a.tr.ParentTime(v).S()
	var f float64
	if a.tr.IsLeaf(v) {
		f = -math.Expm1(-(t.S() - sa))
	} else {
		f = (t.S() - sa) / (a.tr.Time(v).S() - sa)
	}
	return math.Log(f / (1 - f))
}

// exhaustive scores every edge and branch point.
func (a *attacher) exhaustive(leaf pydt.NodeID) (pydt.Position, float64) {
	tr := a.tr
	var best pydt.Position
	bestScore := math.Inf(-1)
	var walk func(v pydt.NodeID, top float64)
	walk = func(v pydt.NodeID, top float64) {
		if p, s := a.onEdge(leaf, v, top); s > bestScore {
			best, bestScore = p, s
		}
		if tr.IsLeaf(v) {
			return
		}
		if p, s := a.atNode(leaf, v, top); s > bestScore {
			best, bestScore = p, s
		}
		for c := tr.FirstChild(v); c != pydt.NoNode; c = tr.NextSibling(c) {
			walk(c, a.into(v, c, top))
		}
	}
	walk(tr.Root(), 0)
	return best, bestScore
}

// AttachPriorS returns the change in pydt.LogPriorS(tr, alpha, beta,
// pydt.DivInv{C: c}, h) when the detached subtree v is attached at pos:
// LogPriorS after, less LogPriorS before, less the terms of v's own branch
// points (which do not depend on pos; zero for a leaf), so that it ranks
// positions exactly as LogPriorS does. Only the branch points on the path
// from the attachment point to the root change (their counts, and one
// child's count each), plus the branch point created on an edge, so it
// costs O(depth) instead of the O(N) of evaluating LogPriorS. It returns -Inf when pos is not
// strictly before v's time (or, on an edge, not strictly inside it).
// alpha and beta must be valid; h is reset to them if it differs.
func AttachPriorS(tr *pydt.Tree, v pydt.NodeID, pos pydt.Position, alpha, beta, c float64, h *pydt.Harmonic) float64 {
	if !h.Has(alpha, beta) {
		if err := h.Reset(alpha, beta); err != nil {
			return math.Inf(-1)
		}
	}
	m := tr.Count(v)
	tv := tr.Time(v)
	u := pos.Node
	lg1b, _ := math.Lgamma(1 - beta)
	logC := math.Log(c)
	var delta float64
	var child pydt.NodeID // the node on the path whose count grew by m
	if pos.AtNode {
		if tr.IsLeaf(u) || !tr.Time(u).Before(tv) {
			return math.Inf(-1)
		}
		mp, k := tr.Count(u), tr.Degree(u)
		x := alpha + float64(k)*beta
		if !(x > 0) {
			return math.Inf(-1)
		}
		dj := h.H(mp+m-1) - h.H(mp-1) - h.H(m-1)
		delta = math.Log(x) + h.LogGammaMinusBeta(m) - lg1b -
			(h.LogGammaPlusAlpha(mp+m) - h.LogGammaPlusAlpha(mp)) - c*tr.Time(u).S()*dj
		child = u
	} else {
		tw := pos.Time
		if !tr.ParentTime(u).Before(tw) || !tw.Before(tr.Time(u)) || !tw.Before(tv) {
			return math.Inf(-1)
		}
		nu := tr.Count(u)
		j := h.H(nu+m-1) - h.H(nu-1) - h.H(m-1)
		delta = logC + h.LogGammaMinusBeta(nu) + h.LogGammaMinusBeta(m) - lg1b -
			h.LogGammaPlusAlpha(nu+m) - c*tw.S()*j
		child = u
	}
	for b := tr.Parent(child); b != pydt.NoNode; child, b = b, tr.Parent(b) {
		n, mb := tr.Count(child), tr.Count(b)
		dj := h.H(mb+m-1) - h.H(mb-1) - (h.H(n+m-1) - h.H(n-1))
		delta += h.LogGammaMinusBeta(n+m) - h.LogGammaMinusBeta(n) -
			(h.LogGammaPlusAlpha(mb+m) - h.LogGammaPlusAlpha(mb)) - c*tr.Time(b).S()*dj
	}
	return delta
}
