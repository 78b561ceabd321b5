package lang

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestFormatGolden formats each testdata/format input and checks that the
// output matches the golden file, is a fixed point of Format, and parses to
// the same tree as the input, comments included, positions aside.
func TestFormatGolden(t *testing.T) {
	for _, path := range testFiles(t, "format") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src := readFile(t, path)
			got, err := FormatSource(path, src)
			if err != nil {
				t.Fatalf("FormatSource: %v", err)
			}
			checkGolden(t, goldenPath(path), got)

			again, err := FormatSource(path, got)
			if err != nil {
				t.Fatalf("formatted output does not parse: %v\n%s", err, got)
			}
			if !bytes.Equal(again, got) {
				t.Errorf("Format is not idempotent\n--- once\n%s\n--- twice\n%s", got, again)
			}
			assertSameTree(t, src, got)
		})
	}
}

// assertSameTree checks that a and b parse to the same AST modulo positions.
func assertSameTree(t testing.TB, a, b []byte) {
	t.Helper()
	fa, err := Parse("t.pydt", a)
	if err != nil {
		t.Fatalf("parsing original: %v", err)
	}
	fb, err := Parse("t.pydt", b)
	if err != nil {
		t.Fatalf("parsing formatted: %v", err)
	}
	if da, db := dump(fa, false), dump(fb, false); da != db {
		t.Errorf("formatting changed the tree\n--- original\n%s\n--- formatted\n%s", da, db)
	}
}

func TestFormatSnippets(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", ""},
		{"\n\n", ""},
		{"# c", "# c\n"},
		{"x~A", "x ~ A\n"},
		{"y = a*(b+c)", "y = a * (b + c)\n"},
		{"y = 2 ^ ( - x )", "y = 2^(-x)\n"},
		{"y = - - x", "y = --x\n"},
		{"for i in 1 : N { }", "for i in 1:N {\n}\n"},
		{"for i in 2:N - 1 {}", "for i in 2 : N - 1 {\n}\n"},
		{"for i in -1:-N {}", "for i in -1:-N {\n}\n"},
		{"dim N\r\nx ~ A # c\r\n", "dim N\nx ~ A # c\n"},
		{"x ~ A;;y ~ B # c", "x ~ A\ny ~ B # c\n"},
	}
	for _, tt := range tests {
		got, err := FormatSource("t.pydt", []byte(tt.src))
		if err != nil {
			t.Errorf("FormatSource(%q): %v", tt.src, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("FormatSource(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// TestFormatAddsParens formats trees built without Paren nodes: the
// printer must add exactly the parentheses that keep their meaning.
func TestFormatAddsParens(t *testing.T) {
	x, y, z := &Ident{Name: "x"}, &Ident{Name: "y"}, &Ident{Name: "z"}
	bin := func(l Expr, op string, r Expr) Expr { return &Binary{X: l, Op: op, Y: r} }
	neg := func(e Expr) Expr { return &Unary{Op: "-", X: e} }
	tests := []struct {
		e    Expr
		want string
	}{
		{bin(bin(x, "+", y), "*", z), "(x + y) * z"},
		{bin(x, "-", bin(y, "-", z)), "x - (y - z)"},
		{bin(bin(x, "-", y), "-", z), "x - y - z"},
		{bin(bin(x, "^", y), "^", z), "(x^y)^z"},
		{bin(x, "^", bin(y, "^", z)), "x^y^z"},
		{neg(bin(x, "^", y)), "-x^y"},
		{bin(neg(x), "^", y), "(-x)^y"},
		{bin(x, "^", neg(y)), "x^-y"},
		{bin(neg(x), "*", y), "-x * y"},
		{neg(bin(x, "+", y)), "-(x + y)"},
		{bin(x, "/", bin(y, "*", z)), "x / (y * z)"},
	}
	for _, tt := range tests {
		f := &File{Stmts: []Stmt{&Assign{LHS: &LValue{Name: &Ident{Name: "v"}}, Op: Define, RHS: tt.e}}}
		got := string(Format(f))
		if want := "v = " + tt.want + "\n"; got != want {
			t.Errorf("Format = %q, want %q", got, want)
			continue
		}
		// The printed form must parse back to the same structure.
		g, err := Parse("t.pydt", []byte(got))
		if err != nil {
			t.Errorf("%q: %v", got, err)
			continue
		}
		if a, b := parenthesise(tt.e), parenthesise(g.Stmts[0].(*Assign).RHS); a != b {
			t.Errorf("%q parses as %s, want %s", got, b, a)
		}
	}
}
