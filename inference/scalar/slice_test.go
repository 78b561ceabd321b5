package scalar

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// logNormal is the log density of N(mu, sd²) up to a constant.
func logNormal(x, mu, sd float64) float64 {
	d := (x - mu) / sd
	return -d*d/2 - math.Log(sd)
}

// invarianceCase is a target with known mean, variance and CDF at q.
type invarianceCase struct {
	name     string
	slice    Slice
	tr       *Transform // nil: sample on the real line with Sample
	x0       float64
	logf     func(float64) float64
	mean     float64
	variance float64
	q, cdfQ  float64
}

func invarianceCases() []invarianceCase {
	above0, unit := Above(0), Between(0, 1)
	shift, box := Above(-0.6), Between(-1, 3)
	const wA, muA, sdA, muB, sdB = 0.3, -2.0, 0.5, 1.5, 1.0
	mixMean := wA*muA + (1-wA)*muB
	mixSecond := wA*(muA*muA+sdA*sdA) + (1-wA)*(muB*muB+sdB*sdB)
	return []invarianceCase{
		{
			name: "normal", x0: 3,
			logf: func(x float64) float64 { return -x * x / 2 },
			mean: 0, variance: 1, q: 1, cdfQ: normCDF(1),
		},
		{
			name: "normal no stepping out", slice: Slice{Width: 0.5, MaxSteps: 1}, x0: 0,
			logf: func(x float64) float64 { return -x * x / 2 },
			mean: 0, variance: 1, q: -0.5, cdfQ: normCDF(-0.5),
		},
		{
			// A wide interval and a single shrinkage proposal: most updates
			// hit the cap and stay, which must keep the target invariant.
			name: "normal capped shrinkage", slice: Slice{Width: 8, MaxShrink: 1}, x0: 0,
			logf: func(x float64) float64 { return -x * x / 2 },
			mean: 0, variance: 1, q: 0.7, cdfQ: normCDF(0.7),
		},
		{
			name: "normal(5, 0.01²) narrow", slice: Slice{Width: 1, MaxShrink: 3}, x0: 5,
			logf: func(x float64) float64 { return logNormal(x, 5, 0.01) },
			mean: 5, variance: 1e-4, q: 5.01, cdfQ: normCDF(1),
		},
		{
			name: "gamma(2, 3) log scale", tr: &above0, x0: 1,
			logf: func(x float64) float64 { return math.Log(x) - 3*x },
			mean: 2.0 / 3, variance: 2.0 / 9, q: 0.5,
			cdfQ: distuv.Gamma{Alpha: 2, Beta: 3}.CDF(0.5),
		},
		{
			name: "gamma(0.5, 1) log scale", tr: &above0, x0: 1,
			logf: func(x float64) float64 { return -0.5*math.Log(x) - x },
			mean: 0.5, variance: 0.5, q: 0.1,
			cdfQ: distuv.Gamma{Alpha: 0.5, Beta: 1}.CDF(0.1),
		},
		{
			name: "beta(2, 5) logit scale", tr: &unit, x0: 0.5,
			logf: func(x float64) float64 { return math.Log(x) + 4*math.Log1p(-x) },
			mean: 2.0 / 7, variance: 10.0 / (49 * 8), q: 0.2,
			cdfQ: distuv.Beta{Alpha: 2, Beta: 5}.CDF(0.2),
		},
		{
			// The discount on [0, 1) started at its boundary 0.
			name: "beta(0.7, 1.5) logit scale from 0", tr: &unit, x0: 0,
			logf: func(x float64) float64 { return -0.3*math.Log(x) + 0.5*math.Log1p(-x) },
			mean: 0.7 / 2.2, variance: 0.7 * 1.5 / (2.2 * 2.2 * 3.2), q: 0.1,
			cdfQ: distuv.Beta{Alpha: 0.7, Beta: 1.5}.CDF(0.1),
		},
		{
			// A concentration with a lower bound −2·beta = −0.6: x + 0.6 ~ Exp(1).
			name: "shifted exponential (−0.6, ∞)", tr: &shift, x0: 2,
			logf: func(x float64) float64 { return -x },
			mean: 0.4, variance: 1, q: 0,
			cdfQ: 1 - math.Exp(-0.6),
		},
		{
			name: "uniform on (−1, 3) scaled logit", tr: &box, x0: 0,
			logf: func(float64) float64 { return 0 },
			mean: 1, variance: 16.0 / 12, q: 0, cdfQ: 0.25,
		},
		{
			name: "bimodal mixture", x0: 0,
			logf: func(x float64) float64 {
				a := math.Log(wA) + logNormal(x, muA, sdA)
				b := math.Log(1-wA) + logNormal(x, muB, sdB)
				m := math.Max(a, b)
				return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
			},
			mean: mixMean, variance: mixSecond - mixMean*mixMean, q: 0,
			cdfQ: wA*normCDF((0-muA)/sdA) + (1-wA)*normCDF((0-muB)/sdB),
		},
		{
			// Density 3x² on [0, 1], −Inf outside, sampled on the real line.
			name: "bounded support 3x² on [0, 1]", x0: 0.5,
			logf: func(x float64) float64 {
				if x < 0 || x > 1 {
					return math.Inf(-1)
				}
				return 2 * math.Log(x)
			},
			mean: 0.75, variance: 3.0 / 80, q: 0.5, cdfQ: 0.125,
		},
	}
}

