package pydt

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/internal/logsumexp"
)

// Divergence is a divergence function a(t): the hazard of leaving a path at
// time t. Implementations provide a(t), its integral A(t) = ∫₀ᵗ a(u) du, and
// the inverse of A for sampling divergence times. Every implementation here
// has A(1) = ∞, so that a path always diverges before reaching t = 1.
type Divergence interface {
	// LogRate returns log a(t), the log density of divergence in t.
	LogRate(t Time) float64
	// LogRateS returns log dA/ds = log a(t) - s, the log density of
	// divergence in the coordinate s = -log(1-t) that Time keeps. It is
	// LogRate less the Jacobian s without the cancellation that forming
	// that difference would suffer when s is large.
	LogRateS(t Time) float64
	// Cumulative returns A(t); it is +Inf at t = 1, and +Inf where A
	// exceeds the float64 maximum.
	Cumulative(t Time) float64
	// InverseCumulative returns the time t with A(t) = a, for a >= 0.
	InverseCumulative(a float64) Time
	// Advance returns the time t >= from with A(t) - A(from) = inc, for
	// inc >= 0, computed in s without forming A(from), so that it keeps
	// its precision where A(from) is much larger than inc.
	Advance(from Time, inc float64) Time
	// Increment returns A(to) - A(from), formed from the difference of s
	// (with expm1 where A has exponential terms) rather than as the
	// difference of two cumulative hazards, which cancels when both are
	// large and close. It is +Inf where the increment exceeds the float64
	// maximum and +Inf when to is t = 1.
	Increment(from, to Time) float64
	// Check reports parameter values for which the function is not a valid
	// divergence function.
	Check() error
	// String describes the function with its parameters.
	String() string
}

// DivInv is a(t) = C/(1-t), the paper's divergence function, with
// A(t) = -C log(1-t) = C s in the coordinate s = -log(1-t) that Time keeps.
// C > 0 is the smoothness: larger values give earlier divergences and
// smoother densities.
type DivInv struct{ C float64 }

// LogRate returns log C + s.
func (d DivInv) LogRate(t Time) float64 { return math.Log(d.C) + t.S() }

// LogRateS returns log C: A(t) = C s is linear in s.
func (d DivInv) LogRateS(Time) float64 { return math.Log(d.C) }

// Cumulative returns C s.
func (d DivInv) Cumulative(t Time) float64 { return d.C * t.S() }

// InverseCumulative returns the time with s = a/C.
func (d DivInv) InverseCumulative(a float64) Time { return TimeFromS(a / d.C) }

// Advance returns the time with s = s_from + inc/C.
func (d DivInv) Advance(from Time, inc float64) Time { return TimeFromS(from.S() + inc/d.C) }

// Increment returns C (s_to - s_from).
func (d DivInv) Increment(from, to Time) float64 { return d.C * (to.S() - from.S()) }

// Check requires C > 0 and finite.
func (d DivInv) Check() error { return checkPositive("c", d.C) }

func (d DivInv) String() string { return fmt.Sprintf("%g/(1-t)", d.C) }

// DivInvSq is a(t) = C/(1-t)², with A(t) = C t/(1-t) = C (e^s - 1). It
// gives smoother densities than DivInv.
type DivInvSq struct{ C float64 }

// LogRate returns log C + 2s.
func (d DivInvSq) LogRate(t Time) float64 { return math.Log(d.C) + 2*t.S() }

// LogRateS returns log C + s.
func (d DivInvSq) LogRateS(t Time) float64 { return math.Log(d.C) + t.S() }

// Cumulative returns C (e^s - 1), computed without overflow wherever the
// result is below the float64 maximum.
func (d DivInvSq) Cumulative(t Time) float64 { return scaledExpm1(d.C, t.S()) }

// InverseCumulative returns the time with s = log(1 + a/C).
func (d DivInvSq) InverseCumulative(a float64) Time {
	if !(a > 0) {
		return Origin
	}
	return TimeFromS(log1pRatio(a, d.C))
}

// Advance returns the time with C (e^s - e^s_from) = inc:
// s = s_from + log(1 + inc e^(-s_from)/C).
func (d DivInvSq) Advance(from Time, inc float64) Time {
	if !(inc > 0) {
		return from
	}
	s0 := from.S()
	// inc e^(-s0)/C, in logs when e^(-s0) underflows.
	r := inc / d.C * math.Exp(-s0)
	if r == 0 || math.IsInf(r, 1) {
		lr := math.Log(inc) - math.Log(d.C) - s0
		if lr > 36 {
			return TimeFromS(s0 + lr) // log1p(e^lr) = lr to double precision
		}
		r = math.Exp(lr)
	}
	return TimeFromS(s0 + math.Log1p(r))
}

