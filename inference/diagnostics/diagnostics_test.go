package diagnostics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// ---------------------------------------------------------------------------
// Independent reference implementations (textbook formulas, brute force).

// refSplit splits every chain into halves of floor(L/2), dropping the middle
// draw of odd chains (BDA3 Sec. 11.4; Vehtari et al. 2021 Sec. 4.1).
func refSplit(chains [][]float64) [][]float64 {
	var out [][]float64
	for _, c := range chains {
		h := len(c) / 2
		out = append(out, c[:h], c[len(c)-h:])
	}
	return out
}

// refRhat is the textbook R-hat (BDA3 eq. 11.1–11.4) of the given chains:
// B = n/(m−1) Σ (θ̄_j − θ̄)², W = (1/m) Σ s_j², var⁺ = (n−1)/n W + B/n.
func refRhat(chains [][]float64) float64 {
	m, n := float64(len(chains)), float64(len(chains[0]))
	means := make([]float64, len(chains))
	var grand float64
	for j, c := range chains {
		for _, v := range c {
			means[j] += v
		}
		means[j] /= n
		grand += means[j] / m
	}
	var B, W float64
	for j, c := range chains {
		B += (means[j] - grand) * (means[j] - grand)
		var s2 float64
		for _, v := range c {
			s2 += (v - means[j]) * (v - means[j])
		}
		W += s2 / (n - 1) / m
	}
	B *= n / (m - 1)
	return math.Sqrt(((n-1)/n*W + B/n) / W)
}

// refZ rank-normalises all draws of chains jointly by brute force: the
// average rank of x is 1 + #{y < x} + (#{y = x} − 1)/2.
func refZ(chains [][]float64) [][]float64 {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	S := float64(len(all))
	out := make([][]float64, len(chains))
	for j, c := range chains {
		for _, x := range c {
			var less, eq float64
			for _, y := range all {
				if y < x {
					less++
				} else if y == x {
					eq++
				}
			}
			r := 1 + less + (eq-1)/2
			out[j] = append(out[j], distuv.UnitNormal.Quantile((r-0.375)/(S+0.25)))
		}
	}
	return out
}

func refMedian(chains [][]float64) float64 {
	var all []float64
	for _, c := range chains {
		all = append(all, c...)
	}
	slices.Sort(all)
	n := len(all)
	if n%2 == 1 {
		return all[n/2]
	}
	return (all[n/2-1] + all[n/2]) / 2
}

func refFold(chains [][]float64) [][]float64 {
	med := refMedian(chains)
	out := make([][]float64, len(chains))
	for j, c := range chains {
		for _, v := range c {
			out[j] = append(out[j], math.Abs(v-med))
		}
	}
	return out
}

// refAutocov is the direct O(n²) biased autocovariance.
func refAutocov(y []float64) []float64 {
	n := len(y)
	var mu float64
	for _, v := range y {
		mu += v
	}
	mu /= float64(n)
	out := make([]float64, n)
	for t := range n {
		for i := 0; i+t < n; i++ {
			out[t] += (y[i] - mu) * (y[i+t] - mu)
		}
		out[t] /= float64(n)
	}
	return out
}

// ar1 draws m stationary Gaussian AR(1) chains of n draws with coefficient
// rho and unit marginal variance.
func ar1(r *rand.Rand, m, n int, rho float64) [][]float64 {
	s := math.Sqrt(1 - rho*rho)
	ch := make([][]float64, m)
	for c := range ch {
		ch[c] = make([]float64, n)
		x := r.NormFloat64()
		for i := range ch[c] {
			if i > 0 {
				x = rho*x + s*r.NormFloat64()
			}
			ch[c][i] = x
		}
	}
	return ch
}

func normals(r *rand.Rand, m, n int, mu, sd []float64) [][]float64 {
	ch := make([][]float64, m)
	for c := range ch {
		ch[c] = make([]float64, n)
		for i := range ch[c] {
			ch[c][i] = mu[c] + sd[c]*r.NormFloat64()
		}
	}
	return ch
}

