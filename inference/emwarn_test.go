package inference

import (
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// The star warning counts direct leaf children by hand-built trees: a root
// with 9 of 12 rows as leaves warns; a balanced tree, and a star of fewer
// than 8 rows, do not.
func TestStarWarning(t *testing.T) {
	star := func(n, direct int) *pydt.Tree {
		tr := pydt.New(n)
		root := tr.NewInternal(pydt.TimeAt(0.5))
		tr.SetRoot(root)
		for i := range direct {
			tr.AddChild(root, pydt.NodeID(i))
		}
		if direct < n {
			sub := tr.NewInternal(pydt.TimeAt(0.8))
			tr.AddChild(root, sub)
			for i := direct; i < n; i++ {
				tr.AddChild(sub, pydt.NodeID(i))
			}
		}
		tr.Recount()
		return tr
	}
	balanced := func(n int) *pydt.Tree {
		tr := pydt.New(n)
		var build func(lo, hi int, t float64) pydt.NodeID
		build = func(lo, hi int, t float64) pydt.NodeID {
			if hi-lo == 1 {
				return pydt.NodeID(lo)
			}
			v := tr.NewInternal(pydt.TimeAt(t))
			mid := (lo + hi) / 2
			tr.AddChild(v, build(lo, mid, (t+1)/2))
			tr.AddChild(v, build(mid, hi, (t+1)/2))
			return v
		}
		tr.SetRoot(build(0, n, 0.3))
		tr.Recount()
		return tr
	}
	tests := []struct {
		name string
		tr   *pydt.Tree
		want string
	}{
		{"star 9 of 12", star(12, 9), "9 of the 12 rows"},
		{"root with 5 of 12", star(12, 5), ""},
		{"small star", star(6, 6), ""},
		{"balanced 16", balanced(16), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.tr.Validate(); err != nil {
				t.Fatal(err)
			}
			got := starWarning(tc.tr)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("starWarning = %q, want one containing %q", got, tc.want)
			}
		})
	}
}
