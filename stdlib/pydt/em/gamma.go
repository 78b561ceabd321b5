package em

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Gamma is the Gamma distribution with shape Shape and rate Rate (mean
// Shape/Rate), the form of the priors and of the variational posteriors of
// the smoothness c and the precision 1/σ².
type Gamma struct {
	Shape, Rate float64
}

// Check returns an error unless shape and rate are positive and finite.
func (g Gamma) Check() error {
	if !(g.Shape > 0) || !(g.Rate > 0) || math.IsInf(g.Shape, 1) || math.IsInf(g.Rate, 1) {
		return fmt.Errorf("em: Gamma(shape %v, rate %v) needs a positive finite shape and rate", g.Shape, g.Rate)
	}
	return nil
}

// Mean returns E[x] = Shape/Rate.
func (g Gamma) Mean() float64 { return g.Shape / g.Rate }

// MeanLog returns E[log x] = ψ(Shape) - log Rate.
func (g Gamma) MeanLog() float64 { return mathext.Digamma(g.Shape) - math.Log(g.Rate) }

// LogProb returns the log density at x > 0 (-Inf for x <= 0, where
// distuv.Gamma would give +Inf or log Rate at x = 0).
func (g Gamma) LogProb(x float64) float64 {
	if !(x > 0) {
		return math.Inf(-1)
	}
	return distuv.Gamma{Alpha: g.Shape, Beta: g.Rate}.LogProb(x)
}

// KL returns the Kullback-Leibler divergence KL(g || p) = E_g[log g - log p].
func (g Gamma) KL(p Gamma) float64 {
	lga, _ := math.Lgamma(g.Shape)
	lgp, _ := math.Lgamma(p.Shape)
	return (g.Shape-p.Shape)*mathext.Digamma(g.Shape) - lga + lgp +
		p.Shape*(math.Log(g.Rate)-math.Log(p.Rate)) + g.Shape*(p.Rate-g.Rate)/g.Rate
}

// BetaDist is the Beta distribution with parameters A and B, the prior of
// the discount β.
type BetaDist struct {
	A, B float64
}

// Check returns an error unless A and B are positive and finite.
func (b BetaDist) Check() error {
	if !(b.A > 0) || !(b.B > 0) || math.IsInf(b.A, 1) || math.IsInf(b.B, 1) {
		return fmt.Errorf("em: Beta(%v, %v) needs positive finite parameters", b.A, b.B)
	}
	return nil
}

// LogProb returns the log density at x in [0, 1] (-Inf outside; at the
// ends, the limit).
func (b BetaDist) LogProb(x float64) float64 {
	if !(x >= 0 && x <= 1) {
		return math.Inf(-1)
	}
	lp := -mathext.Lbeta(b.A, b.B)
	if b.A != 1 {
		lp += (b.A - 1) * math.Log(x)
	}
	if b.B != 1 {
		lp += (b.B - 1) * math.Log1p(-x)
	}
	return lp
}
