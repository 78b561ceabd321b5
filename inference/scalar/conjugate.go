package scalar

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Gamma is a Gamma distribution in shape-rate form, with density
// b^a x^(a−1) e^(−b x) / Γ(a) on x > 0: the conjugate prior and posterior of
// the divergence scale c and of the precision 1/σ².
type Gamma struct {
	Shape float64 // a > 0
	Rate  float64 // b > 0
}

// Validate reports an error unless Shape and Rate are positive and finite.
func (g Gamma) Validate() error {
	if !(g.Shape > 0) || math.IsInf(g.Shape, 1) || !(g.Rate > 0) || math.IsInf(g.Rate, 1) {
		return fmt.Errorf("scalar: Gamma{Shape: %v, Rate: %v} needs a positive, finite shape and rate", g.Shape, g.Rate)
	}
	return nil
}

// Mean returns a/b.
func (g Gamma) Mean() float64 { return g.Shape / g.Rate }

// Variance returns a/b².
func (g Gamma) Variance() float64 { return g.Shape / (g.Rate * g.Rate) }

// Rand draws from the distribution with gonum's distuv.Gamma, using rng as
// its source. g must be valid.
func (g Gamma) Rand(rng *rand.Rand) float64 {
	return distuv.Gamma{Alpha: g.Shape, Beta: g.Rate, Src: rng}.Rand()
}

// PosteriorC returns the Gibbs conditional of the scale c of the divergence
// function a(t) = c/(1−t) under a Gamma(a_c, b_c) prior:
//
//	Gamma(a_c + |I|, b_c + S),  S = Σ_{i∈I} J_i · (−log(1 − t_i)),
//
// where I is the set of internal nodes (branch points), t_i their divergence
// times and J_i = J^{α,β}_{n^i} their harmonic-number coefficients. This is
// Equation (updatec) of Knowles & Ghahramani (2011) with its sign corrected
// (NOTES.md, erratum 2): each node contributes the density
// c (1−t_i)^(c J_i − 1), whose c-dependent part is c · exp(−c J_i (−log(1−t_i))).
//
// The same update holds for any divergence function linear in its scale,
// a(t) = c·g(t), with −log(1−t) replaced by the cumulative hazard
// G(t) = ∫_0^t g: for a(t) = c/(1−t)² that is 1/(1−t) − 1.
//
// internal is |I| ≥ 0 and s is S ≥ 0 (finite); other values are an error,
// as is an invalid prior.
func PosteriorC(prior Gamma, internal int, s float64) (Gamma, error) {
	return gammaUpdate("PosteriorC", prior, internal, "internal nodes", 1, s, "S = Σ J_i (−log(1−t_i))")
}

// SampleC draws c from PosteriorC(prior, internal, s).
func SampleC(rng *rand.Rand, prior Gamma, internal int, s float64) (float64, error) {
	post, err := PosteriorC(prior, internal, s)
	if err != nil {
		return 0, err
	}
	return post.Rand(rng), nil
}

// PosteriorPrecision returns the Gibbs conditional of the precision 1/σ² of
// the diffusion under a Gamma(a, b) prior (NOTES.md, erratum 3):
//
//	Gamma(a + n/2, b + ss),  ss = Σ_{edges [p v], dims d} (x_{v,d} − x_{p,d})² / (2 (t_v − t_p)),
//
// where n counts the (edge, dimension) terms of ss, the edge from the origin
// (x = 0, t = 0) to the first branch point included. These are the
// statistics that bp.Model.SuffStats returns; note that ss already holds the
// factor 1/2.
//
// n ≥ 0 and ss ≥ 0 (finite) are required, as is a valid prior.
func PosteriorPrecision(prior Gamma, n int, ss float64) (Gamma, error) {
	return gammaUpdate("PosteriorPrecision", prior, n, "terms", 0.5, ss, "ss")
}

// gammaUpdate returns Gamma(a + perCount·count, b + stat) for the prior
// Gamma(a, b) after checking the prior, count ≥ 0 and a finite stat ≥ 0; the
// errors name the function fn, the counted things and the statistic.
func gammaUpdate(fn string, prior Gamma, count int, counted string, perCount, stat float64, statName string) (Gamma, error) {
	if err := prior.Validate(); err != nil {
		return Gamma{}, fmt.Errorf("scalar: %s prior: %w", fn, err)
	}
	if count < 0 {
		return Gamma{}, fmt.Errorf("scalar: %s: negative number of %s %d", fn, counted, count)
	}
	if !(stat >= 0) || math.IsInf(stat, 1) {
		return Gamma{}, fmt.Errorf("scalar: %s: the statistic %s must be finite and non-negative, got %v", fn, statName, stat)
	}
	return Gamma{Shape: prior.Shape + perCount*float64(count), Rate: prior.Rate + stat}, nil
}

// SamplePrecision draws 1/σ² from PosteriorPrecision(prior, n, ss).
func SamplePrecision(rng *rand.Rand, prior Gamma, n int, ss float64) (float64, error) {
	post, err := PosteriorPrecision(prior, n, ss)
	if err != nil {
		return 0, err
	}
	return post.Rand(rng), nil
}
