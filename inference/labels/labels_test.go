package labels

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bruteAssign is the minimum cost over all injections of the smaller side
// into the larger, by enumeration.
func bruteAssign(cost []float64, n, m int) float64 {
	best := math.Inf(1)
	if n <= m {
		used := make([]bool, m)
		var rec func(i int, acc float64)
		rec = func(i int, acc float64) {
			if i == n {
				best = math.Min(best, acc)
				return
			}
			for j := 0; j < m; j++ {
				if !used[j] {
					used[j] = true
					rec(i+1, acc+cost[i*m+j])
					used[j] = false
				}
			}
		}
		rec(0, 0)
		return best
	}
	t := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			t[j*n+i] = cost[i*m+j]
		}
	}
	return bruteAssign(t, m, n)
}

// checkMatch verifies match is a valid assignment of the right size with
// the given total.
func checkMatch(t *testing.T, cost []float64, n, m int, match []int, total float64) {
	t.Helper()
	if len(match) != n {
		t.Fatalf("match has length %d, want %d", len(match), n)
	}
	used := make([]bool, m)
	sum, matched := 0.0, 0
	for i, j := range match {
		if j == -1 {
			continue
		}
		if j < 0 || j >= m || used[j] {
			t.Fatalf("match %v is not an injection", match)
		}
		used[j] = true
		sum += cost[i*m+j]
		matched++
	}
	if matched != min(n, m) {
		t.Fatalf("match %v matches %d rows, want %d", match, matched, min(n, m))
	}
	if !(math.Abs(sum-total) <= 1e-9*math.Max(1, math.Abs(total))) {
		t.Fatalf("match %v costs %v, reported total %v", match, sum, total)
	}
}

func TestAssignBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []struct {
		name string
		draw func() float64
	}{
		{"continuous", func() float64 { return rng.NormFloat64() * 10 }},
		{"small integers (ties)", func() float64 { return float64(rng.IntN(3)) }},
		{"all equal", func() float64 { return 4 }},
		{"counts", func() float64 { return -float64(rng.IntN(50)) }},
	}
	for _, kind := range kinds {
		for n := 1; n <= 6; n++ {
			for m := 1; m <= 6; m++ {
				for rep := 0; rep < 3; rep++ {
					cost := make([]float64, n*m)
					for i := range cost {
						cost[i] = kind.draw()
					}
					match, total, err := Assign(cost, n, m)
					if err != nil {
						t.Fatal(err)
					}
					checkMatch(t, cost, n, m, match, total)
					if want := bruteAssign(cost, n, m); !(math.Abs(total-want) <= 1e-9*math.Max(1, math.Abs(want))) {
						t.Errorf("%s %d×%d: total %v, brute force %v (cost %v)", kind.name, n, m, total, want, cost)
					}
				}
			}
		}
	}
}

func TestAssignLarge(t *testing.T) {
	// A planted permutation with a cheap diagonal is found at K = 300; the
	// result is also no worse than the identity and than a greedy matching.
	const K = 300
	rng := rand.New(rand.NewPCG(3, 4))
	perm := rng.Perm(K)
	cost := make([]float64, K*K)
	for i := range cost {
		cost[i] = 1 + rng.Float64()
	}
	for i, j := range perm {
		cost[i*K+j] = rng.Float64() * 0.5
	}
	match, _, err := Assign(cost, K, K)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(match, perm) {
		t.Error("planted permutation not recovered")
	}
}

