package pydt

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

var divergenceCases = []Divergence{
	DivInv{C: 1}, DivInv{C: 0.05}, DivInv{C: 7},
	DivInvSq{C: 1}, DivInvSq{C: 0.02}, DivInvSq{C: 12},
	DivNeal{C0: 0.5, C1: 0.8, C2: 0.3}, DivNeal{C0: 0, C1: 1, C2: 0}, DivNeal{C0: 2, C1: 0, C2: 0.1},
	DivNeal{C0: 3, C1: 0.001, C2: 0},
}

// cumulativeByQuadrature integrates a over [0, t]: in u on [0, min(t, 1/2)],
// then in the variable v = 1-u on pieces [v0 2^k, v0 2^(k+1)] up to v = 1/2,
// over each of which a varies smoothly, so that times close to 0 and to 1
// both keep their precision.
func cumulativeByQuadrature(d Divergence, t Time) float64 {
	au := func(u float64) float64 { return math.Exp(d.LogRate(TimeAt(u))) }
	av := func(v float64) float64 { return math.Exp(d.LogRate(TimeFromOneMinus(v))) }
	if t.T() <= 0.5 {
		return quad.Fixed(au, 0, t.T(), 40, quad.Legendre{}, 0)
	}
	total := quad.Fixed(au, 0, 0.5, 40, quad.Legendre{}, 0)
	for lo := t.OneMinus(); lo < 0.5; {
		hi := math.Min(2*lo, 0.5)
		total += quad.Fixed(av, lo, hi, 40, quad.Legendre{}, 0)
		lo = hi
	}
	return total
}

var divergenceTimes = []Time{
	TimeAt(1e-9), TimeAt(0.01), TimeAt(0.3), TimeAt(0.5), TimeAt(0.77),
	TimeFromOneMinus(1e-3), TimeFromOneMinus(1e-8), TimeFromOneMinus(1e-14),
}

func TestDivergenceCumulativeIsIntegral(t *testing.T) {
	for _, d := range divergenceCases {
		if got := d.Cumulative(Origin); got != 0 {
			t.Errorf("%v: A(0) = %v, want 0", d, got)
		}
		if got := d.Cumulative(Leaf); !math.IsInf(got, 1) {
			t.Errorf("%v: A(1) = %v, want +Inf", d, got)
		}
		for _, tm := range divergenceTimes {
			want := cumulativeByQuadrature(d, tm)
			if got := d.Cumulative(tm); !(relErr(got, want) <= 1e-11) {
				t.Errorf("%v: A(t) at 1-t = %v: %.16g, quadrature %.16g (rel err %.2g)", d, tm.OneMinus(), got, want, relErr(got, want))
			}
		}
	}
}