func fill(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func approxEq(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// ---------------------------------------------------------------------------

func TestQuantileType7(t *testing.T) {
	// Expected values by hand from h = 1 + (N−1)p, Q = x_⌊h⌋ + frac(h)(x_⌊h⌋+1 − x_⌊h⌋),
	// which is R's quantile(x, p) (type = 7).
	inf := math.Inf(1)
	tests := []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},               // h = 2.5
		{[]float64{1, 2, 3, 4}, 0.05, 1.15},             // h = 1.15
		{[]float64{4, 3, 2, 1}, 0.95, 3.85},             // h = 3.85, unsorted input
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6}, 0.05, 1},    // sorted 1 1 2 3 4 5 6 9, h = 1.35
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6}, 0.5, 3.5},   // h = 4.5
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6}, 0.95, 7.95}, // h = 7.65: 6 + 0.65·3
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6}, 0, 1},
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6}, 1, 9},
		{[]float64{10, 20, 30, 40, 50}, 0.25, 20}, // h = 2 exactly
		{[]float64{10, 20, 30, 40, 50}, 0.9, 46},  // h = 4.6
		{[]float64{7}, 0.3, 7},
		{[]float64{1, inf}, 0.5, inf},
		{[]float64{inf, inf}, 0.5, inf}, // R does not interpolate equal values: no Inf − Inf
		{nil, 0.5, math.NaN()},
		{[]float64{1, 2}, -0.1, math.NaN()},
		{[]float64{1, 2}, 1.1, math.NaN()},
		{[]float64{1, 2}, math.NaN(), math.NaN()},
		{[]float64{1, math.NaN()}, 0.5, math.NaN()},
	}
	for _, tc := range tests {
		orig := slices.Clone(tc.x)
		got := Quantile(tc.x, tc.p)
		if math.IsNaN(tc.want) {
			if !math.IsNaN(got) {
				t.Errorf("Quantile(%v, %v) = %v, want NaN", tc.x, tc.p, got)
			}
			continue
		}
		if !approxEq(got, tc.want, 1e-14) && got != tc.want {
			t.Errorf("Quantile(%v, %v) = %v, want %v", tc.x, tc.p, got, tc.want)
		}
		if !slices.Equal(orig, tc.x) {
			t.Errorf("Quantile modified its input: %v", tc.x)
		}
	}
}

func TestClassicSplitRhatHandChecked(t *testing.T) {
	// Split chains [1 3] [2 4] [5 7] [6 8]: means 2 3 6 7 (grand 4.5),
	// variances all 2, so W = 2, B = 2/3·(2.5²+1.5²+1.5²+2.5²) = 34/3,
	// var⁺ = ½·2 + (34/3)/2 = 20/3 and R = sqrt(10/3).
	chains := [][]float64{{1, 3, 2, 4}, {5, 7, 6, 8}}
	want := math.Sqrt(10.0 / 3)
	if got := ClassicSplitRhat(chains); !(math.Abs(got-want) <= 1e-14) {
		t.Errorf("ClassicSplitRhat = %.17g, want sqrt(10/3) = %.17g", got, want)
	}
	if got := refRhat(refSplit(chains)); !(math.Abs(got-want) <= 1e-14) {
		t.Errorf("reference formula = %.17g, want %.17g", got, want)
	}
}

