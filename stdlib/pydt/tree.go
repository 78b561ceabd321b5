package pydt

import (
	"errors"
	"fmt"
	"iter"
)

// NodeID names a node of a Tree. Leaves are 0..N-1, in the order of the data
// rows; internal nodes (branch points) take the IDs N..2N-2.
type NodeID int32

// NoNode is the NodeID of no node: the parent of the root, or of a detached
// subtree.
const NoNode NodeID = -1

// Position is a place at which a subtree can be attached: either on the edge
// above Node, at Time (a new branch point is created there), or, when AtNode
// is set, at the existing branch point Node as one more child. The edge above
// the root is the edge from the origin at t = 0.
type Position struct {
	Node   NodeID
	Time   Time
	AtNode bool
}

// Tree is a multifurcating tree with N leaves at t = 1 and branch points at
// divergence times in (0, 1). It keeps, for every node, the number of leaves
// below it, and supports detaching and re-attaching subtrees in time
// proportional to the depth, without allocating.
//
// Children are kept in doubly linked sibling lists; the order of children has
// no meaning in the model but is kept stable for reproducible output.
type Tree struct {
	n      int
	parent []NodeID
	first  []NodeID // first child
	next   []NodeID // next sibling
	prev   []NodeID // previous sibling
	degree []int32  // number of children
	count  []int32  // number of leaves below (1 for a leaf)
	time   []Time
	inUse  []bool // internal node allocated
	root   NodeID
	free   []NodeID // unallocated internal IDs, used as a stack

	// Labels names the leaves, in the order of the data rows. It may be
	// nil, in which case leaves are named by their 1-based row number.
	Labels []string
}

// New returns a tree with n leaves and no branch points. Every leaf starts
// detached; Plant and Attach build the tree, or NewInternal and AddChild
// build one node by node.
func New(n int) *Tree {
	if n < 1 {
		panic(fmt.Sprintf("pydt.New: need at least one leaf, got %d", n))
	}
	size := 2*n - 1
	tr := &Tree{
		n:      n,
		parent: make([]NodeID, size),
		first:  make([]NodeID, size),
		next:   make([]NodeID, size),
		prev:   make([]NodeID, size),
		degree: make([]int32, size),
		count:  make([]int32, size),
		time:   make([]Time, size),
		inUse:  make([]bool, size),
		root:   NoNode,
		free:   make([]NodeID, 0, n-1),
	}
	for i := range size {
		tr.parent[i], tr.first[i], tr.next[i], tr.prev[i] = NoNode, NoNode, NoNode, NoNode
	}
	for i := range n {
		tr.count[i] = 1
		tr.time[i] = Leaf
	}
	for id := size - 1; id >= n; id-- {
		tr.free = append(tr.free, NodeID(id))
	}
	return tr
}

// NumLeaves returns N.
func (tr *Tree) NumLeaves() int { return tr.n }

// Cap returns the number of node IDs, 2N-1: every NodeID is below it.
func (tr *Tree) Cap() int { return len(tr.parent) }

// Root returns the top node: the first branch point below the origin, or the
// only leaf when N = 1. It is NoNode while the tree is empty.
func (tr *Tree) Root() NodeID { return tr.root }

// Parent returns the parent of v, or NoNode for the root and for the root of
// a detached subtree.
func (tr *Tree) Parent(v NodeID) NodeID { return tr.parent[v] }

// FirstChild returns the first child of v, or NoNode for a leaf.
func (tr *Tree) FirstChild(v NodeID) NodeID { return tr.first[v] }

// NextSibling returns the sibling after v, or NoNode.
func (tr *Tree) NextSibling(v NodeID) NodeID { return tr.next[v] }

// Children iterates over the children of v.
func (tr *Tree) Children(v NodeID) iter.Seq[NodeID] {
	return func(yield func(NodeID) bool) {
		for c := tr.first[v]; c != NoNode; c = tr.next[c] {
			if !yield(c) {
				return
			}
		}
	}
}

// Degree returns the number of children of v.
func (tr *Tree) Degree(v NodeID) int { return int(tr.degree[v]) }

// Count returns the number of leaves below v (1 for a leaf).
func (tr *Tree) Count(v NodeID) int { return int(tr.count[v]) }

// Time returns the divergence time of v (Leaf for a leaf).
func (tr *Tree) Time(v NodeID) Time { return tr.time[v] }

// ParentTime returns the time of v's parent, or Origin for the root.
func (tr *Tree) ParentTime(v NodeID) Time {
	if p := tr.parent[v]; p != NoNode {
		return tr.time[p]
	}
	return Origin
}

