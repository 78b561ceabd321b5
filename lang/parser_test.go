package lang

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseGolden parses each testdata/parse input. A file with syntax
// errors must match its golden diagnostics exactly (caret lines included);
// a valid file must match its golden AST dump, positions included.
func TestParseGolden(t *testing.T) {
	for _, path := range testFiles(t, "parse") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src := readFile(t, path)
			f, err := Parse(filepath.Base(path), src)
			var got bytes.Buffer
			if err != nil {
				var list ErrorList
				if !errors.As(err, &list) {
					t.Fatalf("Parse error is %T, want ErrorList", err)
				}
				if err := list.Format(&got, src); err != nil {
					t.Fatal(err)
				}
			} else {
				got.WriteString(dump(f, true))
			}
			checkGolden(t, goldenPath(path), got.Bytes())
		})
	}
}

// TestParseErrorCount checks that recovery reports every error of a file
// with several, each once.
func TestParseErrorCount(t *testing.T) {
	src := readFile(t, filepath.Join("testdata", "parse", "several.pydt"))
	_, err := Parse("several.pydt", src)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("got %v, want an ErrorList", err)
	}
	if len(list) != 6 {
		t.Errorf("got %d errors, want 6:\n%v", len(list), list)
	}
	seen := map[Position]bool{}
	for _, e := range list {
		if seen[e.Pos] {
			t.Errorf("duplicate error at %v: %s", e.Pos, e.Msg)
		}
		seen[e.Pos] = true
	}
}

func TestParseOK(t *testing.T) {
	tests := []struct {
		name, src string
	}{
		{"empty", ""},
		{"only comments", "# a\n// b\n"},
		{"semicolons", "x ~ A; y ~ B;;\n"},
		{"one-line block", "for i in 1:N { y[i] ~ A(i) }\n"},
		{"named args", "X ~ PYDT(alpha = a, beta = b, divergence = DivInvSq(c), variance = v)\n"},
		{"kind arg", "data Z : categorical(K)[N]\n"},
		{"scalar param", "param s : pos\n"},
		{"nested index", "z[t] ~ Categorical(trans[z[t - 1]])\n"},
		{"exponents", "y = -x^2^-3 / (1 - t)^2\n"},
		{"crlf", "dim N\r\nx ~ A # c\r\n"},
		{"keyword prefix", "dimension = 1\nformat ~ A\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse("t.pydt", []byte(tt.src)); err != nil {
				t.Errorf("Parse(%q): %v", tt.src, err)
			}
		})
	}
}

// TestPrecedence checks the shape of parsed expressions through the fully
// parenthesised rendering of their trees.
func TestPrecedence(t *testing.T) {
	tests := []struct{ src, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"a - b - c", "((a - b) - c)"},
		{"a / b / c", "((a / b) / c)"},
		{"a ^ b ^ c", "(a ^ (b ^ c))"},
		{"-a ^ b", "(-(a ^ b))"},
		{"a ^ -b", "(a ^ (-b))"},
		{"a * -b ^ c", "(a * (-(b ^ c)))"},
		{"--a", "(-(-a))"},
		{"(a + b) * c", "((a + b) * c)"},
		{"f(a, n = b + c)[1]", ""},
	}
	for _, tt := range tests {
		f, err := Parse("t.pydt", []byte("y = "+tt.src))
		if tt.want == "" {
			if err == nil {
				t.Errorf("Parse(%q) succeeded, want an error", tt.src)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.src, err)
			continue
		}
		got := parenthesise(f.Stmts[0].(*Assign).RHS)
		if got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.src, got, tt.want)
		}
	}
}

// parenthesise renders an expression with every operation bracketed.
func parenthesise(e Expr) string {
	switch e := e.(type) {
	case *Binary:
		return "(" + parenthesise(e.X) + " " + e.Op + " " + parenthesise(e.Y) + ")"
	case *Unary:
		return "(" + e.Op + parenthesise(e.X) + ")"
	case *Paren:
		return parenthesise(e.X)
	case *Ident:
		return e.Name
	case *Number:
		return e.Lit
	}
	return "?"
}

func TestParseErrorIsErrorList(t *testing.T) {
	f, err := Parse("t.pydt", []byte("x ~\n"))
	if f == nil {
		t.Fatal("Parse returned a nil File")
	}
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("got %#v, want one-element ErrorList", err)
	}
	if got, want := list.Error(), "t.pydt:1:4: expected expression, found end of file"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestDeepNesting checks that absurdly deep expressions are reported, not
// allowed to exhaust the stack, and that parsing resumes after them.
func TestDeepNesting(t *testing.T) {
	for _, deep := range []string{
		strings.Repeat("(", 20000),
		strings.Repeat("-", 20000) + "1",
		strings.Repeat("2^", 20000) + "1",
		strings.Repeat("f(a[", 10000),
	} {
		src := "x = " + deep + "\ny ~ A(\n"
		_, err := Parse("t.pydt", []byte(src))
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 2 {
			t.Fatalf("got %v, want two errors", err)
		}
		if !strings.HasPrefix(list[0].Msg, "expression nested too deeply") {
			t.Errorf("first error = %q, want nesting error", list[0].Msg)
		}
		if list[1].Pos.Line != 2 {
			t.Errorf("second error at %v, want line 2 (parsing must resume)", list[1].Pos)
		}
	}
}
