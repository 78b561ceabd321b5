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
			if got := d.Cumulative(tm); relErr(got, want) > 1e-11 {
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
			if e := relErr(back.OneMinus(), tm.OneMinus()); e > 1e-12 {
				t.Errorf("%v: 1-t = %v maps to A = %v and back to 1-t = %v (rel err %.2g)", d, tm.OneMinus(), a, back.OneMinus(), e)
			}
			e := relErr(back.T(), tm.T())
			if _, neal := d.(DivNeal); neal && tm.T() < 1e-14 {
				// DivNeal.InverseCumulative stops its Newton iteration on
				// an absolute tolerance of 1e-15 in s = -log(1-t), so
				// times below about 1e-15 keep only absolute precision.
				e = math.Abs(back.T() - tm.T())
			}
			if e > 1e-12 {
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
			if got := d.Cumulative(back); relErr(got, a) > 1e-12 {
				t.Errorf("%v: A(A^-1(%v)) = %v", d, a, got)
			}
		}
	}
	// The required case: 1 - t = 1e-20 survives the round trip.
	for _, d := range []Divergence{DivInv{C: 1}, DivInvSq{C: 1}, DivNeal{C0: 1, C1: 1, C2: 1}} {
		tm := TimeFromOneMinus(1e-20)
		if back := d.InverseCumulative(d.Cumulative(tm)); relErr(back.OneMinus(), 1e-20) > 1e-12 || !back.Before(Leaf) {
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
			if got := c.d.LogRate(tm); relErr(got, c.want) > 1e-14 {
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