// Increment returns C (e^s_to - e^s_from).
func (d DivInvSq) Increment(from, to Time) float64 {
	return expDiff(math.Log(d.C), from.S(), to.S())
}

// Check requires C > 0 and finite.
func (d DivInvSq) Check() error { return checkPositive("c", d.C) }

func (d DivInvSq) String() string { return fmt.Sprintf("%g/(1-t)^2", d.C) }

// DivNeal is Neal's divergence function a(t) = C0 + C1/(1-t) + C2/(1-t)²,
// with A(t) = C0 t + C1 s + C2 (e^s - 1), s = -log(1-t). All three are
// non-negative and C1 + C2 > 0, so that A(1) = ∞. Both log a(t) and A(t)
// are formed in the coordinate s, so that they stay finite for every time
// Time holds (as long as A itself is below the float64 maximum).
type DivNeal struct{ C0, C1, C2 float64 }

// LogRate returns log a(t) = log(C0 + C1 e^s + C2 e^(2s)), as a
// log-sum-exp.
func (d DivNeal) LogRate(t Time) float64 { return d.logRateS(t.S()) + t.S() }

// LogRateS returns log dA/ds = log(C0 e^(-s) + C1 + C2 e^s).
func (d DivNeal) LogRateS(t Time) float64 { return d.logRateS(t.S()) }

func (d DivNeal) logRateS(s float64) float64 {
	// Terms log C0 - s, log C1, log C2 + s; zero coefficients drop out.
	var terms [3]float64
	k := 0
	if d.C0 > 0 {
		terms[k] = math.Log(d.C0) - s
		k++
	}
	if d.C1 > 0 {
		terms[k] = math.Log(d.C1)
		k++
	}
	if d.C2 > 0 {
		terms[k] = math.Log(d.C2) + s
		k++
	}
	return logsumexp.Of(terms[:k])
}

// Cumulative returns A(t).
func (d DivNeal) Cumulative(t Time) float64 { return d.cumulativeS(t.S()) }

// cumulativeS is A as a function of s = -log(1-t).
func (d DivNeal) cumulativeS(s float64) float64 {
	if math.IsInf(s, 1) {
		return s
	}
	a := d.C1 * s
	if d.C0 != 0 {
		a += -d.C0 * math.Expm1(-s)
	}
	if d.C2 != 0 {
		a += scaledExpm1(d.C2, s)
	}
	return a
}

// InverseCumulative solves A(t) = a for s = -log(1-t) by safeguarded Newton
// iteration; A is increasing and convex in s, and s lies between 0 and the
// smaller of a/C1 and log(1 + a/C2) (A ≥ C1 s and A ≥ C2 (e^s - 1)).
func (d DivNeal) InverseCumulative(a float64) Time {
	if !(a > 0) {
		return Origin
	}
	if math.IsInf(a, 1) {
		return Leaf
	}
	lo, hi := 0.0, math.Inf(1)
	if d.C1 > 0 {
		hi = a / d.C1
	}
	if d.C2 > 0 {
		hi = min(hi, log1pRatio(a, d.C2))
	}
	if math.IsInf(hi, 1) {
		return Leaf // a/C1 overflows: s is beyond float64
	}
	s := 0.5 * (lo + hi)
	for range 2000 {
		f := d.cumulativeS(s) - a
		if f == 0 {
			break
		}
		if f > 0 {
			hi = s
		} else {
			lo = s
		}
		// dA/ds, in log space so that it does not overflow.
		next := s - f/math.Exp(d.logRateS(s))
		if !(next > lo && next < hi) {
			next = lo + 0.5*(hi-lo)
		}
		if next == s || math.Abs(next-s) <= 1e-15*s {
			s = next
			break
		}
		s = next
	}
	return TimeFromS(s)
}

