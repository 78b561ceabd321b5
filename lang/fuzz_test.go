package lang

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// The two examples of the syntax design notes.
const (
	paperExample = `# Knowles & Ghahramani (2011), Section 5.
dim N, D
data X : real[N, D]

alpha ~ Gamma(2, 0.5)     # concentration
beta  ~ Beta(1, 1)        # discount
c     ~ Gamma(1, 1)       # smoothness: a(t) = c/(1-t)
prec  ~ Gamma(1, 1)       # 1/sigma^2

X ~ PYDT(alpha, beta, c, 1 / prec)
`
	probitExample = `dim N, D
data Y : binary[N, D]
param Z : real[N, D]
alpha ~ Gamma(2, 0.5)
beta  ~ Beta(1, 1)
c     ~ Gamma(1, 1)
prec  ~ Gamma(1, 1)
Z ~ PYDT(alpha, beta, c, 1 / prec)
for i in 1:N, d in 1:D {
  Y[i, d] ~ Probit(Z[i, d])
}
`
)

// FuzzParse checks that Parse never panics, that every diagnostic has a
// usable position, and that a file that parses formats to a fixed point
// with an unchanged tree.
func FuzzParse(f *testing.F) {
	f.Add([]byte(paperExample))
	f.Add([]byte(probitExample))
	for _, dir := range []string{"parse", "format"} {
		for _, path := range testFiles(f, dir) {
			f.Add(readFile(f, path))
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse("fuzz.pydt", src)
		if file == nil {
			t.Fatal("Parse returned a nil File")
		}
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse error %#v is not a non-empty ErrorList", err)
			}
			for _, e := range list {
				if e.Pos.Line < 1 || e.Pos.Column < 1 {
					t.Errorf("error without a position: %v", e)
				}
			}
			if err := list.Format(io.Discard, src); err != nil {
				t.Fatal(err)
			}
			// The partial tree must be safe to walk and print.
			Inspect(file, func(Node) bool { return true })
			Format(file)
			return
		}
		out := Format(file)
		again, err := FormatSource("fuzz.pydt", out)
		if err != nil {
			t.Fatalf("formatted output does not parse: %v\n--- input\n%q\n--- formatted\n%s", err, src, out)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("Format is not idempotent\n--- input\n%q\n--- once\n%s\n--- twice\n%s", src, out, again)
		}
		assertSameTree(t, src, out)
	})
}