// TestSliceInvariance runs each target's chain and compares its mean,
// variance and one CDF value with the closed forms, to 4 batch-means
// standard errors.
func TestSliceInvariance(t *testing.T) {
	const burn, n, batches = 1000, 200000, 50
	for i, tc := range invarianceCases() {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i)+1, 0x51ce))
			x := tc.x0
			xs := make([]float64, n)
			totalEvals := 0
			for k := range burn + n {
				var e int
				if tc.tr != nil {
					x, e = tc.slice.SampleTransformed(rng, x, *tc.tr, tc.logf)
					if !tc.tr.Contains(x) {
						t.Fatalf("update %d left the support: %v", k, x)
					}
				} else {
					x, e = tc.slice.Sample(rng, x, tc.logf)
				}
				if k >= burn {
					xs[k-burn] = x
					totalEvals += e
				}
			}
			checkMoments(t, tc.name, xs, batches, tc.mean, tc.variance, tc.q, tc.cdfQ)
			t.Logf("%.1f evaluations per update", float64(totalEvals)/n)
		})
	}
}

// TestSliceMoves checks that a default update does move: a chain that never
// moved would have a zero batch-means error, which checkMoments rejects, but
// this says so directly.
func TestSliceMoves(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	x, moves := 0.0, 0
	for range 1000 {
		y, _ := Slice{}.Sample(rng, x, func(x float64) float64 { return -x * x / 2 })
		if y != x {
			moves++
		}
		x = y
	}
	if moves < 990 {
		t.Errorf("only %d of 1000 updates moved", moves)
	}
}

// TestSliceCap checks that a log density that is NaN after its first call
// (so that not even x0 is accepted again) stops after the caps, returns x0
// and counts every evaluation.
func TestSliceCap(t *testing.T) {
	for _, s := range []Slice{{}, {Width: 3, MaxSteps: 5, MaxShrink: 17}, {MaxSteps: 1, MaxShrink: 1}} {
		rng := rand.New(rand.NewPCG(1, 2))
		const x0 = 1.25
		calls := 0
		logf := func(x float64) float64 {
			calls++
			if calls == 1 {
				return 0
			}
			return math.NaN()
		}
		x, evals := s.Sample(rng, x0, logf)
		_, m, k := s.params()
		if x != x0 {
			t.Errorf("%+v: returned %v, want x0 = %v", s, x, x0)
		}
		if evals != calls {
			t.Errorf("%+v: reported %d evaluations, made %d", s, evals, calls)
		}
		// One at x0, at most m−1 while stepping out, and k proposals.
		if lo, hi := 1+k, m+k; evals < lo || evals > hi {
			t.Errorf("%+v: %d evaluations, want between %d and %d", s, evals, lo, hi)
		}
	}
}

// TestSliceCollapse checks that a log density finite only at x0 makes the
// shrinkage collapse onto x0 and accept it there, before the cap.
func TestSliceCollapse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const x0 = 1.25
	x, evals := Slice{MaxShrink: 10000}.Sample(rng, x0, func(x float64) float64 {
		if x == x0 {
			return 0
		}
		return math.Inf(-1)
	})
	if x != x0 || evals > 1+DefaultMaxSteps+2000 {
		t.Errorf("got x = %v after %d evaluations, want x0 = %v in far fewer than the cap", x, evals, x0)
	}
}

// TestSliceEvalsCounted checks the evaluation count on an ordinary target.
func TestSliceEvalsCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	calls := 0
	logf := func(x float64) float64 { calls++; return -x * x / 2 }
	x := 0.0
	total := 0
	for range 100 {
		var e int
		x, e = Slice{}.Sample(rng, x, logf)
		total += e
	}
	if total != calls {
		t.Errorf("reported %d evaluations, made %d", total, calls)
	}
}

