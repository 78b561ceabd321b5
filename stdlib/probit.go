package stdlib

import (
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/internal/truncnorm"
)

// Probit is the node type Probit(z): a binary y that is 1 when z + ε > 0,
// ε ~ Normal(0, 1), so P(y = 1) = Φ(z).
type Probit struct{}

func init() { builtin(Probit{}) }

var probitParams = []Param{
	{Name: "z", Support: Real, Doc: "latent location"},
}

// Name returns "Probit".
func (Probit) Name() string { return "Probit" }

// Doc describes the type.
func (Probit) Doc() string {
	return "Probit(z): a binary y that is 1 when z + ε > 0, ε ~ Normal(0, 1), so P(y = 1) = Φ(z). " +
		"Samplers add the auxiliary z + ε, whose truncated-normal conditional gives the tree Gaussian evidence."
}

// Params is the location z.
func (Probit) Params() []Param { return probitParams }

// Support is {0, 1}.
func (Probit) Support() Support { return Binary }

// CheckParams checks the parameter's support.
func (t Probit) CheckParams(p []float64) error { return CheckSupports(t, p) }

// LogProb is the log mass of y: log Φ(z) for 1, log Φ(-z) for 0.
func (Probit) LogProb(y float64, p []float64) float64 {
	if y == 1 {
		return LogNormCDF(p[0])
	}
	return LogNormCDF(-p[0])
}

// Rand draws y.
func (Probit) Rand(rng *rand.Rand, p []float64) float64 {
	if p[0]+rng.NormFloat64() > 0 {
		return 1
	}
	return 0
}

// DrawAux implements AugmentedLeaf with the augmentation of Albert & Chib
// (1993): u ~ Normal(z, 1) truncated to u > 0 when y = 1 and u < 0 when
// y = 0.
func (Probit) DrawAux(rng *rand.Rand, y, z float64, _ []float64) float64 {
	if y == 1 {
		return truncnorm.NormalAbove(rng, z, 1, 0)
	}
	return truncnorm.NormalBelow(rng, z, 1, 0)
}

// AuxEvidence implements AugmentedLeaf: u = z + ε observes z with unit
// precision.
func (Probit) AuxEvidence(_, u float64, _ []float64) (mean, prec float64) { return u, 1 }

// Side implements ThresholdLeaf: y = 1 says u > 0, y = 0 says u < 0.
func (Probit) Side(y float64) float64 { return 2*y - 1 }

// LogNormCDF returns log Φ(z), the log of the standard normal distribution
// function, accurate far into both tails.
func LogNormCDF(z float64) float64 {
	if z > 0 {
		return math.Log1p(-0.5 * math.Erfc(z/math.Sqrt2))
	}
	// Φ(z) = erfc(-z/√2)/2 underflows below z ≈ -38; use the asymptotic
	// series of the Mills ratio there.
	if z > -37 {
		return math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
	}
	z2 := z * z
	series := 1 - 1/z2 + 3/(z2*z2) - 15/(z2*z2*z2)
	return -0.5*z2 - math.Log(-z) - 0.5*math.Log(2*math.Pi) + math.Log(series)
}
