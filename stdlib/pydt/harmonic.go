package pydt

import (
	"fmt"
	"math"
)

// CheckPitmanYor reports whether (alpha, beta) are valid Pitman-Yor
// diffusion tree parameters: 0 <= beta < 1 and alpha >= -2 beta, both finite.
// At alpha = -2 beta only binary trees have positive probability; alpha =
// beta = 0 is Neal's Dirichlet diffusion tree.
func CheckPitmanYor(alpha, beta float64) error {
	if !(beta >= 0 && beta < 1) {
		return fmt.Errorf("pydt: discount beta = %v: must satisfy 0 <= beta < 1", beta)
	}
	if math.IsNaN(alpha) || math.IsInf(alpha, 0) {
		return fmt.Errorf("pydt: concentration alpha = %v: must be finite", alpha)
	}
	if alpha < -2*beta {
		return fmt.Errorf("pydt: concentration alpha = %v: must be >= -2 beta = %v", alpha, -2*beta)
	}
	return nil
}

// harmonicAnchor is the number of terms between re-anchorings of the ratio
// recurrence on an independently computed term: the recurrence's relative
// error (about 2.5 ulp a step) cannot grow past harmonicAnchor steps.
const harmonicAnchor = 32

// Harmonic is a table of the generalised harmonic numbers of the PYDT,
//
//	H_n = sum_{i=1..n} h_i,  h_i = Gamma(i-beta) / Gamma(i+1+alpha),  H_0 = 0,
//
// where h_m is the rate (per unit of A(t)) at which a point diverges from a
// path that m earlier points have followed. The table is extended on demand,
// so that look-ups cost O(1) amortised. Consecutive terms are computed from
// the ratio h_{i+1}/h_i = (i-beta)/(i+1+alpha), re-anchored every 32 terms on
// an accurate log-gamma ratio, and summed with Neumaier's compensated
// summation, so that H_n keeps a relative error of a few ulp up to n = 10^6
// and beyond. Terms below the float64 range (very large alpha) are 0.
//
// A table holds exactly one (alpha, beta); Reset replaces them and clears the
// table. The prior functions of this package take alpha and beta explicitly
// and reset the table they are given when its parameters differ, so a stale
// table cannot be used by mistake.
//
// Look-ups extend the table and so mutate it: a Harmonic is not safe for
// concurrent use, except that after Grow(n) look-ups up to n only read it.
type Harmonic struct {
	alpha, beta float64
	valid       bool
	term        []float64 // term[i] = h_i, term[0] = 0
	sum         []float64 // sum[i] = H_i, sum[0] = 0
	s, c        float64   // Neumaier running sum and compensation

	// Caches for the structure terms of the prior, grown separately.
	lgB   []float64 // lgB[n] = lgamma(n - beta), n >= 1
	lgA   []float64 // lgA[m] = lgamma(m + alpha), m >= 1
	multi []float64 // multi[k] = sum_{j=3..k} log(alpha + (j-1) beta); -Inf once a factor is 0

	f0 float64 // closedF(0), for ClosedH: set by Reset
}

// NewHarmonic returns an empty table for (alpha, beta), or an error when they
// are not valid parameters (see CheckPitmanYor).
func NewHarmonic(alpha, beta float64) (*Harmonic, error) {
	h := &Harmonic{}
	if err := h.Reset(alpha, beta); err != nil {
		return nil, err
	}
	return h, nil
}

// Reset sets the table's parameters to (alpha, beta) and clears every
// computed entry, keeping the storage. On error the table holds no
// parameters and every look-up panics until a successful Reset.
func (h *Harmonic) Reset(alpha, beta float64) error {
	h.term = h.term[:0]
	h.sum = h.sum[:0]
	h.s, h.c = 0, 0
	h.lgB, h.lgA, h.multi = h.lgB[:0], h.lgA[:0], h.multi[:0]
	if err := CheckPitmanYor(alpha, beta); err != nil {
		h.valid = false
		h.alpha, h.beta = math.NaN(), math.NaN()
		return err
	}
	h.alpha, h.beta, h.valid = alpha, beta, true
	h.f0 = h.closedF(0)
	h.term = append(h.term, 0)
	h.sum = append(h.sum, 0)
	return nil
}

// Alpha returns the concentration the table is computed for.
func (h *Harmonic) Alpha() float64 { return h.alpha }

// Beta returns the discount the table is computed for.
func (h *Harmonic) Beta() float64 { return h.beta }

