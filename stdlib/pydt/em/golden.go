package em

import (
	"fmt"
	"math"
)

// invPhi is 1/φ = (√5 - 1)/2, the golden ratio's reciprocal.
var invPhi = (math.Sqrt(5) - 1) / 2

// GoldenMax searches [lo, hi] for a maximum of f by golden-section search
// until the bracket is narrower than tol, and returns the best point it
// evaluated and its value. For a unimodal f on [lo, hi] that point is within
// tol of the maximum; for any other f it is the best of the points tried,
// never worse than the ends of the bracket, which are evaluated too. A value
// of -Inf or NaN counts as worse than every other value (so f may be -Inf
// outside its domain). It returns an error unless lo <= hi, both finite, and
// tol > 0.
//
// gonum/optimize has no one-dimensional bracketing search; this is the
// classic routine (Kiefer 1953), one evaluation per iteration after the
// first two, about log(range/tol)/log(φ) iterations.
func GoldenMax(f func(float64) float64, lo, hi, tol float64) (x, fx float64, err error) {
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return math.NaN(), math.NaN(), fmt.Errorf("em: golden-section bracket [%v, %v] is not a finite interval", lo, hi)
	}
	if !(tol > 0) {
		return math.NaN(), math.NaN(), fmt.Errorf("em: golden-section tolerance %v is not positive", tol)
	}
	bestX, bestF := math.NaN(), math.Inf(-1)
	eval := func(x float64) float64 {
		v := f(x)
		if math.IsNaN(v) {
			v = math.Inf(-1)
		}
		if math.IsNaN(bestX) || v > bestF {
			bestX, bestF = x, v
		}
		return v
	}
	eval(lo)
	eval(hi)
	a, b := lo, hi
	c := b - invPhi*(b-a)
	d := a + invPhi*(b-a)
	fc, fd := eval(c), eval(d)
	for b-a > tol {
		if fc >= fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = eval(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = eval(d)
		}
	}
	return bestX, bestF, nil
}
