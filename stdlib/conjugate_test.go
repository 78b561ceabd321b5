package stdlib

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGammaStats checks the GammaConjugate capability against the
// densities themselves: for parameters written in θ as the capability
// says, LogProb(x; θ1) − LogProb(x; θ2) must equal a (log θ1 − log θ2) −
// b (θ1 − θ2) for every x, θ1, θ2.
func TestGammaStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	write := map[Reach]func(float64) float64{
		ReachSelf:    func(th float64) float64 { return th },
		ReachInverse: func(th float64) float64 { return 1 / th },
		ReachInvSqrt: func(th float64) float64 { return 1 / math.Sqrt(th) },
	}
	cases := []struct {
		name   string
		typ    Scalar
		k      int
		r      Reach
		params func() []float64
		ok     bool
	}{
		{"Normal precision", Normal{}, 1, ReachInvSqrt, func() []float64 { return []float64{rng.NormFloat64(), 1} }, true},
		{"Normal sd", Normal{}, 1, ReachSelf, func() []float64 { return []float64{0, 1} }, false},
		{"Normal 1/sd", Normal{}, 1, ReachInverse, func() []float64 { return []float64{0, 1} }, false},
		{"Normal mean", Normal{}, 0, ReachSelf, func() []float64 { return []float64{0, 1} }, false},
		{"Gamma rate", Gamma{}, 1, ReachSelf, func() []float64 { return []float64{0.3 + 3*rng.Float64(), 1} }, true},
		{"Gamma scale", Gamma{}, 1, ReachInverse, func() []float64 { return []float64{2, 1} }, false},
		{"Gamma shape", Gamma{}, 0, ReachSelf, func() []float64 { return []float64{2, 1} }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gc, has := c.typ.(GammaConjugate)
			if !has {
				t.Fatalf("%s is not a GammaConjugate", c.typ.Name())
			}
			for range 200 {
				p := c.params()
				x := c.typ.Rand(rng, p)
				a, b, ok := gc.GammaStats(c.k, c.r, x, p)
				if ok != c.ok {
					t.Fatalf("ok = %v, want %v", ok, c.ok)
				}
				if !ok {
					return
				}
				th1, th2 := 0.1+5*rng.Float64(), 0.1+5*rng.Float64()
				p1 := append([]float64(nil), p...)
				p2 := append([]float64(nil), p...)
				p1[c.k], p2[c.k] = write[c.r](th1), write[c.r](th2)
				got := c.typ.LogProb(x, p1) - c.typ.LogProb(x, p2)
				want := a*(math.Log(th1)-math.Log(th2)) - b*(th1-th2)
				if !(math.Abs(got-want) <= 1e-9*(1+math.Abs(got))) {
					t.Fatalf("x = %v, p = %v, θ = %v, %v: density ratio %v, capability says %v", x, p, th1, th2, got, want)
				}
			}
		})
	}
	for _, typ := range []NodeType{Beta{}, Probit{}} {
		if _, ok := typ.(GammaConjugate); ok {
			t.Errorf("%s claims GammaConjugate", typ.Name())
		}
	}
}