// TestDivergenceInverse checks that InverseCumulative inverts Cumulative,
// keeping the relative precision of t near 0 and of 1-t near 1.
func TestDivergenceInverse(t *testing.T) {
	times := append([]Time{TimeFromOneMinus(1e-20), TimeFromOneMinus(1e-100), TimeAt(1e-30)}, divergenceTimes...)
	for _, d := range divergenceCases {
		if got := d.InverseCumulative(0); got.T() != 0 {
			t.Errorf("%v: InverseCumulative(0) = %v, want t = 0", d, got.T())
		}
		for _, tm := range times {
			a := d.Cumulative(tm)
			if math.IsInf(a, 0) {
				// A overflows float64 (C2 e^s with s = -log(1-t) > 709):
				// nothing to invert.
				continue
			}
			back := d.InverseCumulative(a)
			if e := relErr(back.OneMinus(), tm.OneMinus()); !(e <= 1e-12) {
				t.Errorf("%v: 1-t = %v maps to A = %v and back to 1-t = %v (rel err %.2g)", d, tm.OneMinus(), a, back.OneMinus(), e)
			}
			e := relErr(back.T(), tm.T())
			if _, neal := d.(DivNeal); neal && tm.T() < 1e-14 {
				// DivNeal.InverseCumulative stops its Newton iteration on
				// an absolute tolerance of 1e-15 in s = -log(1-t), so
				// times below about 1e-15 keep only absolute precision.
				e = math.Abs(back.T() - tm.T())
			}
			if !(e <= 1e-12) {
				t.Errorf("%v: t = %v maps to A = %v and back to t = %v (rel err %.2g)", d, tm.T(), a, back.T(), e)
			}
		}
		for _, a := range []float64{1e-12, 0.01, 0.5, 1, 3, 20, 100, 1e4} {
			back := d.InverseCumulative(a)
			if back.IsLeaf() {
				// 1-t = exp(-a/C) (say) is below the float64 range: Time
				// cannot represent it.
				continue
			}
			if got := d.Cumulative(back); !(relErr(got, a) <= 1e-12) {
				t.Errorf("%v: A(A^-1(%v)) = %v", d, a, got)
			}
		}
	}
	// The required case: 1 - t = 1e-20 survives the round trip.
	for _, d := range []Divergence{DivInv{C: 1}, DivInvSq{C: 1}, DivNeal{C0: 1, C1: 1, C2: 1}} {
		tm := TimeFromOneMinus(1e-20)
		if back := d.InverseCumulative(d.Cumulative(tm)); !(relErr(back.OneMinus(), 1e-20) <= 1e-12) || !back.Before(Leaf) {
			t.Errorf("%v: 1-t = 1e-20 comes back as %v", d, back.OneMinus())
		}
	}
}

func TestDivergenceLogRate(t *testing.T) {
	for _, tm := range []Time{TimeAt(0.2), TimeFromOneMinus(1e-20)} {
		u := tm.OneMinus()
		for _, c := range []struct {
			d    Divergence
			want float64
		}{
			{DivInv{C: 2}, math.Log(2) - math.Log(u)},
			{DivInvSq{C: 2}, math.Log(2) - 2*math.Log(u)},
			{DivNeal{C0: 1, C1: 2, C2: 0}, math.Log(1 + 2/u)},
		} {
			if got := c.d.LogRate(tm); !(relErr(got, c.want) <= 1e-14) {
				t.Errorf("%v: log a at 1-t = %v: %v, want %v", c.d, u, got, c.want)
			}
		}
	}
}

func TestDivergenceCheck(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		d   Divergence
		ok  bool
		msg string
	}{
		{DivInv{C: 1}, true, ""},
		{DivInv{C: 0}, false, "c"},
		{DivInv{C: -1}, false, "c"},
		{DivInv{C: nan}, false, "c"},
		{DivInv{C: inf}, false, "c"},
		{DivInvSq{C: 0.5}, true, ""},
		{DivInvSq{C: 0}, false, "c"},
		{DivInvSq{C: nan}, false, "c"},
		{DivNeal{C0: 0, C1: 1, C2: 0}, true, ""},
		{DivNeal{C0: 1, C1: 0, C2: 1}, true, ""},
		{DivNeal{C0: 1, C1: 0, C2: 0}, false, "c1 + c2"},
		{DivNeal{C0: -1, C1: 1, C2: 1}, false, "c0"},
		{DivNeal{C0: 0, C1: -1, C2: 2}, false, "c1"},
		{DivNeal{C0: 0, C1: 1, C2: nan}, false, "c2"},
		{DivNeal{C0: inf, C1: 1, C2: 1}, false, "c0"},
	} {
		err := c.d.Check()
		if (err == nil) != c.ok {
			t.Errorf("%#v.Check() = %v, want ok=%v", c.d, err, c.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%#v.Check() = %q, want it to name %q", c.d, err, c.msg)
		}
	}
}

