package stdlib

// Reach says how a positive quantity θ (a precision, a rate) is written in
// one parameter of a node type: the parameter is θ, 1/θ or 1/sqrt(θ). A
// model writes, e.g., Normal(mu, 1 / sqrt(tau)) for a Normal with
// precision tau: the sd parameter reaches tau as ReachInvSqrt.
type Reach int

// The ways a parameter is written in θ.
const (
	// ReachSelf: the parameter is θ.
	ReachSelf Reach = iota
	// ReachInverse: the parameter is 1/θ.
	ReachInverse
	// ReachInvSqrt: the parameter is 1/sqrt(θ).
	ReachInvSqrt
)

var reachNames = [...]string{"θ", "1/θ", "1/sqrt(θ)"}

// String writes the parameter as a function of θ.
func (r Reach) String() string {
	if r < 0 || int(r) >= len(reachNames) {
		return "?"
	}
	return reachNames[r]
}

// GammaConjugate is the capability of a scalar node type whose log density
// of a value x, as a function of a positive quantity θ that parameter k is
// written in (as r says), has the form
//
//	a·log θ − b·θ + (terms free of θ)
//
// so that a Gamma prior on θ (a GammaPrior) is conjugate: given the values
// x_j of the factors that read θ, its conditional is Gamma(shape + Σ a_j,
// rate + Σ b_j). GammaStats returns (a, b) for one value x given the
// parameters p (in Params order, already checked; p[k] is the parameter's
// current value, from which the type recovers nothing it needs: the
// statistics depend on x and the other parameters only). ok is false when
// parameter k written as r is not conjugate in this sense; it depends on k
// and r only, so the engine asks once, when it builds the schedule.
//
// Normal has it for its sd written as 1/sqrt(θ) (θ the precision: a = 1/2,
// b = (x − mean)²/2); Gamma for its rate written as θ (a = shape, b = x).
type GammaConjugate interface {
	GammaStats(k int, r Reach, x float64, p []float64) (a, b float64, ok bool)
}

// GammaStats makes Normal a GammaConjugate in its precision: with
// sd = 1/sqrt(θ), log N(x; mean, sd) = ½ log θ − θ (x − mean)²/2 + const.
func (Normal) GammaStats(k int, r Reach, x float64, p []float64) (a, b float64, ok bool) {
	if k != 1 || r != ReachInvSqrt {
		return 0, 0, false
	}
	d := x - p[0]
	return 0.5, 0.5 * d * d, true
}

// GammaStats makes Gamma a GammaConjugate in its rate: log Gamma(x; shape,
// θ) = shape·log θ − θ x + const.
func (Gamma) GammaStats(k int, r Reach, x float64, p []float64) (a, b float64, ok bool) {
	if k != 1 || r != ReachSelf {
		return 0, 0, false
	}
	return p[0], x, true
}
