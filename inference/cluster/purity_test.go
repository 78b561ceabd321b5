package cluster

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// brutePurity is the definition of dendrogram purity read literally: for
// every pair of same-class leaves, find the lowest common ancestor by
// walking up from both, list its leaves, and take the fraction in the
// pair's class. It costs O(N²·N) and shares no code with DendrogramPurity.
func brutePurity(tr *pydt.Tree, class []int) float64 {
	n := tr.NumLeaves()
	below := func(v pydt.NodeID) []int {
		var out []int
		for _, u := range tr.PostOrderFrom(v, nil) {
			if tr.IsLeaf(u) {
				out = append(out, int(u))
			}
		}
		return out
	}
	var sum float64
	pairs := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if class[i] < 0 || class[i] != class[j] {
				continue
			}
			anc := map[pydt.NodeID]bool{}
			for v := pydt.NodeID(i); v != pydt.NoNode; v = tr.Parent(v) {
				anc[v] = true
			}
			lca := pydt.NodeID(j)
			for !anc[lca] {
				lca = tr.Parent(lca)
			}
			leaves := below(lca)
			same := 0
			for _, l := range leaves {
				if class[l] == class[i] {
					same++
				}
			}
			sum += float64(same) / float64(len(leaves))
			pairs++
		}
	}
	return sum / float64(pairs)
}

// mergeTree builds a random tree by merging 2 to 4 random subtrees at a
// time until one is left: multifurcating, with no relation to the PYDT.
func mergeTree(rng *rand.Rand, n int) *pydt.Tree {
	tr := pydt.New(n)
	roots := make([]pydt.NodeID, n)
	for i := range roots {
		roots[i] = pydt.NodeID(i)
	}
	for step := 1; len(roots) > 1; step++ {
		k := min(2+rng.IntN(3), len(roots))
		rng.Shuffle(len(roots), func(i, j int) { roots[i], roots[j] = roots[j], roots[i] })
		// Times decrease as merging proceeds towards the root.
		w := tr.NewInternal(pydt.TimeFromOneMinus(float64(step) / float64(n)))
		for _, c := range roots[:k] {
			tr.AddChild(w, c)
		}
		roots = append([]pydt.NodeID{w}, roots[k:]...)
	}
	tr.Plant(roots[0])
	tr.Recount()
	return tr
}

func TestDendrogramPurityMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	type gen struct {
		name string
		tree func(n int) *pydt.Tree
	}
	pydtTree := func(alpha, beta float64) func(int) *pydt.Tree {
		return func(n int) *pydt.Tree {
			tr, err := sim.DrawTree(rng, n, sim.Params{Alpha: alpha, Beta: beta, Div: pydt.DivInv{C: 1}})
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}
	}
	gens := []gen{
		{"DDT (binary)", pydtTree(0, 0)},
		{"PYDT alpha=1 beta=0.5 (multifurcating)", pydtTree(1, 0.5)},
		{"PYDT alpha=-0.4 beta=0.3", pydtTree(-0.4, 0.3)},
		{"random merges", func(n int) *pydt.Tree { return mergeTree(rng, n) }},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			for rep := range 40 {
				n := 2 + rng.IntN(40)
				k := 1 + rng.IntN(5)
				class := make([]int, n)
				for i := range class {
					class[i] = rng.IntN(k+1) - 1 // -1: unlabelled
				}
				class[0], class[n-1] = 0, 0 // at least one pair
				tr := g.tree(n)
				got, err := DendrogramPurity(tr, class)
				if err != nil {
					t.Fatal(err)
				}
				if want := brutePurity(tr, class); !(math.Abs(got-want) <= 1e-12) {
					t.Fatalf("rep %d, n=%d k=%d: purity %v, brute force %v", rep, n, k, got, want)
				}
			}
		})
	}
}

func TestDendrogramPurityKnownValues(t *testing.T) {
	// (((1,2),(3,4)),5) with classes a a a b b.
	tr, err := pydt.ParseNewick("(((1:0.5,2:0.5):0.3,(3:0.5,4:0.5):0.3):0.1,5:0.9):0.1;", nil)
	if err != nil {
		t.Fatal(err)
	}
	class := []int{0, 0, 0, 1, 1}
	// Class a: pairs (1,2) LCA {1,2} purity 1; (1,3), (2,3) LCA {1,2,3,4}: 3/4.
	// Class b: pair (4,5) LCA is the root, 2/5. Mean over 4 pairs.
	want := (1 + 0.75 + 0.75 + 0.4) / 4
	tests := []struct {
		name  string
		class []int
		want  float64
	}{
		{"two classes", class, want},
		{"one class", []int{0, 0, 0, 0, 0}, 1},
		{"perfect", []int{0, 0, 1, 1, 2}, 1},
		{"unlabelled leaf 3", []int{0, 0, -1, 1, 1}, (1 + 2.0/5) / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DendrogramPurity(tr, tc.class)
			if err != nil {
				t.Fatal(err)
			}
			if !(math.Abs(got-tc.want) <= 1e-15) {
				t.Fatalf("purity %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDendrogramPurityErrors(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.5,2:0.5):0.4,3:0.9):0.1;", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range [][]int{{0, 1}, {0, 1, 2}, {0, -1, -1}, {0, 0, 1, 1}} {
		if _, err := DendrogramPurity(tr, class); err == nil {
			t.Errorf("classes %v: no error", class)
		}
	}
	if _, err := MeanDendrogramPurity(nil, []int{0, 0, 1}); err == nil {
		t.Error("no trees: no error")
	}
}