// BranchLength returns the length in diffusion time of the edge above v.
func (tr *Tree) BranchLength(v NodeID) float64 {
	return tr.time[v].Since(tr.ParentTime(v))
}

// SetTime sets the divergence time of the internal node v. The caller keeps
// it strictly between the parent's time and the children's times.
func (tr *Tree) SetTime(v NodeID, t Time) {
	if tr.IsLeaf(v) {
		panic("pydt: SetTime on a leaf")
	}
	tr.time[v] = t
}

// IsLeaf reports whether v is a leaf.
func (tr *Tree) IsLeaf(v NodeID) bool { return int(v) < tr.n }

// InUse reports whether v is a leaf or an allocated branch point.
func (tr *Tree) InUse(v NodeID) bool { return tr.IsLeaf(v) || tr.inUse[v] }

// NumInternal returns the number of allocated branch points.
func (tr *Tree) NumInternal() int { return tr.n - 1 - len(tr.free) }

// Depth returns the number of edges from the root down to v.
func (tr *Tree) Depth(v NodeID) int {
	d := 0
	for p := tr.parent[v]; p != NoNode; p = tr.parent[p] {
		d++
	}
	return d
}

// Label returns the name of leaf i: its label, or its 1-based row number.
func (tr *Tree) Label(i NodeID) string {
	if int(i) < len(tr.Labels) && tr.Labels[i] != "" {
		return tr.Labels[i]
	}
	return fmt.Sprint(int(i) + 1)
}

// NewInternal allocates a branch point at time t with no parent and no
// children. It is the low-level constructor used by parsers; AddChild links
// children to it and Recount fixes the leaf counts.
func (tr *Tree) NewInternal(t Time) NodeID {
	if len(tr.free) == 0 {
		panic("pydt: more than N-1 branch points")
	}
	w := tr.free[len(tr.free)-1]
	tr.free = tr.free[:len(tr.free)-1]
	tr.inUse[w] = true
	tr.time[w] = t
	tr.parent[w], tr.first[w], tr.next[w], tr.prev[w] = NoNode, NoNode, NoNode, NoNode
	tr.degree[w] = 0
	tr.count[w] = 0
	return w
}

func (tr *Tree) release(w NodeID) {
	tr.inUse[w] = false
	tr.parent[w], tr.first[w], tr.next[w], tr.prev[w] = NoNode, NoNode, NoNode, NoNode
	tr.degree[w], tr.count[w] = 0, 0
	tr.free = append(tr.free, w)
}

// AddChild appends the parentless node c to the children of p. It does not
// update leaf counts; see Recount.
func (tr *Tree) AddChild(p, c NodeID) {
	if tr.parent[c] != NoNode {
		panic("pydt: AddChild of a node that has a parent")
	}
	last := tr.first[p]
	if last != NoNode {
		for tr.next[last] != NoNode {
			last = tr.next[last]
		}
	}
	tr.linkAfter(p, last, c)
}

// linkAfter links the parentless node c into p's child list after last,
// which is p's last child, or NoNode when p has none. It costs O(1), where
// AddChild walks the list to find the last child; it does not update leaf
// counts.
func (tr *Tree) linkAfter(p, last, c NodeID) {
	tr.parent[c] = p
	tr.prev[c], tr.next[c] = last, NoNode
	if last == NoNode {
		tr.first[p] = c
	} else {
		tr.next[last] = c
	}
	tr.degree[p]++
}

// SetRoot makes the parentless node v the root.
func (tr *Tree) SetRoot(v NodeID) {
	if v != NoNode && tr.parent[v] != NoNode {
		panic("pydt: SetRoot of a node that has a parent")
	}
	tr.root = v
}

// Recount recomputes the leaf count of every node below the root.
func (tr *Tree) Recount() {
	if tr.root == NoNode {
		return
	}
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			tr.count[v] = 1
			continue
		}
		var s int32
		for c := tr.first[v]; c != NoNode; c = tr.next[c] {
			s += tr.count[c]
		}
		tr.count[v] = s
	}
}

// Plant makes the detached subtree v the whole tree. The tree must be empty.
func (tr *Tree) Plant(v NodeID) {
	if tr.root != NoNode {
		panic("pydt: Plant on a tree that has a root")
	}
	tr.root = v
}

