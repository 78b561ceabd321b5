package pydt

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), math.SmallestNonzeroFloat64)
}

func mustHarmonic(t testing.TB, alpha, beta float64) *Harmonic {
	t.Helper()
	h, err := NewHarmonic(alpha, beta)
	if err != nil {
		t.Fatalf("NewHarmonic(%v, %v): %v", alpha, beta, err)
	}
	return h
}

// Parameter pairs covering the whole range, the boundary alpha = -2 beta and
// the DDT included.
var harmonicParams = []struct{ alpha, beta float64 }{
	{0, 0}, {1, 0}, {0.5, 0.5}, {-1.2, 0.6}, {-0.3, 0.3}, {2.5, 0.1}, {0.37, 0.61},
	{-1.998, 0.999}, {10, 0.9}, {50, 0.2}, {-0.01, 0.005},
}

// TestHarmonicSmallDirect compares with the definition, each term computed
// from log-gammas and summed plainly, for small n.
func TestHarmonicSmallDirect(t *testing.T) {
	for _, p := range harmonicParams {
		h := mustHarmonic(t, p.alpha, p.beta)
		sum := 0.0
		if got := h.H(0); got != 0 {
			t.Errorf("alpha=%v beta=%v: H_0 = %v, want 0", p.alpha, p.beta, got)
		}
		for n := 1; n <= 300; n++ {
			la, _ := math.Lgamma(float64(n) - p.beta)
			lb, _ := math.Lgamma(float64(n) + 1 + p.alpha)
			term := math.Exp(la - lb)
			sum += term
			if e := relErr(h.Rate(n), term); !(e <= 1e-12) {
				t.Errorf("alpha=%v beta=%v: h_%d = %v, want %v (rel err %.2g)", p.alpha, p.beta, n, h.Rate(n), term, e)
			}
			if e := relErr(h.H(n), sum); !(e <= 1e-12) {
				t.Errorf("alpha=%v beta=%v: H_%d = %v, want %v (rel err %.2g)", p.alpha, p.beta, n, h.H(n), sum, e)
			}
		}
	}
}

// TestHarmonicTelescoping checks every n up to 10^6 against the closed form
// that holds when k = alpha + beta is a positive integer:
// h_i = 1/prod_{j=0..k}(i+j-beta) and, since the terms telescope,
// H_n = (1/prod_{j=1..k}(j-beta) - 1/prod_{j=1..k}(n+j-beta)) / k.
func TestHarmonicTelescoping(t *testing.T) {
	const nmax = 1_000_000
	for _, p := range []struct {
		k    int
		beta float64
	}{{1, 0}, {1, 0.5}, {2, 0.3}, {3, 0.8}, {1, 0.999}} {
		alpha := float64(p.k) - p.beta
		h := mustHarmonic(t, alpha, p.beta)
		prod := func(from float64, nf int) float64 {
			r := 1.0
			for j := range nf {
				r *= from + float64(j)
			}
			return r
		}
		head := 1 / prod(1-p.beta, p.k)
		worstH, worstR := 0.0, 0.0
		for n := 1; n <= nmax; n++ {
			fn := float64(n)
			wantR := 1 / prod(fn-p.beta, p.k+1)
			wantH := (head - 1/prod(fn+1-p.beta, p.k)) / float64(p.k)
			worstR = math.Max(worstR, relErr(h.Rate(n), wantR))
			worstH = math.Max(worstH, relErr(h.H(n), wantH))
		}
		if !(worstH <= 1e-13) || !(worstR <= 1e-13) {
			t.Errorf("alpha=%v beta=%v: worst relative error up to n=%d: H %.2g, h %.2g", alpha, p.beta, nmax, worstH, worstR)
		}
	}
}

// TestHarmonicNumbers checks alpha = beta = 0 against the harmonic numbers:
// exact rationals for small n and the asymptotic expansion
// ln n + gamma + 1/(2n) - 1/(12n^2) + 1/(120n^4) - 1/(252n^6) for large n.
func TestHarmonicNumbers(t *testing.T) {
	h := mustHarmonic(t, 0, 0)
	r := new(big.Rat)
	for n := 1; n <= 60; n++ {
		r.Add(r, big.NewRat(1, int64(n)))
		want, _ := r.Float64()
		if e := relErr(h.H(n), want); !(e <= 1e-15) {
			t.Errorf("H_%d = %v, want %v (rel err %.2g)", n, h.H(n), want, e)
		}
		if e := relErr(h.Rate(n), 1/float64(n)); !(e <= 2e-15) {
			t.Errorf("h_%d = %v, want 1/%d", n, h.Rate(n), n)
		}
	}
	const eulerGamma = 0.57721566490153286060651209008240243
	for _, n := range []int{1000, 12345, 100_000, 999_999, 1_000_000} {
		x := float64(n)
		x2 := x * x
		want := math.Log(x) + eulerGamma + 1/(2*x) - 1/(12*x2) + 1/(120*x2*x2) - 1/(252*x2*x2*x2)
		if e := relErr(h.H(n), want); !(e <= 1e-14) {
			t.Errorf("H_%d = %.17g, want %.17g (rel err %.2g)", n, h.H(n), want, e)
		}
	}
}

