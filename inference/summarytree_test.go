package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
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

// leafSet returns the sorted leaves below v, as a string key.
func leafSet(tr *pydt.Tree, v pydt.NodeID) string {
	var ls []int
	for _, u := range tr.PostOrderFrom(v, nil) {
		if tr.IsLeaf(u) {
			ls = append(ls, int(u))
		}
	}
	sort.Ints(ls)
	return fmt.Sprint(ls)
}

// bruteBest returns the index of the first tree with the largest
// Σ (2 p − 1) over its clades, p a clade's frequency freq/len(trees),
// and that score: the MEA tree found by brute force.
func bruteBest(trees []*pydt.Tree, freq map[string]int) (best int, bestScore float64) {
	best, bestScore = -1, math.Inf(-1)
	for i, tr := range trees {
		score := 0.0
		for key := range bruteClades(tr) {
			score += 2*float64(freq[key])/float64(len(trees)) - 1
		}
		if score > bestScore+1e-9 {
			best, bestScore = i, score
		}
	}
	return best, bestScore
}

// bruteClades maps the leaf set of every branch point of tr to it.
func bruteClades(tr *pydt.Tree) map[string]pydt.NodeID {
	out := map[string]pydt.NodeID{}
	for _, v := range tr.PostOrder(nil) {
		if !tr.IsLeaf(v) {
			out[leafSet(tr, v)] = v
		}
	}
	return out
}

// bruteMRCATime is the time of the deepest node of tr above every leaf of
// the clade key (a leafSet string), found by walking up from its first
// leaf and listing leaves.
func bruteMRCATime(tr *pydt.Tree, key string) float64 {
	var leaves []int
	for _, f := range strings.Fields(strings.Trim(key, "[]")) {
		var x int
		fmt.Sscan(f, &x)
		leaves = append(leaves, x)
	}
	for v := pydt.NodeID(leaves[0]); ; v = tr.Parent(v) {
		below := map[int]bool{}
		for _, u := range tr.PostOrderFrom(v, nil) {
			below[int(u)] = true
		}
		all := true
		for _, l := range leaves {
			all = all && below[l]
		}
		if all {
			return tr.Time(v).T()
		}
	}
}

// timedTopology returns a tree of the topology given in Newick (lengths
// replaced) with random branch point times.
func timedTopology(t *testing.T, rng *rand.Rand, topo string) *pydt.Tree {
	t.Helper()
	tr := parseTrees(t, topo)[0]
	out := pydt.New(tr.NumLeaves())
	ids := map[pydt.NodeID]pydt.NodeID{}
	for _, v := range tr.PreOrder(nil) {
		if tr.IsLeaf(v) {
			ids[v] = v
		} else {
			pt := 0.0
			if p := tr.Parent(v); p != pydt.NoNode {
				pt = out.Time(ids[p]).T()
			}
			ids[v] = out.NewInternal(pydt.TimeAt(pt + (1-pt)*(0.1+0.8*rng.Float64())))
		}
		if p := tr.Parent(v); p != pydt.NoNode {
			out.AddChild(ids[p], ids[v])
		}
	}
	out.SetRoot(ids[tr.Root()])
	out.Recount()
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	return out
}

// randomSample mixes trees of two fixed topologies, with random times,
// with draws from the PYDT prior, so that some clades are in more than
// half of the trees and many are not.
func randomSample(t *testing.T, seed uint64, n, size int) []*pydt.Tree {
	rng := rand.New(rand.NewPCG(seed, 3))
	topos := []string{
		"(((1:0.4,2:0.4):0.2,3:0.6):0.2,(4:0.6,(5:0.3,6:0.3):0.3):0.2,7:0.8):0.2;",
		"(((1:0.4,2:0.4):0.2,(3:0.4,7:0.4):0.2):0.2,(4:0.6,5:0.6,6:0.6):0.2):0.2;",
	}
	var out []*pydt.Tree
	for range size {
		var tr *pydt.Tree
		switch u := rng.Float64(); {
		case u < 0.45:
			tr = timedTopology(t, rng, topos[0])
		case u < 0.7:
			tr = timedTopology(t, rng, topos[1])
		default:
			var err error
			tr, err = sim.DrawTree(rng, n, sim.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}})
			if err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, tr)
	}
	return out
}

