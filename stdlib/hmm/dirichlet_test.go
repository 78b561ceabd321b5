package hmm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestLogDirichletMoments checks E[p_k] = a_k / A and E[log p_k] =
// digamma(a_k) - digamma(A) (closed forms) within 4 Monte Carlo standard
// errors, including shapes so small that p_k underflows.
func TestLogDirichletMoments(t *testing.T) {
	cases := [][]float64{
		{1, 2, 3},
		{0.5, 0.5},
		{0.1, 0.1, 0.1, 0.1, 0.1},
		{0.001, 0.01, 5},
		{1e-4, 1e-4},
		{200, 0.3, 40},
	}
	const n = 20000
	rng := rand.New(rand.NewPCG(11, 12))
	for _, alpha := range cases {
		K := len(alpha)
		A := 0.0
		for _, a := range alpha {
			A += a
		}
		lp := make([]float64, K)
		p := make([]float64, K)
		sumP, sumP2 := make([]float64, K), make([]float64, K)
		sumL, sumL2 := make([]float64, K), make([]float64, K)
		for i := 0; i < n; i++ {
			if err := LogDirichlet(rng, alpha, lp); err != nil {
				t.Fatal(err)
			}
			for k, v := range lp {
				if math.IsInf(v, 0) || math.IsNaN(v) || v > 0 {
					t.Fatalf("alpha %v: log p[%d] = %v", alpha, k, v)
				}
				sumL[k] += v
				sumL2[k] += v * v
				q := math.Exp(v)
				sumP[k] += q
				sumP2[k] += q * q
			}
		}
		for k, a := range alpha {
			check := func(what string, s, s2, want float64) {
				m := s / n
				se := math.Sqrt(math.Max(s2/n-m*m, 0) / n)
				if !(math.Abs(m-want) <= 4*se+1e-12) {
					t.Errorf("alpha %v: mean %s[%d] = %v, want %v (SE %v)", alpha, what, k, m, want, se)
				}
			}
			check("p", sumP[k], sumP2[k], a/A)
			check("log p", sumL[k], sumL2[k], mathext.Digamma(a)-mathext.Digamma(A))
		}
		if err := Dirichlet(rng, alpha, p); err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, v := range p {
			s += v
		}
		if !(math.Abs(s-1) <= 1e-12) {
			t.Errorf("alpha %v: Dirichlet draw sums to %v", alpha, s)
		}
	}
}

func TestDirichletErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cases := []struct {
		alpha []float64
		n     int
		want  string
	}{
		{nil, 0, "no components"},
		{[]float64{1, 2}, 3, "dst has length 3"},
		{[]float64{1, 0}, 2, "alpha[1] = 0"},
		{[]float64{-1, 1}, 2, "alpha[0] = -1"},
		{[]float64{math.NaN()}, 1, "alpha[0] = NaN"},
		{[]float64{math.Inf(1)}, 1, "alpha[0] = +Inf"},
	}
	for _, tc := range cases {
		for _, f := range []func(*rand.Rand, []float64, []float64) error{LogDirichlet, Dirichlet} {
			err := f(rng, tc.alpha, make([]float64, tc.n))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("alpha %v: error %v, want %q", tc.alpha, err, tc.want)
			}
		}
	}
	if err := LogDirichlet(nil, []float64{1}, make([]float64, 1)); err == nil {
		t.Error("nil rng: no error")
	}
}
