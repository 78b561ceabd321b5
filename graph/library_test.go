package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// laplace is a user's scalar node type, Laplace(loc, scale), for the
// library tests.
type laplace struct{}

func (laplace) Name() string { return "Laplace" }
func (laplace) Doc() string  { return "Laplace(loc, scale)" }
func (laplace) Params() []stdlib.Param {
	return []stdlib.Param{{Name: "loc", Support: stdlib.Real}, {Name: "scale", Support: stdlib.Positive, Default: 1, HasDefault: true}}
}
func (laplace) Support() stdlib.Support         { return stdlib.Real }
func (t laplace) CheckParams(p []float64) error { return stdlib.CheckSupports(t, p) }
func (laplace) LogProb(x float64, p []float64) float64 {
	return -math.Abs(x-p[0])/p[1] - math.Log(2*p[1])
}
func (laplace) Rand(rng *rand.Rand, p []float64) float64 {
	e := rng.ExpFloat64() * p[1]
	if rng.IntN(2) == 0 {
		return p[0] - e
	}
	return p[0] + e
}

// uniform is a user's node type Uniform(lo, hi) whose parameters must
// also satisfy lo < hi: CheckParams checks more than the supports.
type uniform struct{}

func (uniform) Name() string { return "Uniform" }
func (uniform) Doc() string  { return "Uniform(lo, hi)" }
func (uniform) Params() []stdlib.Param {
	return []stdlib.Param{{Name: "lo", Support: stdlib.Real}, {Name: "hi", Support: stdlib.Real}}
}
func (uniform) Support() stdlib.Support { return stdlib.Real }
func (t uniform) CheckParams(p []float64) error {
	if err := stdlib.CheckSupports(t, p); err != nil {
		return err
	}
	if !(p[0] < p[1]) {
		return fmt.Errorf("Uniform needs lo < hi, got lo = %v, hi = %v", p[0], p[1])
	}
	return nil
}
func (uniform) LogProb(x float64, p []float64) float64 {
	if x < p[0] || x > p[1] {
		return math.Inf(-1)
	}
	return -math.Log(p[1] - p[0])
}
func (uniform) Rand(rng *rand.Rand, p []float64) float64 { return p[0] + (p[1]-p[0])*rng.Float64() }

