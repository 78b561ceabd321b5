package stdlib

import (
	"fmt"
	"math"
)

// TiltedLeaf is a leaf likelihood p(y | z) whose product with a Gaussian in
// the location z has closed-form moments: what expectation propagation
// (package stdlib/pydt/em) needs to approximate it by Gaussian leaf
// evidence, for EM and for an approximate marginal likelihood given a tree
// (pydtlang score). Tilted returns log ∫ N(z; m, v) p(y | z) dz and the
// mean and variance of the normalised product, for v > 0; p are the
// factor's parameters as for the other leaf capabilities (p[0], the
// location, is not used).
type TiltedLeaf interface {
	Tilted(y, m, v float64, p []float64) (logZ, mean, variance float64, err error)
}

var _ TiltedLeaf = Probit{}

const log2Pi = 1.8378770664093454835606594728112352797227949472755668

// Tilted returns the moments of N(z; m, v) Φ(±z), + for y = 1 and - for
// y = 0 (Rasmussen & Williams 2006, Section 3.6.1): with q = ±m/√(1+v) and
// r = φ(q)/Φ(q), log Z = log Φ(q), mean m ± v r/√(1+v), variance
// v - v² r (q + r)/(1+v). It returns an error unless y is 0 or 1 and the
// cavity N(m, v) is proper.
func (Probit) Tilted(y, m, v float64, _ []float64) (logZ, mean, variance float64, err error) {
	var sign float64
	switch y {
	case 1:
		sign = 1
	case 0:
		sign = -1
	default:
		return 0, 0, 0, fmt.Errorf("probit observation %v is not 0 or 1", y)
	}
	if !(v > 0) || math.IsInf(v, 1) || math.IsNaN(m) || math.IsInf(m, 0) {
		return 0, 0, 0, fmt.Errorf("probit site: cavity N(%v, %v) is not proper", m, v)
	}
	sq := math.Sqrt(1 + v)
	q := sign * m / sq
	logZ = LogNormCDF(q)
	r := math.Exp(-0.5*q*q - 0.5*log2Pi - logZ)
	mean = m + sign*v*r/sq
	// λ = r (q + r) lies in (0, 1) (log-concavity of Φ); far in the lower
	// tail q + r loses digits, so keep λ there.
	lam := r * (q + r)
	if !(lam > 0) {
		lam = 0
	}
	if lam >= 1 {
		lam = 1 - 1e-12
	}
	variance = v - v*v*lam/(1+v)
	return logZ, mean, variance, nil
}
