package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Gamma is the node type Gamma(shape, rate), with mean shape/rate.
type Gamma struct{}

func init() { builtin(Gamma{}) }

var gammaParams = []Param{
	{Name: "shape", Support: Positive, Doc: "shape a > 0"},
	{Name: "rate", Support: Positive, Default: 1, HasDefault: true, Doc: "rate b > 0 (not scale)"},
}

// GammaPrior is the capability of a node type that is a Gamma
// distribution: a conjugate prior for a precision-like parameter.
// GammaParams returns its shape and rate given the parameters p (in Params
// order).
type GammaPrior interface {
	GammaParams(p []float64) (shape, rate float64)
}

// Name returns "Gamma".
func (Gamma) Name() string { return "Gamma" }

// Doc describes the type.
func (Gamma) Doc() string {
	return "Gamma(shape, rate): density x^(shape-1) e^(-rate x) rate^shape / Γ(shape) on x > 0; mean shape/rate."
}

// Params are shape and rate.
func (Gamma) Params() []Param { return gammaParams }

// Support is the positive reals.
func (Gamma) Support() Support { return Positive }

// CheckParams checks the parameters' supports.
func (t Gamma) CheckParams(p []float64) error { return CheckSupports(t, p) }

// GammaParams returns the shape and rate: Gamma is a GammaPrior.
func (Gamma) GammaParams(p []float64) (shape, rate float64) { return p[0], p[1] }

// LowerShapeParam returns 0: the density behaves as x^(shape-1) near 0.
func (Gamma) LowerShapeParam() int { return 0 }

// dist is the gonum distribution of the parameters; LogProb and Rand both
// read the parameters through it. src is nil for LogProb.
func (Gamma) dist(p []float64, src rand.Source) distuv.Gamma {
	return distuv.Gamma{Alpha: p[0], Beta: p[1], Src: src}
}

// LogProb is the log density of x.
func (t Gamma) LogProb(x float64, p []float64) float64 { return t.dist(p, nil).LogProb(x) }

// Rand draws a value.
func (t Gamma) Rand(rng *rand.Rand, p []float64) float64 { return t.dist(p, rng).Rand() }