// TestLibraryOption checks that the compiler resolves names against
// Options.Library and nothing else: a user's type compiles with the library
// that has it, not with the standard one; a name absent from the library is
// reported with a "did you mean" drawn from that library; and a standard
// name the given library lacks is unknown.
func TestLibraryOption(t *testing.T) {
	withLaplace := stdlib.Default()
	for _, nt := range []stdlib.NodeType{laplace{}, uniform{}} {
		if err := withLaplace.Register(nt); err != nil {
			t.Fatal(err)
		}
	}
	// A library with the user's type and the PYDT only.
	small := stdlib.NewLibrary()
	for _, nt := range []stdlib.NodeType{laplace{}, stdlib.PYDT{}} {
		if err := small.Register(nt); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name     string
		lib      *stdlib.Library
		src      string
		set      map[string]float64
		err      string // "" for success
		hint     string
		scalarOf map[string]string // variable -> node type name, on success
	}{
		{name: "user type", lib: withLaplace, src: "m ~ Normal(0, 1)\nx ~ Laplace(m, 2)\n",
			scalarOf: map[string]string{"m": "Normal", "x": "Laplace"}},
		{name: "user type, default scale", lib: withLaplace, src: "x ~ Laplace(0)\n",
			scalarOf: map[string]string{"x": "Laplace"}},
		{name: "user type's own supports", lib: withLaplace, src: "x ~ Laplace(0, -1)\n",
			err: "Laplace parameter scale = -1 is invalid: it must be positive"},
		{name: "user type's check of constants", lib: withLaplace, src: "x ~ Uniform(2, 1)\n",
			err: "Uniform needs lo < hi, got lo = 2, hi = 1"},
		{name: "user type's check of clamped values", lib: withLaplace, src: "lo ~ Normal(0, 1)\nx ~ Uniform(lo, 1)\n",
			set: map[string]float64{"lo": 3}, err: "value 3: with it, Uniform at 2:3 is invalid: Uniform needs lo < hi"},
		{name: "user type's check passes", lib: withLaplace, src: "lo ~ Normal(0, 1)\nx ~ Uniform(lo, 1)\n",
			set: map[string]float64{"lo": 0.5}, scalarOf: map[string]string{"x": "Uniform"}},
		{name: "not in the standard library", lib: nil, src: "x ~ Laplace(0, 1)\n",
			err: "unknown distribution Laplace"},
		{name: "hint from the given library", lib: withLaplace, src: "x ~ Laplase(0, 1)\n",
			err: "unknown distribution Laplase", hint: "Laplace"},
		{name: "hint from the standard library", lib: nil, src: "x ~ Normall(0, 1)\n",
			err: "unknown distribution Normall", hint: "Normal"},
		{name: "no hint from outside the library", lib: small, src: "x ~ Normall(0, 1)\n",
			err: "unknown distribution Normall", hint: ""},
		{name: "standard name absent from the library", lib: small, src: "x ~ Normal(0, 1)\n",
			err: "unknown distribution Normal", hint: ""},
		{name: "functions come from the library", lib: small, src: "x ~ Laplace(0, exp(1))\n",
			err: "unknown function exp"},
		{name: "divergences come from the library", lib: small, src: "dim N\nparam X : real[N, 2]\nX ~ PYDT(1, 0, DivInvSq(1), 1)\n",
			err: "unknown function DivInvSq"},
		{name: "plain divergence needs DivInv", lib: small, src: "dim N\nparam X : real[N, 2]\nX ~ PYDT(1, 0, 1, 1)\n",
			err: "the library has no DivInv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := lang.Parse("m.pydt", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Library: c.lib, Set: c.set}
			if strings.HasPrefix(c.src, "dim N") {
				opts.Set = map[string]float64{"N": 3}
			}
			g, err := Compile(f, opts)
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				for name, want := range c.scalarOf {
					v, _ := g.Lookup(name)
					s, ok := v.Def.Scalar()
					if !ok || s.Name() != want {
						t.Errorf("%s ~ %v, want %s", name, v.Def.Type, want)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("compiled; want an error containing %q", c.err)
			}
			var found *lang.Error
			for _, e := range err.(lang.ErrorList) {
				if strings.Contains(e.Msg, c.err) {
					found = e
				}
			}
			if found == nil {
				t.Fatalf("error %v; want one containing %q", err, c.err)
			}
			if found.Hint != c.hint {
				t.Errorf("hint %q, want %q", found.Hint, c.hint)
			}
		})
	}
}

// TestTreesAndTypes checks Graph.Trees and the Factor accessors on a
// model with a PYDT.
func TestTreesAndTypes(t *testing.T) {
	src := "dim N, D\nparam X : real[N, D]\nc ~ Gamma(1, 1)\nX ~ PYDT(1, 0, c, 1)\n"
	f, err := lang.Parse("m.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(f, Options{Set: map[string]float64{"N": 3, "D": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Trees) != 1 || g.Trees[0] != g.PYDT || !g.PYDT.IsPYDT() {
		t.Fatalf("Trees = %v, PYDT = %v", g.Trees, g.PYDT)
	}
	if _, ok := g.PYDT.Scalar(); ok {
		t.Error("the PYDT factor claims to be scalar")
	}
	c, _ := g.Lookup("c")
	if c.Def.IsPYDT() || c.Def.TypeName() != "Gamma" {
		t.Errorf("c's factor: IsPYDT %v, type %s", c.Def.IsPYDT(), c.Def.TypeName())
	}
	if _, ok := c.Def.Type.(stdlib.GammaPrior); !ok {
		t.Error("c's Gamma is not a GammaPrior")
	}
}