func TestRhatAgainstTextbook(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ties := func(ch [][]float64) [][]float64 { // coarse rounding creates many ties
		for _, c := range ch {
			for i := range c {
				c[i] = math.Round(c[i] * 2)
			}
		}
		return ch
	}
	tests := []struct {
		name   string
		chains [][]float64
	}{
		{"even", normals(r, 3, 20, []float64{0, 0.5, 1}, []float64{1, 1, 2})},
		{"odd drops middle", normals(r, 2, 15, []float64{0, 0}, []float64{1, 3})},
		{"single chain", normals(r, 1, 41, []float64{0}, []float64{1})},
		{"ties", ties(normals(r, 4, 30, []float64{0, 0, 0.3, 0}, []float64{1, 1, 1, 2}))},
		{"ragged", [][]float64{{1, 5, 2, 8, 3, 9, 4}, {2, 7, 1, 8, 2, 8, 1, 8, 2}, {3, 1, 4, 1, 5, 9, 2, 6}}},
		{"short", [][]float64{{1, 2, 3, 4}, {2, 2, 5, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			L := len(tc.chains[0])
			var trunc [][]float64
			for _, c := range tc.chains {
				L = min(L, len(c))
			}
			for _, c := range tc.chains {
				trunc = append(trunc, c[:L])
			}
			classic := refRhat(refSplit(trunc))
			bulk := refRhat(refZ(refSplit(trunc)))
			tail := refRhat(refZ(refSplit(refFold(trunc))))
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"ClassicSplitRhat", ClassicSplitRhat(tc.chains), classic},
				{"RhatBulk", RhatBulk(tc.chains), bulk},
				{"RhatTail", RhatTail(tc.chains), tail},
				{"SplitRhat", SplitRhat(tc.chains), math.Max(bulk, tail)},
				{"Summarize.Rhat", Summarize("x", tc.chains).Rhat, math.Max(bulk, tail)},
			} {
				if !approxEq(c.got, c.want, 1e-12) {
					t.Errorf("%s = %.15g, textbook %.15g", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestRhatIID(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 100))
		ch := normals(r, 4, 2000, make([]float64, 4), []float64{1, 1, 1, 1})
		// Under convergence R̂² − 1 ≈ (B/W − 1)/n with B/W ~ χ²₇/7 for 8
		// split chains of n = 1000, so |R̂ − 1| is of order 1e-3.
		if got := SplitRhat(ch); !(math.Abs(got-1) <= 0.01) {
			t.Errorf("seed %d: SplitRhat = %v, want 1 ± 0.01", seed, got)
		}
		if got := ClassicSplitRhat(ch); !(math.Abs(got-1) <= 0.01) {
			t.Errorf("seed %d: ClassicSplitRhat = %v, want 1 ± 0.01", seed, got)
		}
	}
}

func TestRhatDetectsNonConvergence(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 200))
		// One chain's mean shifted by 2 sd: B/n ≈ var of the split means
		// (2·1.5² + 6·0.5²)/7 ≈ 0.86 against W ≲ 1, so R̂ ≈ 1.3 ≫ 1.1.
		shifted := normals(r, 4, 1000, []float64{0, 0, 0, 2}, []float64{1, 1, 1, 1})
		if got := RhatBulk(shifted); got < 1.1 {
			t.Errorf("seed %d: RhatBulk with shifted chain = %v, want > 1.1", seed, got)
		}
		if got := SplitRhat(shifted); got < 1.1 {
			t.Errorf("seed %d: SplitRhat with shifted chain = %v, want > 1.1", seed, got)
		}
		// Same location, one chain 3× wider: the bulk R-hat sees nothing
		// (equal medians), the folded R-hat sees the wide chain's larger |x|.
		wide := normals(r, 4, 1000, []float64{0, 0, 0, 0}, []float64{1, 1, 1, 3})
		bulk, tail := RhatBulk(wide), RhatTail(wide)
		if bulk > 1.02 {
			t.Errorf("seed %d: RhatBulk with wide chain = %v, want < 1.02", seed, bulk)
		}
		if tail < 1.1 {
			t.Errorf("seed %d: RhatTail with wide chain = %v, want > 1.1", seed, tail)
		}
		if got := SplitRhat(wide); got != tail {
			t.Errorf("seed %d: SplitRhat = %v, want max(bulk, tail) = %v", seed, got, tail)
		}
	}
}

func TestAutocovFFTMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	w := new(workspace)
	for _, n := range []int{3, 4, 7, 13, 64, 101, 997, 1000} {
		y := ar1(r, 1, n, 0.7)[0]
		want := refAutocov(y)
		got := make([]float64, n)
		w.addAutocov(got, y)
		for k := range n {
			if !(math.Abs(got[k]-want[k]) <= 1e-12*math.Abs(want[0])) {
				t.Fatalf("n=%d lag %d: FFT %v, direct %v", n, k, got[k], want[k])
			}
		}
	}
	got := make([]float64, 5)
	w.addAutocov(got, fill(2, 5))
	if slices.ContainsFunc(got, func(v float64) bool { return v != 0 }) {
		t.Errorf("constant chain: autocovariance %v, want zeros", got)
	}
}

