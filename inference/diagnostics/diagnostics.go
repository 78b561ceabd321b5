package diagnostics

import (
	"math"
	"slices"
)

// SplitRhat returns the rank-normalised split R-hat reported by
// posterior::rhat: max(RhatBulk, RhatTail). It is NaN if either is NaN
// (see the package documentation for when that happens).
func SplitRhat(chains [][]float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	bulk, _, _, _ := w.rhatBulk(m, L)
	return maxNaN(bulk, w.rhatTail(m, L))
}

// RhatBulk returns the rank-normalised split R-hat: the classic split R-hat
// of the jointly rank-normalised split chains (paper eq. 14 and Sec. 4.1).
func RhatBulk(chains [][]float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	bulk, _, _, _ := w.rhatBulk(m, L)
	return bulk
}

// RhatTail returns the folded split R-hat: the rank-normalised split R-hat of
// |x − median(x)|, which detects chains that differ in scale or tails.
func RhatTail(chains [][]float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	return w.rhatTail(m, L)
}

// ClassicSplitRhat returns the textbook split R-hat (Gelman et al., BDA3,
// Sec. 11.4; posterior::rhat_basic with split = TRUE) of the untransformed
// draws, sqrt(((n−1)/n·W + B/n)/W) over the split chains. It is NaN for
// non-finite or constant draws and for split chains shorter than 2.
func ClassicSplitRhat(chains [][]float64) float64 {
	return onSplit(chains, (*workspace).rhat)
}

// ESSBulk returns the bulk effective sample size: the ESS of the jointly
// rank-normalised split chains, with autocorrelations by FFT and Geyer's
// initial monotone sequence (posterior::ess_bulk).
func ESSBulk(chains [][]float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	_, m2, n, ok := w.rhatBulk(m, L)
	if !ok {
		return math.NaN()
	}
	return w.ess(w.z, m2, n)
}

// ESSTail returns the tail effective sample size, the smaller of the ESS of
// the 5% and 95% quantiles (posterior::ess_tail).
func ESSTail(chains [][]float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	return minNaN(w.essQuantile(m, L, 0.05), w.essQuantile(m, L, 0.95))
}

// ESSQuantile returns the effective sample size for the p-quantile: the ESS
// of the split indicator chains I(x ≤ q_p), q_p the type-7 quantile of all
// draws (posterior::ess_quantile). It is NaN for p outside [0, 1].
func ESSQuantile(chains [][]float64, p float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	return w.essQuantile(m, L, p)
}

// ESSMean returns the effective sample size of the untransformed split
// chains, the ESS relevant to the posterior mean (posterior::ess_mean, or
// ess_basic with split = TRUE).
func ESSMean(chains [][]float64) float64 {
	return onSplit(chains, (*workspace).ess)
}

// onSplit returns f of the untransformed split chains, in a pooled
// workspace.
func onSplit(chains [][]float64, f func(w *workspace, x []float64, m2, n int) float64) float64 {
	w := getWorkspace()
	defer putWorkspace(w)
	m, L := w.load(chains)
	m2, n := w.splitInto(w.raw, m, L)
	return f(w, w.split, m2, n)
}

// Quantile returns the p-quantile of x by R's default definition (type 7).
// x need not be sorted and is not modified. The result is NaN if x is empty
// or holds a NaN, or if p is outside [0, 1].
func Quantile(x []float64, p float64) float64 {
	if hasNaN(x) {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, p)
}
