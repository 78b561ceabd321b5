package graph

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/lang"
)

// bruteReaders recomputes Readers by a fixed point over every variable and
// factor, with its own traversal of expressions (inspect, not walk).
func bruteReaders(g *Graph, v *Var) (factors []*Factor, dets []*Var) {
	readsAny := func(x Expr, set map[*Var]bool) bool {
		if x == nil {
			return false
		}
		hit := false
		inspect(x, func(e Expr) {
			switch e := e.(type) {
			case Ref:
				hit = hit || set[e.V]
			case Elem:
				hit = hit || set[e.V]
			case Row:
				hit = hit || set[e.V]
			}
		})
		return hit
	}
	in := map[*Var]bool{v: true}
	for changed := true; changed; {
		changed = false
		for _, d := range g.Vars {
			if d.Role == Deterministic && d.Expr != nil && !in[d] && readsAny(d.Expr, in) {
				in[d], changed = true, true
			}
		}
	}
	for _, d := range g.Deterministic {
		if d != v && in[d] {
			dets = append(dets, d)
		}
	}
	for _, f := range g.Factors {
		if f.Target == v {
			continue
		}
		var xs []Expr
		xs = append(xs, f.Args...)
		if f.Divergence != nil {
			xs = append(xs, f.Divergence.Args...)
		}
		xs = append(xs, f.Index...)
		if slices.ContainsFunc(xs, func(x Expr) bool { return readsAny(x, in) }) {
			factors = append(factors, f)
		}
	}
	return factors, dets
}

func checkReaders(t *testing.T, name string, g *Graph) {
	t.Helper()
	for _, v := range g.Vars {
		fs, ds := g.Readers(v)
		wfs, wds := bruteReaders(g, v)
		if !slices.Equal(fs, wfs) || !slices.Equal(ds, wds) {
			t.Errorf("%s: Readers(%s) = %v, %v; brute force %v, %v", name, v.Name, fs, names(ds), wfs, names(wds))
		}
		// Asked twice: the same answer (kept).
		fs2, ds2 := g.Readers(v)
		if !slices.Equal(fs, fs2) || !slices.Equal(ds, ds2) {
			t.Errorf("%s: Readers(%s) changed between calls", name, v.Name)
		}
	}
}

func names(vs []*Var) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// TestReadersExamples checks Readers against the brute force on every
// example model and every golden model that compiles.
func TestReadersExamples(t *testing.T) {
	paths, _ := filepath.Glob("../examples/*.pydt")
	more, _ := filepath.Glob("testdata/ok/*.pydt")
	paths = append(paths, more...)
	if len(paths) < 4 {
		t.Fatalf("found only %d models", len(paths))
	}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := lang.Parse(p, src)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Compile(f, Options{Partial: true})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		checkReaders(t, p, g)
	}
}

// TestReaders checks Readers on graphs with chains of deterministic
// variables, factors that read a variable only in an index, and factors
// that read other elements of their own target, against both the brute
// force and the answer written out by hand.
func TestReaders(t *testing.T) {
	tests := []struct {
		name, src string
		v         string
		factors   []string // String() of each factor
		dets      []string
	}{
		{
			name: "chain",
			src: `a ~ Gamma(1, 1)
d3 = d2 * 2
d1 = a + 1
d2 = d1 ^ 2
b ~ Normal(d3, 1)
e ~ Normal(0, a)
u ~ Normal(0, 1)
k = u + 1
`,
			v:       "a",
			factors: []string{"b ~ Normal(d3, 1)", "e ~ Normal(0, a)"},
			dets:    []string{"d1", "d2", "d3"},
		},
		{
			name: "mid-chain",
			src: `a ~ Gamma(1, 1)
d1 = a + 1
d2 = d1 ^ 2
d3 = d2 * 2
b ~ Normal(d3, 1)
c ~ Normal(d1, 1)
`,
			v:       "d2",
			factors: []string{"b ~ Normal(d3, 1)"},
			dets:    []string{"d3"},
		},
		{
			name: "diamond",
			src: `s ~ Gamma(1, 1)
x = s * 2
y = s + 1
z = x + y
w ~ Normal(z, s)
`,
			v:       "s",
			factors: []string{"w ~ Normal(z, s)"},
			dets:    []string{"x", "y", "z"},
		},
		{
			name: "index",
			src: `dim N, K
data z : real[N]
param mu : real[K]
mu ~ Normal(0, 10)
data y : real[N]
for i in 1:N {
  y[i] ~ Normal(mu[z[i]], 1)
}
z ~ Normal(2, 1)
`,
			v:       "z",
			factors: []string{"y[i] ~ Normal(mu[z[i]], 1) for i in (unbound range)"},
		},
		{
			name: "index through a deterministic variable",
			src: `dim K
param mu : real[K]
mu ~ Normal(0, 10)
j ~ Gamma(1, 1)
k = j + 1
m = mu[k]
y ~ Normal(m, 1)
`,
			v:       "j",
			factors: []string{"y ~ Normal(m, 1)"},
			dets:    []string{"k", "m"},
		},
		{
			name: "own elements",
			src: `dim T
param x : real[T]
x[1] ~ Normal(0, 1)
for t in 2:T {
  x[t] ~ Normal(x[t - 1], 1)
}
`,
			v: "x",
		},
		{
			name: "pydt divergence",
			src: `dim N, D
data X : real[N, D]
c ~ Gamma(1, 1)
h = c / 2
X ~ PYDT(1, 0.5, DivInvSq(h), 1)
`,
			v:       "c",
			factors: []string{"X ~ PYDT(1, 0.5, DivInvSq(h), 1)"},
			dets:    []string{"h"},
		},
		{
			name: "no readers",
			src: `a ~ Gamma(1, 1)
b ~ Normal(0, 1)
`,
			v: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, errs := compileSrc(t, tt.src)
			if errs != nil && !strings.Contains(tt.name, "own") {
				t.Fatal(errs)
			}
			checkReaders(t, tt.name, g)
			v := g.ByName[tt.v]
			fs, ds := g.Readers(v)
			var got []string
			for _, f := range fs {
				got = append(got, f.String())
			}
			if !slices.Equal(got, tt.factors) || !slices.Equal(names(ds), tt.dets) {
				t.Errorf("Readers(%s) = %q, %q; want %q, %q", tt.v, got, names(ds), tt.factors, tt.dets)
			}
		})
	}
}

// TestReadersForeign checks that a variable of another graph, or nil, has
// no readers in g rather than another variable's.
func TestReadersForeign(t *testing.T) {
	g1, _ := compileSrc(t, "a ~ Gamma(1, 1)\nb ~ Normal(a, 1)\n")
	g2, _ := compileSrc(t, "a ~ Gamma(1, 1)\nb ~ Normal(a, 1)\n")
	if fs, ds := g1.Readers(g2.ByName["a"]); fs != nil || ds != nil {
		t.Errorf("a variable of another graph has readers %v, %v", fs, ds)
	}
	if fs, ds := g1.Readers(nil); fs != nil || ds != nil {
		t.Errorf("nil has readers %v, %v", fs, ds)
	}
}
