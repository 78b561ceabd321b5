package graph

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
)

// bindCase is a model and bindings whose diagnostics or graph depend on the
// bindings.
type bindCase struct {
	name, src string
	set       map[string]float64
	data      map[string]*dataset.Matrix
	partial   bool
}

func mat(rows, cols int, f func(i, j int) float64) *dataset.Matrix {
	m := &dataset.Matrix{Rows: rows, Cols: cols, Data: make([]float64, rows*cols), Source: "m.csv"}
	for i := range rows {
		for j := range cols {
			m.Data[i*cols+j] = f(i, j)
		}
	}
	return m
}

const pydtHead = `dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
c ~ Gamma(1, 1)
X ~ PYDT(alpha, 0.5, c, 1)
`

// hmmChain is the hidden chain of an HMM of T steps and K states, for
// the tests' models to add emissions to: the initial distribution pi0,
// the transition rows trans[k] and the states z[t].
const hmmChain = `param z : categorical(K)[T]
param pi0 : unit[K]
param trans : unit[K, K]
pi0 ~ Dirichlet(1)
for k in 1:K {
  trans[k] ~ Dirichlet(1)
}
z[1] ~ Categorical(pi0)
for t in 2:T {
  z[t] ~ Categorical(trans[z[t - 1]])
}
`

