package scalar

import (
	"math"
	"testing"
)

// batchMeans returns the mean of xs and its Monte Carlo standard error
// estimated from nb contiguous batch means, which accounts for the
// autocorrelation of an MCMC chain whose integrated autocorrelation time is
// well below len(xs)/nb.
func batchMeans(xs []float64, nb int) (mean, se float64) {
	bs := len(xs) / nb
	means := make([]float64, nb)
	for b := range nb {
		s := 0.0
		for _, x := range xs[b*bs : (b+1)*bs] {
			s += x
		}
		means[b] = s / float64(bs)
		mean += means[b]
	}
	mean /= float64(nb)
	v := 0.0
	for _, m := range means {
		v += (m - mean) * (m - mean)
	}
	v /= float64(nb - 1)
	return mean, math.Sqrt(v / float64(nb))
}

// checkMoments checks, with nb batch means and a tolerance of 4 standard
// errors, the mean, the variance (via the mean of (x − mean)², with the
// known mean) and P(x ≤ q) of a chain against their exact values.
func checkMoments(t *testing.T, name string, xs []float64, nb int, mean, variance, q, cdfQ float64) {
	t.Helper()
	check := func(stat string, ys []float64, want float64) {
		t.Helper()
		got, se := batchMeans(ys, nb)
		if !(se > 0) {
			t.Errorf("%s %s: degenerate standard error %v", name, stat, se)
			return
		}
		if z := (got - want) / se; !(math.Abs(z) <= 4) {
			t.Errorf("%s %s: got %.6g ± %.2g, want %.6g (%.1f standard errors)", name, stat, got, se, want, z)
		}
	}
	sq := make([]float64, len(xs))
	ind := make([]float64, len(xs))
	for i, x := range xs {
		sq[i] = (x - mean) * (x - mean)
		if x <= q {
			ind[i] = 1
		}
	}
	check("mean", xs, mean)
	check("variance", sq, variance)
	check("P(x ≤ q)", ind, cdfQ)
}

// normCDF is Φ(x), accurate in both tails via erfc.
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// normPDF is φ(x).
func normPDF(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
