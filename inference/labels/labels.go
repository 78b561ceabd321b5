// Package labels deals with label switching: the states of a hidden Markov
// model and the topics of a topic model have no fixed labels, so state 3 of
// one draw (or chain) may be state 7 of another. It aligns a draw's labels
// to a reference draw by a minimum-cost perfect matching (the Hungarian
// algorithm) on their confusion counts, and scores labels against gold
// classes (many-to-one and one-to-one accuracy, as in part-of-speech
// induction).
//
// Labels are 0-based: a draw z assigns item t the label z[t] in 0..K-1.
// Gold classes are 0-based in 0..G-1, or negative for an item without one.
//
// gonum has no assignment solver and the project takes no other numeric
// dependency, so the solver is written here: the O(n²m) shortest augmenting
// path algorithm with dual potentials (Kuhn–Munkres as refined by Jonker &
// Volgenant), tested against brute force over all assignments.
package labels

import (
	"errors"
	"fmt"
	"math"
)

// Assign solves the rectangular assignment problem: cost is an n×m matrix
// (row-major, cost[i*m+j]) of finite numbers; it returns match with
// match[i] the column given to row i, distinct for distinct rows, and the
// total cost, minimal over all such matchings. When n <= m every row gets a
// column; when n > m every column gets a row and the n−m rows left over
// have match[i] = −1. Ties are broken deterministically. An empty matrix
// (n or m zero) matches nothing at cost 0.
func Assign(cost []float64, n, m int) (match []int, total float64, err error) {
	if n < 0 || m < 0 {
		return nil, 0, fmt.Errorf("labels: assignment of a %d×%d matrix", n, m)
	}
	if n > 0 && m > math.MaxInt/n || len(cost) != n*m {
		return nil, 0, fmt.Errorf("labels: cost has length %d, want %d×%d", len(cost), n, m)
	}
	for k, c := range cost {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, 0, fmt.Errorf("labels: cost[%d] (row %d, column %d) is %v", k, k/m, k%m, c)
		}
	}
	match = make([]int, n)
	for i := range match {
		match[i] = -1
	}
	if n == 0 || m == 0 {
		return match, 0, nil
	}
	if n <= m {
		colOf := hungarian(func(i, j int) float64 { return cost[i*m+j] }, n, m)
		copy(match, colOf)
	} else {
		rowOf := hungarian(func(j, i int) float64 { return cost[i*m+j] }, m, n)
		for j, i := range rowOf {
			match[i] = j
		}
	}
	for i, j := range match {
		if j >= 0 {
			total += cost[i*m+j]
		}
	}
	return match, total, nil
}

