package graph

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
)

// compileData compiles src with the named vectors (n×1 matrices) bound as
// data and sets as --set values.
func compileData(t *testing.T, src string, vecs map[string][]float64, sets map[string]float64) *Graph {
	t.Helper()
	f, err := lang.Parse("model.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]*dataset.Matrix{}
	for name, x := range vecs {
		data[name] = &dataset.Matrix{Rows: len(x), Cols: 1, Data: x, Source: name + ".csv"}
	}
	g, err := Compile(f, Options{Data: data, Set: sets})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestForEachOrder checks the offsets and loop indices ForEach visits
// against the loops written out by hand.
func TestForEachOrder(t *testing.T) {
	tests := []struct {
		name, stmt string
		want       []int
	}{
		{"vectorised", "Y ~ Normal(0, 1)", []int{0, 1, 2, 3, 4, 5}},
		{"rows then columns", "for i in 1:N {\n for d in 1:D {\n  Y[i, d] ~ Normal(0, 1)\n }\n}", []int{0, 1, 2, 3, 4, 5}},
		{"columns then rows", "for d in 1:D {\n for i in 1:N {\n  Y[i, d] ~ Normal(0, 1)\n }\n}", []int{0, 3, 1, 4, 2, 5}},
		{"one loop of two indices", "for d in 1:D, i in 1:N {\n  Y[i, d] ~ Normal(0, 1)\n}", []int{0, 3, 1, 4, 2, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "dim N, D\nparam Y : real[N, D]\n" + tt.stmt + "\n"
			g := compileData(t, src, nil, map[string]float64{"N": 2, "D": 3})
			f := g.ByName["Y"].Def
			env := NewEnv(g)
			var got []int
			err := f.ForEach(env, func(off int) error {
				// The loop indices are set: the offset follows from them.
				var i, d int
				for _, l := range f.Loops {
					switch l.Name {
					case "i", "_1":
						i = env.Loop[l.Slot]
					case "d", "_2":
						d = env.Loop[l.Slot]
					}
				}
				if want := (i-1)*3 + d - 1; off != want {
					t.Errorf("offset %d at i = %d, d = %d; want %d", off, i, d, want)
				}
				got = append(got, off)
				return nil
			})
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("visited %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestForEachStops checks that fn's error ends the iteration and is
// returned as it is.
func TestForEachStops(t *testing.T) {
	g := compileData(t, "dim N\nparam y : real[N]\ny ~ Normal(0, 1)\n", nil, map[string]float64{"N": 5})
	stop := errors.New("stop")
	n := 0
	err := g.ByName["y"].Def.ForEach(NewEnv(g), func(off int) error {
		n++
		if off == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Errorf("got %v after %d calls, want stop after 3", err, n)
	}
}

// TestIndexErrors checks that a bad index at run time is an error naming
// the factor, the loop position and the index, never a panic, and that
// the Env keeps reporting it.
func TestIndexErrors(t *testing.T) {
	const src = `dim N, K
data z : real[N]
data y : real[N]
param mu : real[K]
mu ~ Normal(0, 10)
z ~ Normal(0, 1)
for i in 1:N {
  y[i] ~ Normal(mu[z[i]], 1)
}
`
	tests := []struct {
		name string
		z    []float64
		want string // "" for no error
	}{
		{"valid", []float64{1, 3, 2}, ""},
		{"too large", []float64{1, 4, 2}, "at i = 2: index 4 of mu is outside 1..3"},
		{"zero", []float64{0, 1, 1}, "at i = 1: index 0 of mu is outside 1..3"},
		{"not whole", []float64{1, 2, 2.5}, "at i = 3: index 2.5 of mu is not a whole number"},
		{"missing", []float64{1, math.NaN(), 2}, "at i = 2: index NaN of mu is not a whole number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := compileData(t, src, map[string][]float64{"z": tt.z, "y": {0, 0, 0}}, map[string]float64{"K": 3})
			f := g.ByName["y"].Def
			env := NewEnv(g)
			copy(env.Values[g.ByName["mu"].ID], []float64{10, 20, 30})
			var got []float64
			fnErr := errors.New("NaN parameter")
			err := f.ForEach(env, func(off int) error {
				x := f.Args[0].Eval(env)
				if math.IsNaN(x) {
					return fnErr // the index error is reported instead
				}
				got = append(got, x)
				return nil
			})
			if tt.want == "" {
				if err != nil || env.Err() != nil {
					t.Fatalf("got %v", err)
				}
				if !slices.Equal(got, []float64{10, 30, 20}) {
					t.Errorf("got %v", got)
				}
				return
			}
			var ie IndexError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ie) || ie.Var != "mu" {
				t.Fatalf("got %v, want an IndexError ending %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "model.pydt:8:8: y[i] ~ Normal(mu[z[i]], 1)") {
				t.Errorf("%q does not name the factor", err)
			}
			// The env stays failed: every checked evaluation reports it.
			if env.Err() != err {
				t.Errorf("Env.Err = %v", env.Err())
			}
			if _, e := Eval(Num{1}, env); e != err {
				t.Errorf("Eval after the failure: %v", e)
			}
			if e := f.ForEach(env, func(int) error { t.Error("fn called"); return nil }); e != err {
				t.Errorf("ForEach after the failure: %v", e)
			}
			if e := g.EvalDeterministic(env); e != err {
				t.Errorf("EvalDeterministic after the failure: %v", e)
			}
		})
	}
}

// TestEvalErrors checks the checked entry points outside loops: Eval and
// EvalDeterministic on an index read through a constant and a
// deterministic variable, which the compiler cannot check.
func TestEvalErrors(t *testing.T) {
	const src = `dim K
data w : real[K]
w ~ Normal(0, 1)
const k = 4
j = k - 1
a = w[j] + w[k]
b ~ Normal(a, 1)
`
	g := compileData(t, src, map[string][]float64{"w": {1, 2, 3}}, nil)
	env := NewEnv(g)
	err := g.EvalDeterministic(env)
	if err == nil || !strings.Contains(err.Error(), "a = w[j] + w[k]: index 4 of w is outside 1..3") {
		t.Fatalf("EvalDeterministic: %v", err)
	}
	env = NewEnv(g)
	j := g.ByName["j"]
	env.Values[j.ID][0] = 3
	x, err := Eval(g.ByName["b"].Def.Args[0], env) // Ref a: fine
	if err != nil {
		t.Fatal(err)
	}
	_ = x
	x, err = Eval(g.ByName["a"].Expr, env)
	if !math.IsNaN(x) || err == nil || !strings.Contains(err.Error(), "w[j] + w[k]: index 4 of w") {
		t.Errorf("Eval = %v, %v", x, err)
	}
	var ie IndexError
	if !errors.As(err, &ie) || ie.Index != 4 || ie.Dim != 3 {
		t.Errorf("not an IndexError: %#v", err)
	}
	// The first error is kept.
	if _, e := (Elem{V: g.ByName["w"], Idx: []Expr{Num{0}}}).Offset(env); e != err {
		t.Errorf("Offset after the failure: %v", e)
	}
}

// TestCallConcurrent evaluates one function call in two goroutines with
// their own Envs: the arguments must not be shared (they were held in the
// Call, and two chains could read each other's).
func TestCallConcurrent(t *testing.T) {
	g := compileData(t, "a ~ Gamma(1, 1)\nb = sqrt(a) + max(a, exp(a) - pow(a, 2))\nc ~ Normal(b, 1)\n", nil, nil)
	a, b := g.ByName["a"], g.ByName["b"]
	want := func(x float64) float64 { return math.Sqrt(x) + math.Max(x, math.Exp(x)-math.Pow(x, 2)) }
	var wg sync.WaitGroup
	bad := make([]int, 2)
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := NewEnv(g)
			x := float64(k+1) * 1.5
			env.Values[a.ID][0] = x
			for range 200000 {
				if y := b.Expr.Eval(env); y != want(x) {
					bad[k]++
				}
			}
		}()
	}
	wg.Wait()
	if bad[0]+bad[1] > 0 {
		t.Errorf("%v wrong values", bad)
	}
}

// TestEvalAllocs checks that evaluation and iteration allocate nothing.
func TestEvalAllocs(t *testing.T) {
	const src = `dim N, K
data z : real[N]
data y : real[N]
param mu : real[K]
mu ~ Normal(0, 10)
z ~ Normal(0, 1)
s ~ Gamma(1, 1)
for i in 1:N {
  y[i] ~ Normal(mu[z[i]] * 2, sqrt(s))
}
`
	g := compileData(t, src, map[string][]float64{"z": {1, 2, 3, 1}, "y": {0, 0, 0, 0}}, map[string]float64{"K": 3})
	f := g.ByName["y"].Def
	env := NewEnv(g)
	env.Values[g.ByName["s"].ID][0] = 2
	sum := 0.0
	allocs := testing.AllocsPerRun(100, func() {
		err := f.ForEach(env, func(off int) error {
			for _, a := range f.Args {
				sum += a.Eval(env)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Eval(f.Args[1], env); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}

// TestUnknownOperator checks that an operator the compiler never makes,
// in an expression built in Go, is an evaluation error, not a panic.
func TestUnknownOperator(t *testing.T) {
	x, err := Eval(Op{Op: '%', X: Num{1}, Y: Num{2}}, &Env{})
	if !math.IsNaN(x) || err == nil || !strings.Contains(err.Error(), `unknown operator '%'`) {
		t.Errorf("got %v, %v", x, err)
	}
}

// TestVariances evaluates PYDT variance arguments per dimension: a scalar
// in every entry, a vector argument element by element (s / prec reads
// s / prec[d]), functions of the vector included; the readers of the
// vector include the PYDT.
func TestVariances(t *testing.T) {
	tests := []struct {
		name, arg string
		want      func(s float64, prec []float64, d int) float64
	}{
		{"scalar", "s", func(s float64, _ []float64, _ int) float64 { return s }},
		{"reciprocal", "1 / prec", func(_ float64, p []float64, d int) float64 { return 1 / p[d] }},
		{"scaled", "s / prec", func(s float64, p []float64, d int) float64 { return s / p[d] }},
		{"function", "exp(-log(prec)) + s * prec", func(s float64, p []float64, d int) float64 { return math.Exp(-math.Log(p[d])) + s*p[d] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "dim N, D\nparam Z : real[N, D]\nparam prec : pos[D]\ns ~ Gamma(1, 1)\nprec ~ Gamma(1, 1)\nZ ~ PYDT(1, 0, 1, " + tt.arg + ")\n"
			g := compileData(t, src, nil, map[string]float64{"N": 4, "D": 3})
			f := g.PYDT
			if vector := tt.name != "scalar"; (f.DimLoop != nil) != vector {
				t.Fatalf("DimLoop = %v for %s", f.DimLoop, tt.arg)
			}
			if got := f.String(); got != "Z ~ PYDT(1, 0, DivInv(1), "+tt.arg+")" {
				t.Errorf("printed as %q", got)
			}
			env := NewEnv(g)
			s, prec := 0.7, []float64{0.5, 2, 30}
			env.Values[g.ByName["s"].ID][0] = s
			copy(env.Values[g.ByName["prec"].ID], prec)
			got := make([]float64, 3)
			if err := f.Variances(env, got); err != nil {
				t.Fatal(err)
			}
			for d := range 3 {
				if want := tt.want(s, prec, d); !(math.Abs(got[d]-want) <= 1e-15*want) {
					t.Errorf("dimension %d: %v, want %v", d+1, got[d], want)
				}
			}
			if err := f.Variances(env, make([]float64, 2)); err == nil {
				t.Error("no error for 2 variances of 3 dimensions")
			}
			fs, _ := g.Readers(g.ByName["prec"])
			if vector := tt.name != "scalar"; slices.Contains(fs, f) != vector {
				t.Errorf("Readers(prec) = %v", fs)
			}
		})
	}
}

// TestRowView: a vector argument (a matrix row picked by a latent index,
// trans[z[t - 1]], or a whole vector, pi0) evaluates to a view of the
// variable's values, not a copy, with no allocation; an index outside the
// rows is an IndexError naming the matrix.
func TestRowView(t *testing.T) {
	const src = "dim T, K\ndata y : real[T]\n" + hmmChain + "y ~ Normal(0, 1)\n"
	g := compileData(t, src, map[string][]float64{"y": {0, 0, 0}}, map[string]float64{"K": 2})
	z, trans := g.ByName["z"], g.ByName["trans"]
	f := z.Defs[1]
	env := NewEnv(g)
	copy(env.Values[trans.ID], []float64{0.9, 0.1, 0.3, 0.7})
	copy(env.Values[z.ID], []float64{2, 1, 1})
	var a VecArgs
	var rows [][]float64
	err := f.ForEach(env, func(off int) error {
		p, err := a.Eval(f, env)
		rows = append(rows, p[0])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0][0] != 0.3 || rows[1][0] != 0.9 {
		t.Fatalf("rows %v, want trans[2] then trans[1]", rows)
	}
	rows[1][0] = 0.5 // a view: writes the variable
	if env.Values[trans.ID][0] != 0.5 {
		t.Error("the row is a copy, not a view")
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = f.ForEach(env, func(off int) error {
			_, err := a.Eval(f, env)
			return err
		})
	})
	if allocs != 0 {
		t.Errorf("%v allocations per evaluation, want 0", allocs)
	}
	env.Values[z.ID][0] = 3
	err = f.ForEach(env, func(off int) error { _, err := a.Eval(f, env); return err })
	if err == nil || !strings.Contains(err.Error(), "index 3 of trans is outside 1..2") || !strings.Contains(err.Error(), "t = 2") {
		t.Errorf("got %v, want an index error of trans at t = 2", err)
	}
}