func bindCases() []bindCase {
	x := func(n, d int) map[string]*dataset.Matrix {
		return map[string]*dataset.Matrix{"X": mat(n, d, func(i, j int) float64 { return float64(i + j) })}
	}
	with := func(d map[string]*dataset.Matrix, name string, m *dataset.Matrix) map[string]*dataset.Matrix {
		d[name] = m
		return d
	}
	return []bindCase{
		{name: "plain", src: pydtHead, data: x(4, 2)},
		{name: "partial", src: pydtHead, partial: true},
		{name: "unbound", src: pydtHead},
		{name: "set dims", src: pydtHead, set: map[string]float64{"N": 3}, data: x(4, 2)},
		{name: "clamped", src: pydtHead, set: map[string]float64{"alpha": 1.5}, data: x(4, 2)},
		{name: "clamped invalid", src: pydtHead, set: map[string]float64{"c": -1, "alpha": -3}, data: x(4, 2)},
		{name: "clamped omitted", src: pydtHead, set: map[string]float64{"alpha": 0}, data: x(4, 2)},
		{name: "set unknown and array", src: pydtHead + "param w : real[N]\nw ~ Normal(0, 1)\n", set: map[string]float64{"alhpa": 1, "w": 1, "X": 1}, data: x(4, 2)},
		{name: "const of dims", src: pydtHead + "const k = N - 3\ny ~ Normal(0, k)\n", data: x(5, 2)},
		{name: "const of dims invalid", src: pydtHead + "const k = N - 3\ns = k * 2\ny ~ Normal(0, s)\nz ~ Gamma(k, 1)\n", data: x(2, 2)},
		{name: "const infinite", src: pydtHead + "const k = 1 / (N - 3)\ny ~ Normal(0, 1)\n", data: x(3, 2)},
		{name: "dimension expression", src: pydtHead + "param w : real[N - 1]\nw ~ Normal(0, 1)\n", data: x(4, 2)},
		{name: "dimension expression invalid", src: pydtHead + "param w : real[N - 4, N / 3]\nw ~ Normal(0, 1)\n", data: x(4, 2)},
		{name: "too many values", src: pydtHead + "param w : real[N, 1000000]\nw ~ Normal(0, 1)\n", data: x(100, 2)},
		{name: "vectorised shapes", src: pydtHead + "data y : real[N]\nparam m : real[3]\nm ~ Normal(0, 1)\ny ~ Normal(m, 1)\n",
			data: with(x(4, 2), "y", mat(4, 1, func(i, j int) float64 { return 0 }))},
		{name: "vectorised shapes valid", src: pydtHead + "data y : real[N]\nparam m : real[4]\nm ~ Normal(0, 1)\ny ~ Normal(m, 1)\n",
			data: with(x(4, 2), "y", mat(4, 1, func(i, j int) float64 { return 0 }))},
		{name: "data values", src: pydtHead + "data y : pos[N]\ny ~ Gamma(1, 1)\ndata b : binary[N]\nb ~ Probit(0)\n",
			data: with(with(x(4, 2), "y", mat(4, 1, func(i, j int) float64 { return float64(i) - 1 })), "b", mat(4, 1, func(i, j int) float64 { return float64(i) }))},
		{name: "data shape", src: pydtHead + "data y : real[N, 3]\ny ~ Normal(0, 1)\n",
			data: with(x(4, 2), "y", mat(5, 2, func(i, j int) float64 { return 0 }))},
		{name: "no data", src: pydtHead + "data y : real[N]\ny ~ Normal(0, 1)\n", data: x(4, 2)},
		{name: "constant index", src: pydtHead + "param w : real[N]\nw ~ Normal(0, 1)\ny ~ Normal(w[5], 1)\ns = w[6]\nq ~ Normal(s, 1)\n", data: x(4, 2)},
		{name: "loops cover", src: pydtHead + "param w : real[N]\nfor i in 1:3 {\n  w[i] ~ Normal(0, 1)\n}\n", data: x(4, 2)},
		{name: "loops cover exactly", src: pydtHead + "param w : real[N]\nfor i in 1:3 {\n  w[i] ~ Normal(0, 1)\n}\n", data: x(3, 2)},
		{name: "loop bounds", src: pydtHead + "param w : real[4]\nconst h = N / 2\nfor i in 1:h {\n  w[i] ~ Normal(0, 1)\n}\n", data: x(5, 2)},
		{name: "loops over data", src: pydtHead + "data y : real[N, D]\nparam mu : real[N]\nmu ~ Normal(0, 1)\nfor i in 1:N, d in 1:D {\n  y[i, d] ~ Normal(mu[i], 1)\n}\n",
			data: with(x(4, 2), "y", mat(4, 2, func(i, j int) float64 { return float64(i * j) }))},
		{name: "per-dimension variance", src: "dim N, D, E\ndata X : real[N, D]\nparam prec : pos[E]\nprec ~ Gamma(1, 1)\nX ~ PYDT(1, 0.5, 1, 1 / prec)\n",
			data: x(4, 2), set: map[string]float64{"E": 3}},
		{name: "per-dimension variance valid", src: "dim N, D\ndata X : real[N, D]\nparam prec : pos[D]\nprec ~ Gamma(1, 1)\nX ~ PYDT(1, 0.5, 1, 1 / prec)\n", data: x(4, 3)},
		{name: "hmm", src: "dim T, K, D\n" + hmmChain + `data y : real[T, D]
param mu : real[K, D]
alpha ~ Gamma(2, 0.5)
c ~ Gamma(1, 1)
sd ~ Gamma(2, 4)
mu ~ PYDT(alpha, 0.5, c, 1)
for t in 1:T, d in 1:D {
  y[t, d] ~ Normal(mu[z[t], d], sd)
}
`, set: map[string]float64{"K": 3}, data: map[string]*dataset.Matrix{"y": mat(6, 2, func(i, j int) float64 { return float64(i - j) })}},
		{name: "category index", src: `dim N, D, K, J
data X : real[N, D]
X ~ PYDT(1, 0.5, 1, 1)
param u : categorical(K)[N]
param trans : unit[J, J]
param w : real[J]
trans ~ Dirichlet(1)
w ~ Normal(0, 1)
u ~ Categorical(trans[1])
data y : real[N]
for i in 1:N {
  y[i] ~ Normal(w[u[i]], 1)
}
`, set: map[string]float64{"K": 4, "J": 3}, data: with(x(4, 2), "y", mat(4, 1, func(i, j int) float64 { return 0 }))},
		{name: "constant target index", src: pydtHead + "param v : real[N]\nv[5] ~ Normal(0, 1)\nfor i in 2:N {\n  v[i] ~ Normal(v[i - 1], 1)\n}\n", data: x(4, 2)},
		{name: "constant index in a loop", src: pydtHead + "param v : real[N]\ndata y : real[N]\nv ~ Normal(0, 1)\nfor i in 1:3 {\n  y[i] ~ Normal(v[7], 1)\n}\n",
			data: with(x(4, 2), "y", mat(4, 1, func(i, j int) float64 { return 0 }))},
		{name: "categorical data", src: "dim N, D, K\ndata X : real[N, D]\nX ~ PYDT(1, 0.5, 1, 1)\ndata z : categorical(K)[N]\nparam p : unit[K]\np ~ Dirichlet(1)\nz ~ Categorical(p)\n",
			set: map[string]float64{"K": 2}, data: with(x(4, 2), "z", mat(4, 1, func(i, j int) float64 { return float64(i) }))},
	}
}

