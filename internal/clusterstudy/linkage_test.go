package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// bruteLinkage agglomerates by recomputing every criterion from the
// clusters' points at every step: average and complete linkage from the
// pairwise Euclidean distances, Ward from the increase of the within-cluster
// sum of squares. It returns the clusters formed, as sorted leaf lists.
func bruteLinkage(x [][]float64, l linkage) []string {
	dist := func(a, b []float64) float64 {
		var s float64
		for k := range a {
			s += (a[k] - b[k]) * (a[k] - b[k])
		}
		return math.Sqrt(s)
	}
	sse := func(c []int) float64 {
		mean := make([]float64, len(x[0]))
		for _, i := range c {
			for k, v := range x[i] {
				mean[k] += v / float64(len(c))
			}
		}
		var s float64
		for _, i := range c {
			d := dist(x[i], mean)
			s += d * d
		}
		return s
	}
	crit := func(a, b []int) float64 {
		switch l {
		case average, complete:
			var s, m float64
			for _, i := range a {
				for _, j := range b {
					d := dist(x[i], x[j])
					s += d
					m = math.Max(m, d)
				}
			}
			if l == complete {
				return m
			}
			return s / float64(len(a)*len(b))
		default:
			return sse(append(slices.Clone(a), b...)) - sse(a) - sse(b)
		}
	}
	var clusters [][]int
	for i := range x {
		clusters = append(clusters, []int{i})
	}
	var out []string
	for len(clusters) > 1 {
		bi, bj, best := 0, 1, math.Inf(1)
		for i := range clusters {
			for j := i + 1; j < len(clusters); j++ {
				if c := crit(clusters[i], clusters[j]); c < best {
					bi, bj, best = i, j, c
				}
			}
		}
		merged := append(slices.Clone(clusters[bi]), clusters[bj]...)
		sort.Ints(merged)
		out = append(out, key(merged))
		clusters = append(clusters[:bj], clusters[bj+1:]...)
		clusters[bi] = merged
	}
	sort.Strings(out)
	return out
}

func key(leaves []int) string {
	var b strings.Builder
	for _, i := range leaves {
		b.WriteString(string(rune('A' + i)))
	}
	return b.String()
}

// clades lists the leaf sets of the branch points of tr.
func clades(tr *pydt.Tree) []string {
	var out []string
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			continue
		}
		var leaves []int
		for _, u := range tr.PostOrderFrom(v, nil) {
			if tr.IsLeaf(u) {
				leaves = append(leaves, int(u))
			}
		}
		sort.Ints(leaves)
		out = append(out, key(leaves))
	}
	sort.Strings(out)
	return out
}

func TestLinkageMatchesDefinitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for rep := range 20 {
		n, d := 3+rng.IntN(18), 1+rng.IntN(3)
		x := make([][]float64, n)
		for i := range x {
			for range d {
				x[i] = append(x[i], rng.NormFloat64()+float64(i%3)*2)
			}
		}
		for _, l := range []linkage{average, complete, ward} {
			tr, err := agglomerate(x, l)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if got, want := clades(tr), bruteLinkage(x, l); !slices.Equal(got, want) {
				t.Fatalf("rep %d, %s linkage: clades\n%v\nwant\n%v", rep, l, got, want)
			}
		}
	}
}
