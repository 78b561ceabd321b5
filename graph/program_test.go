package graph

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
)

func errorList(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var list lang.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %T is not an ErrorList: %v", err, err)
	}
	var out []string
	for _, e := range list {
		out = append(out, e.Error())
	}
	return out
}

// TestProgramBindGolden checks CompileProgram and Bind against the
// one-pass compiler (compileOnce, which Compile uses only for models with
// diagnostics that need no data) on every golden model, with the bindings
// of its directives: the diagnostics of CompileProgram are some of the
// one-pass compiler's (none is made up for want of data), and when it
// succeeds, Bind gives exactly its diagnostics and graph.
func TestProgramBindGolden(t *testing.T) {
	for _, dir := range []string{"testdata/errors", "testdata/ok"} {
		eachModel(t, dir, func(t *testing.T, path string) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := lang.Parse(filepath.Base(path), src)
			if err != nil {
				t.Fatal(err)
			}
			opts := options(t, src)
			g, _, cerr := compileOnce(f, opts, false) // the one-pass compiler
			if cerr != nil {
				g = nil
			}
			want := errorList(t, cerr)
			p, perr := CompileProgram(f, Options{NeedPYDT: opts.NeedPYDT})
			if perr != nil {
				// The same problem, at the same place: the message may
				// differ by what binding tells (outside 1..? and 1..3).
				at := func(e string) string {
					e, _, _ = strings.Cut(e, " 1..")
					return e
				}
				for _, e := range errorList(t, perr) {
					if !slices.ContainsFunc(want, func(w string) bool { return at(w) == at(e) }) {
						t.Errorf("CompileProgram reports %q, which Compile with the bindings does not", e)
					}
				}
				return
			}
			bg, berr := p.Bind(Bindings{Data: opts.Data, Set: opts.Set, Partial: opts.Partial})
			if got := errorList(t, berr); !slices.Equal(got, want) {
				t.Fatalf("Bind reports\n%q\nCompile\n%q", got, want)
			}
			if cerr == nil {
				var a, b bytes.Buffer
				if err := g.Summary(&a); err != nil {
					t.Fatal(err)
				}
				if err := bg.Summary(&b); err != nil {
					t.Fatal(err)
				}
				if a.String() != b.String() {
					t.Errorf("Bind's graph differs:\n%s\nCompile's:\n%s", b.String(), a.String())
				}
			}
		})
	}
}

// TestProgramRebind binds one program to data of two shapes and checks
// that the first graph is untouched by the second binding.
func TestProgramRebind(t *testing.T) {
	src := []byte(`dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, 0.5, c, 1 / prec)
`)
	f, err := lang.Parse("model.pydt", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := CompileProgram(f, Options{NeedPYDT: true})
	if err != nil {
		t.Fatal(err)
	}
	if x := p.Unbound.ByName["X"]; !x.IsData || !slices.Equal(x.Dims, []int{-1, -1}) {
		t.Errorf("unbound X: data %v, shape %v", x.IsData, x.Dims)
	}
	bind := func(n, d int, sets map[string]float64) (*Graph, error) {
		m := &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "x.csv"}
		return p.Bind(Bindings{Data: map[string]*dataset.Matrix{"X": m}, Set: sets})
	}
	// Bound from two goroutines at once (go test -race checks it).
	var g1 *Graph
	var err1 error
	done := make(chan bool)
	go func() { g1, err1 = bind(3, 2, nil); done <- true }()
	g2, err2 := bind(5, 4, map[string]float64{"alpha": 1})
	<-done
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for _, tt := range []struct {
		g     *Graph
		shape []int
		alpha Role
	}{{g1, []int{3, 2}, Latent}, {g2, []int{5, 4}, Clamped}} {
		x := tt.g.ByName["X"]
		if !slices.Equal(x.Dims, tt.shape) || x.Role != Observed || len(x.Value) != tt.shape[0]*tt.shape[1] {
			t.Errorf("X: shape %v, role %v, %d values; want %v", x.Dims, x.Role, len(x.Value), tt.shape)
		}
		if r := tt.g.ByName["alpha"].Role; r != tt.alpha {
			t.Errorf("alpha is %v, want %v", r, tt.alpha)
		}
	}
	if p.Unbound.ByName["alpha"].Role != Latent || p.Unbound.ByName["N"].Value != nil {
		t.Error("binding changed the program")
	}
	// A binding error is Bind's, not the program's.
	_, err = p.Bind(Bindings{Set: map[string]float64{"N": 3}})
	if got := errorList(t, err); len(got) != 2 || !strings.Contains(got[0], "dimension D is not bound") || !strings.Contains(got[1], "no data for X") {
		t.Errorf("Bind without data: %q", got)
	}
}