func TestNextGood(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 2}, {2, 2}, {3, 3}, {7, 8}, {11, 12}, {13, 15}, {49, 50}, {1001, 1024}} {
		if got := nextGood(tc.n); got != tc.want {
			t.Errorf("nextGood(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// Sampling variability of ESS/S: over 100 seeds the standard deviation of
// ESS_bulk/S for iid normal chains was measured as about 2.4/√S to 2.9/√S,
// consistent with the leading term 2ρ̂(1) of τ̂ (sd 2/√S) plus the few
// further pairs Geyer's sequence admits; the mean was 0.986–0.991 (the
// initial positive sequence keeps only positive pairs, biasing τ̂ up). The
// tolerances below are 4 of those standard deviations plus 0.02 for bias.
func TestESSIID(t *testing.T) {
	const m, n = 4, 2000
	S := float64(m * n)
	tol := 0.02 + 4*3/math.Sqrt(S)
	const seeds = 8
	var sum float64
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 300))
		ch := normals(r, m, n, make([]float64, m), []float64{1, 1, 1, 1})
		bulk := ESSBulk(ch) / S
		sum += bulk
		if !(math.Abs(bulk-1) <= tol) {
			t.Errorf("seed %d: ESSBulk/S = %.4f, want 1 ± %.3f", seed, bulk, tol)
		}
		if mean := ESSMean(ch) / S; !(math.Abs(mean-1) <= tol) {
			t.Errorf("seed %d: ESSMean/S = %.4f, want 1 ± %.3f", seed, mean, tol)
		}
		if tail := ESSTail(ch) / S; !(math.Abs(tail-1) <= tol+0.05) {
			t.Errorf("seed %d: ESSTail/S = %.4f, want 1 ± %.3f", seed, tail, tol+0.05)
		}
	}
	if avg := sum / seeds; !(math.Abs(avg-1) <= 0.02+4*3/math.Sqrt(S*seeds)) {
		t.Errorf("mean ESSBulk/S over %d seeds = %.4f", seeds, avg)
	}
}

// For a stationary Gaussian AR(1) with coefficient ρ the integrated
// autocorrelation time is τ = (1+ρ)/(1−ρ), so ESS = S(1−ρ)/(1+ρ). The
// measured standard deviation of ESS/(S(1−ρ)/(1+ρ)) over 100 seeds was
// c/√S with c ≈ 6.1 (ρ = 0.5), 10 (ρ = 0.8), 5.5 (ρ = −0.3); tolerances are
// 4c/√S + 0.01 (about 10% and 15% at S = 80000).
func TestESSAR1(t *testing.T) {
	const m, n = 4, 20000
	S := float64(m * n)
	for _, tc := range []struct{ rho, c float64 }{{0.5, 6.1}, {0.8, 10}, {-0.3, 5.5}} {
		want := S * (1 - tc.rho) / (1 + tc.rho)
		tol := 0.01 + 4*tc.c/math.Sqrt(S)
		for seed := range uint64(3) {
			r := rand.New(rand.NewPCG(seed, 400))
			ch := ar1(r, m, n, tc.rho)
			if got := ESSBulk(ch) / want; !(math.Abs(got-1) <= tol) {
				t.Errorf("rho=%v seed %d: ESSBulk/theory = %.4f, want 1 ± %.3f", tc.rho, seed, got, tol)
			}
			if got := ESSMean(ch) / want; !(math.Abs(got-1) <= tol) {
				t.Errorf("rho=%v seed %d: ESSMean/theory = %.4f, want 1 ± %.3f", tc.rho, seed, got, tol)
			}
		}
	}
}

// indicatorTau is the integrated autocorrelation time of I(X_t ≤ q) for a
// stationary Gaussian AR(1) with coefficient rho, q = Φ⁻¹(p):
// Cov(I_0, I_t) = Φ₂(q, q; ρ^t) − p² = ∫_0^{ρ^t} φ₂(q, q; s) ds (Plackett),
// φ₂(q, q; s) = exp(−q²/(1+s)) / (2π sqrt(1−s²)).
func indicatorTau(rho, p float64) float64 {
	q := distuv.UnitNormal.Quantile(p)
	phi2 := func(s float64) float64 { return math.Exp(-q*q/(1+s)) / (2 * math.Pi * math.Sqrt(1-s*s)) }
	tau := 1.0
	for k := 1; ; k++ {
		r := math.Pow(rho, float64(k))
		if math.Abs(r) < 1e-14 {
			break
		}
		cov := quad.Fixed(phi2, min(0, r), max(0, r), 40, nil, 0)
		if r < 0 {
			cov = -cov
		}
		tau += 2 * cov / (p * (1 - p))
	}
	return tau
}

