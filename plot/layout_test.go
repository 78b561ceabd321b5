package plot

import (
	"math"
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// node finds the branch point whose leaves are exactly names.
func node(t *testing.T, tr *pydt.Tree, names ...string) pydt.NodeID {
	t.Helper()
	want := slices.Clone(names)
	slices.Sort(want)
	for _, v := range tr.PostOrder(nil) {
		var got []string
		for _, u := range tr.PostOrderFrom(v, nil) {
			if tr.IsLeaf(u) {
				got = append(got, tr.Label(u))
			}
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return v
		}
	}
	t.Fatalf("no node with leaves %v", names)
	return pydt.NoNode
}

func leaf(t *testing.T, tr *pydt.Tree, name string) pydt.NodeID {
	t.Helper()
	for i := range tr.NumLeaves() {
		if tr.Label(pydt.NodeID(i)) == name {
			return pydt.NodeID(i)
		}
	}
	t.Fatalf("no leaf %q", name)
	return pydt.NoNode
}

// TestLayout checks the dendrogram coordinates of hand-made trees against
// coordinates worked out by hand: leaves on rows 0, 1, ... in depth-first
// order, a branch point midway between its first and last child, its bar
// spanning them, x its divergence time.
func TestLayout(t *testing.T) {
	type pos struct {
		leaves     []string // "" for a leaf named by the first entry
		time, row  float64
		span0, end float64 // bar ends (branch points only)
	}
	tests := []struct {
		name   string
		newick string
		order  []string
		want   []pos
	}{
		{
			name:   "binary",
			newick: "((a:0.5,b:0.5):0.3,c:0.8):0.2;",
			order:  []string{"a", "b", "c"},
			want: []pos{
				{leaves: []string{"a"}, time: 1, row: 0},
				{leaves: []string{"b"}, time: 1, row: 1},
				{leaves: []string{"c"}, time: 1, row: 2},
				{leaves: []string{"a", "b"}, time: 0.5, row: 0.5, span0: 0, end: 1},
				{leaves: []string{"a", "b", "c"}, time: 0.2, row: 1.25, span0: 0.5, end: 2},
			},
		},
		{
			// A root with three children, the middle one a branch point
			// with three children of its own: one bar each, spanning all.
			name:   "multifurcation",
			newick: "(a:0.6,(b:0.2,c:0.2,d:0.2):0.4,e:0.6):0.4;",
			order:  []string{"a", "b", "c", "d", "e"},
			want: []pos{
				{leaves: []string{"c"}, time: 1, row: 2},
				{leaves: []string{"b", "c", "d"}, time: 0.8, row: 2, span0: 1, end: 3},
				{leaves: []string{"a", "b", "c", "d", "e"}, time: 0.4, row: 2, span0: 0, end: 4},
			},
		},
		{
			// Children keep their order: the big clade first.
			name:   "star under a pair",
			newick: "(((a:0.1,b:0.1,c:0.1,d:0.1):0.2,e:0.3):0.6,f:0.9):0.1;",
			order:  []string{"a", "b", "c", "d", "e", "f"},
			want: []pos{
				{leaves: []string{"a", "b", "c", "d"}, time: 0.9, row: 1.5, span0: 0, end: 3},
				{leaves: []string{"a", "b", "c", "d", "e"}, time: 0.7, row: 2.75, span0: 1.5, end: 4},
				{leaves: []string{"a", "b", "c", "d", "e", "f"}, time: 0.1, row: 3.875, span0: 2.75, end: 5},
			},
		},
		{
			// Uneven children: midway between the first and the last
			// child (1.25), not their mean (7/6).
			name:   "uneven multifurcation",
			newick: "(a:0.6,b:0.6,(c:0.2,d:0.2):0.4):0.4;",
			order:  []string{"a", "b", "c", "d"},
			want: []pos{
				{leaves: []string{"c", "d"}, time: 0.8, row: 2.5, span0: 2, end: 3},
				{leaves: []string{"a", "b", "c", "d"}, time: 0.4, row: 1.25, span0: 0, end: 2.5},
			},
		},
		{
			name:   "two leaves",
			newick: "(x:0.75,y:0.75):0.25;",
			order:  []string{"x", "y"},
			want:   []pos{{leaves: []string{"x", "y"}, time: 0.25, row: 0.5, span0: 0, end: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, lay := newickLayout(t, tc.newick)
			var order []string
			for _, v := range lay.Leaves {
				order = append(order, tr.Label(v))
			}
			if !slices.Equal(order, tc.order) {
				t.Errorf("leaf order %v, want %v", order, tc.order)
			}
			for _, w := range tc.want {
				var v pydt.NodeID
				if len(w.leaves) == 1 {
					v = leaf(t, tr, w.leaves[0])
				} else {
					v = node(t, tr, w.leaves...)
				}
				if !(math.Abs(lay.Time[v]-w.time) <= 1e-12) || lay.Row[v] != w.row {
					t.Errorf("%v: (time, row) = (%v, %v), want (%v, %v)", w.leaves, lay.Time[v], lay.Row[v], w.time, w.row)
				}
				if len(w.leaves) > 1 && lay.Span[v] != [2]float64{w.span0, w.end} {
					t.Errorf("%v: bar %v, want [%v %v]", w.leaves, lay.Span[v], w.span0, w.end)
				}
			}
		})
	}
}

func TestLayoutEmpty(t *testing.T) {
	if _, err := NewLayout(pydt.New(3)); err == nil {
		t.Error("no error for a tree with no root")
	}
	if _, err := NewLayout(nil); err == nil {
		t.Error("no error for a nil tree")
	}
}

// newickLayout parses the Newick tree s and lays it out (NewLayout),
// failing the test on an error.
func newickLayout(t *testing.T, s string) (*pydt.Tree, *Layout) {
	t.Helper()
	tr, err := pydt.ParseNewick(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	lay, err := NewLayout(tr)
	if err != nil {
		t.Fatal(err)
	}
	return tr, lay
}