// TestDivergenceFiniteNearOne checks log a(t) and A(t) against closed forms
// in s = -log(1-t) where 1-t is far below 1e-154, at which the former
// DivNeal formed C2/(u·u) = +Inf, and beyond the float64 range of 1-t.
// A(t) is +Inf only where it exceeds the largest float64.
func TestDivergenceFiniteNearOne(t *testing.T) {
	for _, s := range []float64{354, 400, 709, 745.5, 800, 1e5} {
		tm := TimeFromS(s)
		for _, c := range []struct {
			d          Divergence
			logA, cumA float64 // log a(t), log A(t)
		}{
			{DivNeal{C0: 0.5, C1: 1, C2: 0.3}, 2*s + math.Log(0.3+math.Exp(-s)+0.5*math.Exp(-2*s)), s + math.Log(0.3)},
			{DivNeal{C0: 0, C1: 2, C2: 0}, math.Log(2) + s, math.Log(2 * s)},
			{DivInvSq{C: 1e-300}, -300*math.Ln10 + 2*s, -300*math.Ln10 + s},
			{DivInv{C: 3}, math.Log(3) + s, math.Log(3 * s)},
		} {
			if got := c.d.LogRate(tm); !(relErr(got, c.logA) < 1e-14) {
				t.Errorf("%v at s = %v: log a = %v, want %v", c.d, s, got, c.logA)
			}
			if got := c.d.LogRateS(tm); !(math.Abs(got-(c.logA-s)) < 1e-12*(1+s)) {
				t.Errorf("%v at s = %v: log dA/ds = %v, want %v", c.d, s, got, c.logA-s)
			}
			got := c.d.Cumulative(tm)
			if c.cumA > math.Log(math.MaxFloat64) {
				if !math.IsInf(got, 1) {
					t.Errorf("%v at s = %v: A = %v, want +Inf (log A = %v)", c.d, s, got, c.cumA)
				}
				continue
			}
			if math.IsInf(got, 0) || math.IsNaN(got) || !(math.Abs(math.Log(got)-c.cumA) <= 1e-12*(1+math.Abs(c.cumA))) {
				t.Errorf("%v at s = %v: A = %v, want exp(%v)", c.d, s, got, c.cumA)
			}
			if back := c.d.InverseCumulative(got); !(relErr(back.S(), s) <= 1e-12) {
				t.Errorf("%v at s = %v: A^-1(A) at s = %v", c.d, s, back.S())
			}
		}
	}
}

// TestDivergenceAdvance checks Advance against Cumulative: A(Advance(t0,
// δ)) - A(t0) = δ, and that it keeps its precision where A(t0) is large.
func TestDivergenceAdvance(t *testing.T) {
	for _, d := range append(divergenceCases, DivInv{C: 1e-20}, DivInvSq{C: 1e-300}) {
		for _, s0 := range []float64{0, 1e-9, 0.3, 5, 40, 300} {
			t0 := TimeFromS(s0)
			for _, inc := range []float64{1e-12, 0.01, 1, 50} {
				t1 := d.Advance(t0, inc)
				if t1.Before(t0) {
					t.Errorf("%v: Advance(s = %v, %v) = s %v is before", d, s0, inc, t1.S())
					continue
				}
				a0, a1 := d.Cumulative(t0), d.Cumulative(t1)
				if math.IsInf(a1, 1) {
					continue
				}
				// A's own rounding is about eps·A, and s moves by ulps of
				// s, each worth dA/ds·ulp in A: compare to those.
				ulp := math.Nextafter(t1.S(), math.Inf(1)) - t1.S()
				if tol := 1e-12*inc + 4e-16*a1 + 2*ulp*math.Exp(d.LogRateS(t1)); !(math.Abs((a1-a0)-inc) <= tol) {
					t.Errorf("%v: A(Advance(s = %v, %v)) - A = %v", d, s0, inc, a1-a0)
				}
			}
		}
	}
	// Where A(t0) = 1e20 (c = 1e-20, s = 1e40), an increment of 1 moves s
	// by 1e20; adding it to A(t0) and inverting would keep 16 digits of
	// 1e20 + 1 (about 1e4 of relative error in the increment).
	d := DivInv{C: 1e-20}
	if got := d.Advance(TimeFromS(1e40), 1).S(); got != 1e40+1e20 {
		t.Errorf("Advance at s = 1e40: s = %v, want %v", got, 1e40+1e20)
	}
}