// TestHarmonicBigFloat checks H_n for n up to 10^6 against a 128-bit
// summation in which each term is the exact running product of the ratios
// (i-1-beta)/(i+alpha), scaled by h_1 = Gamma(1-beta)/Gamma(2+alpha).
func TestHarmonicBigFloat(t *testing.T) {
	const prec = 128
	cases := []struct {
		alpha, beta float64
		nmax        int
	}{
		{0.37, 0.61, 1_000_000},
		{-1.2, 0.6, 300_000},
		{-0.3, 0.3, 100_000},
		{5.5, 0.25, 100_000},
		{-1.998, 0.999, 100_000},
	}
	if testing.Short() {
		for i := range cases {
			cases[i].nmax = 20_000
		}
	}
	for _, c := range cases {
		h := mustHarmonic(t, c.alpha, c.beta)
		h1 := math.Gamma(1-c.beta) / math.Gamma(2+c.alpha)
		a := new(big.Float).SetPrec(prec).SetFloat64(c.alpha)
		b := new(big.Float).SetPrec(prec).SetFloat64(c.beta)
		term := new(big.Float).SetPrec(prec).SetInt64(1)
		sum := new(big.Float).SetPrec(prec).SetInt64(1)
		num := new(big.Float).SetPrec(prec)
		den := new(big.Float).SetPrec(prec)
		check := func(n int) {
			s, _ := sum.Float64()
			tm, _ := term.Float64()
			if e := relErr(h.H(n), h1*s); !(e <= 1e-13) {
				t.Errorf("alpha=%v beta=%v: H_%d = %.17g, want %.17g (rel err %.2g)", c.alpha, c.beta, n, h.H(n), h1*s, e)
			}
			if e := relErr(h.Rate(n), h1*tm); !(e <= 1e-13) {
				t.Errorf("alpha=%v beta=%v: h_%d = %.17g, want %.17g (rel err %.2g)", c.alpha, c.beta, n, h.Rate(n), h1*tm, e)
			}
		}
		check(1)
		for i := 2; i <= c.nmax; i++ {
			num.SetInt64(int64(i - 1))
			num.Sub(num, b)
			den.SetInt64(int64(i))
			den.Add(den, a)
			term.Mul(term, num)
			term.Quo(term, den)
			sum.Add(sum, term)
			if i%997 == 0 || i == c.nmax {
				check(i)
			}
		}
	}
}

// TestHarmonicExtremes: very large alpha makes every term underflow; the table
// must then hold zeros, never NaN.
func TestHarmonicExtremes(t *testing.T) {
	h := mustHarmonic(t, 500, 0.5)
	for _, n := range []int{1, 2, 100, 5000} {
		if v := h.H(n); math.IsNaN(v) || v < 0 || v > 1e-300 {
			t.Errorf("alpha=500: H_%d = %v, want a tiny non-negative number", n, v)
		}
	}
	// alpha = 150: h_1 = Gamma(0.5)/Gamma(152) is about 1e-263, still representable.
	h = mustHarmonic(t, 150, 0.5)
	want := math.Exp(lgamma(0.5) - lgamma(152))
	if e := relErr(h.Rate(1), want); !(e <= 1e-12) {
		t.Errorf("alpha=150: h_1 = %v, want %v", h.Rate(1), want)
	}
}

func TestHarmonicJ(t *testing.T) {
	for _, p := range harmonicParams {
		h := mustHarmonic(t, p.alpha, p.beta)
		direct := func(n int) float64 { // independent H_n
			s := 0.0
			for i := n; i >= 1; i-- {
				s += math.Exp(lgamma(float64(i)-p.beta) - lgamma(float64(i)+1+p.alpha))
			}
			return s
		}
		for _, counts := range [][]int{{1, 1}, {3, 1}, {2, 2, 5}, {1, 1, 1, 1}, {40, 7, 1}} {
			m := 0
			want := 0.0
			for _, n := range counts {
				m += n
				want -= direct(n - 1)
			}
			want += direct(m - 1)
			got := h.J(counts)
			if !(math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))) {
				t.Errorf("alpha=%v beta=%v: J%v = %v, want %v", p.alpha, p.beta, counts, got, want)
			}
		}
	}
}

