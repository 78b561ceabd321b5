package cluster_test

import (
	"fmt"

	"github.com/pydtlang/pydtlang/inference/cluster"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ExampleCutK cuts a tree whose root splits three ways: two clusters are
// impossible, so the cut with the fewest clusters at least two has three.
func ExampleCutK() {
	tr, err := pydt.ParseNewick("((a:0.5,b:0.5):0.2,(c:0.6,d:0.6):0.1,e:0.7):0.3;", nil)
	if err != nil {
		panic(err)
	}
	for _, k := range []int{2, 4} {
		c, err := cluster.CutK(tr, k)
		if err != nil {
			panic(err)
		}
		fmt.Printf("k=%d: %v at t=%.1f, exact %v\n", k, c.Partition, c.Time, c.Exact)
	}
	p, _ := cluster.CutAtTime(tr, 0.45)
	fmt.Println("t=0.45:", p, "rows", tr.Labels)
	// Output:
	// k=2: [1 1 2 2 3] at t=0.3, exact false
	// k=4: [1 1 2 3 4] at t=0.4, exact true
	// t=0.45: [1 1 2 3 4] rows [a b c d e]
}

// ExampleCutSample_Best chooses, among the cuts of three sampled trees at
// two clusters, the one of least posterior expected Binder loss.
func ExampleCutSample_Best() {
	var trees []*pydt.Tree
	for _, s := range []string{
		"((1:0.4,2:0.4):0.3,(3:0.3,4:0.3):0.4):0.3;",
		"(1:0.8,(2:0.5,(3:0.3,4:0.3):0.2):0.3):0.2;",
		"((1:0.4,2:0.4):0.3,(3:0.3,4:0.3):0.4):0.3;",
	} {
		tr, err := pydt.ParseNewick(s, nil)
		if err != nil {
			panic(err)
		}
		trees = append(trees, tr)
	}
	src := func(fn func(*pydt.Tree) error) error {
		for _, tr := range trees {
			if err := fn(tr); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := cluster.CutTrees(src, 4, cluster.AtK(2))
	if err != nil {
		panic(err)
	}
	c, err := s.Best(cluster.Binder)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: expected Binder loss %.3f per pair, expected ARI %.3f\n", c.Partition, c.ExpectedBinder, c.ExpectedARI)
	// Output:
	// [1 1 2 2]: expected Binder loss 0.167 per pair, expected ARI 0.667
}
