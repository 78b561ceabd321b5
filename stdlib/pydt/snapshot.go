package pydt

import (
	"encoding/json"
	"fmt"
)

// snapshot is the exact serialised form of a Tree: every link, count and
// time (both t and 1-t), so that a tree restored from a checkpoint is
// bit-for-bit the tree that was saved, child order included.
type snapshot struct {
	N      int       `json:"n"`
	Root   NodeID    `json:"root"`
	Parent []NodeID  `json:"parent"`
	First  []NodeID  `json:"first"`
	Next   []NodeID  `json:"next"`
	Prev   []NodeID  `json:"prev"`
	Degree []int32   `json:"degree"`
	Count  []int32   `json:"count"`
	T      []float64 `json:"t"`
	U      []float64 `json:"one_minus_t"`
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
		T: make([]float64, len(tr.time)), U: make([]float64, len(tr.time)),
	}
	for i, x := range tr.time {
		s.T[i], s.U[i] = x.T(), x.OneMinus()
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
	for _, l := range []int{len(s.Parent), len(s.First), len(s.Next), len(s.Prev), len(s.Degree), len(s.Count), len(s.T), len(s.U), len(s.InUse)} {
		if l != size {
			return fmt.Errorf("tree snapshot: arrays of length %d for %d leaves", l, s.N)
		}
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
		tr.time[i] = Time{t: s.T[i], oneMinus: s.U[i], set: true}
	}
	if err := tr.Validate(); err != nil {
		return fmt.Errorf("tree snapshot: %w", err)
	}
	return nil
}