// TestSliceNonFinite checks that the sampler never panics on a log density
// that is not finite: at the start it leaves x0 (Update says why), and a
// proposal where the density is NaN or +Inf is outside the slice, so the
// chain never lands there and still moves.
func TestSliceNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f0 := range []float64{math.Inf(-1), math.NaN(), math.Inf(1)} {
		logf := func(float64) float64 { return f0 }
		if x, _ := (Slice{}).Sample(rng, 3, logf); x != 3 {
			t.Errorf("start at logf = %v: moved to %v", f0, x)
		}
		if _, _, err := (Slice{}).Update(rng, 3, logf); !errors.Is(err, ErrNotFinite) {
			t.Errorf("start at logf = %v: Update error %v, want ErrNotFinite", f0, err)
		}
		if _, _, err := (Slice{}).UpdateTransformed(rng, 3, Above(0), logf); !errors.Is(err, ErrNotFinite) ||
			!strings.Contains(err.Error(), fmt.Sprint(f0)) {
			t.Errorf("transformed start at logf = %v: error %v", f0, err)
		}
	}
	// A standard normal whose density is +Inf on (0.5, 0.6) and NaN on
	// (-0.7, -0.6): the update samples the normal restricted to the rest.
	logf := func(x float64) float64 {
		switch {
		case x > 0.5 && x < 0.6:
			return math.Inf(1)
		case x > -0.7 && x < -0.6:
			return math.NaN()
		}
		return -x * x / 2
	}
	x, moved, above := 0.0, 0, 0
	const n = 20000
	for range n {
		x1, _ := (Slice{}).Sample(rng, x, logf)
		if !(logf(x1) > math.Inf(-1)) || math.IsInf(logf(x1), 1) {
			t.Fatalf("accepted x = %v where logf = %v", x1, logf(x1))
		}
		if x1 != x {
			moved++
		}
		if x1 > 0.6 {
			above++
		}
		x = x1
	}
	if moved < n/2 {
		t.Errorf("the chain moved in %d of %d updates", moved, n)
	}
	// P(x > 0.6) under the restricted normal: (1 - Φ(0.6)) / (1 - mass of
	// the two removed intervals).
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	want := (1 - phi(0.6)) / (1 - (phi(0.6) - phi(0.5)) - (phi(-0.6) - phi(-0.7)))
	got := float64(above) / n
	if se := math.Sqrt(want * (1 - want) / n * 3); !(math.Abs(got-want) <= 4*se) { // ×3 for autocorrelation
		t.Errorf("P(x > 0.6) = %.4f, want %.4f ± %.4f", got, want, 4*se)
	}
}

// TestSlicePanics checks the documented programmer-error panics.
func TestSlicePanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	bounded := func(x float64) float64 {
		if x < 0 {
			return math.Inf(-1)
		}
		return 0
	}
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"negative width", func() { Slice{Width: -1}.Sample(rng, 0, bounded) }, "invalid Slice"},
		{"negative steps", func() { Slice{MaxSteps: -1}.Sample(rng, 0, bounded) }, "invalid Slice"},
		{"transformed outside", func() { Slice{}.SampleTransformed(rng, -0.5, Above(0), bounded) }, "outside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatal("no panic")
				}
				if s, _ := r.(string); !strings.Contains(s, tc.msg) {
					t.Errorf("panic %q does not mention %q", r, tc.msg)
				}
			}()
			tc.f()
		})
	}
}

// TestTuner checks that a badly scaled width is tuned to the scale of the
// target during burn-in, and that the frozen sampler then gives the right
// moments.
func TestTuner(t *testing.T) {
	const sd = 100
	logf := func(x float64) float64 { return logNormal(x, 0, sd) }
	rng := rand.New(rand.NewPCG(11, 12))
	tu := Tuner{Slice: Slice{Width: 1e-3, MaxSteps: 10}}
	x := 0.0
	for range 2000 {
		x, _ = tu.Sample(rng, x, logf)
	}
	// The typical slice of N(0, sd²) has half-width sd·√(2E), E ~ Exp(1):
	// anything within a factor of 4 of sd is a sensible width.
	if w := tu.Slice.Width; !(w >= sd/4 && w <= 4*sd) {
		t.Fatalf("tuned width %v, want within a factor 4 of %v", w, sd)
	}
	frozen := tu.Slice
	const n = 100000
	xs := make([]float64, n)
	for k := range n {
		x, _ = frozen.Sample(rng, x, logf)
		xs[k] = x
	}
	checkMoments(t, "tuned normal", xs, 50, 0, sd*sd, sd, normCDF(1))

	// On the transformed scale the width is tuned for z = log x.
	tu = Tuner{Slice: Slice{Width: 50}}
	g := 1.0
	for range 2000 {
		g, _ = tu.SampleTransformed(rng, g, Above(0), func(x float64) float64 { return 4*math.Log(x) - x })
	}
	// z = log x with x ~ Gamma(5, 1) has sd √ψ'(5) ≈ 0.47.
	if w := tu.Slice.Width; !(w >= 0.1 && w <= 2) {
		t.Errorf("tuned log-scale width %v, want about 1", w)
	}
}

// TestSliceNoAlloc checks that an update on a cheap target allocates nothing.
func TestSliceNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := 0.5
	unit := Between(0, 1)
	logf := func(x float64) float64 { return math.Log(x) + 4*math.Log1p(-x) }
	allocs := testing.AllocsPerRun(100, func() {
		x, _ = Slice{}.Sample(rng, x, logf)
		x, _ = Slice{}.SampleTransformed(rng, x, unit, logf)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per update, want 0", allocs)
	}
}
