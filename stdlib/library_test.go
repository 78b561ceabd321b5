package stdlib

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// agreementCases are parameter settings at which each standard scalar
// node type's Rand is checked against its LogProb. Every registered scalar
// must have at least one (TestEveryScalarHasAgreementCase).
var agreementCases = []struct {
	name   string
	params []float64
}{
	{"Beta", []float64{2, 3}},
	{"Beta", []float64{0.5, 0.5}},
	{"Gamma", []float64{2, 0.5}},
	{"Gamma", []float64{0.3, 4}},
	{"Normal", []float64{1, 2}},
	{"Normal", []float64{-3, 0.1}},
	{"Probit", []float64{0.5}},
	{"Probit", []float64{-2}},
	{"StudentT", []float64{1, 2, 3}},
	{"StudentT", []float64{-0.5, 0.3, 0.8}},
}

func TestEveryScalarHasAgreementCase(t *testing.T) {
	for _, name := range Default().ScalarNames() {
		if !slices.ContainsFunc(agreementCases, func(c struct {
			name   string
			params []float64
		}) bool {
			return c.name == name
		}) {
			t.Errorf("%s has no case in agreementCases: its LogProb and Rand are not checked against each other", name)
		}
	}
}

// TestLogProbAgreesWithRand checks that each scalar type's sampler draws
// from its density: for a continuous type, a Kolmogorov-Smirnov test of
// the draws against the distribution function obtained by integrating
// exp(LogProb) numerically; for a discrete one, each value's frequency
// against exp(LogProb) within four standard errors. The seed is fixed; the
// KS threshold 1.95/√n is the 0.1% critical value.
func TestLogProbAgreesWithRand(t *testing.T) {
	const n = 4000
	lib := Default()
	for i, c := range agreementCases {
		d, ok := lib.Scalar(c.name)
		if !ok {
			t.Fatalf("%s is not a registered scalar", c.name)
		}
		if err := d.CheckParams(c.params); err != nil {
			t.Fatalf("%s%v: %v", c.name, c.params, err)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		xs := make([]float64, n)
		for k := range xs {
			xs[k] = d.Rand(rng, c.params)
			if !d.Support().Contains(xs[k]) {
				t.Fatalf("%s%v drew %v outside its support %v", c.name, c.params, xs[k], d.Support())
			}
		}
		if d.Support().Discrete() {
			counts := map[float64]int{}
			for _, x := range xs {
				counts[x]++
			}
			for x, k := range counts {
				p := math.Exp(d.LogProb(x, c.params))
				if se := math.Sqrt(p * (1 - p) / n); !(math.Abs(float64(k)/n-p) <= 4*se+1e-12) {
					t.Errorf("%s%v: value %v drawn with frequency %v, LogProb gives %v ± %v", c.name, c.params, x, float64(k)/n, p, 4*se)
				}
			}
			continue
		}
		slices.Sort(xs)
		lo := map[Support]float64{Real: math.Inf(-1), Positive: 0, NonNegative: 0, Unit: 0, UnitLeft: 0}[d.Support()]
		// The distribution function at each sorted draw, integrating
		// the density between consecutive draws.
		cdf := make([]float64, n)
		density := func(x float64) float64 { return math.Exp(d.LogProb(x, c.params)) }
		prev, acc := lo, 0.0
		for k, x := range xs {
			acc += quad.Fixed(density, prev, x, 64, nil, 0)
			cdf[k], prev = acc, x
		}
		ks := 0.0
		for k, F := range cdf {
			ks = max(ks, math.Abs(F-float64(k)/n), math.Abs(F-float64(k+1)/n))
		}
		if crit := 1.95 / math.Sqrt(n); ks > crit {
			t.Errorf("%s%v: KS distance %v between Rand's draws and LogProb's distribution, above %v", c.name, c.params, ks, crit)
		}
	}
}

// TestBetaParams checks the BetaPrior capability against the density:
// log p(x) = (a-1) log x + (b-1) log(1-x) - log B(a, b); only Beta offers it.
func TestBetaParams(t *testing.T) {
	var bt NodeType = Beta{}
	prior, ok := bt.(BetaPrior)
	if !ok {
		t.Fatal("Beta is not a BetaPrior")
	}
	for _, p := range [][]float64{{1, 1}, {2, 5}, {0.4, 0.7}} {
		a, b := prior.BetaParams(p)
		la, _ := math.Lgamma(a)
		lb, _ := math.Lgamma(b)
		lab, _ := math.Lgamma(a + b)
		for _, x := range []float64{0.01, 0.3, 0.9} {
			want := (a-1)*math.Log(x) + (b-1)*math.Log1p(-x) - (la + lb - lab)
			if got := (Beta{}).LogProb(x, p); !(math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))) {
				t.Errorf("Beta%v: LogProb(%v) = %v, but BetaParams (%v, %v) give %v", p, x, got, a, b, want)
			}
		}
	}
	for _, name := range []string{"Normal", "Gamma", "Probit", "StudentT", PYDTName} {
		if t0, _ := Default().NodeType(name); t0 != nil {
			if _, ok := t0.(BetaPrior); ok {
				t.Errorf("%s claims to be a BetaPrior", name)
			}
		}
	}
}

