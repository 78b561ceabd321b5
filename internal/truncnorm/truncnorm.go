// Package truncnorm draws from truncated normal distributions exactly, far
// into the tails. It is shared by the node types of package stdlib (the
// Probit augmentation) and the samplers of package inference/scalar, whose
// tests (truncnorm_test.go: moments, far tails, Kolmogorov-Smirnov,
// allocations, preconditions) exercise it through scalar's wrappers.
package truncnorm

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// robertThreshold is the standardised truncation point below which plain
// normal rejection beats Robert's exponential proposal: at a = 0.257 both need
// about 2.5 draws per sample (one normal per try, acceptance 1 − Φ(a), against
// two exponentials per try, acceptance about 0.8).
const robertThreshold = 0.257

// NormalAbove draws X ~ Normal(mu, sd²) conditioned on X > lo, exactly.
//
// With a = (lo − mu)/sd the standardised truncation point, a draw needs on
// average at most about 2.5 standard normal or exponential variates for every
// a: below a = 0.257 it proposes from the untruncated normal and keeps draws
// above lo; above, it uses the exponential proposal with the optimal rate
// λ = (a + √(a² + 4))/2 of Robert (1995), "Simulation of truncated normal
// variables", Statistics and Computing 5, whose acceptance probability tends
// to 1 far in the tail. In the tail X is formed as lo + sd·(excess over a),
// so it keeps full precision however far lo is from mu, and the result is
// always strictly greater than lo.
//
// sd must be positive and finite and lo < +Inf, mu finite (programmer
// errors, which panic); lo = −Inf gives an untruncated normal draw.
// NormalAbove allocates nothing.
func NormalAbove(rng *rand.Rand, mu, sd, lo float64) float64 {
	if !(sd > 0) || math.IsInf(sd, 1) || math.IsNaN(mu) || math.IsInf(mu, 0) || math.IsNaN(lo) || math.IsInf(lo, 1) {
		panic(fmt.Sprintf("truncnorm: NormalAbove(mu=%v, sd=%v, lo=%v): need finite mu, 0 < sd < Inf, lo < Inf", mu, sd, lo))
	}
	a := (lo - mu) / sd
	if a < robertThreshold {
		z := rng.NormFloat64()
		for !(z > a) {
			z = rng.NormFloat64()
		}
		return roundAbove(mu+sd*z, lo)
	}
	if math.IsInf(a, 1) {
		// lo is finite and sd positive, so (lo − mu)/sd overflowed: the
		// excess over lo is then of order sd/a, below the resolution of lo.
		return math.Nextafter(lo, math.Inf(1))
	}
	// λ − a = (√(a² + 4) − a)/2, written without cancellation.
	var gap float64
	if a < 1e150 {
		gap = 2 / (math.Sqrt(a*a+4) + a)
	} else {
		gap = 1 / a // a² would overflow; gap = 1/a to double precision
	}
	lambda := a + gap
	for {
		// Excess e = Z − a ~ Exponential(λ); accept with probability
		// exp(−(a + e − λ)²/2), by comparison with another exponential.
		e := rng.ExpFloat64() / lambda
		d := e - gap
		if d*d/2 <= rng.ExpFloat64() {
			return roundAbove(lo+sd*e, lo)
		}
	}
}

// roundAbove returns x, or the least float64 above lo when x has rounded down to
// lo or below: a draw in (lo, lo + ulp/2) is rounded up rather than to lo.
func roundAbove(x, lo float64) float64 {
	if x > lo {
		return x
	}
	return math.Nextafter(lo, math.Inf(1))
}

// NormalBelow draws X ~ Normal(mu, sd²) conditioned on X < hi, exactly; it is
// the mirror image of NormalAbove, with the same cost, precision and
// preconditions (hi > −Inf).
func NormalBelow(rng *rand.Rand, mu, sd, hi float64) float64 {
	return -NormalAbove(rng, -mu, sd, -hi)
}

// StdNormalTail draws Z ~ Normal(0, 1) conditioned on Z > a, exactly:
// NormalAbove(rng, 0, 1, a).
func StdNormalTail(rng *rand.Rand, a float64) float64 {
	return NormalAbove(rng, 0, 1, a)
}
