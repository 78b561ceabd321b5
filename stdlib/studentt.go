package stdlib

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// StudentT is the node type StudentT(location, scale, nu): Student's t
// distribution with nu degrees of freedom, shifted by location and scaled
// by scale. Its tails are polynomial, so a few outlying values pull its
// location far less than they pull a Normal's: as a likelihood at the
// PYDT's leaves (X ~ StudentT(Z, s, nu)) it gives robust clustering.
//
// It is a scale mixture of Normals: with λ ~ Gamma(nu/2, rate nu/2),
// y | λ ~ Normal(location, scale/√λ). StudentT is an AugmentedLeaf with λ
// as the auxiliary variable: given y and the location z, λ ~ Gamma((nu+1)/2,
// rate (nu + ((y−z)/scale)²)/2), and the leaf gets the Gaussian evidence
// N(y; z, scale²/λ).
type StudentT struct{}

func init() { builtin(StudentT{}) }

var studentTParams = []Param{
	{Name: "location", Support: Real, Default: 0, HasDefault: true, Doc: "location (the median)"},
	{Name: "scale", Support: Positive, Default: 1, HasDefault: true, Doc: "scale > 0 (not the sd: the sd is scale·sqrt(nu/(nu-2)) for nu > 2)"},
	{Name: "nu", Support: Positive, Doc: "degrees of freedom > 0; nu → ∞ gives Normal(location, scale)"},
}

// Name returns "StudentT".
func (StudentT) Name() string { return "StudentT" }

// Doc describes the type.
func (StudentT) Doc() string {
	return "StudentT(location, scale, nu): Student's t with nu degrees of freedom, heavy-tailed; a scale mixture of Normals, " +
		"so as a likelihood at the PYDT's leaves samplers add each value's Gamma precision scale λ (robust clustering)."
}

// Params are location, scale and nu.
func (StudentT) Params() []Param { return studentTParams }

// Support is the real line.
func (StudentT) Support() Support { return Real }

// CheckParams checks the parameters' supports.
func (t StudentT) CheckParams(p []float64) error { return CheckSupports(t, p) }

// dist is the distribution of y; density and sampler both read the
// parameters through it.
func (StudentT) dist(p []float64, src rand.Source) distuv.StudentsT {
	return distuv.StudentsT{Mu: p[0], Sigma: p[1], Nu: p[2], Src: src}
}

// LogProb is the log density of y (gonum's distuv.StudentsT).
func (t StudentT) LogProb(y float64, p []float64) float64 { return t.dist(p, nil).LogProb(y) }

// Rand draws y (gonum's distuv.StudentsT: a Normal divided by the square
// root of an independent scaled chi-squared).
func (t StudentT) Rand(rng *rand.Rand, p []float64) float64 { return t.dist(p, rng).Rand() }

// DrawAux implements AugmentedLeaf: the precision scale λ of y given y and
// the location z, λ ~ Gamma((ν+1)/2, rate (ν + ((y−z)/s)²)/2).
func (StudentT) DrawAux(rng *rand.Rand, y, z float64, p []float64) float64 {
	s, nu := p[1], p[2]
	r := (y - z) / s
	return distuv.Gamma{Alpha: (nu + 1) / 2, Beta: (nu + r*r) / 2, Src: rng}.Rand()
}

// AuxEvidence implements AugmentedLeaf: given λ, y observes the location
// with precision λ/s².
func (StudentT) AuxEvidence(y, lambda float64, p []float64) (mean, prec float64) {
	s := p[1]
	return y, lambda / (s * s)
}

// AuxLogProb implements AuxLogProber: the log density of the precision
// scale λ given ν, Gamma(λ; ν/2, rate ν/2); the rest of p(y, λ | z) is the
// evidence's N(y; z, s²/λ). With it the engine updates a latent scale s
// or ν.
func (StudentT) AuxLogProb(y, lambda float64, p []float64) float64 {
	nu := p[2]
	return distuv.Gamma{Alpha: nu / 2, Beta: nu / 2}.LogProb(lambda)
}
