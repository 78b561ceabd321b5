package scalar

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// truncMoments returns the mean and variance of N(mu, sd²) truncated to
// (lo, ∞) (above = true) or (−∞, lo) (above = false), from the closed forms
// with the inverse Mills ratio λ = φ(α)/(1 − Φ(α)), 1 − Φ via erfc:
//
//	above: mean = mu + sd λ(α),  var = sd² (1 + α λ(α) − λ(α)²),  α = (lo − mu)/sd;
//	below: mean = mu − sd φ(β)/Φ(β),  var = sd² (1 − β φ(β)/Φ(β) − (φ(β)/Φ(β))²),  β = (lo − mu)/sd.
func truncMoments(mu, sd, lo float64, above bool) (mean, variance float64) {
	a := (lo - mu) / sd
	if above {
		l := normPDF(a) / normCDF(-a)
		return mu + sd*l, sd * sd * (1 + a*l - l*l)
	}
	r := normPDF(a) / normCDF(a)
	return mu - sd*r, sd * sd * (1 - a*r - r*r)
}

// truncCDF is the CDF at x of the same truncated normal.
func truncCDF(x, mu, sd, lo float64, above bool) float64 {
	z, a := (x-mu)/sd, (lo-mu)/sd
	if above {
		if x <= lo {
			return 0
		}
		return 1 - normCDF(-z)/normCDF(-a)
	}
	if x >= lo {
		return 1
	}
	return normCDF(z) / normCDF(a)
}

func drawTrunc(rng *rand.Rand, mu, sd, lo float64, above bool) float64 {
	if above {
		return NormalAbove(rng, mu, sd, lo)
	}
	return NormalBelow(rng, mu, sd, lo)
}

// TestTruncNormalMoments compares the mean and variance of iid draws with the
// closed forms, for means on both sides of the bound and far in both tails,
// and checks every draw is on the right side. Below 0 with mean 1e3 and sd
// 3 (α = −333) Φ(α) underflows and the closed form is NaN, which no
// comparison can fail against: that side is left to TestTruncNormalFarTail
// (its mirrored NormalBelow cases), and a closed form that is not finite
// is an error.
func TestTruncNormalMoments(t *testing.T) {
	const n = 100000
	type tcase struct {
		mu, sd, lo float64
		aboveOnly  bool
	}
	var cases []tcase
	for _, mu := range []float64{-10, -3, -0.25, 0, 0.3, 2, 8} {
		cases = append(cases, tcase{mu, 1, 0, false})
	}
	cases = append(cases, tcase{-1, 2.5, 4, false}, tcase{5, 0.1, 5.2, false}, tcase{-30, 1, 0, false}, tcase{1e3, 3, 0, true})
	rng := rand.New(rand.NewPCG(61, 62))
	xs := make([]float64, n)
	sq := make([]float64, n)
	for _, tc := range cases {
		for _, above := range []bool{true, false} {
			if tc.aboveOnly && !above {
				continue
			}
			name := fmt.Sprintf("mu=%v sd=%v above=%v lo=%v", tc.mu, tc.sd, above, tc.lo)
			mean, variance := truncMoments(tc.mu, tc.sd, tc.lo, above)
			if math.IsNaN(mean) || math.IsInf(mean, 0) || !(variance > 0) || math.IsInf(variance, 1) {
				t.Fatalf("%s: closed form mean %v, variance %v: not a reference", name, mean, variance)
			}
			for k := range xs {
				x := drawTrunc(rng, tc.mu, tc.sd, tc.lo, above)
				if above && !(x > tc.lo) || !above && !(x < tc.lo) || math.IsInf(x, 0) {
					t.Fatalf("%s: draw %v on the wrong side", name, x)
				}
				xs[k] = x
				sq[k] = (x - mean) * (x - mean)
			}
			// The draws are iid: batch means reduce to the usual standard
			// error, and the same helper estimates it.
			if m, se := batchMeans(xs, 100); !(math.Abs(m-mean) <= 4*se) {
				t.Errorf("%s: mean %.8g ± %.2g, want %.8g", name, m, se, mean)
			}
			if v, se := batchMeans(sq, 100); !(math.Abs(v-variance) <= 4*se) {
				t.Errorf("%s: variance %.8g ± %.2g, want %.8g", name, v, se, variance)
			}
		}
	}
}