// checkSummary compares a summary tree with brute-force clade frequencies
// and mean MRCA times, and returns its clades.
func checkSummary(t *testing.T, s *SummaryTree, trees []*pydt.Tree, freq map[string]int) map[string]pydt.NodeID {
	t.Helper()
	if err := s.Tree.Validate(); err != nil {
		t.Fatal(err)
	}
	got := bruteClades(s.Tree)
	for key, v := range got {
		if want := float64(freq[key]) / float64(len(trees)); s.Credibility[v] != want {
			t.Errorf("clade %s: credibility %v, want %v", key, s.Credibility[v], want)
		}
		var sum float64
		for _, tr := range trees {
			sum += bruteMRCATime(tr, key)
		}
		if want, gt := sum/float64(len(trees)), s.Tree.Time(v).T(); !(math.Abs(gt-want) <= 1e-12) {
			t.Errorf("clade %s: time %v, want the mean MRCA time %v", key, gt, want)
		}
	}
	back, err := pydt.ParseNewick(s.Newick(), nil)
	if err != nil {
		t.Fatalf("summary Newick %s does not read back: %v", s.Newick(), err)
	}
	if back.Newick() != s.Tree.Newick() {
		t.Errorf("summary Newick reads back as %s, want %s", back.Newick(), s.Tree.Newick())
	}
	return got
}

