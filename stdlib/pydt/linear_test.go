package pydt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLinear checks the Linear capability against the functions
// themselves: a(t) = C u(t) and A(t) = C U(t) at random times, for every
// C; DivNeal (a sum of terms in three parameters) does not claim it.
func TestLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []Divergence{DivInv{C: 0.3}, DivInv{C: 4}, DivInvSq{C: 0.05}, DivInvSq{C: 2.5}} {
		l, ok := d.(Linear)
		if !ok {
			t.Fatalf("%v is not Linear", d)
		}
		u := l.Unit()
		c := math.Exp(d.LogRate(TimeFromS(0)) - u.LogRate(TimeFromS(0)))
		for range 100 {
			tm := TimeFromS(5 * rng.Float64())
			if got, want := d.LogRate(tm), math.Log(c)+u.LogRate(tm); !(math.Abs(got-want) <= 1e-12*(1+math.Abs(want))) {
				t.Errorf("%v: log a(%v) = %v, log C + log u = %v", d, tm, got, want)
			}
			if got, want := d.Cumulative(tm), c*u.Cumulative(tm); !(math.Abs(got-want) <= 1e-12*(1+math.Abs(want))) {
				t.Errorf("%v: A(%v) = %v, C U = %v", d, tm, got, want)
			}
		}
	}
	if _, ok := Divergence(DivNeal{C0: 1, C1: 1, C2: 1}).(Linear); ok {
		t.Error("DivNeal claims Linear")
	}
}
