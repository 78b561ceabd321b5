package inference

import (
	"math"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestCutAndCollapse checks the initial trees' shapes on a hand-made
// dendrogram: ((1,2) joined late, (3,4) joined late) joined at 0.5, and 5
// joined at the root at 0.4 (times written as branch lengths).
func TestCutAndCollapse(t *testing.T) {
	const tree = "(((1:0.1,2:0.1):0.4,(3:0.05,4:0.05):0.45):0.1,5:0.6):0.4;"
	tr, err := pydt.ParseNewick(tree, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		do   func() (*pydt.Tree, error)
		want string // the expected topology (topologyKey: rows from 0)
	}{
		{"cut 2", func() (*pydt.Tree, error) { return cutTree(tr, 2) }, "((0,1,2,3),4)"},
		{"cut 3", func() (*pydt.Tree, error) { return cutTree(tr, 3) }, "(((0,1),(2,3)),4)"},
		{"cut all", func() (*pydt.Tree, error) { return cutTree(tr, 4) }, "(((0,1),(2,3)),4)"},
		// 1 − t: root 0.6, (1234) 0.5, clusters 0.1 and 0.05.
		{"collapse 0.5", func() (*pydt.Tree, error) { return collapseTree(tr, 0.5) }, "((0,1),(2,3),4)"},
		{"collapse 0.9", func() (*pydt.Tree, error) { return collapseTree(tr, 0.9) }, "(((0,1),(2,3)),4)"},
		{"collapse cut keeps clusters", func() (*pydt.Tree, error) {
			c, err := cutTree(tr, 3)
			if err != nil {
				return nil, err
			}
			return collapseTree(c, 0)
		}, "((0,1),(2,3),4)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.do()
			if err != nil {
				t.Fatal(err)
			}
			if k := topologyKey(got); k != tc.want {
				t.Errorf("got %s, want %s", k, tc.want)
			}
			// Kept branch points keep their times.
			for _, v := range got.PreOrder(nil) {
				if !got.IsLeaf(v) && (got.Time(v).T() <= 0 || got.Time(v).T() >= 1) {
					t.Errorf("branch point %d at t = %v", v, got.Time(v).T())
				}
			}
		})
	}
}

// TestLinkageTreeTimes: two rows at squared distance r² get their join at
// 1 − t = 1 − exp(−r²/(2 D σ²)); a missing coordinate is left out and the
// sum scaled up by D over the coordinates both rows have.
func TestLinkageTreeTimes(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64 // 1 − t of the root
	}{
		{[]float64{0, 0, 1, 1}, -math.Expm1(-2.0 / (2 * 2 * 0.5))},
		{[]float64{0, math.NaN(), 1, 5}, -math.Expm1(-2.0 / (2 * 2 * 0.5))},
	} {
		tr, err := linkageTree(tc.x, 2, 2, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Time(tr.Root()).OneMinus(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("x %v: 1 − t = %v, want %v", tc.x, got, tc.want)
		}
	}
}
