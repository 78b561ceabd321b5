package pydt

import (
	"encoding/json"
	"fmt"
)

// snapshot is the exact serialised form of a Tree: every link, count and
// branch point time (as s = -log(1-t), the coordinate Time keeps), so that
// a tree restored from a checkpoint is bit-for-bit the tree that was saved,
// child order included. S holds the internal IDs N..2N-2 (leaves are at
// s = +Inf, which JSON cannot hold). Snapshots written before times were
// kept as s hold t and 1-t for every node instead; they are read by
// converting the more precise of the two.
type snapshot struct {
	N      int       `json:"n"`
	Root   NodeID    `json:"root"`
	Parent []NodeID  `json:"parent"`
	First  []NodeID  `json:"first"`
	Next   []NodeID  `json:"next"`
	Prev   []NodeID  `json:"prev"`
	Degree []int32   `json:"degree"`
	Count  []int32   `json:"count"`
	S      []float64 `json:"s"`
	T      []float64 `json:"t,omitempty"`
	U      []float64 `json:"one_minus_t,omitempty"`
	InUse  []bool    `json:"in_use"`
	Free   []NodeID  `json:"free"`
	Labels []string  `json:"labels,omitempty"`
}

// MarshalJSON encodes the tree exactly, for checkpoints. Newick output is
// the format for people; this one restores the same tree bit for bit.
func (tr *Tree) MarshalJSON() ([]byte, error) {
	s := snapshot{
		N: tr.n, Root: tr.root, Parent: tr.parent, First: tr.first, Next: tr.next, Prev: tr.prev,
		Degree: tr.degree, Count: tr.count, InUse: tr.inUse, Free: tr.free, Labels: tr.Labels,
		S: make([]float64, len(tr.time)-tr.n),
	}
	for i, x := range tr.time[tr.n:] {
		s.S[i] = x.s
	}
	return json.Marshal(s)
}

// UnmarshalJSON restores a tree written by MarshalJSON and checks that it is
// a valid tree.
func (tr *Tree) UnmarshalJSON(b []byte) error {
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("tree snapshot: %w", err)
	}
	size := 2*s.N - 1
	if s.N < 1 {
		return fmt.Errorf("tree snapshot: %d leaves", s.N)
	}
	for _, l := range []int{len(s.Parent), len(s.First), len(s.Next), len(s.Prev), len(s.Degree), len(s.Count), len(s.InUse)} {
		if l != size {
			return fmt.Errorf("tree snapshot: arrays of length %d for %d leaves", l, s.N)
		}
	}
	if s.S == nil && len(s.T) == size && len(s.U) == size {
		// The older form: t and 1-t of every node.
		s.S = make([]float64, size-s.N)
		for i := range s.S {
			if t := s.T[s.N+i]; t <= 0.5 {
				s.S[i] = TimeAt(t).s
			} else {
				s.S[i] = TimeFromOneMinus(s.U[s.N+i]).s
			}
		}
	}
	if len(s.S) != size-s.N {
		return fmt.Errorf("tree snapshot: %d branch point times for %d leaves", len(s.S), s.N)
	}
	ids := append(append(append(append([]NodeID{s.Root}, s.Parent...), s.First...), s.Next...), s.Prev...)
	for _, id := range append(ids, s.Free...) {
		if id < NoNode || int(id) >= size {
			return fmt.Errorf("tree snapshot: node %d out of range", id)
		}
	}
	*tr = Tree{
		n: s.N, root: s.Root, parent: s.Parent, first: s.First, next: s.Next, prev: s.Prev,
		degree: s.Degree, count: s.Count, inUse: s.InUse, free: append(make([]NodeID, 0, s.N-1), s.Free...),
		Labels: s.Labels, time: make([]Time, size),
	}
	for i := range tr.time {
		tr.time[i] = Leaf
		if i >= s.N {
			tr.time[i] = Time{s: s.S[i-s.N]}
		}
	}
	if err := tr.Validate(); err != nil {
		return fmt.Errorf("tree snapshot: %w", err)
	}
	return nil
}