// The 5% and 95% indicator ESS against the closed form above. The measured
// sd of ESS_q05/S at ρ = 0.5 was 4.4/√S; relative to the theory (≈ 0.59·S)
// that is 7.4/√S, giving a tolerance 4·7.4/√S + 0.01 ≈ 11.5% at S = 80000.
func TestESSQuantileAR1(t *testing.T) {
	const m, n, rho = 4, 20000, 0.5
	S := float64(m * n)
	tol := 0.01 + 4*7.4/math.Sqrt(S)
	want := S / indicatorTau(rho, 0.05) // 0.95 has the same τ by symmetry
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 500))
		ch := ar1(r, m, n, rho)
		for _, p := range []float64{0.05, 0.95} {
			if got := ESSQuantile(ch, p) / want; !(math.Abs(got-1) <= tol) {
				t.Errorf("seed %d p=%v: ESSQuantile/theory = %.4f (theory %.0f), want 1 ± %.3f", seed, p, got, want, tol)
			}
		}
		tail := ESSTail(ch)
		if tail != math.Min(ESSQuantile(ch, 0.05), ESSQuantile(ch, 0.95)) {
			t.Errorf("seed %d: ESSTail %v is not the min of the 5%% and 95%% ESS", seed, tail)
		}
	}
}

func TestSummarizeMoments(t *testing.T) {
	chains := [][]float64{{1, 3, 2, 4, 10}, {5, 7, 6, 8}} // ragged: truncated to 4
	s := Summarize("theta", chains)
	// Draws 1..8: mean 4.5, sd sqrt(42/7) = sqrt(6); type 7 quantiles at
	// h = 1.35, 4.5, 7.65 → 1.35, 4.5, 7.65.
	want := Summary{Name: "theta", Mean: 4.5, SD: math.Sqrt(6), Q5: 1.35, Q50: 4.5, Q95: 7.65, N: 8}
	if s.Name != want.Name || s.N != want.N || !approxEq(s.Mean, want.Mean, 1e-14) || !approxEq(s.SD, want.SD, 1e-14) ||
		!approxEq(s.Q5, want.Q5, 1e-14) || !approxEq(s.Q50, want.Q50, 1e-14) || !approxEq(s.Q95, want.Q95, 1e-14) {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	// Split length 2: R-hat defined, ESS not (needs 3 draws per split chain).
	if math.IsNaN(s.Rhat) || !math.IsNaN(s.ESSBulk) || !math.IsNaN(s.ESSTail) {
		t.Errorf("Summarize(L=4): rhat %v ess %v %v, want finite, NaN, NaN", s.Rhat, s.ESSBulk, s.ESSTail)
	}
}

func TestSummarizeConsistentWithParts(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	ch := ar1(r, 3, 501, 0.6)
	ch[1] = append(ch[1], 1, 2, 3) // ragged
	s := Summarize("a", ch)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Rhat", s.Rhat, SplitRhat(ch)},
		{"ESSBulk", s.ESSBulk, ESSBulk(ch)},
		{"ESSTail", s.ESSTail, ESSTail(ch)},
	} {
		if c.got != c.want {
			t.Errorf("Summarize.%s = %v, standalone %v", c.name, c.got, c.want)
		}
	}
	if s.N != 3*501 {
		t.Errorf("N = %d, want %d", s.N, 3*501)
	}
}

