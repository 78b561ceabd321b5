package inference

import (
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// TestRidgeFindsArrayElement: the ridge move is chosen by where the PYDT
// reads its variance, a latent scalar or an element of a latent array at a
// constant index, and refused when that element (not merely its array)
// enters anything else.
func TestRidgeFindsArrayElement(t *testing.T) {
	const head = "dim N, D\ndata X : real[N, D]\ndata y : real[N]\nparam h : pos[3]\nh ~ Gamma(4, 4)\n"
	for _, c := range []struct {
		name, body, want string // want "" for no ridge move
	}{
		{"precision element", "X ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", "ridge(h[3], times)"},
		{"variance element", "X ~ PYDT(h[1], 0.2, h[2], h[3])\ny ~ Normal(0, 1)\n", "ridge(h[3], times)"},
		{"other elements read elsewhere", "X ~ PYDT(h[1], 0.2, 1, 1 / h[3])\ny ~ Normal(h[2], 1)\n", "ridge(h[3], times)"},
		{"element also the divergence's c", "X ~ PYDT(h[1], 0.2, h[3], 1 / h[3])\ny ~ Normal(0, 1)\n", ""},
		{"element also alpha", "X ~ PYDT(h[3], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", ""},
		{"element read by data", "X ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(h[3], 1)\n", ""},
		{"element through an expression", "X ~ PYDT(h[1], 0.2, h[2], 2 / h[3])\ny ~ Normal(0, 1)\n", ""},
		{"scalar precision", "prec ~ Gamma(3, 3)\nX ~ PYDT(h[1], 0.2, h[2], 1 / prec)\ny ~ Normal(h[3], 1)\n", "ridge(prec, times)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := compileSource(t, "h.pydt", []byte(head+c.body), map[string]*dataset.Matrix{
				"X": dataMat(4, 1, func(i, j int) float64 { return float64(i) }), "y": vec(0.5, 1, 1.5, 2)}, nil)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			ex := sched.Explain()
			switch {
			case c.want == "" && strings.Contains(ex, "ridge("):
				t.Errorf("a ridge move, though the variance's element enters more than the variance:\n%s", ex)
			case c.want != "" && !strings.Contains(ex, c.want):
				t.Errorf("no %s:\n%s", c.want, ex)
			}
		})
	}
}
