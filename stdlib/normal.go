package stdlib

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Normal is the node type Normal(mean, sd): the Gaussian with standard
// deviation sd.
type Normal struct{}

func init() { builtin(Normal{}) }

var normalParams = []Param{
	{Name: "mean", Support: Real, Default: 0, HasDefault: true, Doc: "mean"},
	{Name: "sd", Support: Positive, Default: 1, HasDefault: true, Doc: "standard deviation > 0"},
}

// Name returns "Normal".
func (Normal) Name() string { return "Normal" }

// Doc describes the type.
func (Normal) Doc() string {
	return "Normal(mean, sd): the Gaussian with standard deviation sd (not variance, not precision)."
}

// Params are mean and sd.
func (Normal) Params() []Param { return normalParams }

// Support is the real line.
func (Normal) Support() Support { return Real }

// CheckParams checks the parameters' supports.
func (t Normal) CheckParams(p []float64) error { return CheckSupports(t, p) }

// dist is the gonum distribution of the parameters; LogProb and Rand both
// read the parameters through it. src is nil for LogProb.
func (Normal) dist(p []float64, src rand.Source) distuv.Normal {
	return distuv.Normal{Mu: p[0], Sigma: p[1], Src: src}
}

// LogProb is the log density of x.
func (t Normal) LogProb(x float64, p []float64) float64 { return t.dist(p, nil).LogProb(x) }

// Rand draws a value.
func (t Normal) Rand(rng *rand.Rand, p []float64) float64 { return t.dist(p, rng).Rand() }

// LeafGaussian implements GaussianLeaf: Normal(z, sd) observes the location
// z with precision 1/sd².
func (Normal) LeafGaussian(y float64, p []float64) (mean, prec float64, err error) {
	sd := p[1]
	if !(sd > 0) || math.IsInf(sd, 1) {
		return 0, 0, fmt.Errorf("sd = %v must be positive and finite", sd)
	}
	return y, 1 / (sd * sd), nil
}

// NoiseSD implements NoiseLeaf: sd, the second parameter, is the noise
// level.
func (Normal) NoiseSD() int { return 1 }
