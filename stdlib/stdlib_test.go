package stdlib

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// TestDensitiesIntegrateToOne checks each continuous density against its own
// normalisation by quadrature, and each discrete mass function sums to one.
func TestDensitiesIntegrateToOne(t *testing.T) {
	cases := []struct {
		dist   string
		params []float64
	}{
		{"Gamma", []float64{2, 0.5}},
		{"Gamma", []float64{1.7, 3}},
		{"Beta", []float64{2, 3}},
		{"Normal", []float64{1, 2}},
		{"Probit", []float64{0.3}},
		{"Probit", []float64{-40}},
	}
	for _, c := range cases {
		d, ok := Lookup(c.dist)
		if !ok {
			t.Fatalf("%s not registered", c.dist)
		}
		if err := d.CheckParams(c.params); err != nil {
			t.Fatalf("%s%v: %v", c.dist, c.params, err)
		}
		var total float64
		switch d.Support() {
		case Binary:
			total = math.Exp(d.LogProb(0, c.params)) + math.Exp(d.LogProb(1, c.params))
		case Real:
			total = quad.Fixed(func(x float64) float64 { return math.Exp(d.LogProb(x, c.params)) }, math.Inf(-1), math.Inf(1), 200, nil, 0)
		case Positive:
			total = quad.Fixed(func(x float64) float64 { return math.Exp(d.LogProb(x, c.params)) }, 0, math.Inf(1), 200, nil, 0)
		case Unit:
			total = quad.Fixed(func(x float64) float64 { return math.Exp(d.LogProb(x, c.params)) }, 0, 1, 200, nil, 0)
		}
		if !(math.Abs(total-1) <= 1e-6) {
			t.Errorf("%s%v integrates to %v", c.dist, c.params, total)
		}
	}
}

// TestRandMatchesMean compares sample means with the closed-form means,
// within four standard errors.
func TestRandMatchesMean(t *testing.T) {
	cases := []struct {
		dist     string
		params   []float64
		mean, sd float64
	}{
		{"Gamma", []float64{2, 0.5}, 4, math.Sqrt(8)},
		{"Beta", []float64{2, 3}, 0.4, math.Sqrt(6.0 / (25 * 6))},
		{"Normal", []float64{1, 2}, 1, 2},
		{"Probit", []float64{0.5}, 0.6914624612740131, math.Sqrt(0.6914624612740131 * (1 - 0.6914624612740131))},
	}
	rng := rand.New(rand.NewPCG(7, 11))
	const n = 20000
	for _, c := range cases {
		d, _ := Lookup(c.dist)
		var s float64
		for range n {
			x := d.Rand(rng, c.params)
			if !d.Support().Contains(x) {
				t.Fatalf("%s drew %v outside its support", c.dist, x)
			}
			s += x
		}
		if se := c.sd / math.Sqrt(n); !(math.Abs(s/n-c.mean) <= 4*se) {
			t.Errorf("%s%v: sample mean %v, want %v ± %v", c.dist, c.params, s/n, c.mean, 4*se)
		}
	}
}

func TestLogNormCDFTails(t *testing.T) {
	for _, z := range []float64{-50, -38, -37, -10, -1, 0, 1, 10} {
		want := math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
		if z <= -37.5 {
			// erfc underflows; use the Mills-ratio bounds
			// φ(z)/|z| · z²/(1+z²) < Φ(z) < φ(z)/|z|.
			logPhiOverZ := -0.5*z*z - 0.5*math.Log(2*math.Pi) - math.Log(-z)
			lo, hi := logPhiOverZ+math.Log(z*z/(1+z*z)), logPhiOverZ
			if got := LogNormCDF(z); !(got >= lo && got <= hi) {
				t.Errorf("LogNormCDF(%v) = %v outside [%v, %v]", z, got, lo, hi)
			}
			continue
		}
		if got := LogNormCDF(z); !(math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))) {
			t.Errorf("LogNormCDF(%v) = %v, want %v", z, got, want)
		}
	}
}

func TestSupportContains(t *testing.T) {
	cases := []struct {
		s    Support
		x    float64
		want bool
	}{
		{Positive, 0, false}, {Positive, 1e-300, true}, {NonNegative, 0, true},
		{Unit, 0, false}, {UnitLeft, 0, true}, {UnitLeft, 1, false},
		{Binary, 0.5, false}, {Binary, 1, true}, {Count, 2, true}, {Count, 2.5, false},
		{Real, math.NaN(), false}, {Real, math.Inf(1), false},
	}
	for _, c := range cases {
		if got := c.s.Contains(c.x); got != c.want {
			t.Errorf("%v.Contains(%v) = %v, want %v", c.s, c.x, got, c.want)
		}
	}
}

// TestSupportWithin checks the subset relation against Contains on probe
// values: s is within t exactly when no probe lies in s but not in t.
func TestSupportWithin(t *testing.T) {
	probes := []float64{math.Inf(-1), -2, -1, -0.5, 0, 1e-300, 0.3, 0.5, 1, 1.5, 2, 3, 1e300, math.Inf(1), math.NaN()}
	all := []Support{Real, Positive, NonNegative, Unit, UnitLeft, Binary, Count}
	for _, s := range all {
		for _, u := range all {
			var witness []float64
			for _, x := range probes {
				if s.Contains(x) && !u.Contains(x) {
					witness = append(witness, x)
				}
			}
			if got, want := s.Within(u), len(witness) == 0; got != want {
				t.Errorf("%v.Within(%v) = %v, want %v (values in the first but not the second: %v)", s, u, got, want, witness)
			}
		}
	}
}

// TestSupportPhrase checks that every support has a phrase of its own.
func TestSupportPhrase(t *testing.T) {
	seen := map[string]Support{}
	for s := Real; s <= Count; s++ {
		p := s.Phrase()
		if p == "" || p == s.String() {
			t.Errorf("%v has no phrase", s)
		}
		if prev, dup := seen[p]; dup {
			t.Errorf("%v and %v share the phrase %q", prev, s, p)
		}
		seen[p] = s
	}
}