// TestHarmonicReset checks that Reset really clears the table: values after
// a reset equal those of a fresh table and of the closed form, never those
// computed under the old parameters.
func TestHarmonicReset(t *testing.T) {
	h := mustHarmonic(t, 0, 0)
	old := h.H(100)
	if h.Len() != 100 {
		t.Fatalf("Len = %d after H(100), want 100", h.Len())
	}
	if err := h.Reset(0.5, 0.5); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 0 || !h.Has(0.5, 0.5) || h.Has(0, 0) {
		t.Fatalf("after Reset: Len = %d, Has(0.5,0.5) = %v, Has(0,0) = %v", h.Len(), h.Has(0.5, 0.5), h.Has(0, 0))
	}
	// alpha + beta = 1: H_n = 1/(1-beta) - 1/(n+1-beta).
	for _, n := range []int{1, 50, 100, 150} {
		want := 1/0.5 - 1/(float64(n)+0.5)
		if got := h.H(n); !(relErr(got, want) <= 1e-14) {
			t.Errorf("after Reset: H_%d = %v, want %v", n, got, want)
		}
	}
	if h.H(100) == old {
		t.Errorf("H_100 unchanged by Reset")
	}
	fresh := mustHarmonic(t, 0.5, 0.5)
	for n := 0; n <= 150; n++ {
		if h.H(n) != fresh.H(n) {
			t.Fatalf("after Reset H_%d = %v differs from a fresh table's %v", n, h.H(n), fresh.H(n))
		}
	}
	// A failed Reset leaves no usable parameters.
	if err := h.Reset(1, 1); err == nil {
		t.Fatal("Reset(1, 1) accepted beta = 1")
	}
	if h.Has(0.5, 0.5) || h.Len() != 0 {
		t.Error("failed Reset kept the old table")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("look-up after a failed Reset did not panic")
			}
		}()
		h.H(3)
	}()
}

// TestHarmonicLogGammaCache checks the cached log-gammas against
// math.Lgamma, in an order that grows the cache several times, and after a
// Reset to other parameters (the cache must not keep the old values).
func TestHarmonicLogGammaCache(t *testing.T) {
	h := mustHarmonic(t, 0, 0)
	for _, p := range harmonicParams {
		if err := h.Reset(p.alpha, p.beta); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{3, 1, 2, 17, 5, 300, 64, 1000} {
			wb, _ := math.Lgamma(float64(n) - p.beta)
			wa, _ := math.Lgamma(float64(n) + p.alpha)
			if got := h.LogGammaMinusBeta(n); got != wb {
				t.Errorf("alpha=%v beta=%v: LogGammaMinusBeta(%d) = %v, want %v", p.alpha, p.beta, n, got, wb)
			}
			if got := h.LogGammaPlusAlpha(n); got != wa {
				t.Errorf("alpha=%v beta=%v: LogGammaPlusAlpha(%d) = %v, want %v", p.alpha, p.beta, n, got, wa)
			}
		}
	}
}

