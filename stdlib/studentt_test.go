package stdlib

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

var studentTCases = []struct {
	loc, s, nu float64
}{
	{0, 1, 1},
	{1.5, 0.3, 3},
	{-2, 4, 0.7},
	{0.2, 1.1, 30},
	{0, 1, 1e6},
}

// studentTClosedForm is Student's t log density written out:
// log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ) − log s − (ν+1)/2 · log(1 + r²/ν),
// r = (y − location)/s.
func studentTClosedForm(y float64, p []float64) float64 {
	nu, s := p[2], p[1]
	r := (y - p[0]) / s
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	return a - b - 0.5*math.Log(nu*math.Pi) - math.Log(s) - (nu+1)/2*math.Log1p(r*r/nu)
}

// TestStudentTLogProb compares StudentT's LogProb (gonum's
// distuv.StudentsT) with the closed form, and checks that it integrates to
// one (on y = location + scale·tan θ, which maps the heavy tails to a
// finite range).
func TestStudentTLogProb(t *testing.T) {
	for _, c := range studentTCases {
		p := []float64{c.loc, c.s, c.nu}
		if err := (StudentT{}).CheckParams(p); err != nil {
			t.Fatal(err)
		}
		for _, y := range []float64{c.loc, c.loc + 0.1, c.loc - 3*c.s, c.loc + 50*c.s, -1e4} {
			got, want := (StudentT{}).LogProb(y, p), studentTClosedForm(y, p)
			if !(math.Abs(got-want) <= 1e-10*math.Max(1, math.Abs(want))) {
				t.Errorf("StudentT%v: LogProb(%v) = %v, the closed form %v", p, y, got, want)
			}
		}
		if c.nu < 1 {
			// The tails (|y|^-(ν+1)) leave an integrable singularity at
			// θ = ±π/2 that Gauss-Legendre does not resolve; the case is
			// checked against distuv above.
			continue
		}
		total := quad.Fixed(func(th float64) float64 {
			y := c.loc + c.s*math.Tan(th)
			sec := 1 / math.Cos(th)
			return math.Exp((StudentT{}).LogProb(y, p)) * c.s * sec * sec
		}, -math.Pi/2, math.Pi/2, 400, nil, 0)
		if !(math.Abs(total-1) <= 1e-6) {
			t.Errorf("StudentT%v integrates to %v", p, total)
		}
	}
	if err := (StudentT{}).CheckParams([]float64{0, 1, 0}); err == nil {
		t.Error("nu = 0 accepted")
	}
	if err := (StudentT{}).CheckParams([]float64{0, -1, 2}); err == nil {
		t.Error("scale = -1 accepted")
	}
}

// auxJoint is log p(y, λ | z) of StudentT's augmentation in the form the
// capability gives it: the evidence's Normal (AuxEvidence) times
// exp(AuxLogProb), the factor free of z.
func auxJoint(y, z, lambda float64, p []float64) float64 {
	mean, prec := (StudentT{}).AuxEvidence(y, lambda, p)
	return (StudentT{}).AuxLogProb(y, lambda, p) + 0.5*math.Log(prec/(2*math.Pi)) - 0.5*prec*(mean-z)*(mean-z)
}

// TestStudentTAuxLogProb checks AuxLogProb against the closed form of the
// Gamma(ν/2, rate ν/2) log density of λ, which must not depend on y or the
// scale (the scale enters through the evidence alone).
func TestStudentTAuxLogProb(t *testing.T) {
	for _, c := range studentTCases {
		h := c.nu / 2
		lg, _ := math.Lgamma(h)
		for _, lambda := range []float64{1e-3, 0.4, 1, 2.5, 30} {
			want := h*math.Log(h) - lg + (h-1)*math.Log(lambda) - h*lambda
			for _, y := range []float64{c.loc, c.loc + 7} {
				got := (StudentT{}).AuxLogProb(y, lambda, []float64{c.loc, c.s, c.nu})
				if !(math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))) {
					t.Errorf("StudentT(%v, %v, %v): AuxLogProb(%v, %v) = %v, want %v", c.loc, c.s, c.nu, y, lambda, got, want)
				}
			}
		}
	}
}

// TestStudentTScaleMixture checks the augmentation against the density:
// integrating over λ the joint of (y, λ) that AuxEvidence and AuxLogProb
// define gives exp(LogProb(y)).
func TestStudentTScaleMixture(t *testing.T) {
	for _, c := range studentTCases[:4] {
		p := []float64{c.loc, c.s, c.nu}
		for _, y := range []float64{c.loc, c.loc + 0.7*c.s, c.loc - 6*c.s} {
			// λ = e^w: ∫ p(y, λ) dλ = ∫ p(y, e^w) e^w dw.
			got := quad.Fixed(func(w float64) float64 {
				return math.Exp(auxJoint(y, c.loc, math.Exp(w), p) + w)
			}, -60, 30, 2000, nil, 0)
			want := math.Exp((StudentT{}).LogProb(y, p))
			if !(math.Abs(got-want) <= 1e-7*want) {
				t.Errorf("StudentT%v at y = %v: the mixture integrates to %v, the density is %v", p, y, got, want)
			}
		}
	}
}

// TestStudentTDrawAux checks DrawAux against its target, the conditional
// p(λ | y, z) ∝ p(y, λ | z) (auxJoint), normalised by quadrature: a
// Kolmogorov-Smirnov test of the draws (0.1% critical value).
func TestStudentTDrawAux(t *testing.T) {
	const n = 4000
	cases := []struct{ y, z, s, nu float64 }{
		{0.3, 0, 1, 3},
		{5, -1, 0.5, 1.5},
		{-2, -2, 2, 0.6},
	}
	for i, c := range cases {
		p := []float64{c.z, c.s, c.nu}
		rng := rand.New(rand.NewPCG(uint64(i), 41))
		xs := make([]float64, n)
		for k := range xs {
			xs[k] = (StudentT{}).DrawAux(rng, c.y, c.z, p)
			if !(xs[k] > 0) {
				t.Fatalf("case %d: λ = %v", i, xs[k])
			}
		}
		slices.Sort(xs)
		density := func(l float64) float64 { return math.Exp(auxJoint(c.y, c.z, l, p)) }
		norm := quad.Fixed(func(w float64) float64 { return density(math.Exp(w)) * math.Exp(w) }, -60, 30, 2000, nil, 0)
		ks, prev, acc := 0.0, 0.0, 0.0
		for k, x := range xs {
			acc += quad.Fixed(density, prev, x, 64, nil, 0) / norm
			prev = x
			ks = max(ks, math.Abs(acc-float64(k)/n), math.Abs(acc-float64(k+1)/n))
		}
		if crit := 1.95 / math.Sqrt(n); ks > crit {
			t.Errorf("case %+v: KS distance %v between DrawAux and p(λ | y, z), above %v", c, ks, crit)
		}
	}
}
