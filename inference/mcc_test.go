package inference

import (
	"math"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func parseTrees(t *testing.T, nwk ...string) []*pydt.Tree {
	t.Helper()
	var out []*pydt.Tree
	for _, s := range nwk {
		tr, err := pydt.ParseNewick(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// TestMCCPicksTheBestSupportedTree checks clade frequencies and the chosen
// tree against counts made by hand.
func TestMCCPicksTheBestSupportedTree(t *testing.T) {
	// Clades over leaves 1..4: {1,2} in trees 1, 2 and 3; {3,4} in 1 and 2;
	// {1,2,3} in 3; {1,4} and {1,3,4} in 4; the root clade in all. Trees 1
	// and 2 score log(3/4) + log(2/4), tree 3 log(3/4) + log(1/4), tree 4
	// 2 log(1/4): tree 1 wins (the first of equals).
	trees := parseTrees(t,
		"((1:0.5,2:0.5):0.3,(3:0.4,4:0.4):0.4):0.2;",
		"((1:0.6,2:0.6):0.2,(3:0.3,4:0.3):0.5):0.2;",
		"(((1:0.2,2:0.2):0.2,3:0.4):0.4,4:0.8):0.2;",
		"(((1:0.2,4:0.2):0.2,3:0.4):0.4,2:0.8):0.2;",
	)
	mcc, score, err := MCC(trees)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Log(3.0/4) + math.Log(2.0/4) + math.Log(1); math.Abs(score-want) > 1e-12 {
		t.Errorf("score %v, want %v", score, want)
	}
	if got, want := mcc.Newick(), trees[0].Newick(); got != want {
		t.Errorf("MCC tree %s, want %s", got, want)
	}
	freq := CladeFrequencies(trees[2], trees)
	var got []float64
	for _, v := range trees[2].PostOrder(nil) {
		if !trees[2].IsLeaf(v) {
			got = append(got, freq[v])
		}
	}
	// Post-order: {1,2}, {1,2,3}, root.
	want := []float64{0.75, 0.25, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("clade frequencies %v, want %v", got, want)
		}
	}
	if _, _, err := MCC(nil); err == nil {
		t.Error("no error for an empty sample")
	}
}
