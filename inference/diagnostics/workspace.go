package diagnostics

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mathext"
)

// workspace holds every buffer the diagnostics need, so that a Summarize
// call reuses memory from a pool and allocates nothing once warm.
type workspace struct {
	raw    []float64 // m×L truncated draws, chain-major
	tmp    []float64 // transformed m×L draws (folded, indicators)
	split  []float64 // m'×n split draws, chain-major
	z      []float64 // rank-normalised split draws
	sorted []float64 // sorted copy of raw
	pairs  []pair    // (value, index) for ranking
	means  []float64 // per-chain means
	vars   []float64 // per-chain variances
	acov   []float64 // mean autocovariance over chains, length n
	rho    []float64 // autocorrelation sequence, length n
	pad    []float64 // zero-padded centred chain / inverse FFT output
	coeff  []complex128
	fft    *fourier.FFT
	fftLen int

	sortedOK bool // w.sorted holds the sorted w.raw
}

type pair struct {
	v float64
	i int32
}

var pool = sync.Pool{New: func() any { return new(workspace) }}

func getWorkspace() *workspace  { return pool.Get().(*workspace) }
func putWorkspace(w *workspace) { pool.Put(w) }

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// load copies chains, truncated to the shortest, into w.raw and returns the
// number of chains m and the common length L. L is 0 if there are no chains
// or one of them is empty.
func (w *workspace) load(chains [][]float64) (m, L int) {
	w.sortedOK = false
	m = len(chains)
	if m == 0 {
		return 0, 0
	}
	L = len(chains[0])
	for _, c := range chains[1:] {
		L = min(L, len(c))
	}
	w.raw = grow(w.raw, m*L)
	for c, ch := range chains {
		copy(w.raw[c*L:(c+1)*L], ch[:L])
	}
	return m, L
}

// splitInto writes the split chains of x (m chains of L draws) into w.split
// and returns the number of split chains and their length. The middle draw
// of an odd-length chain is dropped.
func (w *workspace) splitInto(x []float64, m, L int) (m2, n int) {
	n = L / 2
	w.split = grow(w.split, 2*m*n)
	for c := range m {
		ch := x[c*L : (c+1)*L]
		copy(w.split[2*c*n:(2*c+1)*n], ch[:n])
		copy(w.split[(2*c+1)*n:(2*c+2)*n], ch[L-n:])
	}
	return 2 * m, n
}