// Has reports whether the table holds valid parameters equal to (alpha, beta).
func (h *Harmonic) Has(alpha, beta float64) bool {
	return h.valid && h.alpha == alpha && h.beta == beta
}

// use makes the table hold (alpha, beta), resetting it if they differ. It
// reports false when they are not valid parameters.
func (h *Harmonic) use(alpha, beta float64) bool {
	if h.Has(alpha, beta) {
		return true
	}
	return h.Reset(alpha, beta) == nil
}

// Len returns the largest n for which H_n is already computed (0 for an
// empty table).
func (h *Harmonic) Len() int {
	if len(h.sum) == 0 {
		return 0
	}
	return len(h.sum) - 1
}

// Grow computes the table up to n, so that later look-ups up to n neither
// allocate nor write.
func (h *Harmonic) Grow(n int) {
	if !h.valid {
		panic("pydt: Harmonic used without valid parameters (Reset failed)")
	}
	if n < 0 {
		panic(fmt.Sprintf("pydt: Harmonic.Grow(%d)", n))
	}
	i := len(h.sum)
	if n < i {
		return
	}
	h.term = append(h.term, make([]float64, n+1-i)...)
	h.sum = append(h.sum, make([]float64, n+1-i)...)
	s, c := h.s, h.c
	for ; i <= n; i++ {
		var x float64
		if i%harmonicAnchor == 1 {
			x = math.Exp(logRateTerm(i, h.alpha, h.beta))
		} else {
			fi := float64(i)
			x = h.term[i-1] * (fi - 1 - h.beta) / (fi + h.alpha)
		}
		h.term[i] = x
		t := s + x
		if math.Abs(s) >= math.Abs(x) {
			c += (s - t) + x
		} else {
			c += (x - t) + s
		}
		s = t
		h.sum[i] = s + c
	}
	h.s, h.c = s, c
}

// H returns H_n for n >= 0.
func (h *Harmonic) H(n int) float64 {
	if n >= len(h.sum) || !h.valid {
		h.Grow(n)
	}
	return h.sum[n]
}

// Rate returns h_m = Gamma(m-beta)/Gamma(m+1+alpha) for m >= 1: a path
// followed by m earlier points is left at rate a(t) h_m, and not left between
// s and t with probability exp(-(A(t)-A(s)) h_m).
func (h *Harmonic) Rate(m int) float64 {
	if m < 1 {
		panic(fmt.Sprintf("pydt: Harmonic.Rate(%d): need m >= 1", m))
	}
	if m >= len(h.term) || !h.valid {
		h.Grow(m)
	}
	return h.term[m]
}

// J returns J = H_{m-1} - sum_k H_{n_k - 1} for a branch point whose children
// hold counts[k] >= 1 leaves, m = sum_k counts[k]. With a(t) = c/(1-t) the
// prior density of the branch point's time given the tree is
// c (1-t)^(c J - 1).
func (h *Harmonic) J(counts []int) float64 {
	m := 0
	for _, n := range counts {
		m += n
	}
	j := h.H(m - 1)
	for _, n := range counts {
		j -= h.sum[n-1] // n-1 < m-1 is in the table
	}
	return j
}

// closedCancel is the largest cancellation factor (|f_0| + |f_n|) /
// |f_0 - f_n| that ClosedH accepts: the closed form then loses at most 6
// bits (a relative error of about 1e-14).
const closedCancel = 64

// ClosedH returns H_n for n >= 0 by the telescoped closed form, in O(1)
// and without extending the table, and reports whether it could. With
// f_n = Gamma(n+1-beta)/Gamma(n+1+alpha), (alpha+beta) h_i = f_{i-1} - f_i,
// so
//
//	H_n = (f_0 - f_n) / (alpha + beta)    (alpha + beta != 0).
//
// Near alpha + beta = 0 the difference cancels: ClosedH reports false when
// it would lose more than 6 bits (cancellation factor above 64), and the
// caller uses the table (H), whose cost is O(n) on first use.
func (h *Harmonic) ClosedH(n int) (float64, bool) {
	if !h.valid {
		panic("pydt: Harmonic used without valid parameters (Reset failed)")
	}
	if n <= 0 {
		return 0, n == 0
	}
	ab := h.alpha + h.beta
	if ab == 0 {
		return 0, false
	}
	f0, fn := h.f0, h.closedF(n)
	d := f0 - fn
	if !(math.Abs(d)*closedCancel >= math.Abs(f0)+math.Abs(fn)) || d == 0 {
		return 0, false
	}
	return d / ab, true
}