func TestAssignErrors(t *testing.T) {
	cases := []struct {
		cost []float64
		n, m int
		want string
	}{
		{[]float64{1, 2, 3}, 2, 2, "cost has length 3"},
		{[]float64{1, math.NaN()}, 1, 2, "cost[1] (row 0, column 1) is NaN"},
		{[]float64{math.Inf(1)}, 1, 1, "is +Inf"},
		{nil, -1, 2, "assignment of a -1×2"},
	}
	for _, tc := range cases {
		_, _, err := Assign(tc.cost, tc.n, tc.m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Assign(%v, %d, %d): error %v, want %q", tc.cost, tc.n, tc.m, err, tc.want)
		}
	}
	for _, nm := range [][2]int{{0, 0}, {0, 3}, {3, 0}} {
		match, total, err := Assign(nil, nm[0], nm[1])
		if err != nil || total != 0 || len(match) != nm[0] {
			t.Errorf("Assign of %d×%d: %v, %v, %v", nm[0], nm[1], match, total, err)
		}
		for _, j := range match {
			if j != -1 {
				t.Errorf("Assign of %d×%d matched %v", nm[0], nm[1], match)
			}
		}
	}
}

func TestAlign(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const K, N = 8, 2000
	ref := make([]int, N)
	for i := range ref {
		ref[i] = rng.IntN(K)
	}
	// z is ref under a hidden relabelling, with 30% of items noise.
	hidden := rng.Perm(K) // hidden[ref label] = z label
	z := make([]int, N)
	for i, r := range ref {
		z[i] = hidden[r]
		if rng.Float64() < 0.3 {
			z[i] = rng.IntN(K)
		}
	}
	perm, agree, err := Align(z, ref, K)
	if err != nil {
		t.Fatal(err)
	}
	for r, k := range hidden {
		if perm[k] != r {
			t.Errorf("perm[%d] = %d, want %d", k, perm[k], r)
		}
	}
	al := make([]int, N)
	if err := Relabel(z, perm, al); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range al {
		if al[i] == ref[i] {
			n++
		}
	}
	if n != agree {
		t.Errorf("agree = %d, counted %d", agree, n)
	}
	// Against brute force over all permutations on a small K.
	const k2 = 5
	for rep := 0; rep < 20; rep++ {
		a, b := make([]int, 30), make([]int, 30)
		for i := range a {
			a[i], b[i] = rng.IntN(k2), rng.IntN(k2)
		}
		_, agree, err := Align(a, b, k2)
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		forPerms(k2, func(p []int) {
			c := 0
			for i := range a {
				if p[a[i]] == b[i] {
					c++
				}
			}
			best = max(best, c)
		})
		if agree != best {
			t.Errorf("Align agrees on %d items, brute force best %d", agree, best)
		}
	}
}

func forPerms(K int, f func([]int)) {
	p := make([]int, K)
	used := make([]bool, K)
	var rec func(i int)
	rec = func(i int) {
		if i == K {
			f(p)
			return
		}
		for v := 0; v < K; v++ {
			if !used[v] {
				used[v] = true
				p[i] = v
				rec(i + 1)
				used[v] = false
			}
		}
	}
	rec(0)
}

