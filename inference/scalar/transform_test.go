package scalar

import (
	"math"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

var transformCases = []struct {
	name   string
	tr     Transform
	lo, hi float64
	xs     []float64 // interior points
	out    []float64 // points outside the open interval
}{
	{"identity", Identity(), math.Inf(-1), math.Inf(1), []float64{-1e300, -2, 0, 3.5, 1e300}, []float64{math.NaN(), math.Inf(1), math.Inf(-1)}},
	{"zero value", Transform{}, math.Inf(-1), math.Inf(1), []float64{-2, 0, 3.5}, []float64{math.NaN(), math.Inf(1)}},
	{"positive", Above(0), 0, math.Inf(1), []float64{1e-300, 1e-8, 0.5, 1, 7, 1e300}, []float64{0, -1, math.Inf(1), math.NaN()}},
	{"above −0.6", Above(-0.6), -0.6, math.Inf(1), []float64{-0.59999, -0.3, 0, 5}, []float64{-0.6, -1, math.Inf(1)}},
	{"below 2", Below(2), math.Inf(-1), 2, []float64{-100, 0, 1.9999, 1.5}, []float64{2, 3, math.Inf(-1)}},
	{"unit", Between(0, 1), 0, 1, []float64{1e-300, 1e-9, 0.3, 0.5, 0.999999}, []float64{0, 1, -0.1, 1.1, math.NaN()}},
	{"(−1, 3)", Between(-1, 3), -1, 3, []float64{-0.999, 0, 1, 2.99}, []float64{-1, 3, 4}},
}

// TestTransformRoundTrip checks ToReal and FromReal are inverse, Contains and
// the reported ends.
func TestTransformRoundTrip(t *testing.T) {
	for _, tc := range transformCases {
		if tc.tr.Lo() != tc.lo || tc.tr.Hi() != tc.hi {
			t.Errorf("%s: ends (%v, %v), want (%v, %v)", tc.name, tc.tr.Lo(), tc.tr.Hi(), tc.lo, tc.hi)
		}
		for _, x := range tc.xs {
			if !tc.tr.Contains(x) {
				t.Errorf("%s: Contains(%v) = false", tc.name, x)
			}
			z := tc.tr.ToReal(x)
			back := tc.tr.FromReal(z)
			// Logit near 1 and the shifted logs lose the digits of x that
			// lie below the resolution of the bound's scale, and exp
			// multiplies the relative rounding error of z by |z|.
			scale := math.Max(math.Abs(x), math.Max(finiteOr0(tc.lo), finiteOr0(tc.hi))) * math.Max(1, math.Abs(z))
			if math.IsInf(z, 0) || math.IsNaN(z) || !(math.Abs(back-x) <= 1e-14*scale+1e-300) {
				t.Errorf("%s: FromReal(ToReal(%v)) = %v via z = %v", tc.name, x, back, z)
			}
		}
		for _, x := range tc.out {
			if tc.tr.Contains(x) {
				t.Errorf("%s: Contains(%v) = true", tc.name, x)
			}
		}
	}
}

func finiteOr0(x float64) float64 {
	if math.IsInf(x, 0) {
		return 0
	}
	return math.Abs(x)
}

// TestLogJacobianNumerical compares LogJacobian with the log of a central
// difference of FromReal, and far out with the asymptote.
func TestLogJacobianNumerical(t *testing.T) {
	for _, tc := range transformCases {
		for z := -8.0; z <= 8; z += 0.5 {
			h := 1e-5
			d := (tc.tr.FromReal(z+h) - tc.tr.FromReal(z-h)) / (2 * h)
			want := math.Log(math.Abs(d))
			if got := tc.tr.LogJacobian(z); !(math.Abs(got-want) <= 1e-7) {
				t.Errorf("%s: LogJacobian(%v) = %.12g, numerical %.12g", tc.name, z, got, want)
			}
		}
	}
	// For the logit, log σ(z) + log σ(−z) → −|z| as |z| grows.
	tr := Between(-1, 3)
	for _, z := range []float64{-800, -60, 60, 800} {
		want := math.Log(4) - math.Abs(z)
		if got := tr.LogJacobian(z); !(math.Abs(got-want) <= 1e-12*math.Abs(z)) {
			t.Errorf("(−1, 3): LogJacobian(%v) = %v, want %v", z, got, want)
		}
	}
}

// TestTransformedDensityNormalised checks that a normalised density moved to
// the real line with the log-Jacobian still integrates to 1 (by quadrature
// in z), for gonum's Gamma, Beta and Normal densities.
func TestTransformedDensityNormalised(t *testing.T) {
	cases := []struct {
		name   string
		tr     Transform
		logpdf func(float64) float64
		zlo    float64
		zhi    float64
	}{
		{"gamma(2, 3)", Above(0), distuv.Gamma{Alpha: 2, Beta: 3}.LogProb, -30, 6},
		{"gamma(0.5, 1) shifted by −0.6", Above(-0.6), func(x float64) float64 { return distuv.Gamma{Alpha: 0.5, Beta: 1}.LogProb(x + 0.6) }, -80, 6},
		{"beta(2, 5)", Between(0, 1), distuv.Beta{Alpha: 2, Beta: 5}.LogProb, -40, 40},
		{"beta(0.7, 1.5) on (−1, 3)", Between(-1, 3), func(x float64) float64 {
			return distuv.Beta{Alpha: 0.7, Beta: 1.5}.LogProb((x+1)/4) - math.Log(4)
		}, -120, 60},
		{"normal(1, 2) below 1: half-normal", Below(1), func(x float64) float64 {
			return math.Log(2) + distuv.Normal{Mu: 1, Sigma: 2}.LogProb(x)
		}, -40, 5},
	}
	for _, tc := range cases {
		f := func(z float64) float64 {
			x := tc.tr.FromReal(z)
			if !tc.tr.Contains(x) {
				return 0
			}
			return math.Exp(tc.logpdf(x) + tc.tr.LogJacobian(z))
		}
		if got := quad.Fixed(f, tc.zlo, tc.zhi, 4000, nil, 0); !(math.Abs(got-1) <= 1e-8) {
			t.Errorf("%s: transformed density integrates to %.12g, want 1", tc.name, got)
		}
	}
}

// TestStartAtBoundary checks that a start on the boundary moves just inside.
func TestStartAtBoundary(t *testing.T) {
	cases := []struct {
		tr Transform
		x0 float64
	}{
		{Between(0, 1), 0}, {Between(0, 1), 1}, {Above(0), 0}, {Above(-0.6), -0.6},
		{Below(2), 2}, {Between(-1, 3), -1}, {Between(-1, 3), 3},
	}
	for _, tc := range cases {
		z := tc.tr.startZ(tc.x0)
		x := tc.tr.FromReal(z)
		if math.IsNaN(z) || math.IsInf(z, 0) || !tc.tr.Contains(x) || !(math.Abs(x-tc.x0) <= 1e-12) {
			t.Errorf("(%v, %v) from %v: z = %v, x = %v", tc.tr.Lo(), tc.tr.Hi(), tc.x0, z, x)
		}
	}
	if z := Above(0).startZ(-1); !math.IsNaN(z) {
		t.Errorf("start outside: z = %v, want NaN", z)
	}
}

// TestForSupport checks the transform chosen for each stdlib support.
func TestForSupport(t *testing.T) {
	cases := []struct {
		s      stdlib.Support
		lo, hi float64
		err    bool
	}{
		{stdlib.Real, math.Inf(-1), math.Inf(1), false},
		{stdlib.Positive, 0, math.Inf(1), false},
		{stdlib.NonNegative, 0, math.Inf(1), false},
		{stdlib.Unit, 0, 1, false},
		{stdlib.UnitLeft, 0, 1, false},
		{stdlib.Binary, 0, 0, true},
		{stdlib.Count, 0, 0, true},
	}
	for _, tc := range cases {
		tr, err := ForSupport(tc.s)
		if (err != nil) != tc.err {
			t.Errorf("%v: error %v, want error %v", tc.s, err, tc.err)
			continue
		}
		if err == nil && (tr.Lo() != tc.lo || tr.Hi() != tc.hi) {
			t.Errorf("%v: (%v, %v), want (%v, %v)", tc.s, tr.Lo(), tr.Hi(), tc.lo, tc.hi)
		}
		// Every interior point of the transform lies in the support.
		if err == nil {
			for _, z := range []float64{-30, -1, 0, 2, 30} {
				if x := tr.FromReal(z); !tc.s.Contains(x) {
					t.Errorf("%v: FromReal(%v) = %v not in the support", tc.s, z, x)
				}
			}
		}
	}
}