// TestTruncNormalFarTail checks bounds too far out for 1 − Φ to be
// represented: as a → ∞ the scaled excess a·(X − lo)/sd tends to an
// Exponential(1), with mean 1 − 2/a² + O(a⁻⁴) and variance 1 + O(a⁻²).
// Each case is checked for NormalAbove and, mirrored, for NormalBelow
// (−NormalBelow(−mu, sd, −lo) has the same law), whose far tail
// TestTruncNormalMoments cannot check against its closed form.
func TestTruncNormalFarTail(t *testing.T) {
	const n = 100000
	rng := rand.New(rand.NewPCG(71, 72))
	for _, tc := range []struct{ mu, sd, lo float64 }{
		{-1e3, 1, 0}, {-1e3, 3, 0}, {-1e8, 1, 0}, {0, 1e-3, 7}, {-1e300, 1e-300, 0},
	} {
		for _, mirrored := range []bool{false, true} {
			name := fmt.Sprintf("%+v mirrored %v", tc, mirrored)
			a := (tc.lo - tc.mu) / tc.sd
			ys := make([]float64, n)
			for k := range ys {
				x := NormalAbove(rng, tc.mu, tc.sd, tc.lo)
				if mirrored {
					x = -NormalBelow(rng, -tc.mu, tc.sd, -tc.lo)
				}
				if !(x > tc.lo) || math.IsInf(x, 0) {
					t.Fatalf("%s: draw %v not above lo", name, x)
				}
				if math.IsInf(a, 1) {
					ys[k] = 1
					continue
				}
				ys[k] = a * (x - tc.lo) / tc.sd
			}
			if math.IsInf(a, 1) {
				continue
			}
			m, se := batchMeans(ys, 100)
			if want := 1 - 2/(a*a); !(math.Abs(m-want) <= 4*se) {
				t.Errorf("%s: scaled excess mean %.6g ± %.2g, want %.6g", name, m, se, want)
			}
			for k := range ys {
				ys[k] = (ys[k] - 1) * (ys[k] - 1)
			}
			if v, se := batchMeans(ys, 100); !(math.Abs(v-1) <= 4*se+1/(a*a)) {
				t.Errorf("%s: scaled excess variance %.6g ± %.2g, want 1", name, v, se)
			}
		}
	}
}

// TestTruncNormalUnresolved checks bounds whose spacing of float64 values
// exceeds the spread of the truncated normal: the draw must still end, above
// lo, within a few spacings of it.
func TestTruncNormalUnresolved(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	for _, tc := range []struct{ mu, sd, lo float64 }{
		{2, 1, 1e200}, {1e20, 1, 1e20}, {1e20, 1, 1e20 - 1}, {-1e20, 1, -1e20},
	} {
		spacing := math.Nextafter(tc.lo, math.Inf(1)) - tc.lo
		for range 100 {
			x := NormalAbove(rng, tc.mu, tc.sd, tc.lo)
			if !(x > tc.lo) || x-tc.lo > 2*spacing {
				t.Fatalf("%+v: draw %v, want within 2 spacings above lo", tc, x)
			}
			if y := NormalBelow(rng, -tc.mu, tc.sd, -tc.lo); !(y < -tc.lo) || -tc.lo-y > 2*spacing {
				t.Fatalf("mirror of %+v: draw %v, want within 2 spacings below −lo", tc, y)
			}
		}
	}
}

// TestTruncNormalKS applies the one-sample Kolmogorov-Smirnov test against
// the truncated CDF. With n = 20000, √n·D > 1.95 has probability 0.001 under
// the null hypothesis.
func TestTruncNormalKS(t *testing.T) {
	const n = 20000
	rng := rand.New(rand.NewPCG(81, 82))
	xs := make([]float64, n)
	for _, tc := range []struct {
		mu, sd, lo float64
		above      bool
	}{
		{0, 1, 0, true}, {-3, 1, 0, true}, {-10, 1, 0, true}, {2, 1, 0, false},
		{8, 1, 0, false}, {-0.25, 1, 0, true}, {1, 2, -1, false},
	} {
		for k := range xs {
			xs[k] = drawTrunc(rng, tc.mu, tc.sd, tc.lo, tc.above)
		}
		slices.Sort(xs)
		d := 0.0
		for k, x := range xs {
			f := truncCDF(x, tc.mu, tc.sd, tc.lo, tc.above)
			d = max(d, math.Abs(f-float64(k)/n), math.Abs(float64(k+1)/n-f))
		}
		if s := math.Sqrt(n) * d; s > 1.95 {
			t.Errorf("%+v: KS statistic √n·D = %.3f > 1.95", tc, s)
		}
	}
}

// TestTruncNormalNoAlloc checks that draws allocate nothing.
func TestTruncNormalNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	if a := testing.AllocsPerRun(100, func() {
		sink += NormalAbove(rng, -5, 1, 0) + NormalBelow(rng, 1, 1, 0) + StdNormalTail(rng, 3)
	}); a != 0 {
		t.Errorf("%v allocations per draw", a)
	}
}

// TestTruncNormalPanics checks the documented programmer-error panics.
func TestTruncNormalPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ mu, sd, lo float64 }{
		{0, 0, 0}, {0, -1, 0}, {0, math.NaN(), 0}, {math.NaN(), 1, 0}, {0, 1, math.Inf(1)}, {0, 1, math.NaN()},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NormalAbove%+v: no panic", tc)
				}
			}()
			NormalAbove(rng, tc.mu, tc.sd, tc.lo)
		}()
	}
}
