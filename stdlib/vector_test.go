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
		if !(math.Abs(got-want) <= 1e-10) {
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
		if got := s[j] / n; !(math.Abs(got-mean) <= 4*math.Sqrt(v/n)) {
			t.Errorf("component %d: mean %v, want %v", j+1, got, mean)
		}
		m4 := 3 * v * v // a loose bound on the fourth central moment's scale
		if got := s2[j]/n - (s[j]/n)*(s[j]/n); !(math.Abs(got-v) <= 4*math.Sqrt((m4+v*v)/n)) {
			t.Errorf("component %d: variance %v, want %v", j+1, got, v)
		}
	}
}

// TestCategorical checks the mass, the sampler's frequencies (within 4
// standard errors) and the checks of p.
func TestCategorical(t *testing.T) {
	p := []float64{0.1, 0.6, 0, 0.3}
	if lp := (Categorical{}).LogProbVector([]float64{2}, [][]float64{p}); !(math.Abs(lp-math.Log(0.6)) <= 1e-15) {
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
		if se := math.Sqrt(q * (1 - q) / n); !(math.Abs(counts[j]/n-q) <= 4*se+1e-12) {
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

// TestCategoricalLogits checks Categorical(softmax(eta)) against the
// probabilities exp(eta_j) / Σ exp(eta_i) written out: its log mass at each
// category and outside 1..K, and its draws' frequencies within 4 standard
// errors; and that Categorical fuses softmax at p and nothing else.
func TestCategoricalLogits(t *testing.T) {
	eta := []float64{0.3, -1.2, 2.0, 700} // a large logit: the normaliser must not overflow
	for _, e := range [][]float64{eta[:3], eta} {
		var z float64
		for _, x := range e {
			z += math.Exp(x - e[len(e)-1])
		}
		for c := range e {
			want := e[c] - e[len(e)-1] - math.Log(z)
			got := CategoricalLogits{}.LogProbVector([]float64{float64(c + 1)}, [][]float64{e})
			if !(math.Abs(got-want) <= 1e-12) {
				t.Errorf("eta %v, category %d: log mass %v, want %v", e, c+1, got, want)
			}
		}
	}
	for _, x := range []float64{0, 4, 1.5, math.NaN()} {
		if lp := (CategoricalLogits{}).LogProbVector([]float64{x}, [][]float64{eta[:3]}); !math.IsInf(lp, -1) {
			t.Errorf("category %v of 3: log mass %v, want -Inf", x, lp)
		}
	}
	if err := (CategoricalLogits{}).CheckVector([][]float64{{0, math.Inf(1)}}, 2); err == nil {
		t.Error("an infinite logit passed CheckVector")
	}
	if err := (CategoricalLogits{}).CheckVector([][]float64{{0, 1}}, 3); err == nil {
		t.Error("2 logits for 3 categories passed CheckVector")
	}
	const n = 40000
	rng := rand.New(rand.NewPCG(3, 4))
	e := eta[:3]
	counts := make([]float64, 3)
	x := []float64{0}
	for range n {
		CategoricalLogits{}.RandVector(rng, x, [][]float64{e})
		counts[int(x[0])-1]++
	}
	z := math.Exp(e[0]) + math.Exp(e[1]) + math.Exp(e[2])
	for j, c := range counts {
		p := math.Exp(e[j]) / z
		if se := math.Sqrt(p * (1 - p) / n); !(math.Abs(c/n-p) <= 4*se) {
			t.Errorf("category %d: frequency %v, want %v (se %v)", j+1, c/n, p, se)
		}
	}
	if nt, ok := (Categorical{}).Fuse(0, Softmax); !ok || nt.(CategoryLogits).LogitsParam() != 0 {
		t.Errorf("Categorical does not fuse softmax at p: %v, %v", nt, ok)
	}
	if _, ok := (Categorical{}).Fuse(0, &VectorFunc{Name: "softmax"}); ok {
		t.Error("Categorical fuses a vector function it does not know (a copy of Softmax)")
	}
	if _, ok := any(Dirichlet{}).(Fuser); ok {
		t.Error("Dirichlet accepts a vector function")
	}
}

// maxSource makes rand.Float64 return its largest value, 1 − 2⁻⁵³.
type maxSource struct{}

func (maxSource) Uint64() uint64 { return math.MaxUint64 }

// TestCategoricalLogitsRoundingNeverDrawsZeroWeight: when rounding leaves
// the inversion's remainder positive after the last category, the draw is
// the last category of positive weight, never one whose weight underflowed
// to 0 (these logits and the largest uniform reach that branch).
func TestCategoricalLogitsRoundingNeverDrawsZeroWeight(t *testing.T) {
	eta := []float64{8.82, 5.99, 7.01, 0.91, 8.29, -1e4}
	x := []float64{0}
	CategoricalLogits{}.RandVector(rand.New(maxSource{}), x, [][]float64{eta})
	if x[0] != 5 {
		t.Fatalf("drew category %v, want 5 (category 6 has weight exp(-1e4) = 0)", x[0])
	}
}
