package stdlib

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distmv"
)

// TestDirichletLogProb checks the density against gonum's distmv.Dirichlet,
// for a vector concentration and a broadcast one.
func TestDirichletLogProb(t *testing.T) {
	cases := []struct {
		a []float64
		x []float64
	}{
		{[]float64{1, 2, 3}, []float64{0.2, 0.3, 0.5}},
		{[]float64{0.5, 0.5, 0.5, 0.5}, []float64{0.1, 0.2, 0.3, 0.4}},
		{[]float64{0.5}, []float64{0.1, 0.2, 0.3, 0.4}},
	}
	for _, c := range cases {
		a := c.a
		if len(a) == 1 {
			a = []float64{a[0], a[0], a[0], a[0]}
		}
		want := distmv.NewDirichlet(a, nil).LogProb(c.x)
		got := Dirichlet{}.LogProbVector(c.x, [][]float64{c.a})
		if math.Abs(got-want) > 1e-10 {
			t.Errorf("Dirichlet(%v) at %v: %v, gonum %v", c.a, c.x, got, want)
		}
	}
	if lp := (Dirichlet{}).LogProbVector([]float64{0.5, 0.6}, [][]float64{{1}}); !math.IsInf(lp, -1) {
		t.Errorf("a vector not summing to 1 has log density %v, want -Inf", lp)
	}
	// On the simplex's boundary (a component exactly 0, as underflowed
	// draws give): Dirichlet(1, ..., 1) is uniform, density Γ(K) = 2 at
	// K = 3; a component with a_j > 1 has density 0 there, a_j < 1 infinite.
	for _, c := range []struct {
		a    []float64
		want float64
	}{
		{[]float64{1}, math.Log(2)},
		{[]float64{2, 1, 1}, math.Inf(-1)},
		{[]float64{0.5, 1, 1}, math.Inf(1)},
		{[]float64{1, 2, 1}, math.Log(3)}, // Γ(4)/Γ(2) · 0.5
	} {
		got := Dirichlet{}.LogProbVector([]float64{0, 0.5, 0.5}, [][]float64{c.a})
		if !(got == c.want || math.Abs(got-c.want) < 1e-12) {
			t.Errorf("Dirichlet(%v) at (0, 0.5, 0.5): %v, want %v", c.a, got, c.want)
		}
	}
}

// TestDirichletRand checks the draws' means and variances against the
// closed forms a_j/A and a_j(A-a_j)/(A²(A+1)) within 4 standard errors.
func TestDirichletRand(t *testing.T) {
	const n = 20000
	a := []float64{0.3, 1, 2.5}
	A := 0.3 + 1 + 2.5
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 3)
	var s, s2 [3]float64
	for range n {
		Dirichlet{}.RandVector(rng, x, [][]float64{a})
		for j := range x {
			s[j] += x[j]
			s2[j] += x[j] * x[j]
		}
	}
	for j := range a {
		mean := a[j] / A
		v := a[j] * (A - a[j]) / (A * A * (A + 1))
		if got := s[j] / n; math.Abs(got-mean) > 4*math.Sqrt(v/n) {
			t.Errorf("component %d: mean %v, want %v", j+1, got, mean)
		}
		m4 := 3 * v * v // a loose bound on the fourth central moment's scale
		if got := s2[j]/n - (s[j]/n)*(s[j]/n); math.Abs(got-v) > 4*math.Sqrt((m4+v*v)/n) {
			t.Errorf("component %d: variance %v, want %v", j+1, got, v)
		}
	}
}

// TestCategorical checks the mass, the sampler's frequencies (within 4
// standard errors) and the checks of p.
func TestCategorical(t *testing.T) {
	p := []float64{0.1, 0.6, 0, 0.3}
	if lp := (Categorical{}).LogProbVector([]float64{2}, [][]float64{p}); math.Abs(lp-math.Log(0.6)) > 1e-15 {
		t.Errorf("log p(2) = %v", lp)
	}
	for _, x := range []float64{0, 5, 1.5, math.NaN()} {
		if lp := (Categorical{}).LogProbVector([]float64{x}, [][]float64{p}); !math.IsInf(lp, -1) {
			t.Errorf("log p(%v) = %v, want -Inf", x, lp)
		}
	}
	const n = 20000
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]float64, len(p))
	x := []float64{0}
	for range n {
		Categorical{}.RandVector(rng, x, [][]float64{p})
		counts[int(x[0])-1]++
	}
	for j, q := range p {
		if se := math.Sqrt(q * (1 - q) / n); math.Abs(counts[j]/n-q) > 4*se+1e-12 {
			t.Errorf("category %d drawn with frequency %v, want %v", j+1, counts[j]/n, q)
		}
	}
	bad := []struct {
		p []float64
		k int
	}{{[]float64{0.5, 0.6}, 2}, {[]float64{-0.1, 1.1}, 2}, {[]float64{1}, 2}, {nil, 0}}
	for _, b := range bad {
		if err := (Categorical{}).CheckVector([][]float64{b.p}, b.k); err == nil {
			t.Errorf("CheckVector(%v, %d) accepted", b.p, b.k)
		}
	}
	if err := (Dirichlet{}).CheckVector([][]float64{{1, 2}}, 3); err == nil {
		t.Error("Dirichlet accepted a concentration of the wrong length")
	}
	if err := (Dirichlet{}).CheckVector([][]float64{{0}}, 3); err == nil {
		t.Error("Dirichlet accepted a zero concentration")
	}
}
