package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// AdjustedRand returns the adjusted Rand index of two partitions of the
// same rows (Hubert & Arabie 1985): 1 for equal partitions, 0 in
// expectation for independent random ones, negative below that. When
// neither partition pairs any rows, or both put all rows in one cluster,
// the index is 0/0; it is then 1 when the partitions are equal (as
// scikit-learn's adjusted_rand_score).
func AdjustedRand(a, b Partition) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("adjusted Rand index: partitions of %d and %d rows", len(a), len(b))
	}
	idx, sa, sb, pairs := pairCounts(a, b)
	expected := sa * sb / pairs
	top := (sa + sb) / 2
	if top == expected {
		if equalPartitions(a, b) {
			return 1, nil
		}
		return 0, nil
	}
	return (idx - expected) / (top - expected), nil
}

func equalPartitions(a, b Partition) bool {
	ab, ba := map[int]int{}, map[int]int{}
	for i := range a {
		if x, ok := ab[a[i]]; ok && x != b[i] {
			return false
		}
		if x, ok := ba[b[i]]; ok && x != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

// pairCounts returns the number of pairs of rows together in both a and
// b, together in a, together in b, and all pairs.
func pairCounts(a, b Partition) (both, inA, inB, pairs float64) {
	c2 := func(x int) float64 { return float64(x) * float64(x-1) / 2 }
	type cell struct{ i, j int }
	nij := map[cell]int{}
	na, nb := map[int]int{}, map[int]int{}
	for r := range a {
		nij[cell{a[r], b[r]}]++
		na[a[r]]++
		nb[b[r]]++
	}
	for _, x := range nij {
		both += c2(x)
	}
	for _, x := range na {
		inA += c2(x)
	}
	for _, x := range nb {
		inB += c2(x)
	}
	return both, inA, inB, c2(len(a))
}

// A Cutter makes flat clusters from a tree.
type Cutter func(tr *pydt.Tree) (Partition, error)

// AtTime returns the Cutter of CutAtTime at t.
func AtTime(t float64) Cutter {
	return func(tr *pydt.Tree) (Partition, error) { return CutAtTime(tr, t) }
}

// AtK returns the Cutter of CutK with k clusters (at least k where a
// multifurcation makes exactly k impossible).
func AtK(k int) Cutter {
	return func(tr *pydt.Tree) (Partition, error) {
		c, err := CutK(tr, k)
		if err != nil {
			return nil, err
		}
		return c.Partition, nil
	}
}

// CutSample holds the cuts of a sample of trees (draws from a posterior):
// each distinct partition with its number of trees, and for every pair of
// rows the number of trees that put them in one cluster.
type CutSample struct {
	n, trees int
	parts    []Partition
	weight   []int
	index    map[string]int
	together []int32 // pairs i < j, row-major upper triangle
}

func partKey(p Partition) string {
	b := make([]byte, 0, 4*len(p))
	for _, c := range p {
		b = binary.LittleEndian.AppendUint32(b, uint32(c))
	}
	return string(b)
}

// pairIndex is the index of the pair i < j in the upper triangle.
func (s *CutSample) pairIndex(i, j int) int { return i*s.n - i*(i+1)/2 + j - i - 1 }

// CutTrees cuts every tree of src (called once, as inference.TreeSource
// replays a sample) on n leaves with cut. It takes O(n²) memory for the
// pair counts plus n ints per distinct partition.
func CutTrees(src func(fn func(*pydt.Tree) error) error, n int, cut Cutter) (*CutSample, error) {
	if n < 1 {
		return nil, fmt.Errorf("cut trees: %d rows", n)
	}
	s := &CutSample{n: n, index: map[string]int{}, together: make([]int32, n*(n-1)/2)}
	err := src(func(tr *pydt.Tree) error {
		if tr.NumLeaves() != n {
			return fmt.Errorf("tree %d has %d leaves, want %d", s.trees+1, tr.NumLeaves(), n)
		}
		p, err := cut(tr)
		if err != nil {
			return fmt.Errorf("tree %d: %w", s.trees+1, err)
		}
		s.trees++
		p = canonical(append([]int(nil), p...))
		k := partKey(p)
		id, ok := s.index[k]
		if !ok {
			id = len(s.parts)
			s.index[k] = id
			s.parts = append(s.parts, p)
			s.weight = append(s.weight, 0)
		}
		s.weight[id]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.trees == 0 {
		return nil, errors.New("cut trees: no trees")
	}
	// The pair counts are made once per distinct partition, over the pairs
	// within each of its clusters.
	for id, p := range s.parts {
		groups := make([][]int, p.NumClusters())
		for i, c := range p {
			groups[c-1] = append(groups[c-1], i)
		}
		w := int32(s.weight[id])
		for _, g := range groups {
			for a, i := range g {
				for _, j := range g[a+1:] {
					s.together[s.pairIndex(i, j)] += w
				}
			}
		}
	}
	return s, nil
}

// Trees returns the number of trees cut.
func (s *CutSample) Trees() int { return s.trees }

// Distinct returns the distinct partitions, in order of first appearance.
func (s *CutSample) Distinct() []Partition { return s.parts }

// Together returns the fraction of trees whose cut puts rows i and j in
// one cluster: their posterior co-clustering probability.
func (s *CutSample) Together(i, j int) float64 {
	if i == j {
		return 1
	}
	if i > j {
		i, j = j, i
	}
	return float64(s.together[s.pairIndex(i, j)]) / float64(s.trees)
}

func (s *CutSample) check(p Partition) error {
	if len(p) != s.n {
		return fmt.Errorf("a partition of %d rows for a sample on %d", len(p), s.n)
	}
	return nil
}

// ExpectedBinder returns the posterior expected Binder loss of p with
// equal costs, as a fraction of the pairs of rows: the expected fraction
// of pairs on which p and a sampled cut disagree (together in one, apart
// in the other), Σ_{i<j} [p_i = p_j](1 − P_ij) + [p_i ≠ p_j] P_ij over the
// number of pairs, P_ij the co-clustering probability. It is one minus the
// expected Rand index. It is 0 when there is a single row.
func (s *CutSample) ExpectedBinder(p Partition) (float64, error) {
	if err := s.check(p); err != nil {
		return 0, err
	}
	if s.n < 2 {
		return 0, nil
	}
	var loss float64
	for i := range s.n {
		for j := i + 1; j < s.n; j++ {
			q := float64(s.together[s.pairIndex(i, j)]) / float64(s.trees)
			if p[i] == p[j] {
				loss += 1 - q
			} else {
				loss += q
			}
		}
	}
	return loss / (float64(s.n) * float64(s.n-1) / 2), nil
}

// ExpectedARI returns the posterior expected adjusted Rand index of p
// against the sampled cuts: the mean of AdjustedRand(p, cut) over the
// trees. It costs O(n) per distinct sampled partition.
func (s *CutSample) ExpectedARI(p Partition) (float64, error) {
	if err := s.check(p); err != nil {
		return 0, err
	}
	var sum float64
	for i, q := range s.parts {
		a, err := AdjustedRand(p, q)
		if err != nil {
			return 0, err
		}
		sum += float64(s.weight[i]) * a
	}
	return sum / float64(s.trees), nil
}

// Loss names the decision-theoretic criterion of CutSample.Best.
type Loss int

const (
	// Binder chooses the partition of least posterior expected Binder
	// loss (ExpectedBinder), equivalently of greatest expected Rand index.
	Binder Loss = iota
	// ARI chooses the partition of greatest posterior expected adjusted
	// Rand index (ExpectedARI). It costs O(n) per pair of a candidate and
	// a distinct sampled partition.
	ARI
)

// String returns the loss's name as the command line spells it.
func (l Loss) String() string {
	switch l {
	case Binder:
		return "binder"
	case ARI:
		return "ari"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// ParseLoss reads "binder" or "ari".
func ParseLoss(s string) (Loss, error) {
	switch s {
	case "binder":
		return Binder, nil
	case "ari":
		return ARI, nil
	}
	return 0, fmt.Errorf("unknown loss %q (want binder or ari)", s)
}

// Choice is the partition CutSample.Best chose, with its scores.
type Choice struct {
	Partition Partition
	// ExpectedBinder and ExpectedARI are the partition's posterior
	// expected Binder loss (per pair) and adjusted Rand index.
	ExpectedBinder, ExpectedARI float64
	// Candidates is the number of distinct candidate partitions searched.
	Candidates int
	// FromExtra reports whether the choice is one of the extra candidates
	// and none of the sampled cuts.
	FromExtra bool
}

// Best returns, among the distinct sampled cuts and the extra candidates
// (such as the cut of a summary tree), the partition that optimises loss:
// the Bayes decision restricted to those candidates. Ties go to the
// earliest candidate, the sampled cuts in order of first appearance, then
// the extras.
func (s *CutSample) Best(loss Loss, extra ...Partition) (*Choice, error) {
	cands := append([]Partition(nil), s.parts...)
	sampled := len(cands)
	for _, p := range extra {
		if err := s.check(p); err != nil {
			return nil, err
		}
		p = canonical(append([]int(nil), p...))
		if _, ok := s.index[partKey(p)]; !ok {
			cands = append(cands, p)
		}
	}
	best, bestScore := -1, math.Inf(-1)
	for i, p := range cands {
		var score float64
		var err error
		if loss == ARI {
			score, err = s.ExpectedARI(p)
		} else {
			score, err = s.ExpectedBinder(p)
			score = -score
		}
		if err != nil {
			return nil, err
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	c := &Choice{Partition: cands[best], Candidates: len(cands), FromExtra: best >= sampled}
	var err error
	if c.ExpectedBinder, err = s.ExpectedBinder(c.Partition); err != nil {
		return nil, err
	}
	if c.ExpectedARI, err = s.ExpectedARI(c.Partition); err != nil {
		return nil, err
	}
	return c, nil
}
