package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Beta is the node type Beta(a, b) on (0, 1).
type Beta struct{}

func init() { builtin(Beta{}) }

var betaParams = []Param{
	{Name: "a", Support: Positive, Default: 1, HasDefault: true, Doc: "first shape > 0"},
	{Name: "b", Support: Positive, Default: 1, HasDefault: true, Doc: "second shape > 0"},
}

// Name returns "Beta".
func (Beta) Name() string { return "Beta" }

// Doc describes the type.
func (Beta) Doc() string {
	return "Beta(a, b): density x^(a-1) (1-x)^(b-1) / B(a, b) on 0 < x < 1."
}

// Params are a and b.
func (Beta) Params() []Param { return betaParams }

// Support is (0, 1).
func (Beta) Support() Support { return Unit }

// CheckParams checks the parameters' supports.
func (t Beta) CheckParams(p []float64) error { return CheckSupports(t, p) }

// BetaPrior is the capability of a node type that is a Beta distribution
// (a prior for a probability, such as the PYDT's beta). BetaParams returns
// its two shapes given the parameters p (in Params order).
type BetaPrior interface {
	BetaParams(p []float64) (a, b float64)
}

// BetaParams returns the shapes a and b: Beta is a BetaPrior.
func (Beta) BetaParams(p []float64) (a, b float64) { return p[0], p[1] }

// LowerShapeParam returns 0: the density behaves as x^(a-1) near 0.
func (Beta) LowerShapeParam() int { return 0 }

// dist is the gonum distribution of the parameters; LogProb and Rand both
// read the parameters through it. src is nil for LogProb.
func (Beta) dist(p []float64, src rand.Source) distuv.Beta {
	return distuv.Beta{Alpha: p[0], Beta: p[1], Src: src}
}

// LogProb is the log density of x.
func (t Beta) LogProb(x float64, p []float64) float64 { return t.dist(p, nil).LogProb(x) }

// Rand draws a value.
func (t Beta) Rand(rng *rand.Rand, p []float64) float64 { return t.dist(p, rng).Rand() }