// TestGammaParams checks the GammaPrior capability against the density:
// log p(x) = shape log rate - lgamma(shape) + (shape-1) log x - rate x.
func TestGammaParams(t *testing.T) {
	var g NodeType = Gamma{}
	prior, ok := g.(GammaPrior)
	if !ok {
		t.Fatal("Gamma is not a GammaPrior")
	}
	for _, p := range [][]float64{{2, 0.5}, {0.3, 4}, {7, 1}} {
		shape, rate := prior.GammaParams(p)
		lg, _ := math.Lgamma(shape)
		for _, x := range []float64{0.01, 0.7, 3, 20} {
			want := shape*math.Log(rate) - lg + (shape-1)*math.Log(x) - rate*x
			if got := (Gamma{}).LogProb(x, p); !(math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))) {
				t.Errorf("Gamma%v: LogProb(%v) = %v, but GammaParams (%v, %v) give %v", p, x, got, shape, rate, want)
			}
		}
	}
	for _, name := range []string{"Normal", "Beta", "Probit", PYDTName} {
		if t0, _ := Default().NodeType(name); t0 != nil {
			if _, ok := t0.(GammaPrior); ok {
				t.Errorf("%s claims to be a GammaPrior", name)
			}
		}
	}
}

// toy is a minimal scalar node type for registry tests.
type toy struct{ name string }

func (t toy) Name() string                           { return t.name }
func (toy) Doc() string                              { return "a toy" }
func (toy) Params() []Param                          { return nil }
func (toy) Support() Support                         { return Real }
func (t toy) CheckParams(p []float64) error          { return CheckSupports(t, p) }
func (toy) LogProb(x float64, p []float64) float64   { return -0.5*x*x - 0.5*math.Log(2*math.Pi) }
func (toy) Rand(rng *rand.Rand, p []float64) float64 { return rng.NormFloat64() }

func TestLibraryRegister(t *testing.T) {
	lib := Default()
	if err := lib.Register(toy{"Toy"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Scalar("Toy"); !ok {
		t.Error("Toy not found after Register")
	}
	if _, ok := Default().NodeType("Toy"); ok {
		t.Error("registering in one copy of Default changed the standard library")
	}
	if _, ok := Lookup("Toy"); ok {
		t.Error("registering in a copy of Default changed Lookup")
	}
	// A name is defined once, across node types, functions and divergences.
	for _, name := range []string{"Toy", "Normal", "PYDT", "exp", "DivInv", ""} {
		err := lib.Register(toy{name})
		if err == nil {
			t.Errorf("Register(%q) accepted a name already taken (or empty)", name)
		} else if name != "" && !strings.Contains(err.Error(), "already defined") {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
	if err := lib.RegisterFunc(&Func{Name: "Toy", Arity: 1, Eval: func([]float64) float64 { return 0 }}); err == nil {
		t.Error("RegisterFunc accepted the node type name Toy")
	}
	if err := lib.RegisterFunc(&Func{Name: "f3", Arity: 3, Eval: func([]float64) float64 { return 0 }}); err == nil {
		t.Error("RegisterFunc accepted arity 3")
	}
	if err := lib.RegisterDivergence(&DivergenceType{Name: "DivX"}); err == nil {
		t.Error("RegisterDivergence accepted a constructor without New")
	}
	// NodeTypeNames lists the PYDT as a registered type; DistNames lists
	// the scalars only.
	for _, name := range []string{"Beta", "Gamma", "Normal", PYDTName, "Probit"} {
		if !slices.Contains(NodeTypeNames(), name) {
			t.Errorf("NodeTypeNames() = %v lacks %s", NodeTypeNames(), name)
		}
		if got := slices.Contains(DistNames(), name); got != (name != PYDTName) {
			t.Errorf("DistNames() = %v: contains %s is %v", DistNames(), name, got)
		}
	}
	if names := NodeTypeNames(); !slices.IsSorted(names) {
		t.Errorf("NodeTypeNames() = %v is not sorted", names)
	}
	if got := Default().DivergenceNames(); !slices.Equal(got, []string{"DivInv", "DivInvSq", "DivNeal"}) {
		t.Errorf("DivergenceNames() = %v", got)
	}
	empty := NewLibrary()
	if len(empty.NodeTypeNames())+len(empty.FuncNames())+len(empty.DivergenceNames()) != 0 {
		t.Error("NewLibrary is not empty")
	}
}

// TestLowerShape checks the LowerShape capability against the density:
// near the lower end of the support, log p(x) = (a-1) log(x - lo) + const,
// so the slope of log p against log(x - lo) tends to a - 1.
func TestLowerShape(t *testing.T) {
	checked := map[string]bool{}
	for _, c := range agreementCases {
		d, _ := Default().Scalar(c.name)
		ls, ok := d.(LowerShape)
		if !ok {
			continue
		}
		lo := 0.0 // every support with a finite lower end starts at 0
		a := c.params[ls.LowerShapeParam()]
		x1, x2 := lo+1e-9, lo+1e-10
		slope := (d.LogProb(x1, c.params) - d.LogProb(x2, c.params)) / (math.Log(x1-lo) - math.Log(x2-lo))
		if !(math.Abs(slope-(a-1)) <= 1e-6) {
			t.Errorf("%s%v: slope of log density near %v is %v, but LowerShapeParam gives a - 1 = %v", c.name, c.params, lo, slope, a-1)
		}
		checked[c.name] = true
	}
	for _, name := range []string{"Gamma", "Beta"} {
		if !checked[name] {
			t.Errorf("%s is not a LowerShape", name)
		}
	}
}
