package inference

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// mixedSample returns size trees on n leaves: with probability pFixed a
// fixed topology (drawn from the prior with seed 0) with fresh random
// times; with probability pSwap that topology with the labels of two
// random leaves swapped; otherwise a draw from the PYDT prior. The fixed
// tree's clades are in at least about pFixed of the trees; the swaps and
// the draws bring many clades seen once or a few times, the swaps in
// trees that score almost as well as the fixed tree.
func mixedSample(t *testing.T, seed uint64, n, size int, pFixed, pSwap float64) []*pydt.Tree {
	t.Helper()
	p := sim.Params{Alpha: 0.5, Beta: 0.2, Div: pydt.DivInv{C: 1}}
	base, err := sim.DrawTree(rand.New(rand.NewPCG(0, 11)), n, p)
	if err != nil {
		t.Fatal(err)
	}
	topo := base.Newick()
	leaf := regexp.MustCompile(`([(,])(\d+):`)
	rng := rand.New(rand.NewPCG(seed, 11))
	var out []*pydt.Tree
	for range size {
		switch u := rng.Float64(); {
		case u < pFixed:
			out = append(out, timedTopology(t, rng, topo))
			continue
		case u < pFixed+pSwap:
			a, b := strconv.Itoa(1+rng.IntN(n)), strconv.Itoa(1+rng.IntN(n))
			swapped := leaf.ReplaceAllStringFunc(topo, func(m string) string {
				switch l := m[1 : len(m)-1]; l {
				case a:
					return m[:1] + b + ":"
				case b:
					return m[:1] + a + ":"
				}
				return m
			})
			out = append(out, timedTopology(t, rng, swapped))
			continue
		}
		tr, err := sim.DrawTree(rng, n, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// bruteFreq counts the trees that contain each clade, by leaf set.
func bruteFreq(trees []*pydt.Tree) map[string]int {
	freq := map[string]int{}
	for _, tr := range trees {
		for key := range bruteClades(tr) {
			freq[key]++
		}
	}
	return freq
}

// cladeKeyOf returns the hash key of a leafSet string's clade.
func cladeKeyOf(c *CladeCounts, set string) cladeKey {
	var k cladeKey
	for _, f := range splitFields(set) {
		l, _ := strconv.Atoi(f)
		k[0] += c.keys[l][0]
		k[1] += c.keys[l][1]
	}
	return k
}

func splitFields(set string) []string {
	var out []string
	cur := ""
	for _, r := range set {
		switch {
		case r >= '0' && r <= '9':
			cur += string(r)
		case cur != "":
			out = append(out, cur)
			cur = ""
		}
	}
	return out
}

// TestCladeCountsMisraGriesBounds checks the guarantee of the bounded
// counts against brute-force counts, for counts made in one go and merged
// from three parts: every clade's counter is at most its count and at
// least its count minus Err(), a clade without a counter is in at most
// Err() trees, Err() ≤ m/(k+1) for m clade occurrences and capacity k, and
// the counters held never exceed the limit. With a large capacity the
// counts are exact.
func TestCladeCountsMisraGriesBounds(t *testing.T) {
	trees := mixedSample(t, 1, 16, 300, 0.5, 0.2)
	freq := bruteFreq(trees)
	var m int64
	for _, x := range freq {
		m += int64(x)
	}
	for _, tc := range []struct {
		name     string
		capacity int
		exact    bool
	}{
		{"2(N-1)", 30, false},
		{"10(N-1)", 150, false},
		{"default", CladeCapacity(16), true},
	} {
		whole, _ := NewCladeCountsCapacity(16, tc.capacity)
		parts := make([]*CladeCounts, 3)
		for i := range parts {
			parts[i], _ = NewCladeCountsCapacity(16, tc.capacity)
		}
		for i, tr := range trees {
			if err := whole.Add(tr); err != nil {
				t.Fatal(err)
			}
			if err := parts[3*i/len(trees)].Add(tr); err != nil {
				t.Fatal(err)
			}
			if whole.tab.live > whole.limit() {
				t.Fatalf("%s: %d counters held, limit %d", tc.name, whole.tab.live, whole.limit())
			}
		}
		merged := parts[0]
		for _, p := range parts[1:] {
			if err := merged.Merge(p); err != nil {
				t.Fatal(err)
			}
		}
		for name, c := range map[string]*CladeCounts{"whole": whole, "merged": merged} {
			if c.Exact() != tc.exact {
				t.Errorf("%s, %s: Exact() = %v with %d distinct clades", tc.name, name, c.Exact(), len(freq))
			}
			d := int64(c.Err())
			if bound := m / int64(tc.capacity+1); d > bound {
				t.Errorf("%s, %s: error %d above m/(k+1) = %d", tc.name, name, d, bound)
			}
			held := 0
			for set, x := range freq {
				est := int64(c.tab.get(cladeKeyOf(c, set)))
				if est > 0 {
					held++
				}
				if est > int64(x) || est < int64(x)-d {
					t.Errorf("%s, %s: clade %s in %d trees has counter %d, error %d", tc.name, name, set, x, est, d)
				}
			}
			if held != c.tab.live {
				t.Errorf("%s, %s: %d counters, %d of them for clades of the sample", tc.name, name, c.tab.live, held)
			}
			if tc.exact && c.Distinct() != len(freq) {
				t.Errorf("%s, %s: %d distinct clades, want %d", tc.name, name, c.Distinct(), len(freq))
			}
			if !tc.exact && (d == 0 || c.tab.live >= len(freq)) {
				t.Errorf("%s, %s: the counters did not overflow (error %d, %d of %d clades held)", tc.name, name, d, c.tab.live, len(freq))
			}
		}
	}
}

// TestDistinctSketch checks the estimate of the number of distinct clades
// once the counters overflow: exact below kmvSize keys, and within 4
// standard errors (1/√kmvSize) above, duplicates ignored.
func TestDistinctSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{10, 1000, 5000, 200000} {
		var s distinctSketch
		for range 2 { // every key twice
			r := rand.New(rand.NewPCG(uint64(n), 1))
			for range n {
				s.add(mixKey(cladeKey{r.Uint64(), r.Uint64()}))
			}
		}
		got := s.estimate()
		if n < kmvSize && got != n {
			t.Errorf("%d keys: estimate %d", n, got)
		}
		if rel := math.Abs(float64(got-n)) / float64(n); rel > 4/math.Sqrt(kmvSize) {
			t.Errorf("%d keys: estimate %d (relative error %.3f)", n, got, rel)
		}
	}
	_ = rng
}

// summaryStrings returns the Newick of a TreeSummary's three trees.
func summaryStrings(s *TreeSummary) [3]string {
	return [3]string{s.Linkage.Newick(), s.MaxAccuracy.Newick(), s.Consensus.Newick()}
}

// TestBoundedSummariesAreExact is the test of issue 8's bounded clade
// counting: with capacities from the smallest the guarantees allow up to
// one where every clade fits, the summaries of two chains are identical
// to those of exact counts: the consensus holds exactly the clades in more
// than half of the trees, every credibility written (consensus, MEA and
// average-linkage trees) is the brute-force frequency, the MEA tree is the
// brute-force maximiser of Σ (2p − 1) (first of ties) with Gap 0, and the
// ASDSF is the same.
func TestBoundedSummariesAreExact(t *testing.T) {
	const n = 16
	for _, seed := range []uint64{1, 2, 3} {
		a := mixedSample(t, seed, n, 150, 0.6, 0.2)
		b := mixedSample(t, seed+100, n, 150, 0.5, 0.2)
		trees := append(append([]*pydt.Tree(nil), a...), b...)
		freq := bruteFreq(trees)
		best, bestScore := bruteBest(trees, freq)
		var ref *TreeSummary
		for _, capacity := range []int{CladeCapacity(n), 10 * (n - 1), 2 * (n - 1)} {
			chains := []TreeSource{TreeSlice(a), TreeSlice(b)}
			if capacity < 10*(n-1) {
				chains = []TreeSource{TreeSlice(trees)} // too small for the split frequencies
			}
			s, err := summarizeChains(chains, n, true, capacity)
			if err != nil {
				t.Fatalf("seed %d, capacity %d: %v", seed, capacity, err)
			}
			name := "seed " + strconv.Itoa(int(seed)) + ", capacity " + strconv.Itoa(capacity)
			if capacity == CladeCapacity(n) {
				if !s.Clades.Exact() {
					t.Fatalf("%s: the counts overflowed", name)
				}
				ref = s
			} else if s.Clades.Exact() {
				t.Fatalf("%s: the counts did not overflow; the test needs them to", name)
			}
			if summaryStrings(s) != summaryStrings(ref) {
				t.Errorf("%s: summaries\n%v\nwant (exact counts)\n%v", name, summaryStrings(s), summaryStrings(ref))
			}
			if len(chains) == 2 && (s.SplitSD == nil || *s.SplitSD != *ref.SplitSD || s.SplitSD.Clades < 3) {
				t.Errorf("%s: split SD %+v, want %+v", name, s.SplitSD, ref.SplitSD)
			}
			checkSummary(t, s.Consensus, trees, freq)
			got := checkSummary(t, s.MaxAccuracy, trees, freq)
			want := bruteClades(trees[best])
			for key := range want {
				if _, ok := got[key]; !ok || len(got) != len(want) {
					t.Errorf("%s: MEA tree %s, want tree %d %s", name, s.MaxAccuracy.Newick(), best+1, trees[best].Newick())
					break
				}
			}
			if s.MaxAccuracy.Gap != 0 || !(math.Abs(s.MaxAccuracy.ExpectedCorrect()-bestScore) <= 1e-9) {
				t.Errorf("%s: MEA gap %v, expected correct %v, want 0, %v", name, s.MaxAccuracy.Gap, s.MaxAccuracy.ExpectedCorrect(), bestScore)
			}
			majority := 0
			for _, x := range freq {
				if 2*x > len(trees) {
					majority++
				}
			}
			if len(s.Consensus.Credibility) != majority || majority < 4 {
				t.Errorf("%s: consensus with %d clades, want the %d majority clades", name, len(s.Consensus.Credibility), majority)
			}
			for v, p := range s.Linkage.Credibility {
				if want := float64(freq[leafSet(s.Linkage.Tree, v)]) / float64(len(trees)); p != want {
					t.Errorf("%s: linkage clade %s credibility %v, want %v", name, leafSet(s.Linkage.Tree, v), p, want)
				}
			}
		}
	}
}

// TestMEAGapBoundsTheLoss checks, with the passes that score contending
// trees exactly cut short, that MaxAccuracy returns a sampled tree with
// exact credibilities and that its Gap bounds how far the true best tree
// is above it; with the default passes the gap closes.
func TestMEAGapBoundsTheLoss(t *testing.T) {
	const n = 12
	trees := mixedSample(t, 7, n, 300, 0.3, 0.1)
	freq := bruteFreq(trees)
	bestScore := math.Inf(-1)
	for _, tr := range trees {
		score := 0.0
		for key := range bruteClades(tr) {
			score += 2*float64(freq[key])/float64(len(trees)) - 1
		}
		bestScore = max(bestScore, score)
	}
	sawGap := false
	for _, rounds := range []int{1, 2, meaMaxRounds, 100} {
		c, _ := NewCladeCountsCapacity(n, 2*(n-1))
		c.meaRounds = rounds
		for _, tr := range trees {
			if err := c.Add(tr); err != nil {
				t.Fatal(err)
			}
		}
		mea, err := c.MaxAccuracy(TreeSlice(trees))
		if err != nil {
			t.Fatalf("rounds %d: %v", rounds, err)
		}
		checkSummary(t, mea, trees, freq)
		loss := bestScore - mea.ExpectedCorrect()
		if !(loss <= mea.Gap+1e-9) || !(mea.Gap >= 0) {
			t.Errorf("rounds %d: the best tree scores %v above the one returned, gap %v", rounds, loss, mea.Gap)
		}
		if rounds == 100 && (mea.Gap != 0 || !(loss <= 1e-9)) {
			t.Errorf("rounds %d: gap %v, loss %v, want both 0", rounds, mea.Gap, loss)
		}
		sawGap = sawGap || mea.Gap > 0
	}
	if !sawGap {
		t.Error("no gap with the passes cut short: the test does not exercise the bound")
	}
}

// TestCladeCountsRefuseTooSmallCapacity checks that summaries whose
// guarantees the capacity cannot give fail with an error rather than an
// inexact answer.
func TestCladeCountsRefuseTooSmallCapacity(t *testing.T) {
	const n = 12
	trees := mixedSample(t, 3, n, 200, 0.2, 0)
	c, _ := NewCladeCountsCapacity(n, 1)
	for _, tr := range trees {
		if err := c.Add(tr); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Consensus(TreeSlice(trees)); err == nil {
		t.Error("consensus with one counter: no error")
	}
	if _, err := summarizeChains([]TreeSource{TreeSlice(trees[:100]), TreeSlice(trees[100:])}, n, false, 2*(n-1)); err == nil {
		t.Error("split frequencies with 2(N-1) counters: no error")
	}
	if _, err := SplitFrequencySD([]*CladeCounts{c, c}, MinSplitFreq); err == nil {
		t.Error("SplitFrequencySD of overflowed counts: no error")
	}
	if _, err := c.Credibility(trees[0]); err == nil {
		t.Error("Credibility of overflowed counts: no error")
	}
	if _, err := NewCladeCountsCapacity(n, 0); err == nil {
		t.Error("capacity 0: no error")
	}
}

// TestSummaryMemoryDoesNotGrowWithDistinctClades checks that the clade
// counts are bounded (issue 8, item 3): the trees here are draws from the
// prior on 200 leaves, most of whose clades are new, so that 800 trees
// have about four times the distinct clades of 200 (some 60,000 more;
// counted exactly, one hash-map entry each, they would hold about 3 MB
// more). With a capacity of 2048 counters, which both overflow, the peak
// live heap after a full collection, every 25th tree read, must not grow
// by more than memoryGrowthBound.
func TestSummaryMemoryDoesNotGrowWithDistinctClades(t *testing.T) {
	const n = 200
	dir := t.TempDir()
	write := func(name string, size int) string {
		rng := rand.New(rand.NewPCG(uint64(size), 9))
		var buf []byte
		for range size {
			tr, err := sim.DrawTree(rng, n, sim.Params{Alpha: 1, Beta: 0.2, Div: pydt.DivInv{C: 1}})
			if err != nil {
				t.Fatal(err)
			}
			buf = append(tr.AppendNewick(buf), '\n')
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	peak := func(path string) (uint64, *TreeSummary) {
		file := NewickFiles(n, nil, path)
		var hi uint64
		read := 0
		src := func(fn func(*pydt.Tree) error) error {
			return file(func(tr *pydt.Tree) error {
				if read++; read%25 == 0 {
					if h := liveHeap(); h > hi {
						hi = h
					}
				}
				return fn(tr)
			})
		}
		s, err := summarizeChains([]TreeSource{src}, n, false, 2048)
		if err != nil {
			t.Fatal(err)
		}
		return hi, s
	}
	short, s1 := peak(write("short.nwk", 200))
	long, s4 := peak(write("long.nwk", 800))
	runtime.KeepAlive(s1)
	t.Logf("peak live heap: 200 trees (about %d distinct clades, error %d) %d B, 800 trees (about %d, error %d) %d B",
		s1.Clades.Distinct(), s1.Clades.Err(), short, s4.Clades.Distinct(), s4.Clades.Err(), long)
	if s4.Clades.Distinct() < 3*s1.Clades.Distinct() || s1.Clades.Exact() {
		t.Fatalf("the samples have about %d and %d distinct clades: the test needs about 4 times more in the long one, and overflowing counters in both",
			s1.Clades.Distinct(), s4.Clades.Distinct())
	}
	if long > short+memoryGrowthBound {
		t.Errorf("summary memory grows with the distinct clades: %d B for 800 trees, %d B for 200 (bound +%d B)",
			long, short, memoryGrowthBound)
	}
}

// TestTableWarnsOfMEAGap checks that the run table says when mea.nwk may
// not be the best kept tree (summary.json's mea_gap), and only then.
func TestTableWarnsOfMEAGap(t *testing.T) {
	for _, gap := range []float64{0, 2.5} {
		res := &Result{Chains: 1, Iterations: 10, Completed: 10, Burn: 5, Thin: 1, WallTime: 1,
			Acceptance: map[string]float64{}, SummaryTree: &SummaryInfo{Trees: 5, MEAGap: gap}}
		var b strings.Builder
		if err := res.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "up to 2.5 higher") && strings.Contains(b.String(), "mea_gap"); got != (gap > 0) {
			t.Errorf("gap %v: table\n%s", gap, b.String())
		}
	}
}
