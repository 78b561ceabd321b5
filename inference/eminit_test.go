package inference

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
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
		if got := tr.Time(tr.Root()).OneMinus(); !(math.Abs(got-tc.want) <= 1e-12) {
			t.Errorf("x %v: 1 − t = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// heightCut returns the clusters of tr cut at s = thr: the leaf sets of the
// maximal subtrees whose root is above thr (a later time) or is a leaf,
// each as a sorted key, found by walking down from the root.
func heightCut(tr *pydt.Tree, thr float64) map[string]bool {
	out := map[string]bool{}
	var walk func(v pydt.NodeID)
	walk = func(v pydt.NodeID) {
		if tr.IsLeaf(v) || tr.Time(v).S() > thr {
			var rows []int
			for _, l := range tr.PostOrderFrom(v, nil) {
				if tr.IsLeaf(l) {
					rows = append(rows, int(l))
				}
			}
			slices.Sort(rows)
			out[fmt.Sprint(rows)] = true
			return
		}
		for c := range tr.Children(v) {
			walk(c)
		}
	}
	walk(tr.Root())
	return out
}

// TestCutTreeIndependent checks cutTree on random binary dendrograms
// (average linkage of random rows: distinct times) against an independent
// cut at a height: for every k from 1 to N the cut has exactly k clusters,
// the clusters of the dendrogram cut between its (k−1)-th and k-th
// earliest joins, each a flat branch point holding its rows (or a single
// row). k = 1 gave two clusters before (a floor of one kept join).
func TestCutTreeIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for rep := range 5 {
		n := 6 + 3*rep
		x := make([]float64, 2*n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		tr, err := linkageTree(x, n, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		var times []float64
		for _, v := range tr.PreOrder(nil) {
			if !tr.IsLeaf(v) {
				times = append(times, tr.Time(v).S())
			}
		}
		slices.Sort(times)
		for k := 1; k <= n; k++ {
			// Between the (k−1)-th and k-th earliest joins.
			thr := math.Inf(1)
			if k <= len(times) {
				thr = times[k-1] - 1e-12
			}
			want := heightCut(tr, thr)
			if len(want) != k {
				t.Fatalf("n %d, k %d: the height cut has %d clusters", n, k, len(want))
			}
			ct, err := cutTree(tr, k)
			if err != nil {
				t.Fatal(err)
			}
			got := heightCut(ct, thr)
			if len(got) != k || !maps.Equal(got, want) {
				t.Errorf("n %d, k %d: cutTree's clusters %v, the height cut's %v", n, k, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
			// Each cluster of two or more rows is one flat branch point.
			for _, v := range ct.PreOrder(nil) {
				if ct.IsLeaf(v) || ct.Time(v).S() <= thr {
					continue
				}
				for c := range ct.Children(v) {
					if !ct.IsLeaf(c) {
						t.Errorf("n %d, k %d: cluster branch point %d has a branch point child", n, k, v)
					}
				}
			}
		}
	}
	if _, err := cutTree(pydt.New(1), 0); err == nil {
		t.Error("cutTree into 0 clusters: no error")
	}
}