// zscale writes the rank-normalised values of x into dst: joint ranks with
// ties averaged, then Φ⁻¹((r−3/8)/(S+1/4)). It reports false if x holds a
// NaN (R's rank keeps NA and z_scale maps it back to NA).
func (w *workspace) zscale(dst, x []float64) ([]float64, bool) {
	S := len(x)
	w.pairs = grow(w.pairs, S)
	for i, v := range x {
		if math.IsNaN(v) {
			return dst, false
		}
		w.pairs[i] = pair{v, int32(i)}
	}
	slices.SortFunc(w.pairs, func(a, b pair) int { // no NaN here
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	dst = grow(dst, S)
	den := float64(S) + 0.25
	for i := 0; i < S; {
		j := i + 1
		for j < S && w.pairs[j].v == w.pairs[i].v {
			j++
		}
		r := float64(i+1+j) / 2 // average of ranks i+1..j
		z := mathext.NormalQuantile((r - 0.375) / den)
		for k := i; k < j; k++ {
			dst[w.pairs[k].i] = z
		}
		i = j
	}
	return dst, true
}

// nonFiniteOrConstant reports posterior's should_return_NA: any NaN or ±Inf,
// or max − min below machine epsilon (an absolute tolerance, as in R).
func nonFiniteOrConstant(x []float64) bool {
	if len(x) == 0 {
		return true
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return true
		}
		lo = min(lo, v)
		hi = max(hi, v)
	}
	return math.Abs(hi-lo) < epsilon
}

// epsilon is R's .Machine$double.eps.
const epsilon = 0x1p-52

// chainMoments fills w.means and w.vars (divisor n−1) for m chains of n.
func (w *workspace) chainMoments(x []float64, m, n int) {
	w.means = grow(w.means, m)
	w.vars = grow(w.vars, m)
	for c := range m {
		mu, v := meanVar(x[c*n : (c+1)*n])
		w.means[c], w.vars[c] = mu, v
	}
}

// meanVar returns the mean and the unbiased variance (divisor n−1, NaN for
// n < 2) by the corrected two-pass algorithm.
func meanVar(x []float64) (mean, variance float64) {
	n := float64(len(x))
	var s float64
	for _, v := range x {
		s += v
	}
	mean = s / n
	var ss, comp float64
	for _, v := range x {
		d := v - mean
		ss += d * d
		comp += d
	}
	variance = (ss - comp*comp/n) / (n - 1)
	if len(x) < 2 {
		variance = math.NaN()
	}
	return mean, variance
}

// rhat is posterior's .rhat on m split chains of n draws (chain-major).
func (w *workspace) rhat(x []float64, m, n int) float64 {
	if m < 2 || n < 2 || nonFiniteOrConstant(x) {
		return math.NaN()
	}
	w.chainMoments(x, m, n)
	_, vb := meanVar(w.means)
	var within float64
	for _, v := range w.vars {
		within += v
	}
	within /= float64(m)
	nf := float64(n)
	between := nf * vb
	return math.Sqrt((between/within + nf - 1) / nf)
}

// nextGood returns the smallest 2-3-5-smooth integer ≥ n (R's nextn).
func nextGood(n int) int {
	if n <= 2 {
		return 2
	}
	for ; ; n++ {
		k := n
		for k%2 == 0 {
			k /= 2
		}
		for k%3 == 0 {
			k /= 3
		}
		for k%5 == 0 {
			k /= 5
		}
		if k == 1 {
			return n
		}
	}
}

// addAutocov adds the biased autocovariances γ(t), t = 0..n−1, of y to acc
// (posterior's autocovariance). A constant y contributes zeros.
func (w *workspace) addAutocov(acc, y []float64) {
	n := len(y)
	mu, v := meanVar(y)
	if v == 0 {
		return
	}
	size := 2 * nextGood(n)
	if w.fft == nil {
		w.fft = fourier.NewFFT(size)
		w.fftLen = size
	} else if w.fftLen != size {
		w.fft.Reset(size)
		w.fftLen = size
	}
	w.pad = grow(w.pad, size)
	for i, yi := range y {
		w.pad[i] = yi - mu
	}
	clear(w.pad[n:])
	w.coeff = grow(w.coeff, size/2+1)
	w.fft.Coefficients(w.coeff, w.pad)
	for k, c := range w.coeff {
		w.coeff[k] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	w.fft.Sequence(w.pad, w.coeff)
	scale := v * float64(n-1) / float64(n) / w.pad[0]
	for t := range n {
		acc[t] += w.pad[t] * scale
	}
}

// ess is posterior's .ess on m split chains of n draws (chain-major).
func (w *workspace) ess(x []float64, m, n int) float64 {
	if n < 3 || m < 1 || nonFiniteOrConstant(x) {
		return math.NaN()
	}
	w.acov = grow(w.acov, n)
	clear(w.acov)
	for c := range m {
		w.addAutocov(w.acov, x[c*n:(c+1)*n])
	}
	mf, nf := float64(m), float64(n)
	for t := range w.acov {
		w.acov[t] /= mf
	}
	meanVarW := w.acov[0] * nf / (nf - 1)
	varPlus := meanVarW * (nf - 1) / nf
	if m > 1 {
		w.chainMoments(x, m, n)
		_, vb := meanVar(w.means)
		varPlus += vb
	}
	rhoAt := func(t int) float64 { return 1 - (meanVarW-w.acov[t])/varPlus }

	// Geyer's initial positive sequence.
	rho := grow(w.rho, n)
	w.rho = rho
	clear(rho)
	t := 0
	even, odd := 1.0, rhoAt(1)
	rho[0], rho[1] = even, odd
	for t < n-5 && !math.IsNaN(even+odd) && even+odd > 0 {
		t += 2
		even, odd = rhoAt(t), rhoAt(t+1)
		if even+odd >= 0 {
			rho[t], rho[t+1] = even, odd
		}
	}
	maxT := t
	if even > 0 {
		rho[maxT] = even // used by the improved estimate
	}
	// Geyer's initial monotone sequence.
	for t = 2; t <= maxT-2; t += 2 {
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			rho[t] = (rho[t-2] + rho[t-1]) / 2
			rho[t+1] = rho[t]
		}
	}
	var sum float64
	if maxT == 0 {
		sum = rho[0] // R: sum(rho_hat_t[1:0]) == rho_hat_t[1]
	} else {
		for _, r := range rho[:maxT] {
			sum += r
		}
	}
	S := mf * nf
	tau := -1 + 2*sum + rho[maxT]
	tau = max(tau, 1/math.Log10(S))
	return S / tau
}

// quantileSorted is R's type-7 quantile of sorted x; NaN for empty x or p
// outside [0, 1].
func quantileSorted(x []float64, p float64) float64 {
	n := len(x)
	if n == 0 || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	index := 1 + float64(n-1)*p
	lo := math.Floor(index)
	hi := math.Ceil(index)
	qlo := x[int(lo)-1]
	qhi := x[int(hi)-1]
	if index > lo && qhi != qlo {
		h := index - lo
		return (1-h)*qlo + h*qhi
	}
	return qlo
}

// sortRaw fills w.sorted with the sorted draws of w.raw, once per load.
func (w *workspace) sortRaw() []float64 {
	if !w.sortedOK {
		w.sorted = grow(w.sorted, len(w.raw))
		copy(w.sorted, w.raw)
		slices.Sort(w.sorted)
		w.sortedOK = true
	}
	return w.sorted
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

// rhatBulk computes the rank-normalised split R-hat of w.raw and leaves the
// rank-normalised split draws in w.z (valid if zok).
func (w *workspace) rhatBulk(m, L int) (r float64, m2, n int, zok bool) {
	m2, n = w.splitInto(w.raw, m, L)
	if n == 0 {
		return math.NaN(), m2, n, false
	}
	w.z, zok = w.zscale(w.z, w.split)
	if !zok {
		return math.NaN(), m2, n, false
	}
	return w.rhat(w.z, m2, n), m2, n, true
}

// rhatTail computes the rank-normalised folded split R-hat of w.raw.
func (w *workspace) rhatTail(m, L int) float64 {
	if hasNaN(w.raw) || L/2 == 0 {
		return math.NaN()
	}
	med := quantileSorted(w.sortRaw(), 0.5)
	w.tmp = grow(w.tmp, len(w.raw))
	for i, v := range w.raw {
		w.tmp[i] = math.Abs(v - med)
	}
	m2, n := w.splitInto(w.tmp, m, L)
	var ok bool
	w.tmp, ok = w.zscale(w.tmp, w.split) // tmp is free again after splitting
	if !ok {
		return math.NaN()
	}
	return w.rhat(w.tmp[:m2*n], m2, n)
}

// essQuantile is posterior's .ess_quantile on w.raw.
func (w *workspace) essQuantile(m, L int, p float64) float64 {
	if !(p >= 0 && p <= 1) || nonFiniteOrConstant(w.raw) {
		return math.NaN()
	}
	N := len(w.raw)
	if p == 1 {
		p = (float64(N) - 0.5) / float64(N)
	}
	q := quantileSorted(w.sortRaw(), p)
	w.tmp = grow(w.tmp, N)
	for i, v := range w.raw {
		w.tmp[i] = 0
		if v <= q {
			w.tmp[i] = 1
		}
	}
	m2, n := w.splitInto(w.tmp, m, L)
	return w.ess(w.split, m2, n)
}

// maxNaN is R's max: NaN if either argument is NaN (math.Max prefers +Inf).
func maxNaN(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return max(a, b)
}

// minNaN is R's min: NaN if either argument is NaN.
func minNaN(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return min(a, b)
}

// MeanVar returns the mean of x and its unbiased variance (divisor n−1,
// NaN for fewer than two values) by the corrected two-pass algorithm, as
// the summaries use them.
func MeanVar(x []float64) (mean, variance float64) { return meanVar(x) }
