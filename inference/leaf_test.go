package inference

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
)

// TestLeafEvidenceElementwise checks the Gaussian evidence of a leaf
// factor whose noise sd differs per element, written with loops in either
// order: element (i, d) must get the sd of its own loop indices.
func TestLeafEvidenceElementwise(t *testing.T) {
	const head = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
Z ~ PYDT(1, 0.2, 1, 1)
`
	cases := []struct {
		name, stmt string
		sd         func(i, d int) float64 // 1-based
	}{
		{"i then d", "for i in 1:N, d in 1:D {\n  X[i, d] ~ Normal(Z[i, d], 0.5 * d + 0.1 * i)\n}\n", func(i, d int) float64 { return 0.5*float64(d) + 0.1*float64(i) }},
		{"d then i", "for d in 1:D, i in 1:N {\n  X[i, d] ~ Normal(Z[i, d], 0.5 * d + 0.1 * i)\n}\n", func(i, d int) float64 { return 0.5*float64(d) + 0.1*float64(i) }},
		{"vectorised", "X ~ Normal(Z, 0.3)\n", func(int, int) float64 { return 0.3 }},
	}
	nan := math.NaN()
	x := &dataset.Matrix{Rows: 3, Cols: 2, Data: []float64{1, 2, 3, nan, 5, 6}, Source: "x.csv"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := compileData(t, head+c.stmt, x, nil)
			b := m.Trees[0]
			if !b.Gaussian() || b.Exact() || b.Augmented() != nil || b.ClosedForm() != nil {
				t.Fatalf("binding %s", b.Kind())
			}
			seen := 0
			err := m.Evidence(m.NewState().Env, func(i, d int, mean, prec float64) {
				seen++
				y := x.Data[i*2+d]
				if math.IsNaN(y) {
					if prec != 0 {
						t.Errorf("(%d, %d) missing: precision %v", i, d, prec)
					}
					return
				}
				sd := c.sd(i+1, d+1)
				if mean != y || !(math.Abs(prec-1/(sd*sd)) <= 1e-12*prec) {
					t.Errorf("(%d, %d): evidence (%v, %v), want (%v, %v)", i, d, mean, prec, y, 1/(sd*sd))
				}
			})
			if err != nil || seen != 6 {
				t.Fatalf("%d leaves seen, error %v", seen, err)
			}
		})
	}
}

// TestLeafBindingRefused checks that a factor reading the leaf locations
// in a way no leaf capability covers is an error naming it.
func TestLeafBindingRefused(t *testing.T) {
	const head = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
Z ~ PYDT(1, 0.2, 1, 1)
`
	x := &dataset.Matrix{Rows: 3, Cols: 2, Data: []float64{1, 2, 3, 4, 5, 6}, Source: "x.csv"}
	for _, stmt := range []string{
		"X ~ Normal(Z, exp(Z[1, 1]))",                                   // the noise reads the leaves
		"for i in 1:N, d in 1:D {\n  X[i, d] ~ Normal(Z[i, 1], 1)\n}\n", // not the element's own leaf
		"X ~ Gamma(2, exp(Z[1, 1]))",                                    // no leaf capability
	} {
		f, err := compileForBinding(t, head+stmt, x)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewModel(f); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "reads the PYDT's leaf locations Z") {
			t.Errorf("%q: %v", stmt, err)
		}
	}
}

// compileForBinding compiles src with X bound, without binding a Model.
func compileForBinding(t *testing.T, src string, x *dataset.Matrix) (*graph.Graph, error) {
	t.Helper()
	f, err := lang.Parse("test.pydt", []byte(src))
	if err != nil {
		return nil, err
	}
	return graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{"X": x}})
}
