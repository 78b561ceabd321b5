package scalar

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib"
)

// kind enumerates the transforms.
type kind uint8

const (
	identity kind = iota // x = z
	above                // x = lo + exp(z)
	below                // x = hi − exp(z)
	between              // x = lo + (hi − lo) σ(z)
)

// Transform is a smooth bijection from the real line onto an open interval,
// x = FromReal(z), used to sample a constrained parameter x on the
// unconstrained scale z. Its zero value is the identity on (−∞, ∞).
//
// A boundary point of the interval (a discount of exactly 0, say) is not in
// the image; under a continuous prior it has probability zero, so the open
// interval loses nothing.
type Transform struct {
	kind   kind
	lo, hi float64
}

// Identity returns the identity transform of the real line.
func Identity() Transform { return Transform{kind: identity, lo: math.Inf(-1), hi: math.Inf(1)} }

// Above returns the shifted-log transform onto (lo, ∞): x = lo + exp(z), with
// log|dx/dz| = z. Above(0) is the log transform of a positive parameter; a
// lower bound that depends on another parameter (alpha > −2·beta for the
// Pitman-Yor concentration) takes the current value of that parameter as lo.
// lo must be finite.
func Above(lo float64) Transform {
	if math.IsNaN(lo) || math.IsInf(lo, 0) {
		panic(fmt.Sprintf("scalar: Above(%v): the bound must be finite", lo))
	}
	return Transform{kind: above, lo: lo, hi: math.Inf(1)}
}

// Below returns the shifted-log transform onto (−∞, hi): x = hi − exp(z), with
// log|dx/dz| = z. hi must be finite.
func Below(hi float64) Transform {
	if math.IsNaN(hi) || math.IsInf(hi, 0) {
		panic(fmt.Sprintf("scalar: Below(%v): the bound must be finite", hi))
	}
	return Transform{kind: below, lo: math.Inf(-1), hi: hi}
}

// Between returns the scaled-logit transform onto (lo, hi):
// x = lo + (hi − lo) σ(z) with σ(z) = 1/(1 + e^−z), and
// log|dx/dz| = log(hi − lo) + log σ(z) + log σ(−z). Between(0, 1) is the
// logit transform of a probability or of the Pitman-Yor discount. lo < hi
// must both be finite.
func Between(lo, hi float64) Transform {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsInf(hi-lo, 0) {
		panic(fmt.Sprintf("scalar: Between(%v, %v): need finite lo < hi", lo, hi))
	}
	return Transform{kind: between, lo: lo, hi: hi}
}

// ForSupport returns the transform that samples a parameter with the given
// support on the real line: the identity for Real, log for Positive and
// NonNegative, logit for Unit and UnitLeft (0 has probability zero under a
// continuous prior, so [0, 1) and (0, 1) are sampled alike). Discrete
// supports have no transform and give an error.
func ForSupport(s stdlib.Support) (Transform, error) {
	switch s {
	case stdlib.Real:
		return Identity(), nil
	case stdlib.Positive, stdlib.NonNegative:
		return Above(0), nil
	case stdlib.Unit, stdlib.UnitLeft:
		return Between(0, 1), nil
	}
	return Transform{}, fmt.Errorf("scalar: no continuous transform for support %v", s)
}

// Lo returns the lower end of the open interval onto which t maps (−Inf if
// unbounded below).
func (t Transform) Lo() float64 {
	if t.kind == identity {
		return math.Inf(-1)
	}
	return t.lo
}

// Hi returns the upper end of the open interval onto which t maps (+Inf if
// unbounded above).
func (t Transform) Hi() float64 {
	if t.kind == identity {
		return math.Inf(1)
	}
	return t.hi
}

// Contains reports whether x lies in the open interval onto which t maps.
func (t Transform) Contains(x float64) bool {
	switch t.kind {
	case identity:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case above:
		return x > t.lo && !math.IsInf(x, 1)
	case below:
		return x < t.hi && !math.IsInf(x, -1)
	}
	return x > t.lo && x < t.hi
}

// ToReal returns z with FromReal(z) = x. Points outside the interval give
// NaN, its ends ±Inf.
func (t Transform) ToReal(x float64) float64 {
	switch t.kind {
	case identity:
		return x
	case above:
		return math.Log(x - t.lo)
	case below:
		return math.Log(t.hi - x)
	}
	if t.lo == 0 && t.hi == 1 {
		return math.Log(x) - math.Log1p(-x)
	}
	p := (x - t.lo) / (t.hi - t.lo)
	return math.Log(p) - math.Log1p(-p)
}