// unlink removes c from its parent's child list without touching counts.
func (tr *Tree) unlink(c NodeID) {
	p := tr.parent[c]
	if tr.prev[c] != NoNode {
		tr.next[tr.prev[c]] = tr.next[c]
	} else {
		tr.first[p] = tr.next[c]
	}
	if tr.next[c] != NoNode {
		tr.prev[tr.next[c]] = tr.prev[c]
	}
	tr.parent[c], tr.next[c], tr.prev[c] = NoNode, NoNode, NoNode
	tr.degree[p]--
}

// replace puts n in the place of old in old's parent's child list (or as
// root), leaving old parentless.
func (tr *Tree) replace(old, n NodeID) {
	p := tr.parent[old]
	tr.parent[n] = p
	tr.prev[n], tr.next[n] = tr.prev[old], tr.next[old]
	if p == NoNode {
		tr.root = n
	} else if tr.prev[old] == NoNode {
		tr.first[p] = n
	} else {
		tr.next[tr.prev[old]] = n
	}
	if tr.next[old] != NoNode {
		tr.prev[tr.next[old]] = n
	}
	tr.parent[old], tr.prev[old], tr.next[old] = NoNode, NoNode, NoNode
}

func (tr *Tree) addCount(from NodeID, delta int32) {
	for a := from; a != NoNode; a = tr.parent[a] {
		tr.count[a] += delta
	}
}

// Detach removes the subtree rooted at v, which must be attached and not be
// the root, and returns the position it occupied, so that Attach(v, pos)
// undoes it. A parent left with a single child is spliced out and its ID
// freed; the returned position is then the edge above the remaining child at
// the parent's old time. Cost: O(depth).
func (tr *Tree) Detach(v NodeID) Position {
	p := tr.parent[v]
	if p == NoNode {
		panic("pydt: Detach of the root or of a detached node")
	}
	tr.unlink(v)
	if tr.degree[p] >= 2 {
		tr.addCount(p, -tr.count[v])
		return Position{Node: p, AtNode: true}
	}
	// p has one child left: splice it out.
	s := tr.first[p]
	pos := Position{Node: s, Time: tr.time[p]}
	tr.unlink(s)
	tr.parent[s] = NoNode
	tr.replace(p, s)
	tr.addCount(tr.parent[s], -tr.count[v])
	tr.release(p)
	return pos
}

// Attach joins the detached subtree v to the tree at pos and returns the
// branch point that is now its parent: pos.Node itself when pos.AtNode, or
// the new branch point created on the edge above pos.Node. The caller ensures
// pos.Time lies on that edge and before v's own time. Cost: O(depth).
func (tr *Tree) Attach(v NodeID, pos Position) NodeID {
	if tr.parent[v] != NoNode || v == tr.root {
		panic("pydt: Attach of a node that is not detached")
	}
	if pos.AtNode {
		w := pos.Node
		tr.AddChild(w, v)
		tr.addCount(w, tr.count[v])
		return w
	}
	u := pos.Node
	w := tr.NewInternal(pos.Time)
	tr.replace(u, w)
	tr.first[w] = NoNode
	tr.AddChild(w, u)
	tr.AddChild(w, v)
	tr.count[w] = tr.count[u]
	tr.addCount(w, tr.count[v])
	return w
}

// PostOrder appends the nodes below the root, children before parents, to
// buf and returns it.
func (tr *Tree) PostOrder(buf []NodeID) []NodeID {
	return tr.PostOrderFrom(tr.root, buf)
}

// PostOrderFrom appends the nodes of the subtree rooted at v in post-order.
func (tr *Tree) PostOrderFrom(v NodeID, buf []NodeID) []NodeID {
	if v == NoNode {
		return buf
	}
	// Iterative traversal: descend to the first leaf, then climb.
	c := v
	for tr.first[c] != NoNode {
		c = tr.first[c]
	}
	for {
		buf = append(buf, c)
		if c == v {
			return buf
		}
		if n := tr.next[c]; n != NoNode {
			c = n
			for tr.first[c] != NoNode {
				c = tr.first[c]
			}
		} else {
			c = tr.parent[c]
		}
	}
}

// PreOrder appends the nodes below the root, parents before children.
func (tr *Tree) PreOrder(buf []NodeID) []NodeID {
	if tr.root == NoNode {
		return buf
	}
	start := len(buf)
	buf = append(buf, tr.root)
	for i := start; i < len(buf); i++ {
		for c := tr.first[buf[i]]; c != NoNode; c = tr.next[c] {
			buf = append(buf, c)
		}
	}
	return buf
}

