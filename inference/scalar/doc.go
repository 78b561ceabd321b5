// Package scalar holds generic samplers for one real-valued parameter at a
// time, the building blocks of pydtlang's Gibbs sweeps over hyperparameters
// and auxiliary variables:
//
//   - [Slice]: univariate slice sampling with stepping out and shrinkage
//     (Neal 2003, "Slice sampling", Annals of Statistics 31(3)), for any log
//     density known up to a constant, with a [Tuner] that adapts the initial
//     width during burn-in. It samples the density restricted to where it is
//     finite: NaN and +Inf are outside every slice, and a start where the
//     density is not finite is reported by [Slice.Update] ([ErrNotFinite]),
//     never by a panic.
//   - [Transform]: maps a constrained parameter (positive, in (0, 1), bounded
//     below, ...) to the real line, so that [Slice.SampleTransformed] samples
//     it there with the log-Jacobian added to the density.
//   - Conjugate Gibbs updates as pure functions of sufficient statistics:
//     [PosteriorC] for the scale c of the divergence function a(t) = c/(1-t)
//     and [PosteriorPrecision] for 1/σ², both returning a [Gamma].
//   - Truncated normal draws, exact far into the tails: [NormalAbove],
//     [NormalBelow] and [StdNormalTail], what the probit augmentation needs.
//
// Every sampler takes its *rand.Rand (math/rand/v2) explicitly and, apart
// from the Gamma draws of gonum, allocates nothing.
package scalar
