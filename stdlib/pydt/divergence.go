package pydt

import (
	"fmt"
	"math"
)

// Divergence is a divergence function a(t): the hazard of leaving a path at
// time t. Implementations provide a(t), its integral A(t) = ∫₀ᵗ a(u) du, and
// the inverse of A for sampling divergence times. Every implementation here
// has A(1) = ∞, so that a path always diverges before reaching t = 1.
type Divergence interface {
	// LogRate returns log a(t).
	LogRate(t Time) float64
	// Cumulative returns A(t); it is +Inf at t = 1.
	Cumulative(t Time) float64
	// InverseCumulative returns the time t with A(t) = a, for a >= 0.
	InverseCumulative(a float64) Time
	// Check reports parameter values for which the function is not a valid
	// divergence function.
	Check() error
	// String describes the function with its parameters.
	String() string
}

// DivInv is a(t) = C/(1-t), the paper's divergence function, with
// A(t) = -C log(1-t). C > 0 is the smoothness: larger values give earlier
// divergences and smoother densities.
type DivInv struct{ C float64 }

// LogRate returns log C - log(1-t).
func (d DivInv) LogRate(t Time) float64 { return math.Log(d.C) - t.LogOneMinus() }

// Cumulative returns -C log(1-t).
func (d DivInv) Cumulative(t Time) float64 { return -d.C * t.LogOneMinus() }

// InverseCumulative returns t = 1 - exp(-a/C), keeping 1-t exact.
func (d DivInv) InverseCumulative(a float64) Time { return TimeFromLogOneMinus(-a / d.C) }

// Check requires C > 0 and finite.
func (d DivInv) Check() error { return checkPositive("c", d.C) }

func (d DivInv) String() string { return fmt.Sprintf("%g/(1-t)", d.C) }

// DivInvSq is a(t) = C/(1-t)², with A(t) = C t/(1-t). It gives smoother
// densities than DivInv.
type DivInvSq struct{ C float64 }

// LogRate returns log C - 2 log(1-t).
func (d DivInvSq) LogRate(t Time) float64 { return math.Log(d.C) - 2*t.LogOneMinus() }

// Cumulative returns C t/(1-t).
func (d DivInvSq) Cumulative(t Time) float64 {
	if t.OneMinus() == 0 {
		return math.Inf(1)
	}
	return d.C * t.T() / t.OneMinus()
}

// InverseCumulative returns t = a/(C+a), with 1-t = C/(C+a).
func (d DivInvSq) InverseCumulative(a float64) Time {
	if math.IsInf(a, 1) {
		return Leaf
	}
	if t := a / (d.C + a); t <= 0.5 {
		return TimeAt(t)
	}
	return TimeFromOneMinus(d.C / (d.C + a))
}

// Check requires C > 0 and finite.
func (d DivInvSq) Check() error { return checkPositive("c", d.C) }

func (d DivInvSq) String() string { return fmt.Sprintf("%g/(1-t)^2", d.C) }

// DivNeal is Neal's divergence function a(t) = C0 + C1/(1-t) + C2/(1-t)²,
// with A(t) = C0 t - C1 log(1-t) + C2 t/(1-t). All three are non-negative
// and C1 + C2 > 0, so that A(1) = ∞.
type DivNeal struct{ C0, C1, C2 float64 }

// LogRate returns log a(t).
func (d DivNeal) LogRate(t Time) float64 {
	u := t.OneMinus()
	return math.Log(d.C0 + d.C1/u + d.C2/(u*u))
}

// Cumulative returns A(t).
func (d DivNeal) Cumulative(t Time) float64 {
	if t.OneMinus() == 0 {
		return math.Inf(1)
	}
	return d.cumulativeS(-t.LogOneMinus())
}

// cumulativeS is A as a function of s = -log(1-t).
func (d DivNeal) cumulativeS(s float64) float64 {
	a := d.C1 * s
	if d.C0 != 0 {
		a += -d.C0 * math.Expm1(-s)
	}
	if d.C2 != 0 {
		a += d.C2 * math.Expm1(s)
	}
	return a
}

// InverseCumulative solves A(t) = a for s = -log(1-t) by safeguarded Newton
// iteration; A is increasing and convex in s.
func (d DivNeal) InverseCumulative(a float64) Time {
	if a <= 0 {
		return Origin
	}
	if math.IsInf(a, 1) {
		return Leaf
	}
	lo, hi := 0.0, 1.0
	for d.cumulativeS(hi) < a {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return Leaf
		}
	}
	s := 0.5 * (lo + hi)
	for range 200 {
		f := d.cumulativeS(s) - a
		if f == 0 {
			break
		}
		if f > 0 {
			hi = s
		} else {
			lo = s
		}
		deriv := d.C0*math.Exp(-s) + d.C1 + d.C2*math.Exp(s)
		next := s - f/deriv
		if !(next > lo && next < hi) {
			next = 0.5 * (lo + hi)
		}
		if math.Abs(next-s) <= 1e-15*math.Max(1, s) {
			s = next
			break
		}
		s = next
	}
	return TimeFromLogOneMinus(-s)
}

// Check requires non-negative finite coefficients with C1 + C2 > 0.
func (d DivNeal) Check() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"c0", d.C0}, {"c1", d.C1}, {"c2", d.C2}} {
		if !(p.v >= 0) || math.IsInf(p.v, 1) {
			return fmt.Errorf("divergence parameter %s = %v: must be finite and >= 0", p.name, p.v)
		}
	}
	if d.C1+d.C2 <= 0 {
		return fmt.Errorf("divergence c1 + c2 = %v: must be > 0 so that every path diverges before t = 1", d.C1+d.C2)
	}
	return nil
}

func (d DivNeal) String() string {
	return fmt.Sprintf("%g + %g/(1-t) + %g/(1-t)^2", d.C0, d.C1, d.C2)
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return fmt.Errorf("divergence parameter %s = %v: must be finite and > 0", name, v)
	}
	return nil
}