// closedF returns f_n = Gamma(n+1-beta)/Gamma(n+1+alpha) of ClosedH as
// h_{n+1} (n+1+alpha), from the accurate log-gamma ratio.
func (h *Harmonic) closedF(n int) float64 {
	return math.Exp(logRateTerm(n+1, h.alpha, h.beta)) * (float64(n+1) + h.alpha)
}

// hSum returns H_n by ClosedH when it can, else from the table.
func (h *Harmonic) hSum(n int) float64 {
	if x, ok := h.ClosedH(n); ok {
		return x
	}
	return h.H(n)
}

// logRateTerm returns log h_i = log Gamma(i-beta) - log Gamma(i+1+alpha),
// accurate to a few ulp of its magnitude (so h_i to a few ulp relative) even
// when both log-gammas are large and nearly cancel.
func logRateTerm(i int, alpha, beta float64) float64 {
	x := float64(i)
	a, b := -beta, 1+alpha
	if x+a < 10 {
		// log Gamma(x+a) is small; the difference is as accurate as
		// log Gamma(x+b), which has the magnitude of the result.
		la, _ := math.Lgamma(x + a)
		lb, _ := math.Lgamma(x + b)
		return la - lb
	}
	// Stirling: log Gamma(z) = (z-1/2) log z - z + log(2 pi)/2 + corr(z).
	// With z = x+a and x+b, (z-1/2) log z = (z-1/2)(log x + log1p(a/x)),
	// and the (x-1/2) log x parts cancel exactly.
	d := (a-b)*math.Log(x) +
		(x+a-0.5)*math.Log1p(a/x) - (x+b-0.5)*math.Log1p(b/x) -
		(a - b)
	return d + stirlingCorr(x+a) - stirlingCorr(x+b)
}

// stirlingCorr returns log Gamma(z) - ((z-1/2) log z - z + log(2 pi)/2) for
// z >= 10, to below 1e-16 absolute.
func stirlingCorr(z float64) float64 {
	r := 1 / z
	r2 := r * r
	return r * (1.0/12 + r2*(-1.0/360+r2*(1.0/1260+r2*(-1.0/1680+r2*(1.0/1188+
		r2*(-691.0/360360+r2*(1.0/156+r2*(-3617.0/122400))))))))
}

// LogGammaMinusBeta returns log Gamma(n - beta) for n >= 1, from a cache
// that, like the table, is extended on demand (to at least twice its
// length, so that growth is amortised) and cleared by Reset. It panics if
// the table holds no valid parameters.
func (h *Harmonic) LogGammaMinusBeta(n int) float64 {
	if n >= len(h.lgB) {
		h.growLgamma(n)
	}
	return h.lgB[n]
}

// LogGammaPlusAlpha returns log Gamma(m + alpha) for m >= 1, from the cache
// that LogGammaMinusBeta uses; a look-up extends both.
func (h *Harmonic) LogGammaPlusAlpha(m int) float64 {
	if m >= len(h.lgA) {
		h.growLgamma(m)
	}
	return h.lgA[m]
}

func (h *Harmonic) growLgamma(n int) {
	if !h.valid {
		panic("pydt: Harmonic used without valid parameters (Reset failed)")
	}
	n = max(n, 2*len(h.lgB)) // amortise the growth
	for i := len(h.lgB); i <= n; i++ {
		if i == 0 {
			h.lgB = append(h.lgB, math.NaN())
			h.lgA = append(h.lgA, math.NaN())
			continue
		}
		h.lgB = append(h.lgB, lgamma(float64(i)-h.beta))
		h.lgA = append(h.lgA, lgamma(float64(i)+h.alpha))
	}
}

// logMulti returns sum_{k=3..K} log(alpha + (k-1) beta), the log of the
// product of the new-branch weights of a branch point with K children, or
// -Inf when a factor is 0 (alpha = -2 beta, K >= 3).
func (h *Harmonic) logMulti(k int) float64 {
	if k >= len(h.multi) {
		if !h.valid {
			panic("pydt: Harmonic used without valid parameters (Reset failed)")
		}
		for j := len(h.multi); j <= k; j++ {
			if j <= 2 {
				h.multi = append(h.multi, 0)
				continue
			}
			x := h.alpha + float64(j-1)*h.beta
			if !(x > 0) {
				h.multi = append(h.multi, math.Inf(-1))
				continue
			}
			h.multi = append(h.multi, h.multi[j-1]+math.Log(x))
		}
	}
	return h.multi[k]
}