// TestProgramNoBindings checks that CompileProgram refuses bindings.
func TestProgramNoBindings(t *testing.T) {
	f, err := lang.Parse("model.pydt", []byte("a ~ Normal(0, 1)\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{Set: map[string]float64{}}, {Data: map[string]*dataset.Matrix{}}, {Partial: true}} {
		if _, err := CompileProgram(f, opts); err == nil {
			t.Errorf("CompileProgram(%+v) took bindings", opts)
		}
	}
}

// TestProgramDataDependent checks models whose validity depends on the
// bound dimensions: without data they compile (the compiler reported a
// constant of an unbound dimension as real, so an sd, and shapes [-1]
// against [3]), and Bind checks them with the data.
func TestProgramDataDependent(t *testing.T) {
	tests := []struct {
		name, src string
		n         float64
		want      string // "" for none
	}{
		{"constant of a dimension", "dim N\nconst k = N - 3\nx ~ Normal(0, k)\n", 10, ""},
		{"constant of a dimension, invalid", "dim N\nconst k = N - 3\nx ~ Normal(0, k)\n", 2, "Normal parameter sd must be positive, but k is real"},
		{"through a deterministic variable", "dim N\nconst k = N - 3\ns = k * 2\nx ~ Normal(0, s)\n", 10, ""},
		{"shapes", "dim N\ndata x : real[N]\nparam mu : real[3]\nmu ~ Normal(0, 1)\nx ~ Normal(mu, 1)\n", 3, ""},
		{"shapes, invalid", "dim N\ndata x : real[N]\nparam mu : real[3]\nmu ~ Normal(0, 1)\nx ~ Normal(mu, 1)\n", 4, "mu has shape [3] but x has shape [4]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := lang.Parse("model.pydt", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			p, err := CompileProgram(f, Options{})
			if err != nil {
				t.Fatalf("CompileProgram: %v", err)
			}
			b := Bindings{Set: map[string]float64{"N": tt.n}}
			if strings.Contains(tt.src, "data x") {
				n := int(tt.n)
				b = Bindings{Data: map[string]*dataset.Matrix{"x": {Rows: n, Cols: 1, Data: make([]float64, n), Source: "x.csv"}}}
			}
			_, err = p.Bind(b)
			got := errorList(t, err)
			if tt.want == "" && got != nil || tt.want != "" && (len(got) == 0 || !strings.Contains(got[0], tt.want)) {
				t.Errorf("Bind: %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProgramCoverage checks that CompileProgram reports loops that do not
// cover an array of constant shape (the check was skipped without data),
// and leaves the check to Bind when the shape needs data.
func TestProgramCoverage(t *testing.T) {
	const msg = "the loops must cover every element of x exactly once"
	tests := []struct {
		name, src  string
		n          float64
		prog, bind bool // whether CompileProgram, Bind report it
	}{
		{"constant shape", "param x : real[3]\nfor i in 1:2 {\n  x[i] ~ Normal(0, 1)\n}\n", 0, true, false},
		{"constant shape, covered", "param x : real[2]\nfor i in 1:2 {\n  x[i] ~ Normal(0, 1)\n}\n", 0, false, false},
		{"bound shape, covered", "dim N\nparam x : real[N]\nfor i in 1:2 {\n  x[i] ~ Normal(0, 1)\n}\n", 2, false, false},
		{"bound shape, not covered", "dim N\nparam x : real[N]\nfor i in 1:2 {\n  x[i] ~ Normal(0, 1)\n}\n", 3, false, true},
		{"bound loop, not covered", "dim N\nparam x : real[3]\nfor i in 1:N {\n  x[i] ~ Normal(0, 1)\n}\n", 2, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := lang.Parse("model.pydt", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			p, err := CompileProgram(f, Options{})
			if got := err != nil && strings.Contains(err.Error(), msg); got != tt.prog || err != nil && !got {
				t.Fatalf("CompileProgram: %v", err)
			}
			if err != nil {
				return
			}
			var sets map[string]float64
			if tt.n > 0 {
				sets = map[string]float64{"N": tt.n}
			}
			_, err = p.Bind(Bindings{Set: sets})
			if got := err != nil && strings.Contains(err.Error(), msg); got != tt.bind || err != nil && !got {
				t.Errorf("Bind: %v", err)
			}
		})
	}
}