// Clone returns a deep copy of the tree.
func (tr *Tree) Clone() *Tree {
	c := *tr
	c.parent = append([]NodeID(nil), tr.parent...)
	c.first = append([]NodeID(nil), tr.first...)
	c.next = append([]NodeID(nil), tr.next...)
	c.prev = append([]NodeID(nil), tr.prev...)
	c.degree = append([]int32(nil), tr.degree...)
	c.count = append([]int32(nil), tr.count...)
	c.time = append([]Time(nil), tr.time...)
	c.inUse = append([]bool(nil), tr.inUse...)
	c.free = append(make([]NodeID, 0, cap(tr.free)), tr.free...)
	if tr.Labels != nil {
		c.Labels = append([]string(nil), tr.Labels...)
	}
	return &c
}

// CopyFrom makes tr an exact copy of src, which must have the same number of
// leaves, reusing tr's storage.
func (tr *Tree) CopyFrom(src *Tree) {
	if src.n != tr.n {
		panic("pydt: CopyFrom between trees of different sizes")
	}
	copy(tr.parent, src.parent)
	copy(tr.first, src.first)
	copy(tr.next, src.next)
	copy(tr.prev, src.prev)
	copy(tr.degree, src.degree)
	copy(tr.count, src.count)
	copy(tr.time, src.time)
	copy(tr.inUse, src.inUse)
	tr.free = append(tr.free[:0], src.free...)
	tr.root = src.root
	tr.Labels = src.Labels
}

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("invalid tree")

// Validate checks the tree's invariants: every leaf is reachable from the
// root exactly once, times strictly increase down every path and lie in
// (0, 1) for branch points, every branch point has at least two children,
// sibling links and leaf counts are consistent, and the free list holds
// exactly the unallocated branch point IDs.
func (tr *Tree) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if tr.root == NoNode {
		return bad("empty tree")
	}
	if tr.parent[tr.root] != NoNode {
		return bad("root %d has a parent", tr.root)
	}
	seen := make([]bool, len(tr.parent))
	stack := []NodeID{tr.root}
	leaves := 0
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] {
			return bad("node %d reached twice", v)
		}
		seen[v] = true
		tv := tr.time[v]
		if !tv.Valid() {
			return bad("node %d has time s = %v outside [0, +Inf] (t outside [0, 1])", v, tv.S())
		}
		if !tr.ParentTime(v).Before(tv) {
			return bad("node %d at %v is not after its parent at %v", v, tv, tr.ParentTime(v))
		}
		if tr.IsLeaf(v) {
			leaves++
			if !tv.IsLeaf() {
				return bad("leaf %d is not at t = 1", v)
			}
			if tr.first[v] != NoNode || tr.count[v] != 1 {
				return bad("leaf %d has children or a count of %d", v, tr.count[v])
			}
			continue
		}
		if !tr.inUse[v] {
			return bad("node %d is reachable but not allocated", v)
		}
		if tv.IsLeaf() {
			return bad("branch point %d is at t = 1", v)
		}
		var k, sum int32
		prev := NoNode
		for c := tr.first[v]; c != NoNode; c = tr.next[c] {
			if tr.parent[c] != v || tr.prev[c] != prev {
				return bad("child links of node %d are inconsistent", v)
			}
			k++
			sum += tr.count[c]
			prev = c
			stack = append(stack, c)
			if k > int32(tr.n) {
				return bad("child list of node %d has a cycle", v)
			}
		}
		if k != tr.degree[v] {
			return bad("node %d has %d children but degree %d", v, k, tr.degree[v])
		}
		if k < 2 {
			return bad("branch point %d has %d child", v, k)
		}
		if sum != tr.count[v] {
			return bad("node %d counts %d leaves, its children hold %d", v, tr.count[v], sum)
		}
	}
	if leaves != tr.n {
		return bad("%d of %d leaves are reachable from the root", leaves, tr.n)
	}
	unused := 0
	for id := tr.n; id < len(tr.parent); id++ {
		if tr.inUse[id] && !seen[id] {
			return bad("branch point %d is allocated but unreachable", id)
		}
		if !tr.inUse[id] {
			unused++
		}
	}
	// The free list holds each unallocated branch point ID exactly once.
	for _, id := range tr.free {
		if int(id) < tr.n || int(id) >= len(tr.parent) || tr.inUse[id] || seen[id] {
			return bad("free list holds node %d, which is not a free branch point or is listed twice", id)
		}
		seen[id] = true
	}
	if len(tr.free) != unused {
		return bad("free list holds %d IDs, %d branch points are free", len(tr.free), unused)
	}
	return nil
}