// TestSummaryTreesAgainstBruteForce checks the consensus and the
// highest-accuracy sampled tree against clade sets, frequencies, scores
// and MRCA times computed by brute force from explicit leaf sets, for
// counts made in one go and merged from two halves.
func TestSummaryTreesAgainstBruteForce(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		trees := randomSample(t, seed, 7, 200)
		freq := map[string]int{}
		for _, tr := range trees {
			for key := range bruteClades(tr) {
				freq[key]++
			}
		}
		whole, _ := NewCladeCounts(7)
		a, _ := NewCladeCounts(7)
		b, _ := NewCladeCounts(7)
		for i, tr := range trees {
			if err := whole.Add(tr); err != nil {
				t.Fatal(err)
			}
			half := a
			if i >= len(trees)/2 {
				half = b
			}
			if err := half.Add(tr); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		if whole.Distinct() != len(freq) || a.Distinct() != len(freq) || a.Trees() != len(trees) {
			t.Fatalf("seed %d: %d and %d (merged) distinct clades in %d trees, want %d in %d", seed, whole.Distinct(), a.Distinct(), a.Trees(), len(freq), len(trees))
		}
		for name, counts := range map[string]*CladeCounts{"whole": whole, "merged": a} {
			cons, err := counts.Consensus(TreeSlice(trees))
			if err != nil {
				t.Fatal(err)
			}
			got := checkSummary(t, cons, trees, freq)
			var want []string
			for key, k := range freq {
				if 2*k > len(trees) {
					want = append(want, key)
				}
			}
			if len(got) != len(want) || len(want) < 3 {
				t.Errorf("seed %d, %s: consensus has clades %v, want the %d majority clades %v", seed, name, slices.Collect(mapKeys(got)), len(want), want)
			}
			for _, key := range want {
				if _, ok := got[key]; !ok {
					t.Errorf("seed %d, %s: majority clade %s missing from the consensus", seed, name, key)
				}
			}

			best, bestScore := bruteBest(trees, freq)
			acc, err := counts.MaxAccuracy(TreeSlice(trees))
			if err != nil {
				t.Fatal(err)
			}
			got = checkSummary(t, acc, trees, freq)
			wantClades := bruteClades(trees[best])
			if len(got) != len(wantClades) {
				t.Errorf("seed %d, %s: summary tree has %d clades, tree %d (the best) has %d", seed, name, len(got), best+1, len(wantClades))
			}
			for key := range wantClades {
				if _, ok := got[key]; !ok {
					t.Errorf("seed %d, %s: clade %s of the best tree missing from the summary", seed, name, key)
				}
			}
			if !(math.Abs(acc.ExpectedCorrect()-bestScore) <= 1e-9) {
				t.Errorf("seed %d, %s: expected correct minus incorrect %v, want %v", seed, name, acc.ExpectedCorrect(), bestScore)
			}
		}
	}
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestSummariesAreDeterministic checks that the summaries do not depend on
// map iteration order: repeated summaries of one sample are identical.
func TestSummariesAreDeterministic(t *testing.T) {
	// Majority clades of equal sizes: {1,2}, {3,4}, {5,6}.
	var nwk []string
	for range 6 {
		nwk = append(nwk, "((1:0.4,2:0.4):0.4,(3:0.2,4:0.2):0.6,(5:0.5,6:0.5):0.3):0.2;")
	}
	for range 4 {
		nwk = append(nwk, "(1:0.5,2:0.5,3:0.5,4:0.5,5:0.5,6:0.5):0.5;")
	}
	trees := parseTrees(t, nwk...)
	var first []string
	for i := range 20 {
		s, err := SummarizeTrees(TreeSlice(trees), 6, true)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{s.Linkage.Newick(), s.MaxAccuracy.Newick(), s.Consensus.Newick()}
		if i == 0 {
			first = got
		} else if !slices.Equal(got, first) {
			t.Fatalf("summary %d differs:\n%v\nfirst:\n%v", i+1, got, first)
		}
	}
}

// TestSummaryIsNotBiasedToStars is the regression test of the maximum
// clade credibility tree, which multiplied clade frequencies and so chose
// a star tree (score log 1 = 0) over resolved trees whose clades are in 60%
// of the sample. Times are the mean MRCA times worked out by hand.
func TestSummaryIsNotBiasedToStars(t *testing.T) {
	var nwk []string
	for range 4 {
		nwk = append(nwk, "(1:0.5,2:0.5,3:0.5,4:0.5):0.5;")
	}
	for range 6 {
		nwk = append(nwk, "((1:0.4,2:0.4):0.4,(3:0.2,4:0.2):0.6):0.2;")
	}
	trees := parseTrees(t, nwk...)
	s, err := SummarizeTrees(TreeSlice(trees), 4, true)
	if err != nil {
		t.Fatal(err)
	}
	// Root: (4·0.5 + 6·0.2)/10 = 0.32; {1,2}: (4·0.5 + 6·0.6)/10 = 0.56;
	// {3,4}: (4·0.5 + 6·0.8)/10 = 0.68.
	want := map[string][2]float64{"[0 1 2 3]": {1, 0.32}, "[0 1]": {0.6, 0.56}, "[2 3]": {0.6, 0.68}}
	for name, st := range map[string]*SummaryTree{"mea": s.MaxAccuracy, "consensus": s.Consensus} {
		got := bruteClades(st.Tree)
		if len(got) != len(want) {
			t.Errorf("%s tree %s, want the clades {1,2} and {3,4}", name, st.Newick())
			continue
		}
		for key, w := range want {
			v, ok := got[key]
			if !ok || st.Credibility[v] != w[0] || !(math.Abs(st.Tree.Time(v).T()-w[1]) <= 1e-12) {
				t.Errorf("%s tree %s: clade %s want credibility %v at t = %v", name, st.Newick(), key, w[0], w[1])
			}
		}
		if got, want := st.ExpectedCorrect(), 1.4; !(math.Abs(got-want) <= 1e-12) {
			t.Errorf("%s: expected correct minus incorrect %v, want %v", name, got, want)
		}
	}
	// The average-linkage tree: mean distances 1 − t of {1,2} (4·0.5 +
	// 6·0.4)/10 = 0.44, of {3,4} 0.32, across (4·0.5 + 6·0.8)/10 = 0.68.
	link := bruteClades(s.Linkage.Tree)
	for key, w := range map[string][2]float64{"[0 1 2 3]": {1, 0.32}, "[0 1]": {0.6, 0.56}, "[2 3]": {0.6, 0.68}} {
		v, ok := link[key]
		if !ok || len(link) != 3 || s.Linkage.Credibility[v] != w[0] || !(math.Abs(s.Linkage.Tree.Time(v).T()-w[1]) <= 1e-6) {
			t.Errorf("linkage tree %s: clade %s want credibility %v at t = %v", s.Linkage.Newick(), key, w[0], w[1])
		}
	}
	// Labels where ape and Bio.Phylo read them: after ')', before ':'.
	if got := s.Consensus.Newick(); strings.Count(got, ")0.6:") != 2 || !strings.Contains(got, ")1:0.32") {
		t.Errorf("Newick %s, want ((1,2)0.6,(3,4)0.6)1 with lengths", got)
	}
}

// TestConsensusDetectsHashCollisions forges leaf keys so that the clades
// {1,2} and {3,4} share a key, and checks that the summary refuses.
func TestConsensusDetectsHashCollisions(t *testing.T) {
	var nwk []string
	for range 6 {
		nwk = append(nwk, "((1:0.4,2:0.4):0.4,3:0.8,4:0.8):0.2;")
	}
	for range 4 {
		nwk = append(nwk, "((3:0.4,4:0.4):0.4,1:0.8,2:0.8):0.2;")
	}
	trees := parseTrees(t, nwk...)
	c, _ := NewCladeCounts(4)
	c.keys = []cladeKey{{1, 10}, {2, 20}, {1, 10}, {2, 20}}
	for _, tr := range trees {
		if err := c.Add(tr); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range map[string]func(TreeSource) (*SummaryTree, error){"consensus": c.Consensus, "summary": c.MaxAccuracy} {
		if _, err := f(TreeSlice(trees)); !errors.Is(err, ErrCladeCollision) {
			t.Errorf("%s: error %v, want ErrCladeCollision", name, err)
		}
	}
}

// TestSummaryErrors checks the errors for unusable input.
func TestSummaryErrors(t *testing.T) {
	trees := parseTrees(t, "((1:0.4,2:0.4):0.4,3:0.8):0.2;", "((1:0.4,2:0.4):0.4,(3:0.2,4:0.2):0.6):0.2;")
	if _, err := SummarizeTrees(TreeSlice(trees), 3, false); err == nil || !strings.Contains(err.Error(), "4 leaves, want 3") {
		t.Errorf("mixed leaf counts: %v", err)
	}
	c, _ := NewCladeCounts(3)
	if _, err := c.Consensus(TreeSlice(trees[:1])); err == nil {
		t.Error("no error for empty counts")
	}
	if err := c.Add(trees[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Consensus(TreeSlice(append(trees[:1:1], trees[0]))); err == nil || !strings.Contains(err.Error(), "not the trees counted") {
		t.Errorf("replay of other trees: %v", err)
	}
	if _, err := NewCladeCounts(0); err == nil {
		t.Error("no error for zero leaves")
	}
	d, _ := NewCladeCounts(4)
	if err := c.Merge(d); err == nil {
		t.Error("no error merging counts over different leaves")
	}
}

// TestExpectedCorrectIsOrderFree checks that Σ (2p − 1) is summed in a
// fixed order: summed in map order its last digits varied between runs.
func TestExpectedCorrectIsOrderFree(t *testing.T) {
	cred := map[pydt.NodeID]float64{}
	for i := range 200 {
		cred[pydt.NodeID(1000+i)] = 1 / float64(3+i%7) // values whose sum depends on the order
	}
	s := &SummaryTree{Credibility: cred}
	var want float64
	for i := range 200 {
		want += 2*cred[pydt.NodeID(1000+i)] - 1
	}
	for range 20 {
		if got := s.ExpectedCorrect(); got != want {
			t.Fatalf("ExpectedCorrect = %v, want %v summed in node order", got, want)
		}
	}
}

// TestSummaryErrorNamedOnce checks that the errors of the summary of
// trees, whether from the trees' source, the counts or the summary trees
// themselves, and whether through SummarizeChains, CladeCounts.Summaries
// or a run directory's tree files, say "summary tree:" exactly once (they
// said it twice from the tree files).
func TestSummaryErrorNamedOnce(t *testing.T) {
	const n = 12
	trees := mixedSample(t, 3, n, 200, 0.2, 0)
	small, _ := NewCladeCountsCapacity(n, 1)
	for _, tr := range trees {
		if err := small.Add(tr); err != nil {
			t.Fatal(err)
		}
	}
	bad := errors.New("bad source")
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"no chains", func() error { _, err := SummarizeChains(nil, n, false); return err }, "no chains"},
		{"source", func() error {
			_, err := SummarizeChains([]TreeSource{func(func(*pydt.Tree) error) error { return bad }}, n, true)
			return err
		}, "bad source"},
		{"consensus capacity", func() error {
			_, err := summarizeChains([]TreeSource{TreeSlice(trees)}, n, false, 1)
			return err
		}, "too small"},
		{"Summaries", func() error { _, _, err := small.Summaries(TreeSlice(trees), false, true); return err }, "too small"},
		{"tree files", func() error {
			_, err := writeTreeFilesSummary([]string{filepath.Join(t.TempDir(), "missing.nwk")}, nil, n, false, "", "", nil)
			return err
		}, "missing.nwk"},
		{"empty tree files", func() error {
			p := filepath.Join(t.TempDir(), "trees-1.nwk")
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := writeTreeFilesSummary([]string{p}, nil, n, false, "", "", nil)
			return err
		}, "no trees counted"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if got := strings.Count(err.Error(), "summary tree"); got != 1 || !strings.HasPrefix(err.Error(), "summary tree: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want one leading \"summary tree: \" and %q", c.name, err, c.want)
		}
	}
}
