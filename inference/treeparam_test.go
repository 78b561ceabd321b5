package inference

import (
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// TestJointMovesFindArrayElements: the ridge and time-scale moves are
// chosen by where the PYDT reads its variance and its c, a latent scalar
// or an element of a latent array at a constant index, and refused when
// that element (not merely its array) enters anything else. The
// time-scale move is offered with a latent leaf layer only (a Normal
// noise here), as for a scalar c.
func TestJointMovesFindArrayElements(t *testing.T) {
	const head = "dim N, D\ndata X : real[N, D]\ndata y : real[N]\nparam h : pos[3]\nh ~ Gamma(4, 4)\n"
	const noisy = "param Z : real[N, D]\nnoise ~ Gamma(4, 2)\nX ~ Normal(Z, 1 / sqrt(noise))\n"
	for _, c := range []struct {
		name, body string
		want       []string // moves the schedule must have
		not        []string // moves it must not have
	}{
		{"precision element", "X ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", []string{"ridge(h[3], times)"}, []string{"scale("}},
		{"variance element", "X ~ PYDT(h[1], 0.2, h[2], h[3])\ny ~ Normal(0, 1)\n", []string{"ridge(h[3], times)"}, nil},
		{"other elements read elsewhere", "X ~ PYDT(h[1], 0.2, 1, 1 / h[3])\ny ~ Normal(h[2], 1)\n", []string{"ridge(h[3], times)"}, nil},
		{"element also the divergence's c", "X ~ PYDT(h[1], 0.2, h[3], 1 / h[3])\ny ~ Normal(0, 1)\n", nil, []string{"ridge("}},
		{"element also alpha", "X ~ PYDT(h[3], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", nil, []string{"ridge("}},
		{"element also another tree's variance", "data W : real[N, D]\nX ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\nW ~ PYDT(1, 0.2, 1, 1 / h[3])\ny ~ Normal(0, 1)\n",
			nil, []string{"ridge("}},
		{"array read whole", "data g : int[N]\nX ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\nfor i in 1:N { g[i] ~ Categorical(softmax(h)) }\ny ~ Normal(0, 1)\n",
			nil, []string{"ridge("}},
		{"element read by data", "X ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(h[3], 1)\n", nil, []string{"ridge("}},
		{"element through an expression", "X ~ PYDT(h[1], 0.2, h[2], 2 / h[3])\ny ~ Normal(0, 1)\n", nil, []string{"ridge("}},
		{"scalar precision", "prec ~ Gamma(3, 3)\nX ~ PYDT(h[1], 0.2, h[2], 1 / prec)\ny ~ Normal(h[3], 1)\n", []string{"ridge(prec, times)"}, nil},
		{"noise: c element", noisy + "Z ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", []string{"ridge(h[3], times)", "scale(h[2], times)"}, nil},
		{"noise: c element also alpha", noisy + "Z ~ PYDT(h[2], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", []string{"ridge(h[3], times)"}, []string{"scale("}},
		{"noise: c element read by data", noisy + "Z ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(h[2], 1)\n", []string{"ridge(h[3], times)"}, []string{"scale("}},
		{"noise: variance element also the noise", "param Z : real[N, D]\nX ~ Normal(Z, 1 / sqrt(h[3]))\nZ ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n",
			[]string{"scale(h[2], times)"}, []string{"ridge(", "orbit("}},
		{"noise: c element also the noise", "param Z : real[N, D]\nX ~ Normal(Z, 1 / sqrt(h[2]))\nZ ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\ny ~ Normal(0, 1)\n",
			[]string{"ridge(h[3], times)"}, []string{"scale("}},
		{"noise: c element also another tree's c", noisy + "data W : real[N, D]\nZ ~ PYDT(h[1], 0.2, h[2], 1 / h[3])\nW ~ PYDT(1, 0.2, h[2], 1)\ny ~ Normal(0, 1)\n",
			[]string{"ridge(h[3], times of Z)"}, []string{"scale("}},
		{"noise: c through an expression", noisy + "Z ~ PYDT(h[1], 0.2, 2 * h[2], 1 / h[3])\ny ~ Normal(0, 1)\n", nil, []string{"scale("}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := map[string]*dataset.Matrix{
				"X": dataMat(4, 1, func(i, j int) float64 { return float64(i) }), "y": vec(0.5, 1, 1.5, 2)}
			// The data a case declares besides X and y: W (as X) and g
			// (categories 3, 3, 1, 3).
			for name, x := range map[string]*dataset.Matrix{"W": data["X"], "g": vec(3, 3, 1, 3)} {
				if strings.Contains(c.body, "data "+name+" ") {
					data[name] = x
				}
			}
			m := compileSource(t, "h.pydt", []byte(head+c.body), data, nil)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			ex := sched.Explain()
			for _, w := range c.want {
				if !strings.Contains(ex, w) {
					t.Errorf("no %s:\n%s", w, ex)
				}
			}
			for _, w := range c.not {
				if strings.Contains(ex, w) {
					t.Errorf("a move %s..., though its element enters more than the one parameter:\n%s", w, ex)
				}
			}
		})
	}
}