func TestCheckPitmanYor(t *testing.T) {
	for _, c := range []struct {
		alpha, beta float64
		ok          bool
		msg         string
	}{
		{0, 0, true, ""},
		{-1, 0.5, true, ""},
		{100, 0.999, true, ""},
		{-0.1, 0, false, "alpha"},
		{-1.01, 0.5, false, "alpha"},
		{1, 1, false, "beta"},
		{1, -0.1, false, "beta"},
		{math.NaN(), 0.5, false, "alpha"},
		{1, math.NaN(), false, "beta"},
		{math.Inf(1), 0.5, false, "alpha"},
	} {
		err := CheckPitmanYor(c.alpha, c.beta)
		if (err == nil) != c.ok {
			t.Errorf("CheckPitmanYor(%v, %v) = %v, want ok=%v", c.alpha, c.beta, err, c.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckPitmanYor(%v, %v) = %q, want it to name %s", c.alpha, c.beta, err, c.msg)
		}
		if _, err2 := NewHarmonic(c.alpha, c.beta); (err2 == nil) != c.ok {
			t.Errorf("NewHarmonic(%v, %v) error = %v, want ok=%v", c.alpha, c.beta, err2, c.ok)
		}
	}
}

func BenchmarkHarmonicGrow(b *testing.B) {
	h := mustHarmonic(b, 0.7, 0.3)
	for b.Loop() {
		h.Reset(0.7, 0.3)
		h.Grow(100_000)
	}
}

// TestClosedH checks the telescoped closed form of H_n against the loop:
// an independent Kahan sum of the terms Gamma(i-beta)/Gamma(i+1+alpha) by
// math.Lgamma (n <= 2000) and the table (every n), for alpha + beta
// positive, negative, and near and at 0, where ClosedH must either decline
// or agree.
func TestClosedH(t *testing.T) {
	naive := func(n int, alpha, beta float64) float64 {
		var s, c float64
		for i := 1; i <= n; i++ {
			la, _ := math.Lgamma(float64(i) - beta)
			lb, _ := math.Lgamma(float64(i) + 1 + alpha)
			y := math.Exp(la-lb) - c
			u := s + y
			c = (u - s) - y
			s = u
		}
		return s
	}
	for _, p := range []struct{ alpha, beta float64 }{
		{1, 0.2}, {0.5, 0}, {5, 0.9}, {100, 0.5}, {0.01, 0}, {-0.4, 0.2}, {-0.9, 0.5}, {-1.8, 0.9},
		{-0.3 + 1e-3, 0.3}, {-0.3 + 1e-6, 0.3}, {-0.5, 0.5}, {0, 0}, {1e-9, 0},
	} {
		h, err := NewHarmonic(p.alpha, p.beta)
		if err != nil {
			t.Fatal(err)
		}
		closed := 0
		for _, n := range []int{0, 1, 2, 3, 10, 100, 1000, 2000, 100000} {
			got, ok := h.ClosedH(n)
			if !ok {
				if ab := p.alpha + p.beta; !(math.Abs(ab) <= 0.05) {
					t.Errorf("alpha %g, beta %g, n %d: the closed form declined at alpha + beta = %g", p.alpha, p.beta, n, ab)
				}
				continue
			}
			closed++
			table := h.H(n)
			if d := math.Abs(got - table); !(d <= 1e-13*math.Abs(table)) {
				t.Errorf("alpha %g, beta %g: closed H_%d = %v, table %v (rel %.2g)", p.alpha, p.beta, n, got, table, d/math.Abs(table))
			}
			if n <= 2000 {
				want := naive(n, p.alpha, p.beta)
				if d := math.Abs(got - want); !(d <= 1e-11*math.Abs(want)) {
					t.Errorf("alpha %g, beta %g: closed H_%d = %v, naive sum %v (rel %.2g)", p.alpha, p.beta, n, got, want, d/math.Abs(want))
				}
			}
		}
		if p.alpha+p.beta == 0 && closed > 1 { // H_0 only
			t.Errorf("alpha + beta = 0: the closed form answered for %d n", closed)
		}
		if !(math.Abs(p.alpha+p.beta) <= 0.05) && closed != 9 {
			t.Errorf("alpha %g, beta %g: closed form used for %d of 9 n", p.alpha, p.beta, closed)
		}
	}
}

// TestAlphaBetaStatsNoTableGrowth: AlphaBetaStats.LogPriorS, the target of
// every alpha/beta evaluation (EM's golden-section search, the sampler's
// slice updates), no longer grows the H table to the tree's size for each
// new (alpha, beta) when alpha + beta is away from 0 (it did: O(N) per
// evaluation), and gives the tree walk's LogPriorS.
func TestAlphaBetaStatsNoTableGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tr := priorSampleTree(rng, 300, 1, 0.3, DivInv{C: 1})
	stats := NewAlphaBetaStats(tr, DivInv{C: 1})
	for _, p := range []struct{ alpha, beta float64 }{{1, 0.3}, {0.7, 0.1}, {3, 0.6}, {-0.2, 0.3}} {
		h, err := NewHarmonic(p.alpha, p.beta)
		if err != nil {
			t.Fatal(err)
		}
		got := stats.LogPriorS(p.alpha, p.beta, h)
		if h.Len() != 0 {
			t.Errorf("alpha %g, beta %g: the table grew to %d", p.alpha, p.beta, h.Len())
		}
		want := LogPriorS(tr, p.alpha, p.beta, DivInv{C: 1}, h)
		if !(math.Abs(got-want) <= 1e-10*(1+math.Abs(want))) {
			t.Errorf("alpha %g, beta %g: AlphaBetaStats.LogPriorS %v, LogPriorS %v", p.alpha, p.beta, got, want)
		}
	}
}

// BenchmarkAlphaBetaLogPriorS1e4 evaluates AlphaBetaStats.LogPriorS of a
// 10⁴-leaf tree at a new (alpha, beta) each time, as a golden-section
// search over alpha does.
func BenchmarkAlphaBetaLogPriorS1e4(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	tr := priorSampleTree(rng, 10000, 1, 0.3, DivInv{C: 1})
	stats := NewAlphaBetaStats(tr, DivInv{C: 1})
	h, _ := NewHarmonic(1, 0.3)
	b.ResetTimer()
	for i := range b.N {
		stats.LogPriorS(1+float64(i%100)*1e-3, 0.3, h)
	}
}