func TestEdgeCases(t *testing.T) {
	nan := math.NaN()
	r := rand.New(rand.NewPCG(31, 32))
	long := normals(r, 1, 400, []float64{0}, []float64{1})
	type want struct{ rhatNaN, essNaN, tailNaN bool }
	tests := []struct {
		name   string
		chains [][]float64
		want   want
		n      int
	}{
		{"nil", nil, want{true, true, true}, 0},
		{"empty chain", [][]float64{{1, 2, 3}, {}}, want{true, true, true}, 0},
		{"one draw", [][]float64{{1}, {2}}, want{true, true, true}, 2},
		{"three draws", [][]float64{{1, 2, 3}, {3, 1, 2}}, want{true, true, true}, 6},
		{"four draws", [][]float64{{1, 2, 3, 4}, {3, 1, 2, 5}}, want{false, true, true}, 8},
		{"five draws", [][]float64{{1, 2, 3, 4, 0}, {3, 1, 2, 5, 7}}, want{false, true, true}, 10},
		{"six draws", [][]float64{{1, 2, 3, 4, 0, 6}, {3, 1, 2, 5, 7, 9}}, want{false, false, false}, 12},
		{"constant", [][]float64{fill(2, 100), fill(2, 100)}, want{true, true, true}, 200},
		{"single long chain", long, want{false, false, false}, 400},
		{"NaN draw", [][]float64{{1, 2, nan, 4, 5, 6}, {1, 2, 3, 4, 5, 6}}, want{true, true, true}, 12},
		{"Inf draw", [][]float64{{1, 2, math.Inf(1), 4, 5, 6}, {1, 2, 3, 4, 5, 7}}, want{false, false, true}, 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.name, tc.chains)
			if s.N != tc.n {
				t.Errorf("N = %d, want %d", s.N, tc.n)
			}
			if math.IsNaN(s.Rhat) != tc.want.rhatNaN {
				t.Errorf("Rhat = %v, want NaN: %v", s.Rhat, tc.want.rhatNaN)
			}
			if math.IsNaN(s.ESSBulk) != tc.want.essNaN {
				t.Errorf("ESSBulk = %v, want NaN: %v", s.ESSBulk, tc.want.essNaN)
			}
			if math.IsNaN(s.ESSTail) != tc.want.tailNaN {
				t.Errorf("ESSTail = %v, want NaN: %v", s.ESSTail, tc.want.tailNaN)
			}
		})
	}
	if got := SplitRhat(long); !(math.Abs(got-1) <= 0.05) {
		t.Errorf("single iid chain of 400: SplitRhat = %v, want ≈ 1", got)
	}
	c := Summarize("c", [][]float64{fill(2, 10), fill(2, 10)})
	if c.Mean != 2 || c.SD != 0 || c.Q5 != 2 || c.Q50 != 2 || c.Q95 != 2 {
		t.Errorf("constant chains: %+v", c)
	}
	// Each chain constant but different: W = 0 < B, so the classic and bulk
	// R-hats are +Inf; the folded draws |x − 0.5| are constant, so the tail
	// R-hat is NaN and, as R's max(Inf, NA) is NA, so is posterior::rhat.
	split := [][]float64{fill(0, 10), fill(1, 10)}
	if got := ClassicSplitRhat(split); !math.IsInf(got, 1) {
		t.Errorf("distinct constant chains: ClassicSplitRhat = %v, want +Inf", got)
	}
	if got := RhatBulk(split); !math.IsInf(got, 1) {
		t.Errorf("distinct constant chains: RhatBulk = %v, want +Inf", got)
	}
	if got, s := SplitRhat(split), Summarize("s", split); !math.IsNaN(got) || !math.IsNaN(s.Rhat) {
		t.Errorf("distinct constant chains: SplitRhat = %v, Summary.Rhat = %v, want NaN", got, s.Rhat)
	}
	if !math.IsNaN(ESSQuantile(long, 1.5)) {
		t.Error("ESSQuantile(p = 1.5) is not NaN")
	}
}

// posterior's .ess, transcribed from R, sums rho_hat_t[1:max_t]; for
// max_t = 0 (split chains of ≤ 5 draws) R's 1:0 is c(1, 0), which selects
// rho_hat_t[1] = 1, so τ̂ = −1 + 2 + 1 = 2 and ESS = S/2 whatever the draws.
func TestESSShortChainMatchesPosterior(t *testing.T) {
	chains := [][]float64{{0.3, -1.2, 0.8, 2.1, -0.4, 0.9, 1.5}, {1.1, 0.2, -0.7, 0.5, 1.9, -1.3, 0.1}}
	// L = 7 → 4 split chains of 3 draws, S = 12.
	if got := ESSMean(chains); got != 6 {
		t.Errorf("ESSMean = %v, want S/2 = 6", got)
	}
	if got := ESSBulk(chains); got != 6 {
		t.Errorf("ESSBulk = %v, want S/2 = 6", got)
	}
}
