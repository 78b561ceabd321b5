// Package diagnostics computes MCMC convergence diagnostics and posterior
// summaries that agree with R's posterior package (summarise_draws) and,
// outside the edge cases noted below, with ArviZ.
//
// The methods are those of Vehtari, Gelman, Simpson, Carpenter & Bürkner
// (2021), "Rank-normalization, folding, and localization: an improved R-hat
// for assessing convergence of MCMC", Bayesian Analysis 16(2), 667–718.
// Every function takes the draws of one scalar as chains[c][i], draw i of
// chain c.
//
// # Preparation of the draws
//
// Chains of different lengths are truncated to the length L of the shortest
// chain (the first L draws of each are kept); an empty chain therefore makes
// every statistic undefined. All statistics, including the mean, sd and
// quantiles, use the same truncated m×L draws, and Summary.N = m·L.
//
// Splitting: each chain is cut into a first and a second half of
// floor(L/2) draws each; for odd L the middle draw is dropped (as
// posterior's .split_chains and ArviZ's _split_chains do). A single chain is
// split like any other, so it yields two split chains.
//
// Rank normalisation (z-scale): all S split draws are ranked jointly, ties
// get their average rank r, and each draw is replaced by
// Φ⁻¹((r − 3/8)/(S + 1/4)) (Blom's offset, paper eq. 14).
//
// Folding: f = |x − median(x)|, with the median of all m·L truncated draws,
// before splitting.
//
// # R-hat
//
// The classic split R-hat of m' split chains of n draws (ClassicSplitRhat,
// posterior::rhat_basic) is
//
//	B = n·var(chain means), W = mean(chain variances)  (both with divisor k−1)
//	R = sqrt((B/W + n − 1)/n) = sqrt(var⁺/W),  var⁺ = (n−1)/n·W + B/n.
//
// RhatBulk is the classic split R-hat of the rank-normalised split draws,
// RhatTail the same of the rank-normalised folded split draws, and
// SplitRhat (the value reported in Summary.Rhat) is max(RhatBulk,
// RhatTail), exactly as posterior::rhat; it is NaN if either is NaN.
// R-hat is NaN when the split chains have fewer than 2 draws (L < 4), when
// any input is NaN, or when the transformed draws are constant (range below
// machine epsilon, as posterior's is_constant). If every split chain is
// constant but they differ, W = 0 and the classic and bulk R-hats are +Inf.
// ±Inf draws are allowed where posterior allows them: they only enter
// through their ranks.
//
// # Effective sample size
//
// For split chains y_c (c = 1..m', n draws each) the autocovariances are the
// biased estimates γ_c(t) = (1/n) Σ_{i<n−t} (y_ci − ȳ_c)(y_c,i+t − ȳ_c),
// computed with gonum's real FFT on the centred chain zero-padded to twice
// the next 2-3-5-smooth size ≥ n. With W = mean_c γ_c(0)·n/(n−1) and
// var⁺ = W·(n−1)/n + var(ȳ_c), ρ̂(t) = 1 − (W − mean_c γ_c(t))/var⁺.
// Geyer's initial positive sequence sums pairs ρ̂(2k)+ρ̂(2k+1) while positive,
// the initial monotone sequence then caps each pair by the previous one, and
// τ̂ = −1 + 2 Σ_{t<T} ρ̂(t) + ρ̂⁺(T), where T is the first even lag whose pair
// is not positive and ρ̂⁺(T) = max(ρ̂(T), 0) (the "improved" estimate).
// τ̂ is bounded below by 1/log10(m'n), so ESS = m'n/τ̂ ≤ m'n·log10(m'n).
// This transcribes posterior's .ess line by line, including one R indexing
// quirk: when T = 0 (only possible for n ≤ 5, i.e. L ≤ 11) posterior's
// sum(rho[1:0]) is ρ̂(0) = 1, so τ̂ = 2; ArviZ gives ESS = m'n·log10(m'n)
// instead. ESS is NaN when the split chains have fewer than 3 draws (L < 6),
// when any input is NaN, or when the (transformed) draws are constant.
//
// ESSBulk is the ESS of the rank-normalised split draws. ESSQuantile(p) is
// the ESS of the split indicator draws I(x ≤ q_p), with q_p the type-7
// quantile of all draws; it is NaN if any draw is ±Inf or NaN or the draws
// are constant. ESSTail = min(ESSQuantile(0.05), ESSQuantile(0.95)).
// ESSMean is the ESS of the raw split draws (posterior::ess_mean).
//
// # Quantiles
//
// Quantile uses R's default definition (type 7, Hyndman & Fan 1996; also
// NumPy's default "linear"): for sorted x_1..x_N and h = 1 + (N−1)p,
// Q(p) = x_⌊h⌋ + (h − ⌊h⌋)(x_⌊h⌋+1 − x_⌊h⌋), evaluated as R does,
// (1−g)·x_lo + g·x_hi, and only when x_hi ≠ x_lo.
//
// # Agreement with posterior and ArviZ
//
// testdata/posterior holds draws and the values R's posterior 1.4.0 computes
// for them (reference.R regenerates them); every statistic above agrees to
// about 1e-14, the NaN cases included. ArviZ implements the same algorithms
// but, reading its source (not run here), differs from posterior in three
// corners: for split chains of at most 5 draws its ESS is m'n·log10(m'n)
// rather than m'n/2; its positive-sequence loop may take one more pair near
// the end of odd-length split chains (only reachable when the
// autocorrelations stay positive across the whole chain); and it folds
// around the median of the split draws, which for odd L excludes the middle
// draws, so the tail R-hat can differ slightly for odd chain lengths.
//
// # NaN and JSON
//
// Undefined results are NaN in Go. JSON has no NaN or Inf, so Summary's
// MarshalJSON writes null for any non-finite field, and UnmarshalJSON reads
// null back as NaN.
package diagnostics