// hungarian solves the assignment problem for n <= m rows and columns with
// cost c(i, j), returning the column of each row: Jonker–Volgenant style
// shortest augmenting paths with potentials u (rows) and v (columns),
// O(n²m).
func hungarian(c func(i, j int) float64, n, m int) []int {
	inf := math.Inf(1)
	u := make([]float64, n+1)
	v := make([]float64, m+1)
	p := make([]int, m+1) // p[j]: row (1-based) matched to column j; column 0 is the root
	way := make([]int, m+1)
	minv := make([]float64, m+1)
	used := make([]bool, m+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = inf
			used[j] = false
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta := inf
			j1 := -1
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				cur := c(i0-1, j-1) - u[i0] - v[j]
				if cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta = minv[j]
					j1 = j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	colOf := make([]int, n)
	for j := 1; j <= m; j++ {
		if p[j] > 0 {
			colOf[p[j]-1] = j - 1
		}
	}
	return colOf
}

// Confusion returns the K×G table of counts n[k*G+g] = #{t : z[t] = k,
// gold[t] = g}. Items with a negative gold class are skipped; a label of z
// outside 0..K−1 or a gold class above G−1 is an error.
func Confusion(z []int, K int, gold []int, G int) ([]int, error) {
	if K < 1 || G < 1 {
		return nil, fmt.Errorf("labels: confusion table of %d labels and %d classes", K, G)
	}
	if len(z) != len(gold) {
		return nil, fmt.Errorf("labels: %d labels but %d gold classes", len(z), len(gold))
	}
	if K > math.MaxInt/G {
		return nil, fmt.Errorf("labels: confusion table of %d×%d is too large", K, G)
	}
	n := make([]int, K*G)
	for t, k := range z {
		g := gold[t]
		if k < 0 || k >= K {
			return nil, fmt.Errorf("labels: label z[%d] = %d is not in 0..%d", t, k, K-1)
		}
		if g >= G {
			return nil, fmt.Errorf("labels: gold class gold[%d] = %d is not in 0..%d", t, g, G-1)
		}
		if g < 0 {
			continue
		}
		n[k*G+g]++
	}
	return n, nil
}

// Align returns the relabelling of draw z that agrees best with the
// reference draw ref (both with labels in 0..K−1, one per item): perm is a
// permutation of 0..K−1, perm[k] the reference label given to z's label k,
// maximising the number of items t with perm[z[t]] == ref[t] (a maximum
// weight matching on the confusion counts, the "co-assignment" of items
// to labels). Labels used by neither draw are matched among themselves.
// agree is that number of items. Relabel applies perm.
func Align(z, ref []int, K int) (perm []int, agree int, err error) {
	n, err := Confusion(z, K, ref, K)
	if err != nil {
		return nil, 0, fmt.Errorf("align: %w", err)
	}
	cost := make([]float64, K*K)
	for i, v := range n {
		cost[i] = -float64(v)
	}
	perm, total, err := Assign(cost, K, K)
	if err != nil {
		return nil, 0, fmt.Errorf("align: %w", err)
	}
	return perm, int(math.Round(-total)), nil
}

// Relabel writes dst[t] = perm[z[t]] (dst may be z itself). perm must be a
// permutation of 0..len(perm)−1 or an error is returned.
func Relabel(z, perm, dst []int) error {
	if len(dst) != len(z) {
		return fmt.Errorf("labels: relabel into %d items, want %d", len(dst), len(z))
	}
	K := len(perm)
	seen := make([]bool, K)
	for k, p := range perm {
		if p < 0 || p >= K || seen[p] {
			return fmt.Errorf("labels: perm[%d] = %d: not a permutation of 0..%d", k, p, K-1)
		}
		seen[p] = true
	}
	for t, k := range z {
		if k < 0 || k >= K {
			return fmt.Errorf("labels: label z[%d] = %d is not in 0..%d", t, k, K-1)
		}
		dst[t] = perm[k]
	}
	return nil
}

// ErrNoGold is returned when no item has a gold class, so that accuracy is
// undefined.
var ErrNoGold = errors.New("labels: no item has a gold class")

// ManyToOne is the many-to-one accuracy of labels z (0..K−1) against gold
// classes (0..G−1, negative: no class, not counted): each label is mapped to
// the gold class it most often carries (ties to the smaller class; a label
// never used maps to −1), and acc is the fraction of items with a gold class
// whose label maps to it. Several labels may map to one class, so acc never
// falls as K grows; compare models at equal K.
func ManyToOne(z []int, K int, gold []int, G int) (acc float64, mapping []int, err error) {
	n, err := Confusion(z, K, gold, G)
	if err != nil {
		return 0, nil, fmt.Errorf("many-to-one accuracy: %w", err)
	}
	mapping = make([]int, K)
	hit, total := 0, 0
	for k := 0; k < K; k++ {
		best, bg := 0, -1
		for g := 0; g < G; g++ {
			v := n[k*G+g]
			total += v
			if v > best {
				best, bg = v, g
			}
		}
		mapping[k] = bg
		hit += best
	}
	if total == 0 {
		return 0, mapping, fmt.Errorf("many-to-one accuracy: %w", ErrNoGold)
	}
	return float64(hit) / float64(total), mapping, nil
}

// OneToOne is the one-to-one accuracy of labels z (0..K−1) against gold
// classes (0..G−1, negative: not counted): labels and classes are matched
// one-to-one to maximise the items whose label is matched to their class
// (the Hungarian algorithm on the confusion counts; with K ≠ G the surplus
// labels or classes stay unmatched), and acc is the fraction of items with
// a gold class so matched. mapping[k] is the class of label k, or −1.
func OneToOne(z []int, K int, gold []int, G int) (acc float64, mapping []int, err error) {
	n, err := Confusion(z, K, gold, G)
	if err != nil {
		return 0, nil, fmt.Errorf("one-to-one accuracy: %w", err)
	}
	total := 0
	cost := make([]float64, K*G)
	for i, v := range n {
		cost[i] = -float64(v)
		total += v
	}
	if total == 0 {
		return 0, nil, fmt.Errorf("one-to-one accuracy: %w", ErrNoGold)
	}
	mapping, best, err := Assign(cost, K, G)
	if err != nil {
		return 0, nil, fmt.Errorf("one-to-one accuracy: %w", err)
	}
	return -best / float64(total), mapping, nil
}
