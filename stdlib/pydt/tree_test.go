package pydt

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
)

// buildRandom builds a random multifurcating tree by sequential attachment at
// uniformly chosen edges and branch points.
func buildRandom(t *testing.T, rng *rand.Rand, n int) *Tree {
	t.Helper()
	tr := New(n)
	tr.Plant(0)
	for i := 1; i < n; i++ {
		nodes := tr.PreOrder(nil)
		u := nodes[rng.IntN(len(nodes))]
		if !tr.IsLeaf(u) && rng.IntN(3) == 0 {
			tr.Attach(NodeID(i), Position{Node: u, AtNode: true})
			continue
		}
		lo, hi := tr.ParentTime(u).T(), tr.Time(u).T()
		tr.Attach(NodeID(i), Position{Node: u, Time: TimeAt(lo + (hi-lo)*(0.1+0.8*rng.Float64()))})
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("random tree: %v", err)
	}
	return tr
}

func TestDetachAttachKeepsInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 5, 20} {
		tr := buildRandom(t, rng, n)
		for step := 0; step < 500; step++ {
			nodes := tr.PreOrder(nil)
			v := nodes[rng.IntN(len(nodes))]
			if v == tr.Root() {
				continue
			}
			before := tr.Clone()
			pos := tr.Detach(v)
			tr.Attach(v, pos)
			if err := tr.Validate(); err != nil {
				t.Fatalf("n=%d step %d: undo broke the tree: %v", n, step, err)
			}
			if got, want := tr.NumInternal(), before.NumInternal(); got != want {
				t.Fatalf("undo changed the number of branch points: %d != %d", got, want)
			}
			// Now a random move: detach, attach somewhere valid.
			tr.Detach(v)
			rest := tr.PreOrder(nil)
			for {
				u := rest[rng.IntN(len(rest))]
				if !tr.IsLeaf(u) && tr.Time(u).Before(tr.Time(v)) && rng.IntN(2) == 0 {
					tr.Attach(v, Position{Node: u, AtNode: true})
					break
				}
				lo := tr.ParentTime(u).T()
				hi := min(tr.Time(u).T(), tr.Time(v).T())
				if lo < hi {
					tr.Attach(v, Position{Node: u, Time: TimeAt(lo + (hi-lo)*(0.1+0.8*rng.Float64()))})
					break
				}
			}
			if err := tr.Validate(); err != nil {
				t.Fatalf("n=%d step %d: move broke the tree: %v", n, step, err)
			}
		}
	}
}

func TestPostOrderVisitsChildrenFirst(t *testing.T) {
	tr := buildRandom(t, rand.New(rand.NewPCG(3, 4)), 30)
	order := tr.PostOrder(nil)
	if len(order) != 30+tr.NumInternal() {
		t.Fatalf("post-order has %d nodes, want %d", len(order), 30+tr.NumInternal())
	}
	at := make(map[NodeID]int)
	for i, v := range order {
		at[v] = i
	}
	for _, v := range order {
		if p := tr.Parent(v); p != NoNode && at[p] < at[v] {
			t.Fatalf("parent %d before child %d", p, v)
		}
	}
}

func TestSnapshotRoundTripIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tr := buildRandom(t, rng, 40)
	// Move a few subtrees so IDs and child orders are not the build order.
	for range 20 {
		nodes := tr.PreOrder(nil)
		v := nodes[1+rng.IntN(len(nodes)-1)]
		tr.Attach(v, tr.Detach(v))
	}
	tr.SetTime(tr.Root(), TimeFromOneMinus(1-1e-3))
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Tree
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Newick(), tr.Newick(); got != want {
		t.Fatalf("restored tree differs:\n%s\n%s", got, want)
	}
	for v := range tr.Cap() {
		if !tr.InUse(NodeID(v)) {
			continue // a free ID's stale time means nothing
		}
		if back.Time(NodeID(v)) != tr.Time(NodeID(v)) || back.Parent(NodeID(v)) != tr.Parent(NodeID(v)) {
			t.Fatalf("node %d differs", v)
		}
	}
	if err := back.UnmarshalJSON([]byte(`{"n":2,"root":5}`)); err == nil {
		t.Error("accepted a corrupt snapshot")
	}
	// A corrupt free list would let NewInternal hand out a node in use.
	var used, unused []NodeID
	for v := tr.NumLeaves(); v < tr.Cap(); v++ {
		if tr.InUse(NodeID(v)) {
			used = append(used, NodeID(v))
		} else {
			unused = append(unused, NodeID(v))
		}
	}
	if len(unused) == 0 {
		t.Fatal("test tree has no free branch point ID")
	}
	for _, c := range []struct {
		name string
		free []NodeID
	}{
		{"an ID in use", append([]NodeID{used[0]}, unused...)},
		{"a leaf", append([]NodeID{0}, unused...)},
		{"an ID twice", append([]NodeID{unused[0]}, unused...)},
		{"an ID missing", unused[1:]},
	} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		m["free"] = c.free
		bad, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := back.UnmarshalJSON(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("free list with %s: error %v, want ErrInvalid", c.name, err)
		}
	}
}