func TestAccuracy(t *testing.T) {
	cases := []struct {
		name      string
		z         []int
		K         int
		gold      []int
		G         int
		m2o, o2o  float64
		m2oMap    []int
		errSubstr string
	}{
		{
			// Label 0 → class 1 (3 of 4), label 1 → class 1 (2 of 2),
			// label 2 → class 0 (1 of 1); one-to-one: 0→1, 2→0, 1 unmatched
			// gives 3+1 of 7... or 1→1, 0→0 (1) gives 2+1: 4/7 wins.
			"rectangular K > G", []int{0, 0, 0, 0, 1, 1, 2}, 3, []int{1, 1, 1, 0, 1, 1, 0}, 2,
			6.0 / 7, 4.0 / 7, []int{1, 1, 0}, "",
		},
		{
			// K < G: two labels, three classes; class 2 unmatched.
			"rectangular K < G", []int{0, 0, 1, 1, 1, 0}, 2, []int{0, 2, 1, 1, 2, 0}, 3,
			4.0 / 6, 4.0 / 6, []int{0, 1}, "",
		},
		{
			// Ties go to the smaller class; a label never used maps to -1;
			// items without gold are skipped.
			"ties and unused", []int{0, 0, 2, 2}, 3, []int{1, 0, 1, -1}, 2,
			2.0 / 3, 2.0 / 3, []int{0, -1, 1}, "",
		},
		{"no gold", []int{0, 1}, 2, []int{-1, -1}, 2, 0, 0, nil, "no item has a gold class"},
		{"label out of range", []int{0, 3}, 3, []int{0, 0}, 2, 0, 0, nil, "z[1] = 3 is not in 0..2"},
		{"gold out of range", []int{0, 1}, 3, []int{0, 2}, 2, 0, 0, nil, "gold[1] = 2 is not in 0..1"},
		{"lengths", []int{0, 1}, 3, []int{0}, 2, 0, 0, nil, "2 labels but 1 gold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acc, mp, err := ManyToOne(tc.z, tc.K, tc.gold, tc.G)
			acc2, _, err2 := OneToOne(tc.z, tc.K, tc.gold, tc.G)
			if tc.errSubstr != "" {
				for _, e := range []error{err, err2} {
					if e == nil || !strings.Contains(e.Error(), tc.errSubstr) {
						t.Errorf("error %v, want %q", e, tc.errSubstr)
					}
				}
				if tc.name == "no gold" && (!errors.Is(err, ErrNoGold) || !errors.Is(err2, ErrNoGold)) {
					t.Error("not ErrNoGold")
				}
				return
			}
			if err != nil || err2 != nil {
				t.Fatal(err, err2)
			}
			if !(math.Abs(acc-tc.m2o) <= 1e-12) || !slices.Equal(mp, tc.m2oMap) {
				t.Errorf("many-to-one %v %v, want %v %v", acc, mp, tc.m2o, tc.m2oMap)
			}
			if !(math.Abs(acc2-tc.o2o) <= 1e-12) {
				t.Errorf("one-to-one %v, want %v", acc2, tc.o2o)
			}
		})
	}
}

func TestOneToOneBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for rep := 0; rep < 30; rep++ {
		K, G := 1+rng.IntN(5), 1+rng.IntN(5)
		z, gold := make([]int, 40), make([]int, 40)
		for i := range z {
			z[i], gold[i] = rng.IntN(K), rng.IntN(G)
		}
		acc, mp, err := OneToOne(z, K, gold, G)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := Confusion(z, K, gold, G)
		cost := make([]float64, K*G)
		for i, v := range n {
			cost[i] = -float64(v)
		}
		want := -bruteAssign(cost, K, G) / 40
		if !(math.Abs(acc-want) <= 1e-12) {
			t.Errorf("K=%d G=%d: one-to-one %v, brute force %v", K, G, acc, want)
		}
		hit := 0
		for i := range z {
			if mp[z[i]] == gold[i] {
				hit++
			}
		}
		if !(math.Abs(float64(hit)/40-acc) <= 1e-12) {
			t.Errorf("mapping %v gives %v, reported %v", mp, float64(hit)/40, acc)
		}
	}
}

func TestRelabelErrors(t *testing.T) {
	if err := Relabel([]int{0, 1}, []int{1, 1}, make([]int, 2)); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("error %v", err)
	}
	if err := Relabel([]int{0, 2}, []int{1, 0}, make([]int, 2)); err == nil || !strings.Contains(err.Error(), "z[1] = 2") {
		t.Errorf("error %v", err)
	}
	if err := Relabel([]int{0}, []int{0}, nil); err == nil {
		t.Error("short dst: no error")
	}
	z := []int{0, 1, 2}
	if err := Relabel(z, []int{2, 0, 1}, z); err != nil || !slices.Equal(z, []int{2, 0, 1}) {
		t.Errorf("in place: %v %v", z, err)
	}
}

func BenchmarkAssign300(b *testing.B) {
	const K = 300
	rng := rand.New(rand.NewPCG(1, 1))
	cost := make([]float64, K*K)
	for i := range cost {
		cost[i] = -float64(rng.IntN(1000))
	}
	for b.Loop() {
		if _, _, err := Assign(cost, K, K); err != nil {
			b.Fatal(err)
		}
	}
}
