package stdlib

import "math/rand/v2"

// Leaf evidence: how a likelihood reaches the PYDT's leaves.
//
// The engine integrates the tree's internal locations out by belief
// propagation (package bp), which takes Gaussian evidence N(mean, 1/prec)
// about each leaf location z = Z[i, d]. A scalar node type whose first
// parameter is that location ("Y[i, d] ~ T(Z[i, d], ...)") offers one of
// the capabilities below, found by type assertion; the engine knows no
// likelihood by name. The parameters p passed to the methods are the
// factor's, in Params order and already checked, with p[0] = z (the value
// of the location there is not used where z is an argument).

// GaussianLeaf is a likelihood whose density is exactly Gaussian in the
// location z: y's factor gives the leaf Gaussian evidence (mean, prec), prec
// 0 meaning no evidence and +Inf an exact observation, and its log density
// is that of N(y; z, 1/prec), so that belief propagation's marginal
// likelihood is the data's. An error says why p gives no evidence (e.g. a
// non-positive sd).
type GaussianLeaf interface {
	LeafGaussian(y float64, p []float64) (mean, prec float64, err error)
}

// NoiseLeaf is a GaussianLeaf that adds Gaussian noise of standard
// deviation p[NoiseSD()] to the location: its evidence precision is
// 1/p[NoiseSD()]² whatever y. The engine's check of improper posteriors
// (duplicated rows) reads the noise level's prior through it.
type NoiseLeaf interface {
	GaussianLeaf
	NoiseSD() int
}

// AugmentedLeaf is a likelihood that is a mixture (or augmentation) of
// Gaussians in z: given an auxiliary variable u the leaf gets Gaussian
// evidence AuxEvidence(y, u, p), and p(y | z) = ∫ p(y, u | z) du with
// p(y, u | z) ∝ N(evidence mean; z, 1/evidence prec) × a factor free of z.
// The engine alternates DrawAux, a draw of u from its conditional given y
// and the location z, with updates of the tree given the evidence.
type AugmentedLeaf interface {
	DrawAux(rng *rand.Rand, y, z float64, p []float64) float64
	AuxEvidence(y, u float64, p []float64) (mean, prec float64)
}

// AuxLogProber is an AugmentedLeaf whose parameters (other than the
// location) the engine can update: with (mean, prec) = AuxEvidence(y, u,
// p), the augmented density factors as
//
//	p(y, u | z, p) = N(mean; z, 1/prec) × exp(AuxLogProb(y, u, p)),
//
// so AuxLogProb is the log of the factor free of z (for a scale mixture,
// the auxiliary's own density given the parameters). A latent parameter
// of the likelihood is then updated with u fixed and the locations
// integrated out: its conditional is its prior times belief propagation's
// marginal likelihood of the evidence times exp(Σ AuxLogProb).
type AuxLogProber interface {
	AugmentedLeaf
	AuxLogProb(y, u float64, p []float64) float64
}

// ThresholdLeaf is an AugmentedLeaf whose data record on which side of 0
// its auxiliary falls: u = z + ε with ε ~ Normal(0, 1), so AuxEvidence(y, u)
// is (u, 1), and y says only that u > 0 (Side(y) = +1) or u < 0
// (Side(y) = -1), so P(y | z) = Φ(Side(y)·z). Scaling every u by g > 0
// keeps every y: the engine's parameter-expanded scale moves (Liu & Wu's
// PX-DA) and the binary posterior predictive (package predict) rely on
// exactly this. Probit offers it.
type ThresholdLeaf interface {
	AugmentedLeaf
	Side(y float64) float64
}

// The standard likelihoods' leaf capabilities.
var (
	_ NoiseLeaf     = Normal{}
	_ ThresholdLeaf = Probit{}
	_ AuxLogProber  = StudentT{}
)
