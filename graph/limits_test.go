package graph

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/lang"
)

// compileSrc parses and compiles src in partial mode.
func compileSrc(t *testing.T, src string) (*Graph, lang.ErrorList) {
	t.Helper()
	f, err := lang.Parse("model.pydt", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	g, err := Compile(f, Options{Partial: true})
	var list lang.ErrorList
	if err != nil && !errors.As(err, &list) {
		t.Fatalf("Compile error %T is not an ErrorList", err)
	}
	return g, list
}

// TestCompileLongSum compiles the longest flat sum a statement may hold and
// prints it (printing a chain by concatenation was quadratic; its cost is
// measured by BenchmarkCompileLongSum).
func TestCompileLongSum(t *testing.T) {
	terms := lang.MaxStatementTokens/2 - 20
	src := "dim N, D\ndata X : real[N, D]\nprec ~ Gamma(1, 1)\nX ~ PYDT(1, 0.5, 1, 1 / prec" +
		strings.Repeat(" + 0", terms) + ")\n"
	g, errs := compileSrc(t, src)
	if errs != nil {
		t.Fatal(errs)
	}
	want := "1 / prec" + strings.Repeat(" + 0", terms)
	if got := g.PYDT.Args[3].String(); got != want {
		t.Errorf("the variance prints as %.80q…", got)
	}
}

// TestCompileDeepTree checks that a tree built in Go, deeper than Parse
// allows, is an error rather than a stack overflow.
func TestCompileDeepTree(t *testing.T) {
	var x lang.Expr = &lang.Ident{NamePos: lang.Position{Filename: "model.pydt", Line: 1, Column: 5}, Name: "a"}
	for range maxExprDepth + 1 {
		x = &lang.Binary{X: x, Op: "+", Y: &lang.Number{Lit: "1"}}
	}
	pos := lang.Position{Filename: "model.pydt", Line: 1, Column: 1}
	f := &lang.File{Name: "model.pydt", Stmts: []lang.Stmt{
		&lang.Assign{LHS: &lang.LValue{Name: &lang.Ident{NamePos: pos, Name: "a"}}, Op: lang.Sample,
			RHS: &lang.Call{Func: &lang.Ident{Name: "Normal"}, Args: []*lang.Arg{{Value: &lang.Number{Lit: "0"}}, {Value: &lang.Number{Lit: "1"}}}}},
		&lang.Assign{LHS: &lang.LValue{Name: &lang.Ident{NamePos: pos, Name: "b"}}, Op: lang.Define, RHS: x},
	}}
	_, err := Compile(f, Options{Partial: true})
	var list lang.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].Msg, "expression too deep") {
		t.Errorf("got %v, want one error about depth", err)
	}
}

// TestLoopIndexReuse checks that k nested loops reusing one index give k-1
// diagnostics, one per loop, not one per pair of loops.
func TestLoopIndexReuse(t *testing.T) {
	const k = 60
	src := "dim N\nparam z : real[N]\n" + strings.Repeat("for i in 1:N {\n", k) +
		"z[i] ~ Normal(0, 1)\n" + strings.Repeat("}\n", k)
	_, errs := compileSrc(t, src)
	if len(errs) != k-1 {
		t.Fatalf("got %d errors, want %d", len(errs), k-1)
	}
	for n, e := range errs {
		want := fmt.Sprintf("model.pydt:%d:5: loop index i is already in use by an enclosing loop", n+4)
		if e.Error() != want {
			t.Errorf("got %q, want %q", e.Error(), want)
		}
	}
}

// TestManyUnknownNames checks that a model with thousands of unknown names
// and thousands of declared ones compiles fast: hints stop after maxHints.
func TestManyUnknownNames(t *testing.T) {
	const n = 1000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "v%d ~ Normal(0, 1)\nw%d ~ Normal(u%d, 1)\n", i, i, i)
	}
	_, errs := compileSrc(t, b.String())
	if len(errs) != n {
		t.Fatalf("got %d errors, want %d", len(errs), n)
	}
	hints := 0
	for _, e := range errs {
		if e.Hint != "" {
			hints++
		}
	}
	if hints == 0 || hints > maxHints {
		t.Errorf("%d hints, want 1 to %d", hints, maxHints)
	}
}

// BenchmarkCompileLongSum measures compiling and printing the longest flat
// sum a statement may hold (printing a chain by concatenation was
// quadratic); compare runs with benchstat.
func BenchmarkCompileLongSum(b *testing.B) {
	src := "dim N, D\ndata X : real[N, D]\nprec ~ Gamma(1, 1)\nX ~ PYDT(1, 0.5, 1, 1 / prec" +
		strings.Repeat(" + 0", lang.MaxStatementTokens/2-20) + ")\n"
	f, err := lang.Parse("model.pydt", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		g, err := Compile(f, Options{Partial: true})
		if err != nil {
			b.Fatal(err)
		}
		_ = g.PYDT.Args[3].String()
	}
}