// TestBindMatchesOnePass binds models whose diagnostics and graphs depend
// on the bindings, and checks Program.Bind against the one-pass compiler:
// the same diagnostics, and when there are none the same graph.
func TestBindMatchesOnePass(t *testing.T) {
	for _, tt := range bindCases() {
		t.Run(tt.name, func(t *testing.T) {
			f, err := lang.Parse("model.pydt", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			p, err := CompileProgram(f, Options{NeedPYDT: true})
			if err != nil {
				t.Fatalf("CompileProgram: %v", err)
			}
			once, _, werr := compileOnce(f, Options{Data: tt.data, Set: tt.set, Partial: tt.partial, NeedPYDT: true}, false)
			g, gerr := p.Bind(Bindings{Data: tt.data, Set: tt.set, Partial: tt.partial})
			want, got := errorList(t, werr), errorList(t, gerr)
			if testing.Verbose() {
				t.Logf("%q", got)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Bind reports\n%q\nthe one-pass compiler\n%q", got, want)
			}
			if werr != nil {
				return
			}
			if a, b := summary(t, once), summary(t, g); a != b {
				t.Errorf("Bind's graph:\n%s\nthe one-pass compiler's:\n%s", b, a)
			}
			if a, b := graphDetail(once), graphDetail(g); a != b {
				t.Errorf("Bind's graph in detail:\n%s\nthe one-pass compiler's:\n%s", b, a)
			}
		})
	}
}

func summary(t *testing.T, g *Graph) string {
	t.Helper()
	var b bytes.Buffer
	if err := g.Summary(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// graphDetail prints what Summary leaves out: each variable's fields and
// each factor's plate, index, arguments and flags, by position.
func graphDetail(g *Graph) string {
	var b strings.Builder
	for _, v := range g.Vars {
		fmt.Fprintf(&b, "%d %s kind=%v sup=%v dims=%v role=%v value=%v cat=%d defs=%d expr=%v data=%v\n",
			v.ID, v.Name, v.Kind, v.Support, v.Dims, v.Role, v.Value, v.Categories, len(v.Defs), v.Expr, v.Data != nil)
	}
	for _, f := range g.Factors {
		fmt.Fprintf(&b, "%s %s loops=%v index=%v args=%v elementwise=%v veclen=%d omitted=%v", f.Pos, f, f.Loops, f.Index, f.Args, f.Elementwise, f.VecLen, f.Omitted)
		if f.DimLoop != nil {
			fmt.Fprintf(&b, " dimloop=%v", *f.DimLoop)
		}
		b.WriteString("\n")
	}
	for _, v := range g.Deterministic {
		b.WriteString(v.Name + " ")
	}
	fmt.Fprintf(&b, "\ntrees=%d maxloops=%d\n", len(g.Trees), g.maxLoops)
	for _, v := range g.Vars {
		fs, ds := g.Readers(v)
		fmt.Fprintf(&b, "readers of %s: %d factors, %d deterministic\n", v.Name, len(fs), len(ds))
	}
	return b.String()
}

// TestBindResolvesNoNames checks that Bind compiles nothing from the
// syntax tree: the compiler's count of syntax nodes visited, which
// CompileProgram and the one-pass compiler advance, does not move while a
// program is bound, to valid bindings or invalid ones.
func TestBindResolvesNoNames(t *testing.T) {
	for _, tt := range bindCases() {
		f, err := lang.Parse("model.pydt", []byte(tt.src))
		if err != nil {
			t.Fatal(err)
		}
		before := syntaxVisits.Load()
		p, err := CompileProgram(f, Options{NeedPYDT: true})
		if err != nil {
			t.Fatal(err)
		}
		if syntaxVisits.Load() == before {
			t.Fatalf("%s: CompileProgram visited no syntax: the count is not kept", tt.name)
		}
		before = syntaxVisits.Load()
		p.Bind(Bindings{Data: tt.data, Set: tt.set, Partial: tt.partial})
		if n := syntaxVisits.Load() - before; n != 0 {
			t.Errorf("%s: Bind visited %d syntax nodes", tt.name, n)
		}
	}
}

// BenchmarkBind compares binding a compiled program with compiling in one
// pass, for models of growing length (k statements, each a latent scalar
// read by the next): Bind does no name resolution or checking of the
// syntax, only copies the graph and binds it.
func BenchmarkBind(b *testing.B) {
	for _, k := range []int{10, 100, 1000} {
		var src strings.Builder
		src.WriteString("dim N, D\ndata X : real[N, D]\nw0 ~ Gamma(1, 1)\n")
		for i := 1; i <= k; i++ {
			fmt.Fprintf(&src, "w%d ~ Gamma(exp(log(w%d) / 2 + 0.5) + 1, 1)\n", i, i-1)
		}
		fmt.Fprintf(&src, "X ~ PYDT(w%d, 0.5, 1, 1)\n", k)
		f, err := lang.Parse("bench.pydt", []byte(src.String()))
		if err != nil {
			b.Fatal(err)
		}
		data := map[string]*dataset.Matrix{"X": mat(50, 2, func(i, j int) float64 { return float64(i * j) })}
		p, err := CompileProgram(f, Options{NeedPYDT: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("Bind/k=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := p.Bind(Bindings{Data: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("OnePass/k=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, _, err := compileOnce(f, Options{Data: data, NeedPYDT: true}, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