// FromReal returns x = t(z). The result may round onto an end of the
// interval when z is far out; Contains tells.
func (t Transform) FromReal(z float64) float64 {
	switch t.kind {
	case identity:
		return z
	case above:
		return t.lo + math.Exp(z)
	case below:
		return t.hi - math.Exp(z)
	}
	return t.lo + (t.hi-t.lo)*sigmoid(z)
}

// LogJacobian returns log|dx/dz| at z, the term added to the log density of x
// to get the log density of z.
func (t Transform) LogJacobian(z float64) float64 {
	switch t.kind {
	case identity:
		return 0
	case above, below:
		return z
	}
	// log σ(z) + log σ(−z) = −|z| − 2 log(1 + e^−|z|).
	a := math.Abs(z)
	return math.Log(t.hi-t.lo) - a - 2*math.Log1p(math.Exp(-a))
}

// sigmoid returns 1/(1 + e^−z) without overflow and with full relative
// precision for negative z.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// startZ returns the starting point on the real line for x0. A point on the
// boundary of the interval (a discount of exactly 0) has no image; it is
// moved to the nearest point whose image lies inside. The transition kernel
// at a boundary point, a set of probability zero under the target, does not
// affect invariance, so this changes only the first update of a chain started
// there. Points outside the closed interval give NaN.
func (t Transform) startZ(x0 float64) float64 {
	z := t.ToReal(x0)
	if !math.IsInf(z, 0) {
		return z
	}
	// Walk x0 into the interior an ulp at a time, doubling the step.
	inward := t.hi
	if x0 == t.hi {
		inward = t.lo
	}
	if math.IsInf(inward, 0) {
		inward = math.Copysign(math.MaxFloat64, inward)
	}
	x := x0
	for range 64 {
		next := math.Nextafter(x, inward)
		x = x0 + 2*(next-x0)
		if x == x0 {
			x = next
		}
		if z = t.ToReal(x); !math.IsInf(z, 0) && t.Contains(t.FromReal(z)) {
			return z
		}
	}
	return math.NaN()
}

// SampleTransformed performs one slice-sampling update of a parameter x with
// unnormalised log density logDensity on the open interval of tr. It samples
// z = tr.ToReal(x) on the real line with log density
// logDensity(tr.FromReal(z)) + tr.LogJacobian(z), treating every z whose
// image rounds out of the interval as outside the support, and returns the
// new x and the number of evaluations of the log density of z, as Sample
// counts them.
//
// x0 must lie in the closed interval; a point on the boundary is first moved
// just inside (see Transform). Otherwise it is a programmer error and panics.
// As in Sample, a log density that is not finite at x0 leaves x0 unchanged
// (UpdateTransformed reports it), and NaN or +Inf elsewhere is outside the
// slice. When the update leaves z where it was, x0 is returned unchanged.
func (s Slice) SampleTransformed(rng *rand.Rand, x0 float64, tr Transform, logDensity func(float64) float64) (x float64, evals int) {
	if math.IsNaN(tr.startZ(x0)) {
		panic(fmt.Sprintf("scalar: SampleTransformed started at x0 = %v outside (%v, %v)", x0, tr.Lo(), tr.Hi()))
	}
	x, evals, _ = s.UpdateTransformed(rng, x0, tr, logDensity)
	return x, evals
}

// UpdateTransformed is SampleTransformed with errors instead of a panic or a
// silent no-op: for x0 outside the closed interval, and (wrapping
// ErrNotFinite) for a log density that is not finite at x0. x0 is then
// returned unchanged.
func (s Slice) UpdateTransformed(rng *rand.Rand, x0 float64, tr Transform, logDensity func(float64) float64) (x float64, evals int, err error) {
	z0 := tr.startZ(x0)
	if math.IsNaN(z0) {
		return x0, 0, fmt.Errorf("scalar: slice sampling from x0 = %v outside (%v, %v)", x0, tr.Lo(), tr.Hi())
	}
	first, f0 := true, 0.0
	z, evals, err := s.Update(rng, z0, func(z float64) float64 {
		x := tr.FromReal(z)
		if !tr.Contains(x) {
			return math.Inf(-1)
		}
		f := logDensity(x)
		if first {
			first, f0 = false, f
		}
		return f + tr.LogJacobian(z)
	})
	if errors.Is(err, ErrNotFinite) {
		return x0, evals, fmt.Errorf("scalar: slice sampling from x0 = %v: %w (%v)", x0, ErrNotFinite, f0)
	}
	if z == z0 && tr.Contains(x0) {
		return x0, evals, nil
	}
	return tr.FromReal(z), evals, nil
}