// Advance solves A(s_from + δ) - A(s_from) = inc for δ >= 0 by safeguarded
// Newton iteration on
//
//	C0 e^(-s0) (1 - e^(-δ)) + C1 δ + C2 e^(s0) (e^δ - 1) = inc,
//
// whose terms are formed with expm1 (and in logs where e^(±s0) over- or
// underflows), so that the increment keeps its precision however far from 0
// s0 is.
func (d DivNeal) Advance(from Time, inc float64) Time {
	if !(inc > 0) {
		return from
	}
	s0 := from.S()
	if math.IsInf(s0, 1) || math.IsInf(inc, 1) {
		return Leaf
	}
	// Log coefficients of the three terms: a0 = log(C0 e^-s0), a2 = log(C2 e^s0).
	a0, a2 := math.Inf(-1), math.Inf(-1)
	if d.C0 > 0 {
		a0 = math.Log(d.C0) - s0
	}
	if d.C2 > 0 {
		a2 = math.Log(d.C2) + s0
	}
	c0, c2 := math.Exp(a0), math.Exp(a2) // c2 may be +Inf: then handled in logs
	g := func(x float64) float64 {
		v := d.C1 * x
		if c0 > 0 {
			v -= c0 * math.Expm1(-x)
		}
		if d.C2 > 0 {
			if x <= 700 && !math.IsInf(c2, 1) {
				v += c2 * math.Expm1(x)
			} else {
				v += math.Exp(a2 + x + math.Log1p(-math.Exp(-x)))
			}
		}
		return v - inc
	}
	lo, hi := 0.0, math.Inf(1)
	if d.C1 > 0 {
		hi = inc / d.C1
	}
	if d.C2 > 0 {
		// C2 e^s0 (e^δ - 1) <= inc: δ <= log(1 + inc e^-a2).
		lr := math.Log(inc) - a2
		if lr > 36 {
			hi = min(hi, lr)
		} else {
			hi = min(hi, math.Log1p(math.Exp(lr)))
		}
	}
	if math.IsInf(hi, 1) {
		return Leaf
	}
	x := 0.5 * hi
	for range 2000 {
		f := g(x)
		if f == 0 {
			break
		}
		if f > 0 {
			hi = x
		} else {
			lo = x
		}
		// g'(x) = C0 e^-s0 e^-x + C1 + C2 e^s0 e^x, in logs.
		var terms [3]float64
		k := 0
		if c0 > 0 {
			terms[k] = a0 - x
			k++
		}
		if d.C1 > 0 {
			terms[k] = math.Log(d.C1)
			k++
		}
		if d.C2 > 0 {
			terms[k] = a2 + x
			k++
		}
		next := x - f/math.Exp(logsumexp.Of(terms[:k]))
		if !(next > lo && next < hi) {
			next = lo + 0.5*(hi-lo)
		}
		if next == x || math.Abs(next-x) <= 1e-15*x {
			x = next
			break
		}
		x = next
	}
	return TimeFromS(s0 + x)
}

// Increment returns A(to) - A(from) = C0 (e^-s_from - e^-s_to) +
// C1 (s_to - s_from) + C2 (e^s_to - e^s_from).
func (d DivNeal) Increment(from, to Time) float64 {
	a, b := from.S(), to.S()
	if math.IsInf(b, 1) {
		return b
	}
	v := d.C1 * (b - a)
	if d.C0 > 0 {
		v += d.C0 * math.Exp(-a) * -math.Expm1(a-b)
	}
	if d.C2 > 0 {
		v += expDiff(math.Log(d.C2), a, b)
	}
	return v
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

// scaledExpm1 returns c (e^s - 1) for c > 0, s >= 0, without overflow in
// e^s when the product is representable: beyond s = 700, e^s - 1 = e^s to
// double precision and the product is formed as exp(log c + s).
func scaledExpm1(c, s float64) float64 {
	if s <= 700 {
		return c * math.Expm1(s)
	}
	return math.Exp(math.Log(c) + s)
}

// expDiff returns e^(logC + b) - e^(logC + a) for b >= a, as
// e^(logC + b) (1 - e^(a - b)), in logs so that it overflows only when the
// result does.
func expDiff(logC, a, b float64) float64 {
	if math.IsInf(b, 1) {
		return b
	}
	d := b - a
	if d <= 0 {
		return 0
	}
	return math.Exp(logC + b + math.Log(-math.Expm1(-d)))
}

// log1pRatio returns log(1 + a/c) for a, c > 0, without overflow in a/c.
func log1pRatio(a, c float64) float64 {
	if r := a / c; !math.IsInf(r, 1) {
		return math.Log1p(r)
	}
	return math.Log(a) - math.Log(c) // a/c > 1.8e308: log1p(c/a) is below rounding
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 1) {
		return fmt.Errorf("divergence parameter %s = %v: must be finite and > 0", name, v)
	}
	return nil
}
